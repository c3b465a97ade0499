// Package passage cuts a long text into passages: chunks of about Target
// words that end, where they can, on a paragraph, line or sentence
// boundary.
//
// A long turn (an assistant's reply of several thousand characters) is
// indexed as passages, each with its own vector and lexical entry, so that
// retrieval can select the part of it that matches a question and the
// evidence can show that part alone. A text of at most MinWords words is
// not cut (Long reports false): LoCoMo-like chats, whose turns are a
// sentence or two, have no passages at all.
//
// Split is pure and deterministic: the spans it returns cover the text
// from its first byte to its last, one after the other, each holds at
// least one character that is not white space, and each starts and ends
// on a UTF-8 character boundary. A passage's text is the text of its span
// with its surrounding white space trimmed (Text).
package passage

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// MinWords: a text of more words than this is long and cut into
	// passages (about 600 characters of English prose, four or five
	// sentences: shorter turns are shown whole at little cost).
	MinWords = 120
	// Target is the number of words a passage aims at (a paragraph,
	// about 500 characters; well within the 512 tokens of the small
	// embedders).
	Target = 90
	// Shortest and Longest bound a passage's words (but the last may be
	// shorter when the text is): the cut is chosen among the boundaries
	// in that range.
	Shortest = 40
	Longest  = 130
	// MaxWordBytes: a run of more bytes without white space (a URL, a
	// base64 blob, a language written without spaces) counts as one word
	// per MaxWordBytes bytes and may be cut between them, so that no
	// passage is much longer than Longest*MaxWordBytes bytes.
	MaxWordBytes = 64
	// Version names this definition of a passage: vectors stored under
	// another version are made again.
	Version = "p120t90"
)

// Span is one passage of a text: the bytes [Start, End).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Text returns the passage's text in text: its span with the white space
// around it trimmed.
func (s Span) Text(text string) string { return strings.TrimSpace(text[s.Start:s.End]) }

// word is one word of a text: its bytes and the strength of the boundary
// after it (see boundary).
type word struct {
	start, end int
	after      int8
}

// Boundary strengths, weakest first: a cut prefers the strongest
// boundary in its range.
const (
	inWord    = -1 // inside a run longer than MaxWordBytes
	plain     = 0  // between words
	clause    = 1  // after , ; : or a dash
	sentence  = 2  // after . ! ? (with closing quotes or brackets)
	line      = 3  // a line break
	paragraph = 4  // a blank line
)

// words splits text into words (runs without white space, longer runs
// cut every MaxWordBytes bytes on a character boundary) and rates the
// boundary after each.
func words(text string) []word {
	var ws []word
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		start := i
		for i < len(text) {
			r, size = utf8.DecodeRuneInString(text[i:])
			if unicode.IsSpace(r) {
				break
			}
			if i-start+size > MaxWordBytes && i > start {
				ws = append(ws, word{start: start, end: i, after: inWord})
				start = i
			}
			i += size
		}
		ws = append(ws, word{start: start, end: i, after: strengthAfter(text, start, i)})
	}
	return ws
}

// strengthAfter rates the boundary after the word text[start:end].
func strengthAfter(text string, start, end int) int8 {
	nl := 0
	for j := end; j < len(text); {
		r, size := utf8.DecodeRuneInString(text[j:])
		if !unicode.IsSpace(r) {
			break
		}
		if r == '\n' {
			nl++
		}
		j += size
	}
	switch {
	case nl >= 2:
		return paragraph
	case nl == 1:
		return line
	}
	w := strings.TrimRight(text[start:end], "\"')]}»”’*_")
	if w == "" {
		return plain
	}
	last, _ := utf8.DecodeLastRuneInString(w)
	switch last {
	case '.', '!', '?', '…', '。', '！', '？':
		return sentence
	case ',', ';', ':', '-', '—', '–':
		return clause
	}
	return plain
}

// Count returns the number of words of text as Split counts them.
func Count(text string) int { return len(words(text)) }

// Long reports whether text is cut into passages: it has more than
// MinWords words.
func Long(text string) bool {
	// MinWords+1 words take at least 2*MinWords+1 bytes.
	if len(text) <= 2*MinWords {
		return false
	}
	return Count(text) > MinWords
}

// Split returns the passages of text, in order, or nil when text is not
// long (see Long). The spans cover text entirely: the first starts at 0,
// each starts where the one before it ends, the last ends at len(text).
func Split(text string) []Span {
	if len(text) <= 2*MinWords {
		return nil
	}
	ws := words(text)
	if len(ws) <= MinWords {
		return nil
	}
	var spans []Span
	start := 0 // byte where the current passage starts
	for s := 0; s < len(ws); {
		rest := len(ws) - s
		if rest <= Longest {
			spans = append(spans, Span{Start: start, End: len(text)})
			break
		}
		// The passage ends after word e-1, e in [s+Shortest, hi]; the
		// rest keeps at least Shortest words.
		hi := min(s+Longest, len(ws)-Shortest)
		best, bestStrength, bestDist := -1, int8(-2), 0
		for e := s + Shortest; e <= hi; e++ {
			st := ws[e-1].after
			dist := e - (s + Target)
			if dist < 0 {
				dist = -dist
			}
			if st > bestStrength || st == bestStrength && dist < bestDist {
				best, bestStrength, bestDist = e, st, dist
			}
		}
		end := ws[best].start
		spans = append(spans, Span{Start: start, End: end})
		start, s = end, best
	}
	return spans
}
