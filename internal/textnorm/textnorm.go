// Package textnorm holds the text processing shared by lexical retrieval
// (internal/bm25) and answer scoring (eval/locomo): a word tokenizer for
// retrieval, NLTK's English stop word list, NLTK's Porter stemmer and an
// NLTK-compatible Treebank word tokenizer for BLEU.
//
// Everything here is deterministic, allocation-light and safe for concurrent
// use. The Porter stemmer and WordTokenize are checked against golden files
// produced once with real NLTK (see testdata/gen_nltk.py).
package textnorm

import (
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Tokens splits s into lower-case word tokens for retrieval.
//
// A token is a maximal run of letters, digits and combining marks; every
// other character separates tokens (so "well-known" gives "well", "known" and
// "3.5" gives "3", "5"). An apostrophe (', ’, ‘ or ʼ) between two word
// characters stays inside the token as ASCII "'", except that a trailing
// English clitic is dropped: 's, 't, 'm, 'd, 're, 've and 'll. So
// "Caroline's" gives "caroline", "don't" gives "don", "I'm" gives "i" and
// "O'Brien" gives "o'brien". The stripped forms ("don", "i", "won", ...) are
// all NLTK stop words, so Terms removes them.
//
// ASCII text, the common case, takes a fast path that returns substrings of
// s where no lower-casing is needed; FuzzTokensFastPath proves it equal to
// the general path.
func Tokens(s string) []string {
	if !isASCII(s) {
		return appendTokens(nil, s)
	}
	toks := make([]string, 0, len(s)/5+1)
	eachASCIIToken(s, func(tok string) bool {
		toks = append(toks, tok)
		return true
	})
	return toks
}

// TokensSeq yields the tokens of s one by one, as Tokens returns them, so
// that a caller looking for one token can stop early.
func TokensSeq(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if isASCII(s) {
			eachASCIIToken(s, yield)
			return
		}
		for _, tok := range appendTokens(nil, s) {
			if !yield(tok) {
				return
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// eachASCIIToken calls yield with the tokens of ASCII text s, as
// appendTokens splits them, until yield returns false. It does no per-rune
// work: a token is a substring of s unless it has upper-case letters.
func eachASCIIToken(s string, yield func(string) bool) {
	word := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	start, upper := -1, false
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		tok := s[start:end]
		if upper {
			tok = strings.ToLower(tok)
		}
		tok = trimClitic(tok)
		start, upper = -1, false
		return yield(tok)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case word(c):
			if start < 0 {
				start = i
			}
			if 'A' <= c && c <= 'Z' {
				upper = true
			}
		case c == '\'' && start >= 0 && i+1 < len(s) && word(s[i+1]):
			// An apostrophe between word characters stays in the token.
		default:
			if !flush(i) {
				return
			}
		}
	}
	flush(len(s))
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u2018' || r == '\u02bc'
}

func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// clitics are removed from the end of a token (after lower-casing).
var clitics = [...]string{"'s", "'t", "'m", "'d", "'re", "'ve", "'ll"}

// trimClitic removes the first of clitics that ends tok, unless it is all
// of tok.
func trimClitic(tok string) string {
	// Every clitic is an apostrophe and one or two letters: most tokens
	// have no apostrophe there, and are returned at once.
	n := len(tok)
	if n < 3 || tok[n-2] != '\'' && tok[n-3] != '\'' {
		return tok
	}
	for _, c := range clitics {
		if len(tok) > len(c) && strings.HasSuffix(tok, c) {
			return tok[:len(tok)-len(c)]
		}
	}
	return tok
}

func appendTokens(dst []string, s string) []string {
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		tok := trimClitic(b.String())
		b.Reset()
		dst = append(dst, tok)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isTokenRune(r):
			b.WriteRune(unicode.ToLower(r))
		case isApostrophe(r) && b.Len() > 0:
			// Keep the apostrophe only if a word character follows.
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if i+size < len(s) && isTokenRune(next) {
				b.WriteByte('\'')
			} else {
				flush()
			}
		default:
			flush()
		}
		i += size
	}
	flush()
	return dst
}

// Terms returns the index terms of s: Tokens minus NLTK stop words, each
// Porter-stemmed with Stem. This is what internal/bm25 indexes by default.
//
// Stems are memoised for up to maxStems distinct words: stemming is most of
// the cost of indexing, and conversation reuses few words.
func Terms(s string) []string {
	toks := Tokens(s)
	out := toks[:0]
	for _, t := range toks {
		if IsStop(t) {
			continue
		}
		out = append(out, memoStem(t))
	}
	return out
}

// maxStems bounds the stem memo (a few MB).
const maxStems = 1 << 17

var (
	stems     sync.Map // word -> stem
	stemCount atomic.Int64
)

// memoStem is Stem, memoised for up to maxStems words.
func memoStem(w string) string {
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	if stemCount.Load() >= maxStems {
		return Stem(w)
	}
	// A copy, so that the memo never holds on to the text w came from.
	w = strings.Clone(w)
	s := Stem(w)
	if _, loaded := stems.LoadOrStore(w, s); !loaded {
		stemCount.Add(1)
	}
	return s
}
