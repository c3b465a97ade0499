package locomo

import (
	"math"
	"strings"
	"unicode"

	"github.com/higmem/higmem/internal/textnorm"
)

// OfficialF1 scores a predicted answer the way the official LoCoMo
// evaluation (snap-research/LoCoMo task_eval/evaluation.py) does:
//
//   - category 5 (adversarial): 1 if the lower-cased prediction contains
//     "not mentioned" or "no information available", else 0; gold is ignored;
//   - category 1 (multi-hop): gold and prediction are split on commas; for
//     each gold part the best token F1 over the prediction parts is taken,
//     and these are averaged;
//   - category 3 (open-domain): gold is cut at its first ';' and trimmed;
//   - categories 2, 3, 4 and any other number: plain token F1.
//
// Token F1 normalises both strings (drop commas, lower-case, remove the 32
// ASCII punctuation characters of Python's string.punctuation, remove the
// words a, an, the and and, collapse whitespace), Porter-stems each token
// with NLTK's stemmer, and computes F1 over the token multisets; it is 0
// when no token is shared.
func OfficialF1(pred, gold string, category int) float64 {
	switch category {
	case Adversarial:
		p := strings.ToLower(pred)
		if strings.Contains(p, "no information available") || strings.Contains(p, "not mentioned") {
			return 1
		}
		return 0
	case MultiHop:
		preds := strings.Split(pred, ",")
		golds := strings.Split(gold, ",")
		predToks := make([][]string, len(preds))
		for i, p := range preds {
			predToks[i] = officialTokens(strings.TrimSpace(p))
		}
		sum := 0.0
		for _, g := range golds {
			gt := officialTokens(strings.TrimSpace(g))
			best := 0.0
			for _, pt := range predToks {
				best = math.Max(best, metricBagF1(pt, gt))
			}
			sum += best
		}
		return sum / float64(len(golds))
	case OpenDomain:
		gold, _, _ = strings.Cut(gold, ";")
		gold = strings.TrimSpace(gold)
	}
	return metricBagF1(officialTokens(pred), officialTokens(gold))
}

// pyPunctuation is Python's string.punctuation.
const pyPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// officialTokens is normalize_answer followed by Porter stemming.
func officialTokens(s string) []string {
	s = strings.ReplaceAll(s, ",", "")
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune(pyPunctuation, r) {
			return -1
		}
		return r
	}, s)
	s = officialRemoveArticles(s)
	toks := strings.FieldsFunc(s, metricIsSpace)
	for i, t := range toks {
		toks[i] = textnorm.Stem(t)
	}
	return toks
}

// officialRemoveArticles replaces the whole words a, an, the and and with a space,
// like regex.sub(r'\b(a|an|the|and)\b', ' ', s).
func officialRemoveArticles(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := -1 // start of the current word-character run
	flush := func(end int) {
		w := s[start:end]
		if w == "a" || w == "an" || w == "the" || w == "and" {
			b.WriteByte(' ')
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	for i, r := range s {
		if officialIsWord(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		flush(len(s))
	}
	return b.String()
}

// officialIsWord approximates \w of Python's regex module: letters, marks,
// decimal digits and connector punctuation.
func officialIsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Pc, r)
}

// metricIsSpace matches Python's str.isspace (what str.split splits on).
func metricIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// metricBagF1 is token F1 over multisets (Python's Counter intersection).
func metricBagF1(pred, gold []string) float64 {
	if len(pred) == 0 || len(gold) == 0 {
		return 0
	}
	counts := make(map[string]int, len(gold))
	for _, g := range gold {
		counts[g]++
	}
	same := 0
	for _, p := range pred {
		if counts[p] > 0 {
			counts[p]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	precision := float64(same) / float64(len(pred))
	recall := float64(same) / float64(len(gold))
	return 2 * precision * recall / (precision + recall)
}

// amemTokens is A-Mem's simple_tokenize: lower-case, replace . , ! ? with
// spaces, split on whitespace.
func amemTokens(s string) []string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '.', ',', '!', '?':
			return ' '
		}
		return r
	}, s)
	return strings.FieldsFunc(s, metricIsSpace)
}

