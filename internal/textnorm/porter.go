package textnorm

import (
	"strings"
	"unicode/utf8"
)

// porterIrregular is NLTK's table of irregular forms (NLTK_EXTENSIONS mode):
// a word found here is returned as the mapped stem without running the steps.
var porterIrregular = map[string]string{
	"sky":      "sky",
	"skies":    "sky",
	"dying":    "die",
	"lying":    "lie",
	"tying":    "tie",
	"news":     "news",
	"innings":  "inning",
	"inning":   "inning",
	"outings":  "outing",
	"outing":   "outing",
	"cannings": "canning",
	"canning":  "canning",
	"howe":     "howe",
	"proceed":  "proceed",
	"exceed":   "exceed",
	"succeed":  "succeed",
}

// Stem returns the Porter stem of w exactly as NLTK 3.9.1's
// PorterStemmer().stem(w) does in its default NLTK_EXTENSIONS mode: w is
// looked up in NLTK's table of irregular forms, then lower-cased, returned as
// is when it has at most two characters, and otherwise run through steps 1a
// to 5b with NLTK's extensions (for example "dying" -> "die", "happily" ->
// "happili", "generously" -> "gener"). Characters other than a, e, i, o, u
// and y count as consonants, as in NLTK. Stem is safe for concurrent use.
//
// As in NLTK 3.8 and 3.9, the irregular-form lookup uses w as given, so
// "DYING" is not found there and stems to "dy" (NLTK 3.10.4 looks up the
// lower-cased word). Lower-case input, as Tokens and the LoCoMo scorer
// produce, stems the same in NLTK 3.8.1, 3.9.1 and 3.10.4. Lower-casing uses
// Go's per-rune mapping, which differs from Python's str.lower only in rare
// special cases (U+0130 and the Greek final sigma).
func Stem(w string) string {
	if s, ok := porterIrregular[w]; ok {
		return s
	}
	lower := strings.ToLower(w)
	// NLTK measures the length of the original word, not the lower-cased one.
	if utf8.RuneCountInString(w) <= 2 {
		return lower
	}
	r := []rune(lower)
	r = porterStep1a(r)
	r = porterStep1b(r)
	r = porterStep1c(r)
	r = porterStep2(r)
	r = porterStep3(r)
	r = porterStep4(r)
	r = porterStep5a(r)
	r = porterStep5b(r)
	return string(r)
}

func porterIsVowel(c rune) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'
}

// porterIsConsonant reports whether w[i] is a consonant in Porter's sense:
// not a vowel, and not a 'y' preceded by a consonant.
func porterIsConsonant(w []rune, i int) bool {
	if porterIsVowel(w[i]) {
		return false
	}
	if w[i] == 'y' {
		negate := false
		for i > 0 && w[i] == 'y' {
			negate = !negate
			i--
		}
		return !porterIsVowel(w[i]) != negate
	}
	return true
}

// porterMeasure returns m in [C](VC){m}[V] for w.
func porterMeasure(w []rune) int {
	m := 0
	prevCons := false // consonant flag of the previous letter
	prevVowel := false
	for i, c := range w {
		var cons bool
		switch {
		case porterIsVowel(c):
			cons = false
		case c == 'y':
			cons = i == 0 || !prevCons
		default:
			cons = true
		}
		if cons && prevVowel {
			m++
		}
		prevCons = cons
		prevVowel = !cons
	}
	return m
}

func porterContainsVowel(w []rune) bool {
	prevCons := false
	for i, c := range w {
		var cons bool
		switch {
		case porterIsVowel(c):
			cons = false
		case c == 'y':
			cons = i == 0 || !prevCons
		default:
			cons = true
		}
		if !cons {
			return true
		}
		prevCons = cons
	}
	return false
}

func porterEndsDoubleConsonant(w []rune) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && porterIsConsonant(w, n-1)
}

