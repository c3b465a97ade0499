// Package jsonx reads JSON out of language-model replies.
//
// Models, small local ones especially, wrap JSON in code fences and prose,
// leave trailing commas, use single quotes, stop mid-object when they hit the
// token limit, or answer a one-field schema with a bare value. Extract finds
// and repairs the JSON; Parse also fits it to a JSON Schema: it wraps a bare
// value into the schema's single required key, coerces values where that is
// safe ("3" for a number, a lone string for a list of strings, null for a
// list), validates, and returns a canonical document. Errors name the path
// that was wrong so that a corrective re-ask can quote them.
package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, tested with errors.Is.
var (
	// ErrNoJSON means the text holds nothing that can be read as JSON.
	ErrNoJSON = errors.New("jsonx: no JSON found")
	// ErrSchema means JSON was found but does not satisfy the schema, even
	// after wrapping and coercion. The error is a *SchemaError.
	ErrSchema = errors.New("jsonx: JSON does not match schema")
	// ErrBadSchema means the schema itself could not be read.
	ErrBadSchema = errors.New("jsonx: invalid schema")
)

// SchemaError describes one way a document fails a schema.
type SchemaError struct {
	// Path locates the offending value, e.g. "$.affiliations[2]".
	Path string
	// Problem says what was wrong, e.g. `missing required key "answer"`.
	Problem string
}

// Error implements error.
func (e *SchemaError) Error() string { return "jsonx: " + e.Path + ": " + e.Problem }

// Is makes errors.Is(err, ErrSchema) true.
func (e *SchemaError) Is(target error) bool { return target == ErrSchema }

// noJSONError builds the ErrNoJSON error for text.
func noJSONError(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: the reply is empty", ErrNoJSON)
	}
	return fmt.Errorf("%w in the reply", ErrNoJSON)
}

// Parse extracts JSON from a model reply and fits it to schema, returning a
// canonical document (compact, object keys sorted) that satisfies it.
//
// With a nil or empty schema Parse behaves like Extract. Otherwise every
// JSON value recoverable from the text is tried, outermost and cleanly parsed
// ones first, and the first that satisfies the schema after wrapping and
// coercion wins. When none does, the error describes the best candidate's
// problem: it wraps
// ErrSchema (a *SchemaError naming the path), or ErrNoJSON when there was no
// JSON at all. A reply with no cleanly parsed object in it is accepted as
// plain text when the schema is an object with exactly one required key, of
// type string: small models often just answer the question.
func Parse(text string, schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return Extract(text)
	}
	s, err := schemas.compiled(schema)
	if err != nil {
		return nil, err
	}
	// A reply that is already a document of the schema's exact shape is
	// written out as it is (strict.go): what fit would make of it.
	if doc, ok := s.strict(text); ok {
		return doc, nil
	}
	return parseTolerant(text, s)
}

// parseTolerant is Parse without its strict path: what Parse returns
// for every reply (TestStrictMatchesFit, FuzzStrict).
func parseTolerant(text string, s *schema) (json.RawMessage, error) {
	// The whole reply as strict JSON is the first candidate (candidates):
	// when it fits, it wins, and the reply need not be scanned for the
	// others.
	if doc, ok := wholeReply(text); ok {
		if out, err := fit(doc, s); err == nil {
			return out, nil
		}
	}
	return parseCandidates(text, s)
}

