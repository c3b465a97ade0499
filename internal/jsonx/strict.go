package jsonx

import (
	"strconv"
	"strings"
)

// The strict path: Parse's shortcut for a reply that is already a JSON
// document of the schema's exact shape, as a model that follows its
// instructions writes it (every select reply of a retrieval round). It
// reads the reply once, checking it against the schema as it goes, and
// writes the canonical document straight from the text, without decoding
// it into interface values, coercing and encoding them again (fit).
//
// It accepts only what fit would leave as it is, so that its document is
// fit's, byte for byte: anything fit might rewrite or reject (a value of
// another type than the schema's, a key the schema does not declare, a
// duplicate or missing key, an enum, a string with an escape or with a
// character the encoder escapes, a number an integer schema would
// rewrite, a bare value the schema would wrap) makes it give up, and
// Parse goes the tolerant way. TestStrictMatchesFit and FuzzStrict check
// that both agree wherever the strict path answers.

// strictMaxDepth bounds the nesting the strict path follows; deeper
// documents go the tolerant way.
const strictMaxDepth = 32

// strictMaxMembers bounds the members of one object the strict path
// sorts (it keeps their places on the stack).
const strictMaxMembers = 16

// strict returns the canonical document of text fitted to s when text
// (less a leading byte order mark and the space around it, as
// wholeReply reads it) is a JSON document of s's exact shape. ok is false
// when the tolerant path must decide.
func (s *schema) strict(text string) (doc []byte, ok bool) {
	// A bare value is wrapped into an object (schema.wrap) only when the
	// schema admits objects alone, and then value refuses it by its type.
	t := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	// NoLineSep: the canonical encoding escapes U+2028 and U+2029.
	r := strictReader{Scanner: Scanner{Text: t, NoLineSep: true}, out: make([]byte, 0, len(t))}
	if !r.value(s, 0) || !r.End() {
		return nil, false
	}
	return r.out, true
}

// strictReader reads one document for schema.strict, and writes its
// canonical form to out.
type strictReader struct {
	Scanner
	out []byte
}

// value reads one value that s admits as it is, and writes it.
func (r *strictReader) value(s *schema, depth int) bool {
	if depth > strictMaxDepth || len(s.Enum) > 0 {
		return false
	}
	c := r.Peek()
	if len(s.Types) == 0 {
		// An untyped schema takes any value as it is (coerce checks
		// its enum alone); only scalars are written here, which need
		// no re-encoding.
		return r.scalar(c, true, true, true, true)
	}
	switch {
	case c == '{':
		return s.allows("object") && r.object(s, depth)
	case c == '[':
		return s.allows("array") && r.array(s, depth)
	case c == '"':
		return s.allows("string") && r.scalar(c, true, false, false, false)
	case c == 't' || c == 'f':
		return s.allows("boolean") && r.scalar(c, false, true, false, false)
	case c == 'n':
		// coerce: null where the schema admits null stays null;
		// elsewhere it may be coerced ([] for a list).
		return s.allows("null") && r.scalar(c, false, false, false, true)
	case c == '-' || (c >= '0' && c <= '9'):
		if s.allows("number") {
			return r.scalar(c, false, false, true, false)
		}
		// An integer-only schema rewrites an integral number to its
		// integer form ("5.0" → "5"): only a plain int64 stays as it is.
		return s.allows("integer") && r.integer()
	}
	return false
}

// scalar reads and writes a string, boolean, number or null, whichever
// the flags allow; c is the byte it starts with (Peek's).
func (r *strictReader) scalar(c byte, str, boolean, number, null bool) bool {
	switch {
	case c == '"':
		return str && r.str()
	case c == 't':
		return boolean && r.literal("true")
	case c == 'f':
		return boolean && r.literal("false")
	case c == 'n':
		return null && r.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return number && r.number()
	}
	return false
}

// literal reads and writes the literal w.
func (r *strictReader) literal(w string) bool {
	if !r.Literal(w) {
		return false
	}
	r.out = append(r.out, w...)
	return true
}

