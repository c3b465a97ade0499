package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Object is a JSON object that keeps its keys in the order they were
// read or set. The order of a schema's properties matters to the servers
// that turn schemas into grammars (a grammar writes the keys in that
// order), so a schema rewritten through Object keeps it. A nil *Object
// reads as empty.
type Object struct {
	keys []string
	vals map[string]any // *Object, []any, string, json.Number, bool or nil
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Get returns the value of key k, or nil.
func (o *Object) Get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

// Set sets key k to v, keeping k's place when it exists.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Keys returns the keys in order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// MarshalJSON writes the object with its keys in order, as json.Marshal
// writes the values (HTML-safe strings). The objects and arrays inside are
// written in the same pass: json.Marshal of each nested object would
// validate and copy its text once for every level above it, and a
// request's narrowed schema (prompt.Constraint), with every id shown as an
// enum, is marshalled on every call of a retrieval round.
func (o *Object) MarshalJSON() ([]byte, error) {
	return o.appendJSON(make([]byte, 0, 256))
}

// appendJSON appends the object's JSON to b.
func (o *Object) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	for i, k := range o.Keys() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, o.vals[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendValue appends v's JSON as json.Marshal(v) writes it.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case *Object:
		if x == nil {
			return append(b, "null"...), nil
		}
		return x.appendJSON(b)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return appendString(b, x), nil
	}
	vb, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, vb...), nil
}

// AppendString appends s quoted as json.Marshal quotes it (HTML-safe), as
// Object.MarshalJSON writes a string.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString appends s quoted as json.Marshal quotes it: a string of
// printable ASCII with nothing to escape as it is, any other through
// json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Clone returns a deep copy of v, a value DecodeOrdered returns: its
// objects and arrays are new, its strings, numbers and booleans shared
// (they are immutable).
func Clone(v any) any {
	switch x := v.(type) {
	case *Object:
		if x == nil {
			return x
		}
		o := &Object{keys: slices.Clone(x.keys), vals: make(map[string]any, len(x.vals))}
		for k, e := range x.vals {
			o.vals[k] = Clone(e)
		}
		return o
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	}
	return v
}

// DecodeOrdered decodes one JSON document with its objects as *Object
// (numbers as json.Number, arrays as []any).
func DecodeOrdered(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	v, err := decodeOrderedValue(d)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("jsonx: data after the value")
	}
	return v, nil
}

func decodeOrderedValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		o := NewObject()
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrderedValue(d)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
		}
		_, err := d.Token() // '}'
		return o, err
	case '[':
		arr := []any{}
		for d.More() {
			v, err := decodeOrderedValue(d)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := d.Token() // ']'
		return arr, err
	}
	return nil, fmt.Errorf("jsonx: unexpected %v", delim)
}
