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
	"strings"
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
func Tokens(s string) []string {
	return appendTokens(nil, s)
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

func appendTokens(dst []string, s string) []string {
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		tok := b.String()
		b.Reset()
		for _, c := range clitics {
			if len(tok) > len(c) && strings.HasSuffix(tok, c) {
				tok = tok[:len(tok)-len(c)]
				break
			}
		}
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
func Terms(s string) []string {
	toks := appendTokens(nil, s)
	out := toks[:0]
	for _, t := range toks {
		if IsStop(t) {
			continue
		}
		out = append(out, Stem(t))
	}
	return out
}
