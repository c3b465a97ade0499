package server

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/textnorm"
)

// What the chat endpoint puts in the memory system message, and what it
// stores: the text of stored turns escaped so that it cannot close or forge
// the memory block, filler turns kept out of the evidence, and messages
// over the turn cap split into several turns.

// memoryEscaper escapes stored text for the memory system message as HTML
// does (&, < and >), so that no stored text can write a tag such as
// </higmem-memory>, and maps every character that looks like an angle
// bracket (fullwidth and small forms, single and double angle quotation
// marks, mathematical and CJK angle brackets, modifier arrowheads,
// Canadian syllabics) to the same escapes: a tag cannot be written with
// look-alikes either, whatever its name.
var memoryEscaper = func() *strings.Replacer {
	pairs := []string{"&", "&amp;", "<", "&lt;", ">", "&gt;"}
	for _, r := range lessThanLike {
		pairs = append(pairs, string(r), "&lt;")
	}
	for _, r := range greaterThanLike {
		pairs = append(pairs, string(r), "&gt;")
	}
	return strings.NewReplacer(pairs...)
}()

// lessThanLike and greaterThanLike are the characters other than < and >
// that a model may read as them.
var (
	lessThanLike = []rune{
		'\uFF1C', // ＜ fullwidth less-than sign
		'\uFE64', // ﹤ small less-than sign
		'\u2039', // ‹ single left-pointing angle quotation mark
		'\u00AB', // « left-pointing double angle quotation mark
		'\u2329', // 〈 left-pointing angle bracket
		'\u27E8', // ⟨ mathematical left angle bracket
		'\u27EA', // ⟪ mathematical left double angle bracket
		'\u3008', // 〈 left angle bracket (CJK)
		'\u300A', // 《 left double angle bracket (CJK)
		'\u02C2', // ˂ modifier letter left arrowhead
		'\u02F1', // ˱ modifier letter low left arrowhead
		'\u1438', // ᐸ Canadian syllabics pa
		'\u276C', // ❬ medium left-pointing angle bracket ornament
		'\u276E', // ❮ heavy left-pointing angle quotation mark ornament
		'\u2770', // ❰ heavy left-pointing angle bracket ornament
		'\u29FC', // ⧼ left-pointing curved angle bracket
		'\u227A', // ≺ precedes
		'\u22D6', // ⋖ less-than with dot
		'\u2A79', // ⩹ less-than with circle inside
		'\uFE3F', // ︿ presentation form for vertical left angle bracket
	}
	greaterThanLike = []rune{
		'\uFF1E', // ＞ fullwidth greater-than sign
		'\uFE65', // ﹥ small greater-than sign
		'\u203A', // › single right-pointing angle quotation mark
		'\u00BB', // » right-pointing double angle quotation mark
		'\u232A', // 〉 right-pointing angle bracket
		'\u27E9', // ⟩ mathematical right angle bracket
		'\u27EB', // ⟫ mathematical right double angle bracket
		'\u3009', // 〉 right angle bracket (CJK)
		'\u300B', // 》 right double angle bracket (CJK)
		'\u02C3', // ˃ modifier letter right arrowhead
		'\u02F2', // ˲ modifier letter low right arrowhead
		'\u1433', // ᐳ Canadian syllabics po
		'\u276D', // ❭ medium right-pointing angle bracket ornament
		'\u276F', // ❯ heavy right-pointing angle quotation mark ornament
		'\u2771', // ❱ heavy right-pointing angle bracket ornament
		'\u29FD', // ⧽ right-pointing curved angle bracket
		'\u227B', // ≻ succeeds
		'\u22D7', // ⋗ greater-than with dot
		'\u2A7A', // ⩺ greater-than with circle inside
		'\uFE40', // ﹀ presentation form for vertical right angle bracket
	}
)

// memoryText makes stored text (a turn's text, a speaker, an id, a date)
// safe to put on one line of the memory system message: characters a
// reader does not see (format characters such as zero-width spaces and
// joiners, bidirectional controls, soft hyphens, Unicode tag characters,
// variation selectors) and control characters are dropped or turned into
// spaces, runs of white space become one space, invalid UTF-8 becomes
// U+FFFD, and &, < and > and their look-alikes are escaped.
func memoryText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				r = '\uFFFD'
			}
		}
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Variation_Selector, r),
			r >= 0xE0000 && r <= 0xE007F, // tags (also Cf; listed for clarity)
			unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return memoryEscaper.Replace(b.String())
}

// fillerWords are the stems of words that say nothing a memory needs:
// acknowledgements, greetings, thanks, agreement. A turn made only of
// them (and stop words) is filler.
var fillerWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`ok okay okey k kk noted note got it sure thanks thank thx ty cheers
		great good nice cool awesome perfect wonderful excellent fantastic lovely brilliant fine super
		yes yeah yep yup ya no nope nah right alright understood understand gotcha roger agreed agree
		hi hello hey bye goodbye see later welcome morning evening night
		sounds sound will do done definitely absolutely certainly course totally exactly indeed true
		haha hahaha lol lmao hmm hm mm oh ah wow uh um well please pleasure problem worries
		glad happy help helpful appreciate appreciated much lot`) {
		m[textnorm.Stem(w)] = true
	}
	return m
}()

// maxFillerBytes bounds the length of a filler turn: longer turns are
// never filler, and cost nothing to tell.
const maxFillerBytes = 80