// parseCandidates is Parse trying every candidate of text in order.
func parseCandidates(text string, s *schema) (json.RawMessage, error) {
	cands := candidates(text)
	var firstErr error
	cleanObject := false // the model evidently tried to write JSON
	for _, c := range cands {
		cleanObject = cleanObject || (!c.dubious && c.doc[0] == '{')
		doc, err := fit(c.doc, s)
		if err != nil && c.dubious {
			doc, err = fitDroppingPartial(c.doc, s, err)
		}
		if err == nil {
			return doc, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	// A plain-text reply to a one-string-field schema is the answer itself.
	if key, ok := s.singleRequired("string"); ok && !cleanObject {
		if plain := plainText(text); plain != "" {
			if v, err := s.coerce(map[string]any{key: plain}, "$"); err == nil {
				return canonical(v)
			} else if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, noJSONError(text)
}

// Validate fits an already-extracted JSON document to schema: it wraps a
// bare value, coerces, validates and returns the canonical document.
func Validate(doc json.RawMessage, schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		if !json.Valid(doc) {
			return nil, fmt.Errorf("%w: document is not valid JSON", ErrNoJSON)
		}
		var v any
		if err := decode(doc, &v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoJSON, err)
		}
		return canonical(v)
	}
	s, err := schemas.compiled(schema)
	if err != nil {
		return nil, err
	}
	return fit(doc, s)
}

// fit decodes doc, wraps, coerces and validates it against s.
func fit(doc []byte, s *schema) (json.RawMessage, error) {
	var v any
	if err := decode(doc, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoJSON, err)
	}
	v = s.wrap(v)
	v, err := s.coerce(v, "$")
	if err != nil {
		return nil, err
	}
	return canonical(v)
}

// fitDroppingPartial retries a repaired (cut-off) document whose last
// array element fails the schema, without that element: a reply cut at the
// token limit ends inside an item that lacks its required keys, and the
// items before it are still good. It drops at most a few elements, each
// the last of its array, and returns the first error when that does not
// help.
func fitDroppingPartial(doc []byte, s *schema, first error) (json.RawMessage, error) {
	var v any
	if err := decode(doc, &v); err != nil {
		return nil, first
	}
	err := first
	for range 3 {
		se, ok := errors.AsType[*SchemaError](err)
		if !ok || !dropLastAt(v, se.Path) {
			return nil, first
		}
		out, ferr := s.coerce(s.wrap(v), "$")
		if ferr == nil {
			return canonical(out)
		}
		err = ferr
	}
	return nil, first
}

// dropLastAt removes, from the deepest array on path ("$.turns[3].events[1]")
// whose indexed element is its last, that element. It reports whether it
// removed one.
func dropLastAt(v any, path string) bool {
	type step struct {
		key   string
		index int // -1 for a key
	}
	var steps []step
	p := strings.TrimPrefix(path, "$")
	for p != "" {
		switch p[0] {
		case '.':
			end := strings.IndexAny(p[1:], ".[")
			if end < 0 {
				end = len(p) - 1
			}
			steps = append(steps, step{key: p[1 : end+1], index: -1})
			p = p[end+1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return false
			}
			var i int
			if _, err := fmt.Sscanf(p[1:end], "%d", &i); err != nil {
				return false
			}
			steps = append(steps, step{index: i})
			p = p[end+1:]
		default:
			return false
		}
	}
	// Walk down, remembering each array container and how to replace it.
	type hit struct {
		set func([]any)
		arr []any
		i   int
	}
	var hits []hit
	cur := v
	var set func(any)
	for _, st := range steps {
		switch c := cur.(type) {
		case map[string]any:
			if st.index >= 0 {
				return false
			}
			m, k := c, st.key
			set = func(x any) { m[k] = x }
			cur = c[st.key]
		case []any:
			if st.index < 0 || st.index >= len(c) {
				return false
			}
			s := set
			hits = append(hits, hit{set: func(a []any) {
				if s != nil {
					s(a)
				}
			}, arr: c, i: st.index})
			arr, i := c, st.index
			set = func(x any) { arr[i] = x }
			cur = c[st.index]
		default:
			return false
		}
	}
	for j := len(hits) - 1; j >= 0; j-- {
		h := hits[j]
		if h.i == len(h.arr)-1 {
			h.set(h.arr[:h.i])
			return true
		}
	}
	return false
}

// decode unmarshals JSON keeping numbers exact.
func decode(doc []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	return d.Decode(v)
}

// canonical marshals v compactly with sorted keys and no HTML escaping.
func canonical(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("jsonx: encoding result: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// plainText returns the reply stripped of whitespace and of a surrounding
// code fence, for use as a plain-text answer.
func plainText(text string) string {
	t := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	if strings.HasPrefix(t, "```") {
		if fs := fences(t); len(fs) > 0 {
			t = strings.TrimSpace(fs[0])
		}
	}
	return strings.ToValidUTF8(t, "\uFFFD")
}
