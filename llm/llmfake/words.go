package llmfake

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The fake's notion of a word, and the word overlap it ranks turns by.
// A token is a maximal run of letters and digits of the lower-cased text
// (strings.ToLower, then split at every rune that is neither a letter nor
// a digit; invalid UTF-8 splits too); a content word is a token longer
// than two bytes that is not in fakeStop. The scanner below finds the
// tokens without building the lower-cased copy or a slice of them, and
// wordSet counts shared words without a map per comparison: select
// prompts compare one question with hundreds of turns.

// fakeStop is a small stop list; the fake needs no more.
var fakeStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about after again all also am an and any are as at be because been before
	being but by can could did do does doing for from had has have having he her here hers him his how i if in into
	is it its just me more most my no not now of on once only or other our out over own really same she so some such
	than that the their them then there these they this those through to too under until up very was we were what
	when where which while who whom why will with would you your yours yeah wow oh hey thanks great cool so
	speaker says`) {
		fakeStop[w] = true
	}
}

// asciiWord maps an ASCII byte to its lower case when it is a letter or a
// digit, and to 0 when it separates tokens.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c] = c
		t[c-'a'+'A'] = c
	}
	return t
}()

// scanner yields the tokens of a text one at a time into a buffer it
// reuses. The zero value is ready to use.
type scanner struct {
	buf []byte
}

// next returns the token of s that starts at or after byte i, lower-cased,
// and the index just past it; the token is empty when s has no more. The
// token lives in the scanner's buffer: it is valid until the next call.
func (sc *scanner) next(s string, i int) ([]byte, int) {
	sc.buf = sc.buf[:0]
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if l := asciiWord[c]; l != 0 {
				sc.buf = append(sc.buf, l)
			} else if len(sc.buf) > 0 {
				return sc.buf, i
			}
			continue
		}
		// As strings.ToLower does: lower the rune (an invalid byte reads
		// as utf8.RuneError, which is no letter), then test the result.
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r = unicode.ToLower(r); unicode.IsLetter(r) || unicode.IsDigit(r) {
			sc.buf = utf8.AppendRune(sc.buf, r)
		} else if len(sc.buf) > 0 {
			return sc.buf, i
		}
	}
	return sc.buf, i
}

// content reports whether token w is a content word: longer than two
// bytes and not a stop word.
func content(w []byte) bool {
	return len(w) > 2 && !fakeStop[string(w)]
}

// words returns the lower-case content words of s, repeats included.
func words(s string) []string {
	var out []string
	var sc scanner
	for w, i := sc.next(s, 0); len(w) > 0; w, i = sc.next(s, i) {
		if content(w) {
			out = append(out, string(w))
		}
	}
	return out
}

// Overlap counts the distinct content words (lower-case, longer than two
// letters, not stop words) that a and b share. It is the similarity the
// scripted fakes use, exported for other fakes built on the same idea.
func Overlap(a, b string) int { return overlap(a, b) }

// Keywords returns the first n distinct content words of s.
func Keywords(s string, n int) []string { return keywords(s, n) }

// overlap counts distinct content words shared by a and b.
func overlap(a, b string) int {
	var ws wordSet
	ws.reset(a)
	return ws.count(b)
}

// keywords returns the first n distinct content words of s, or all of them
// when n < 1; never nil.
func keywords(s string, n int) []string {
	out := []string{}
	var sc scanner
	for w, i := sc.next(s, 0); len(w) > 0; w, i = sc.next(s, i) {
		if !content(w) || containsBytes(out, w) {
			continue
		}
		out = append(out, string(w))
		if len(out) == n {
			break
		}
	}
	return out
}

// containsBytes reports whether ss holds a string equal to w.
func containsBytes(ss []string, w []byte) bool {
	for _, s := range ss {
		if s == string(w) {
			return true
		}
	}
	return false
}

// wordSet holds the distinct content words of one text, to count how many
// of them other texts contain: overlap(a, b) is
//
//	var ws wordSet
//	ws.reset(a)
//	ws.count(b)
//
// and a wordSet reset once counts against any number of texts. Small sets
// (a question) are searched in order, larger ones through an index.
type wordSet struct {
	words []string       // distinct, in first-seen order
	index map[string]int // words[i] → i, for sets above smallSet
	found []bool         // found[i]: words[i] seen by the running count
	sc    scanner
}

// smallSet is the size up to which a wordSet is searched without an index.
const smallSet = 16

// reset makes ws the distinct content words of s.
func (ws *wordSet) reset(s string) {
	ws.words = ws.words[:0]
	clear(ws.index)
	for w, i := ws.sc.next(s, 0); len(w) > 0; w, i = ws.sc.next(s, i) {
		if content(w) && ws.find(w) < 0 {
			ws.add(string(w))
		}
	}
	if cap(ws.found) < len(ws.words) {
		ws.found = make([]bool, len(ws.words))
	}
	ws.found = ws.found[:len(ws.words)]
}

// add appends the new word w.
func (ws *wordSet) add(w string) {
	ws.words = append(ws.words, w)
	switch {
	case ws.index != nil:
		ws.index[w] = len(ws.words) - 1
	case len(ws.words) > smallSet:
		ws.index = make(map[string]int, 2*len(ws.words))
		for i, w := range ws.words {
			ws.index[w] = i
		}
	}
}

// find returns the index of w in ws.words, or -1.
func (ws *wordSet) find(w []byte) int {
	if len(ws.words) > smallSet {
		if i, ok := ws.index[string(w)]; ok {
			return i
		}
		return -1
	}
	for i, s := range ws.words {
		if s == string(w) {
			return i
		}
	}
	return -1
}

// count returns how many words of ws occur in the texts, taken together
// (a word found in two of them counts once).
func (ws *wordSet) count(texts ...string) int {
	if len(ws.words) == 0 {
		return 0
	}
	clear(ws.found)
	n := 0
	for _, s := range texts {
		for w, i := ws.sc.next(s, 0); len(w) > 0; w, i = ws.sc.next(s, i) {
			// Words of ws are longer than two bytes: shorter tokens
			// need no search.
			if len(w) <= 2 {
				continue
			}
			if j := ws.find(w); j >= 0 && !ws.found[j] {
				ws.found[j] = true
				if n++; n == len(ws.words) {
					return n
				}
			}
		}
	}
	return n
}