// isFiller reports whether a turn's text is filler ("OK, noted.",
// "Sure!", "Thanks a lot") that should not take an evidence slot: short,
// with no word outside stop words and fillerWords, and no number.
func isFiller(text string) bool {
	if len(text) > maxFillerBytes {
		return false
	}
	for _, w := range textnorm.Tokens(text) {
		if textnorm.IsStop(w) {
			continue
		}
		if !fillerWords[textnorm.Stem(w)] {
			return false
		}
	}
	return true
}

// splitText cuts s into pieces of at most limit bytes that, concatenated,
// are s. Each cut is made at the last paragraph break within the limit,
// else the last line break, else the last sentence end, else the last
// space (each only when it keeps at least half the limit in the piece),
// else at a rune boundary.
func splitText(s string, limit int) []string {
	if limit <= 0 || len(s) <= limit {
		return []string{s}
	}
	var out []string
	for len(s) > limit {
		cut := cutPoint(s, limit)
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// cutPoint returns where to end the first piece, of at most limit bytes,
// of s (longer than limit): after a break, so that the next piece starts
// with what follows it, or at the last rune boundary within the limit, or
// after the first rune when the limit is shorter than it.
func cutPoint(s string, limit int) int {
	head := s[:limit+1]
	for _, class := range [][]string{{"\n\n"}, {"\n"}, {". ", "? ", "! ", "; "}, {" "}} {
		best := -1
		for _, sep := range class {
			if i := strings.LastIndex(head, sep); i >= 0 && i+len(sep) <= limit {
				best = max(best, i+len(sep))
			}
		}
		if best >= limit/2 {
			return best
		}
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut == 0 { // limit is shorter than the first rune
		_, cut = utf8.DecodeRuneInString(s)
	}
	return cut
}

// cosineFloors are the relevance floors of the embedders they were
// measured with (docs/CHAT.md, "Relevance floor"): the cosine between the
// question (embedded as a query) and an evidence turn (as a passage) that
// a turn sharing a word with the question must also reach.
var cosineFloors = []struct {
	model string // in the embedder's ID
	floor float64
}{
	{"e5-small-v2", e5Floor},
}

// e5Floor is e5-small-v2's floor, measured on the first sessions of the
// LoCoMo and RealMem dev conversations against their own questions and
// 48 everyday requests (docs/CHAT.md).
const e5Floor = 0.78

// cosineFloor returns the floor of the embedder with ID id, if measured.
func cosineFloor(id string) (float64, bool) {
	for _, f := range cosineFloors {
		if strings.Contains(id, f.model) {
			return f.floor, true
		}
	}
	return 0, false
}

// contentTerms returns the index terms of s (textnorm.Terms: stemmed, no
// stop words) that say something: not filler words, at least three
// characters or a number.
func contentTerms(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range textnorm.Terms(s) {
		if fillerWords[w] || (len(w) < 3 && strings.IndexFunc(w, unicode.IsDigit) < 0) {
			continue
		}
		out[w] = true
	}
	return out
}

// sharesTerm reports whether text has one of terms.
func sharesTerm(terms map[string]bool, text string) bool {
	for _, w := range textnorm.Terms(text) {
		if terms[w] {
			return true
		}
	}
	return false
}

// chatRelevant returns the evidence when it clears the relevance floor,
// else nothing: some evidence turn must share a content word with the
// question (contentTerms) and, with an embedder whose floor was measured
// (cosineFloors), that turn's cosine with the question must reach the
// floor. Retrieval always returns its best turns, related or not; this is
// what keeps a message about nothing remembered ("Write a haiku about the
// sea") from getting memory. The evidence of a request that clears it is
// kept whole: a per-turn floor would drop the turns that answer as often
// as the others (docs/CHAT.md). The cosines are computed here with the
// memory's embedder, for the few evidence turns; when they cannot be, the
// words decide alone.
func (s *Server) chatRelevant(ctx context.Context, question string, ev []higmem.Evidence) []higmem.Evidence {
	terms := contentTerms(question)
	var lexical []int
	for i, e := range ev {
		if sharesTerm(terms, e.Turn.Text) {
			lexical = append(lexical, i)
		}
	}
	if len(lexical) == 0 {
		return nil
	}
	emb := s.mem.Options().Embedder
	if emb == nil {
		return ev
	}
	floor, ok := cosineFloor(emb.ID())
	if !ok {
		return ev
	}
	sel := make([]higmem.Evidence, len(lexical))
	for k, i := range lexical {
		sel[k] = ev[i]
	}
	cos, err := cosines(ctx, emb, question, sel)
	if err != nil {
		s.log.Warn("chat: relevance floor by words only", "err", err)
		return ev
	}
	if slices.Max(cos) >= floor {
		return ev
	}
	return nil
}

// cosines returns the cosine of question (embedded as a query) with the
// text of each evidence turn (embedded as stored turns are).
func cosines(ctx context.Context, emb embed.Embedder, question string, ev []higmem.Evidence) ([]float64, error) {
	qv, err := embed.EmbedQuestions(ctx, emb, []string{question})
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(ev))
	for i, e := range ev {
		texts[i] = e.Turn.Text
	}
	tv, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 || len(tv) != len(ev) {
		return nil, fmt.Errorf("embedder %s returned %d and %d vectors for 1 and %d texts", emb.ID(), len(qv), len(tv), len(ev))
	}
	out := make([]float64, len(ev))
	for i, v := range tv {
		out[i] = cosine(qv[0], v)
	}
	return out, nil
}

// cosine is the cosine of a and b (0 when either is zero).
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range min(len(a), len(b)) {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