// porterEndsCVC implements condition *o, with NLTK's extension that a
// two-letter vowel-consonant stem also qualifies.
func porterEndsCVC(w []rune) bool {
	n := len(w)
	if n >= 3 && porterIsConsonant(w, n-3) && !porterIsConsonant(w, n-2) &&
		porterIsConsonant(w, n-1) && w[n-1] != 'w' && w[n-1] != 'x' && w[n-1] != 'y' {
		return true
	}
	return n == 2 && !porterIsConsonant(w, 0) && porterIsConsonant(w, 1)
}

func porterEndsWith(w []rune, suffix string) bool {
	if len(suffix) > len(w) {
		return false
	}
	off := len(w) - len(suffix)
	for i := 0; i < len(suffix); i++ {
		if w[off+i] != rune(suffix[i]) {
			return false
		}
	}
	return true
}

// porterJoin returns a fresh slice holding stem followed by repl.
func porterJoin(stem []rune, repl string) []rune {
	out := make([]rune, len(stem), len(stem)+len(repl))
	copy(out, stem)
	for i := 0; i < len(repl); i++ {
		out = append(out, rune(repl[i]))
	}
	return out
}

// porterRule is one suffix-replacement rule; cond (nil = always) sees the
// word with the suffix removed.
type porterRule struct {
	suffix, repl string
	cond         func(stem []rune) bool
}

// porterApply applies the first rule whose suffix matches: if its condition
// holds the suffix is replaced, otherwise the word is returned unchanged and
// no later rule is tried (NLTK's _apply_rule_list).
func porterApply(w []rune, rules []porterRule) []rune {
	for _, r := range rules {
		if porterEndsWith(w, r.suffix) {
			stem := w[:len(w)-len(r.suffix)]
			if r.cond == nil || r.cond(stem) {
				return porterJoin(stem, r.repl)
			}
			return w
		}
	}
	return w
}

func porterMGt0(stem []rune) bool { return porterMeasure(stem) > 0 }
func porterMGt1(stem []rune) bool { return porterMeasure(stem) > 1 }

func porterStep1a(w []rune) []rune {
	if len(w) == 4 && porterEndsWith(w, "ies") {
		return porterJoin(w[:1], "ie")
	}
	return porterApply(w, porterStep1aRules)
}

var porterStep1aRules = []porterRule{
	{"sses", "ss", nil},
	{"ies", "i", nil},
	{"ss", "ss", nil},
	{"s", "", nil},
}

func porterStep1b(w []rune) []rune {
	if porterEndsWith(w, "ied") {
		if len(w) == 4 {
			return porterJoin(w[:1], "ie")
		}
		return porterJoin(w[:len(w)-3], "i")
	}
	if porterEndsWith(w, "eed") {
		stem := w[:len(w)-3]
		if porterMeasure(stem) > 0 {
			return porterJoin(stem, "ee")
		}
		return w
	}
	var inter []rune
	ok := false
	for _, suf := range [...]string{"ed", "ing"} {
		if porterEndsWith(w, suf) {
			inter = w[:len(w)-len(suf)]
			if porterContainsVowel(inter) {
				ok = true
				break
			}
		}
	}
	if !ok {
		return w
	}
	switch {
	case porterEndsWith(inter, "at"):
		return porterJoin(inter[:len(inter)-2], "ate")
	case porterEndsWith(inter, "bl"):
		return porterJoin(inter[:len(inter)-2], "ble")
	case porterEndsWith(inter, "iz"):
		return porterJoin(inter[:len(inter)-2], "ize")
	case porterEndsDoubleConsonant(inter):
		last := inter[len(inter)-1]
		if last != 'l' && last != 's' && last != 'z' {
			return porterJoin(inter[:len(inter)-1], "")
		}
		return porterJoin(inter, "")
	default:
		if porterMeasure(inter) == 1 && porterEndsCVC(inter) {
			return porterJoin(inter, "e")
		}
		return porterJoin(inter, "")
	}
}

