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

// MarshalJSON writes the object with its keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