// str reads a string and writes it as it is. A string the canonical
// encoding would write differently (an escape, invalid UTF-8, U+2028 or
// U+2029) or that is not valid JSON (a control character, no closing
// quote) is refused.
func (r *strictReader) str() bool {
	start := r.Pos
	if _, ok := r.Str(); !ok {
		return false
	}
	r.out = append(r.out, r.Text[start:r.Pos]...)
	return true
}

// number reads a JSON number and writes it as it is (decoded as a
// json.Number and encoded again, a number keeps its text).
func (r *strictReader) number() bool {
	tok, ok := r.Number()
	if !ok {
		return false
	}
	r.out = append(r.out, tok...)
	return true
}

// integer reads a number written as a plain integer within int64 (which
// an integer schema keeps as it is) and writes it.
func (r *strictReader) integer() bool {
	tok, ok := r.Number()
	if !ok {
		return false
	}
	// ParseInt refuses a fraction and an exponent.
	if _, err := strconv.ParseInt(tok, 10, 64); err != nil {
		return false
	}
	r.out = append(r.out, tok...)
	return true
}

// member is one member of an object written by object: its key and
// where it lies in out.
type member struct {
	key        string
	start, end int
}

// object reads an object whose keys are all properties of s, once each,
// the required ones among them, and writes it with its keys sorted (as
// the canonical encoding of a map writes them).
func (r *strictReader) object(s *schema, depth int) bool {
	r.Pos++ // '{'
	base := len(r.out)
	r.out = append(r.out, '{')
	var stack [strictMaxMembers]member
	members := stack[:0]
	sorted := true
	// more: another member comes (after '{' or a ',').
	for more := !r.Byte('}'); more; {
		if len(members) == strictMaxMembers {
			return false
		}
		r.Space()
		at := r.Pos
		key, ok := r.Str()
		if !ok {
			return false
		}
		p := s.Properties[key]
		if p == nil {
			// An undeclared key is kept, or renamed to a declared
			// one (coerceObject): not strict.
			return false
		}
		for _, m := range members {
			if m.key == key {
				return false // the decoded map keeps the last
			}
		}
		if n := len(members); n > 0 && members[n-1].key > key {
			sorted = false
		}
		start := len(r.out)
		if len(members) > 0 {
			r.out = append(r.out, ',')
		}
		r.out = append(r.out, r.Text[at:r.Pos]...)
		r.out = append(r.out, ':')
		if !r.Byte(':') || !r.value(p, depth+1) {
			return false
		}
		members = append(members, member{key: key, start: start, end: len(r.out)})
		if more, ok = r.Next('}'); !ok {
			return false
		}
	}
	for _, k := range s.Required {
		found := false
		for _, m := range members {
			if m.key == k {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if !sorted {
		r.sortMembers(base+1, members)
	}
	r.out = append(r.out, '}')
	return true
}

// sortMembers rewrites the members written from out[from:] in key order.
func (r *strictReader) sortMembers(from int, members []member) {
	written := string(r.out[from:])
	// Insertion sort: objects are small.
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].key < members[j-1].key; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
	r.out = r.out[:from]
	for i, m := range members {
		text := written[m.start-from : m.end-from]
		if text[0] == ',' {
			text = text[1:]
		}
		if i > 0 {
			r.out = append(r.out, ',')
		}
		r.out = append(r.out, text...)
	}
}

// array reads an array whose items s's items admit as they are, and
// writes it.
func (r *strictReader) array(s *schema, depth int) bool {
	items := s.Items
	if items == nil {
		items = &untyped
	}
	r.Pos++ // '['
	r.out = append(r.out, '[')
	if r.Byte(']') {
		r.out = append(r.out, ']')
		return true
	}
	for n := 0; ; n++ {
		if n > 0 {
			r.out = append(r.out, ',')
		}
		if !r.value(items, depth+1) {
			return false
		}
		more, ok := r.Next(']')
		if !more {
			if ok {
				r.out = append(r.out, ']')
			}
			return ok
		}
	}
}

// untyped is the schema of the items of an array schema without items:
// any value, kept as it is.
var untyped = schema{}
