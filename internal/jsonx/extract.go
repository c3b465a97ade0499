package jsonx

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxCandidates bounds how many start positions are tried, so that a long
// reply full of brackets costs O(maxCandidates·n), not O(n²).
const maxCandidates = 32

// maxDepth bounds nesting in the repair pass; deeper input is not JSON a
// model meant to write (encoding/json itself stops at 10000).
const maxDepth = 512

// candidate is one JSON document recovered from a reply.
type candidate struct {
	doc []byte
	// dubious is true when the repair had to guess at content (bare words
	// turned into strings, stray characters dropped, truncated tails
	// cut). Clean candidates are preferred over dubious ones.
	dubious bool
	// start is the byte offset in the text where the candidate began.
	start int
	// nested is true when the candidate lies inside an earlier one.
	nested bool
}

// Extract finds the first JSON value in a model reply and returns it as
// compact, valid JSON. It accepts, in order of preference: the whole reply
// when it is valid JSON; the content of a ``` code fence; the first object
// or array in the text, repaired when needed (trailing or missing commas,
// comments, single quotes, unquoted keys, Python literals, raw newlines in
// strings, truncation closed at the last complete value).
//
// Extract returns an error wrapping ErrNoJSON when the text holds nothing it
// can read as JSON.
func Extract(text string) (json.RawMessage, error) {
	cands := candidates(text)
	if len(cands) == 0 {
		return nil, noJSONError(text)
	}
	return json.RawMessage(cands[0].doc), nil
}

// candidates returns every JSON document recoverable from text, best
// first: the whole text or a fence body when strictly valid, then values not
// nested in an earlier one (cleanly parsed before repaired, objects before
// arrays, in text order), then nested values.
func candidates(text string) []candidate {
	text = strings.TrimPrefix(text, "\ufeff")
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	var strict, found []candidate
	seen := map[string]bool{}
	// 1. The whole reply (wholeReply), or the content of code fences, as
	// strict JSON.
	if doc, ok := compactValid(trimmed); ok {
		seen[string(doc)] = true
		strict = append(strict, candidate{doc: doc})
	}
	for _, body := range fences(text) {
		if doc, ok := compactValid(strings.TrimSpace(body)); ok && !seen[string(doc)] {
			seen[string(doc)] = true
			strict = append(strict, candidate{doc: doc})
		}
	}
	// 2. Objects and arrays found by scanning, repaired.
	tried, end := 0, 0
	for i := 0; i < len(text) && tried < maxCandidates; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tried++
		doc, dub, n, ok := repair(text[i:])
		if !ok || seen[string(doc)] {
			continue
		}
		seen[string(doc)] = true
		found = append(found, candidate{doc: doc, dubious: dub, start: i, nested: i < end})
		end = max(end, i+n)
	}
	rank := func(c candidate) int {
		r := 0
		if c.nested {
			r += 4
		}
		if c.dubious {
			r += 2
		}
		if c.doc[0] != '{' {
			r++
		}
		return r
	}
	sort.SliceStable(found, func(a, b int) bool { return rank(found[a]) < rank(found[b]) })
	return append(strict, found...)
}

// wholeReply returns the whole of text (less a leading byte order mark
// and the space around it) compacted, when it is valid JSON: the first
// candidate of text, as candidates finds it.
func wholeReply(text string) ([]byte, bool) {
	return compactValid(strings.TrimSpace(strings.TrimPrefix(text, "\ufeff")))
}