func porterStep1c(w []rune) []rune {
	if porterEndsWith(w, "y") {
		stem := w[:len(w)-1]
		if len(stem) > 1 && porterIsConsonant(stem, len(stem)-1) {
			return porterJoin(stem, "i")
		}
	}
	return w
}

var porterStep2Rules []porterRule

func init() {
	porterStep2Rules = []porterRule{
		{"ational", "ate", porterMGt0},
		{"tional", "tion", porterMGt0},
		{"enci", "ence", porterMGt0},
		{"anci", "ance", porterMGt0},
		{"izer", "ize", porterMGt0},
		{"bli", "ble", porterMGt0},
		{"alli", "al", porterMGt0},
		{"entli", "ent", porterMGt0},
		{"eli", "e", porterMGt0},
		{"ousli", "ous", porterMGt0},
		{"ization", "ize", porterMGt0},
		{"ation", "ate", porterMGt0},
		{"ator", "ate", porterMGt0},
		{"alism", "al", porterMGt0},
		{"iveness", "ive", porterMGt0},
		{"fulness", "ful", porterMGt0},
		{"ousness", "ous", porterMGt0},
		{"aliti", "al", porterMGt0},
		{"iviti", "ive", porterMGt0},
		{"biliti", "ble", porterMGt0},
		{"fulli", "ful", porterMGt0},
		// NLTK tests the measure of the word without "ogi", i.e. stem+"l".
		{"logi", "log", func(stem []rune) bool { return porterMeasure(porterJoin(stem, "l")) > 0 }},
	}
}

func porterStep2(w []rune) []rune {
	if porterEndsWith(w, "alli") && porterMeasure(w[:len(w)-4]) > 0 {
		return porterStep2(porterJoin(w[:len(w)-4], "al"))
	}
	return porterApply(w, porterStep2Rules)
}

var porterStep3Rules = []porterRule{
	{"icate", "ic", porterMGt0},
	{"ative", "", porterMGt0},
	{"alize", "al", porterMGt0},
	{"iciti", "ic", porterMGt0},
	{"ical", "ic", porterMGt0},
	{"ful", "", porterMGt0},
	{"ness", "", porterMGt0},
}

func porterStep3(w []rune) []rune { return porterApply(w, porterStep3Rules) }

var porterStep4Rules = []porterRule{
	{"al", "", porterMGt1},
	{"ance", "", porterMGt1},
	{"ence", "", porterMGt1},
	{"er", "", porterMGt1},
	{"ic", "", porterMGt1},
	{"able", "", porterMGt1},
	{"ible", "", porterMGt1},
	{"ant", "", porterMGt1},
	{"ement", "", porterMGt1},
	{"ment", "", porterMGt1},
	{"ent", "", porterMGt1},
	{"ion", "", func(stem []rune) bool {
		return porterMeasure(stem) > 1 && (stem[len(stem)-1] == 's' || stem[len(stem)-1] == 't')
	}},
	{"ou", "", porterMGt1},
	{"ism", "", porterMGt1},
	{"ate", "", porterMGt1},
	{"iti", "", porterMGt1},
	{"ous", "", porterMGt1},
	{"ive", "", porterMGt1},
	{"ize", "", porterMGt1},
}

func porterStep4(w []rune) []rune { return porterApply(w, porterStep4Rules) }

func porterStep5a(w []rune) []rune {
	if porterEndsWith(w, "e") {
		stem := w[:len(w)-1]
		m := porterMeasure(stem)
		if m > 1 {
			return stem
		}
		if m == 1 && !porterEndsCVC(stem) {
			return stem
		}
	}
	return w
}

func porterStep5b(w []rune) []rune {
	if porterEndsWith(w, "ll") && porterMeasure(w[:len(w)-1]) > 1 {
		return w[:len(w)-1]
	}
	return w
}