// AMemF1 is the token F1 reported by A-Mem, Mem0 and HiGMem: both strings
// are lower-cased, '.', ',', '!' and '?' become spaces, and F1 is computed
// over the resulting sets of whitespace-separated tokens, with no stemming
// and no article removal. It is 0 when either string is empty or has no
// tokens.
func AMemF1(pred, gold string) float64 {
	if pred == "" || gold == "" {
		return 0
	}
	ps := metricSet(amemTokens(pred))
	gs := metricSet(amemTokens(gold))
	if len(ps) == 0 || len(gs) == 0 {
		return 0
	}
	common := 0
	for t := range ps {
		if _, ok := gs[t]; ok {
			common++
		}
	}
	if common == 0 {
		return 0
	}
	precision := float64(common) / float64(len(ps))
	recall := float64(common) / float64(len(gs))
	return 2 * precision * recall / (precision + recall)
}

func metricSet(toks []string) map[string]struct{} {
	m := make(map[string]struct{}, len(toks))
	for _, t := range toks {
		m[t] = struct{}{}
	}
	return m
}

// BLEU1 is sentence BLEU-1 as A-Mem computes it: NLTK's sentence_bleu with
// the gold as the single reference, weights (1, 0, 0, 0), smoothing method1
// and the brevity penalty, over textnorm.WordTokenize of the lower-cased
// strings. That is BP * (clipped unigram matches / prediction length), with
// BP = exp(1 - |gold|/|pred|) when the prediction is shorter than the gold,
// else 1. It is 0 when either string is empty. Like NLTK's tokenizer on one
// sentence, WordTokenize splits only the final period; nltk.word_tokenize
// would also split periods that end inner sentences (see WordTokenize).
func BLEU1(pred, gold string) float64 {
	if pred == "" || gold == "" {
		return 0
	}
	p := textnorm.WordTokenize(strings.ToLower(pred))
	g := textnorm.WordTokenize(strings.ToLower(gold))
	if len(p) == 0 {
		return 0
	}
	counts := make(map[string]int, len(g))
	for _, t := range g {
		counts[t]++
	}
	matches := 0
	for _, t := range p {
		if counts[t] > 0 {
			counts[t]--
			matches++
		}
	}
	if matches == 0 {
		return 0
	}
	c, r := float64(len(p)), float64(len(g))
	bp := 1.0
	if c <= r {
		bp = math.Exp(1 - r/c)
	}
	return bp * math.Exp(math.Log(float64(matches)/c))
}

// ExactMatch is A-Mem's exact-match flag: 1 when the trimmed, lower-cased
// strings are equal, else 0 (also 0 when either string is empty).
func ExactMatch(pred, gold string) float64 {
	if pred == "" || gold == "" {
		return 0
	}
	//lint:ignore SA6005 lower-casing both is the metric's definition; EqualFold folds a few runes differently
	if strings.ToLower(strings.TrimFunc(pred, metricIsSpace)) == strings.ToLower(strings.TrimFunc(gold, metricIsSpace)) {
		return 1
	}
	return 0
}

// EvidenceScore compares the dialogue ids a system selected with the gold
// evidence, as HiGMem's recall analysis does: both are taken as sets,
// precision = |selected ∩ gold| / |selected| (0 when nothing is selected) and
// recall = |selected ∩ gold| / |gold| (0 when gold is empty; such questions
// are normally left out of retrieval averages). Ids are compared as strings:
// pass them through NormalizeEvidence first when they may be non-canonical.
func EvidenceScore(selected []string, gold []string) (precision, recall float64) {
	sel := metricSet(selected)
	gs := metricSet(gold)
	hit := 0
	for id := range gs {
		if _, ok := sel[id]; ok {
			hit++
		}
	}
	if len(sel) > 0 {
		precision = float64(hit) / float64(len(sel))
	}
	if len(gs) > 0 {
		recall = float64(hit) / float64(len(gs))
	}
	return precision, recall
}