// compactValid reports whether s is valid JSON and returns it compacted.
func compactValid(s string) ([]byte, bool) {
	if s == "" || !json.Valid([]byte(s)) {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// fences returns the bodies of ``` code fences in text. An opening fence
// without a closing one (a truncated reply) yields the rest of the text.
func fences(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		rest := text[i+3:]
		// Skip the info string ("json", "JSON", "javascript") up to the newline.
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[\"") {
			rest = rest[nl+1:]
		}
		j := strings.Index(rest, "```")
		if j < 0 {
			return append(out, rest)
		}
		out = append(out, rest[:j])
		text = rest[j+3:]
	}
}

// Container states in the repair pass.
const (
	stKey   = iota // object: expecting a key or '}'
	stColon        // object: key read, expecting ':'
	stValue        // expecting a value (object after ':', or array)
	stComma        // a value was read, expecting ',' or a close
)

// frame is one open container in the repair pass.
type frame struct {
	obj      bool // '{' rather than '['
	state    int
	nonEmpty bool // a member was written, so the next needs a comma
	// restore is the output length to cut back to when the member being
	// written is incomplete at end of input.
	restore int
}

// repair reads one JSON object or array from the start of s (which begins
// with '{' or '[') and writes it out as valid compact JSON, fixing what a
// language model typically gets wrong. It stops at the bracket that closes
// the first one. ok is false when nothing valid came out.
func repair(s string) (doc []byte, dubious bool, n int, ok bool) {
	out := make([]byte, 0, len(s)+8)
	var stack []frame
	top := func() *frame { return &stack[len(stack)-1] }

	// beginMember writes the separators a new key or value needs in the
	// current container (commas and colons are written lazily, which drops
	// trailing and doubled ones and adds missing ones).
	beginMember := func() {
		f := top()
		if f.state == stComma || f.state == stKey {
			f.restore = len(out)
			if f.nonEmpty {
				out = append(out, ',')
			}
			if f.obj {
				f.state = stKey
			} else {
				f.state = stValue
			}
		}
		if f.obj && f.state == stColon {
			out = append(out, ':')
			f.state = stValue
		}
	}
	// endValue marks the current container as having a complete member.
	endValue := func() {
		if len(stack) == 0 {
			return
		}
		f := top()
		f.state = stComma
		f.nonEmpty = true
	}
	// cut drops the incomplete member of the innermost container.
	cut := func() {
		f := top()
		out = out[:f.restore]
		f.state = stComma
		if !f.nonEmpty {
			f.state = stValue
			if f.obj {
				f.state = stKey
			}
		}
	}

	i := 0
	closed := false
	for i < len(s) && !closed {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return nil, false, 0, false
			}
			if len(stack) > 0 {
				if f := top(); f.obj && (f.state == stKey || f.state == stComma) {
					// A container where a key belongs: not sensibly
					// repairable from here; a later start may do better.
					return nil, false, 0, false
				}
				beginMember()
			}
			stack = append(stack, frame{obj: c == '{', state: stValue, restore: len(out) + 1})
			if c == '{' {
				top().state = stKey
			}
			out = append(out, c)
			i++
		case c == '}' || c == ']':
			want := c == '}'
			// Find the container this closes; close any inner ones on the way.
			k := len(stack) - 1
			for k >= 0 && stack[k].obj != want {
				k--
			}
			if k < 0 {
				dubious = true // stray close bracket: drop it
				i++
				continue
			}
			if k != len(stack)-1 {
				dubious = true
			}
			for len(stack) > k {
				closeTop(&out, top())
				stack = stack[:len(stack)-1]
				endValue()
			}
			i++
			if len(stack) == 0 {
				closed = true
			}
		case c == ',':
			i++ // commas are written lazily by beginMember
		case c == ':':
			f := top()
			if f.obj && f.state == stColon {
				out = append(out, ':')
				f.state = stValue
			} else {
				dubious = true
			}
			i++
		case c == '"' || c == '\'':
			f := top()
			isKey := f.obj && (f.state == stKey || f.state == stComma)
			beginMember()
			n, complete, bad := readString(s[i:], c, &out)
			dubious = dubious || bad
			i += n
			if !complete {
				// Truncated inside a string.
				if isKey {
					cut()
				} else {
					out = append(out, '"')
					endValue()
				}
				continue
			}
			if isKey {
				top().state = stColon
			} else {
				endValue()
			}
		case c == '/' && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*'):
			if s[i+1] == '/' {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					i = len(s)
				} else {
					i += j
				}
			} else {
				j := strings.Index(s[i+2:], "*/")
				if j < 0 {
					i = len(s)
				} else {
					i += j + 4
				}
			}
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789+-.eE", s[j]) >= 0 {
				j++
			}
			tok := s[i:j]
			f := top()
			if f.obj && (f.state == stKey || f.state == stComma) {
				// A number where a key belongs: quote it as a key.
				beginMember()
				out = strconv.AppendQuote(out, tok)
				top().state = stColon
				dubious = true
				i = j
				continue
			}
			beginMember()
			num, okNum := normNumber(tok)
			switch {
			case okNum:
				out = append(out, num...)
				if num != tok {
					dubious = true
				}
				endValue()
			case j == len(s):
				cut() // truncated number
			default:
				out = appendJSONString(out, tok)
				dubious = true
				endValue()
			}
			i = j
		case isWordStart(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			word := s[i:j]
			f := top()
			if f.obj && (f.state == stKey || f.state == stComma) {
				// Unquoted key; only when a ':' follows, else it is prose.
				k := j
				for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				if k < len(s) && s[k] == ':' {
					beginMember()
					out = appendJSONString(out, word)
					top().state = stColon
					i = j
					continue
				}
				dubious = true
				i = j
				continue
			}
			beginMember()
			if j == len(s) && !isLiteral(word) {
				cut() // truncated literal
				i = j
				continue
			}
			switch word {
			case "true", "True", "TRUE":
				out = append(out, "true"...)
			case "false", "False", "FALSE":
				out = append(out, "false"...)
			case "null", "Null", "NULL", "None", "nil", "undefined", "NaN", "Infinity":
				out = append(out, "null"...)
			default:
				out = appendJSONString(out, word)
				dubious = true
			}
			endValue()
			i = j
		default:
			// Any other character outside a string is noise: drop it.
			dubious = true
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	if !closed {
		// Truncated: drop an incomplete member, then close every container.
		dubious = true
		for len(stack) > 0 {
			f := top()
			if f.obj && (f.state == stColon || f.state == stValue) {
				cut()
			}
			closeTop(&out, top())
			stack = stack[:len(stack)-1]
			endValue()
		}
	}
	if !json.Valid(out) || (!closed && len(out) == 2) {
		// Invalid, or an empty container conjured from a lone bracket.
		return nil, false, 0, false
	}
	return out, dubious, i, true
}

