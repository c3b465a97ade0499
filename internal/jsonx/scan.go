package jsonx

import (
	"strings"
	"unicode/utf8"
)

// Scanner reads the tokens of a JSON text one at a time, for the
// hand-written readers that walk a document of a shape they know
// without decoding it into interface values: Parse's strict path
// (strict.go) and llm's direct decoder of reply types (llm/fastdecode.go).
// It reads only strings that decode to their own text (no escape, valid
// UTF-8) and numbers by the JSON grammar; on anything else a method
// reports false, and its reader gives up, leaving a full decoder to
// decide.
type Scanner struct {
	// Text is the text read; Pos is the index of the next byte to read.
	Text string
	Pos  int
	// NoLineSep makes Str refuse a string holding U+2028 or U+2029,
	// which encoding/json decodes as they are but encodes escaped.
	NoLineSep bool
}

// Space skips JSON white space.
func (r *Scanner) Space() {
	for r.Pos < len(r.Text) {
		switch r.Text[r.Pos] {
		case ' ', '\t', '\n', '\r':
			r.Pos++
		default:
			return
		}
	}
}

// Peek skips white space and returns the next byte without reading it,
// or 0 at the end of the text (0 starts no JSON value).
func (r *Scanner) Peek() byte {
	r.Space()
	if r.Pos >= len(r.Text) {
		return 0
	}
	return r.Text[r.Pos]
}

// Byte skips white space and reads c when it comes next. It reports
// whether it did.
func (r *Scanner) Byte(c byte) bool {
	if r.Peek() != c {
		return false
	}
	r.Pos++
	return true
}

// End skips white space and reports whether the text ends there.
func (r *Scanner) End() bool {
	r.Space()
	return r.Pos == len(r.Text)
}

// Next reads the ',' or the close byte (']' or '}') after an item of a
// list or a member of an object, after white space: more is true after
// a ',', false after close; ok is false when neither comes next.
func (r *Scanner) Next(close byte) (more, ok bool) {
	switch r.Peek() {
	case ',':
		r.Pos++
		return true, true
	case close:
		r.Pos++
		return false, true
	}
	return false, false
}

// Literal reads w (true, false or null) when the text goes on with it.
// It reports whether it did.
func (r *Scanner) Literal(w string) bool {
	if !strings.HasPrefix(r.Text[r.Pos:], w) {
		return false
	}
	r.Pos += len(w)
	return true
}

// Str reads the string starting at Pos, when it decodes to its own text:
// it has no escape and no control character, and it is valid UTF-8 (and,
// with NoLineSep, holds no U+2028 or U+2029). It returns what lies
// between the quotes. ok is false, and Pos left as it is, for any other
// string or when no string starts at Pos.
func (r *Scanner) Str() (text string, ok bool) {
	s := r.Text
	if r.Pos >= len(s) || s[r.Pos] != '"' {
		return "", false
	}
	ascii := true
	for j := r.Pos + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '"':
			text = s[r.Pos+1 : j]
			if !ascii && !r.plain(text) {
				return "", false
			}
			r.Pos = j + 1
			return text, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// plain reports whether a string's text, not all ASCII, is one Str
// reads: valid UTF-8, without U+2028 and U+2029 under NoLineSep.
func (r *Scanner) plain(text string) bool {
	return utf8.ValidString(text) &&
		!(r.NoLineSep && (strings.Contains(text, "\u2028") || strings.Contains(text, "\u2029")))
}

// Number reads the number starting at Pos, when it is one by the JSON
// grammar, and returns its text. ok is false, and Pos left as it is,
// otherwise.
func (r *Scanner) Number() (text string, ok bool) {
	s, i := r.Text, r.Pos
	digits := func(j int) int {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s):
		return "", false
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		i = digits(i + 1)
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return "", false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return "", false
		}
		i = j
	}
	text = s[r.Pos:i]
	r.Pos = i
	return text, true
}