// closeTop writes the closing bracket of f, filling a missing value with
// null when a key was written without one.
func closeTop(out *[]byte, f *frame) {
	if f.obj {
		switch f.state {
		case stColon:
			*out = append(*out, ":null"...)
		case stValue:
			*out = append(*out, "null"...)
		}
		*out = append(*out, '}')
		return
	}
	*out = append(*out, ']')
}

// readString reads a string literal quoted with q from the start of s and
// appends it to out as a valid JSON string (without the closing quote when
// the input ends first). It returns the bytes consumed, whether the string
// was terminated, and whether anything had to be fixed.
func readString(s string, q byte, out *[]byte) (n int, complete bool, fixed bool) {
	*out = append(*out, '"')
	fixed = q != '"'
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == q && !closesString(s, i+1):
			// A quote inside the text ("He said "hi"", 'Caroline's'):
			// models forget to escape them. Keep it as a character.
			if q == '"' {
				*out = append(*out, '\\', '"')
			} else {
				*out = append(*out, '\'')
			}
			i++
			fixed = true
		case c == q:
			*out = append(*out, '"')
			return i + 1, true, fixed
		case c == '\\':
			if i+1 >= len(s) {
				return len(s), false, true // lone backslash at the end: drop
			}
			e := s[i+1]
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				*out = append(*out, '\\', e)
				i += 2
			case 'u':
				if i+6 <= len(s) && isHex4(s[i+2:i+6]) {
					*out = append(*out, s[i:i+6]...)
					i += 6
				} else if i+6 > len(s) && isHexPrefix(s[i+2:]) {
					return len(s), false, true // truncated \u escape: drop
				} else {
					*out = append(*out, '\\', '\\', 'u')
					i += 2
					fixed = true
				}
			case '\'':
				*out = append(*out, '\'')
				i += 2
			default:
				// Invalid escape: keep the backslash literally.
				*out = append(*out, '\\', '\\')
				i++
				fixed = true
			}
		case c == '"': // inside a single-quoted string
			*out = append(*out, '\\', '"')
			i++
		case c < 0x20:
			switch c {
			case '\n':
				*out = append(*out, '\\', 'n')
			case '\r':
				*out = append(*out, '\\', 'r')
			case '\t':
				*out = append(*out, '\\', 't')
			default:
				*out = append(*out, `\u00`...)
				*out = append(*out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
		default:
			*out = append(*out, c)
			i++
		}
	}
	return len(s), false, true
}

// isLiteral reports whether w is a complete JSON or Python literal.
func isLiteral(w string) bool {
	switch w {
	case "true", "false", "null", "True", "False", "None":
		return true
	}
	return false
}

// closesString reports whether a quote followed by s[j:] ends a string:
// what follows must be end of input, a newline, or one of , : } ] " as in
// valid JSON. Any other character means the quote is part of the text.
func closesString(s string, j int) bool {
	for ; j < len(s); j++ {
		switch s[j] {
		case ' ', '\t':
			continue
		case '\n', '\r', ',', ':', '}', ']', '"', '\'':
			return true
		}
		return false
	}
	return true
}

func isHex4(s string) bool {
	for i := 0; i < 4; i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHexPrefix(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isWordStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isWordByte(c byte) bool {
	return isWordStart(c) || (c >= '0' && c <= '9') || c == '-'
}

// normNumber returns tok as a JSON number, fixing forms like "+1", ".5"
// or "1." that models write. ok is false when tok is not a number.
func normNumber(tok string) (string, bool) {
	if json.Valid([]byte(tok)) {
		return tok, true
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || f != f || f > 1e308 || f < -1e308 {
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// appendJSONString appends s as a JSON string.
func appendJSONString(out []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(out, b...)
}
