package llm

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/higmem/higmem/internal/jsonx"
)

// A direct decoder for the documents CompleteJSON hands to the typed
// reply: jsonx.Parse returns a canonical document, and decoding it with
// json.Unmarshal (which checks the whole text first, then walks it by
// reflection, allocating each string) cost as much as the rest of a
// select call's reply handling. decodeFast reads the document once into
// a value of a plain reply type (structs of strings, booleans, lists and
// structs of these, as higmem's reply types are), and gives up, leaving
// json.Unmarshal to decide, on anything whose decoding it does not
// reproduce exactly: another type, a key no field is named by exactly, a
// duplicate key, a number, an escape in a string, invalid UTF-8, any
// syntax error. TestDecodeFastMatchesUnmarshal and FuzzDecodeFast check
// that wherever it answers, json.Unmarshal gives the same value.

// fastType is how decodeFast decodes into one Go type.
type fastType struct {
	kind   reflect.Kind // reflect.String, Bool, Slice or Struct
	typ    reflect.Type
	elem   *fastType   // a slice's elements
	fields []fastField // a struct's fields, as encoding/json names them
	// strings is set for the type []string, decoded without reflection.
	strings bool
}

// fastField is one field of a struct decodeFast decodes into.
type fastField struct {
	name  string
	index int
	t     *fastType
}

// fastTypes caches fastTypeOf's answers: reflect.Type → *fastType, nil
// when the type is not one decodeFast decodes.
var fastTypes sync.Map

// fastMaxFields bounds the fields of a struct decodeFast decodes into
// (it marks the keys seen in a bit set).
const fastMaxFields = 64

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	stringsType     = reflect.TypeFor[[]string]()
)

// fastTypeOf returns how decodeFast decodes into t, or nil.
func fastTypeOf(t reflect.Type) *fastType {
	if v, ok := fastTypes.Load(t); ok {
		return v.(*fastType)
	}
	ft := compileFast(t, map[reflect.Type]*fastType{})
	fastTypes.Store(t, ft)
	return ft
}

// compileFast builds the fastType of t; busy holds the types being built
// (a type that contains itself through a list).
func compileFast(t reflect.Type, busy map[reflect.Type]*fastType) *fastType {
	if ft, ok := busy[t]; ok {
		return ft
	}
	if t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	ft := &fastType{kind: t.Kind(), typ: t}
	switch t.Kind() {
	case reflect.String, reflect.Bool:
		return ft
	case reflect.Slice:
		busy[t] = ft
		defer delete(busy, t)
		if ft.elem = compileFast(t.Elem(), busy); ft.elem == nil {
			return nil
		}
		ft.strings = t == stringsType
		return ft
	case reflect.Struct:
		busy[t] = ft
		defer delete(busy, t)
		seen := map[string]bool{}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return nil // embedded fields follow encoding/json's promotion rules
			}
			if !f.IsExported() {
				continue // encoding/json ignores it
			}
			tag, hasTag := f.Tag.Lookup("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",string,") {
				return nil
			}
			if !hasTag || name == "" {
				name = f.Name
			} else if !plainName(name) {
				return nil
			}
			if seen[name] {
				return nil // conflicting names follow encoding/json's dominance rules
			}
			seen[name] = true
			ff := compileFast(f.Type, busy)
			if ff == nil {
				return nil
			}
			ft.fields = append(ft.fields, fastField{name: name, index: i, t: ff})
		}
		if len(ft.fields) > fastMaxFields {
			return nil
		}
		return ft
	}
	return nil
}

// plainName reports whether a tag name is one encoding/json takes as it
// is: letters, digits, '_' and '-'.
func plainName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// decodeFast decodes doc into v (a settable value holding its type's zero
// value) as json.Unmarshal would, when doc and v's type are of the plain
// kind it reads. When it reports false, v may hold part of doc and must
// be thrown away.
func decodeFast(doc []byte, v reflect.Value) bool {
	ft := fastTypeOf(v.Type())
	if ft == nil {
		return false
	}
	r := fastReader{Scanner: jsonx.Scanner{Text: string(doc)}}
	return r.value(ft, v, 0) && r.End()
}

// fastMaxDepth bounds the nesting decodeFast follows.
const fastMaxDepth = 32

// fastReader reads one document for decodeFast. Strings decoded are
// parts of Text (one copy of the document for all of them): the
// Scanner reads only strings that decode to their own text.
type fastReader struct {
	jsonx.Scanner
}

// value decodes the next value into v, of type ft.
func (r *fastReader) value(ft *fastType, v reflect.Value, depth int) bool {
	if depth > fastMaxDepth {
		return false
	}
	c := r.Peek()
	if c == 'n' {
		// null: a list is set to nil, anything else left as it is.
		if !r.Literal("null") {
			return false
		}
		if ft.kind == reflect.Slice {
			v.SetZero()
		}
		return true
	}
	switch ft.kind {
	case reflect.String:
		s, ok := r.Str()
		if ok {
			v.SetString(s)
		}
		return ok
	case reflect.Bool:
		switch {
		case r.Literal("true"):
			v.SetBool(true)
		case r.Literal("false"):
			v.SetBool(false)
		default:
			return false
		}
		return true
	case reflect.Slice:
		return c == '[' && r.slice(ft, v, depth)
	case reflect.Struct:
		return c == '{' && r.object(ft, v, depth)
	}
	return false
}

// slice decodes a list into v (a slice of type ft), from its '['. An
// empty list is an empty slice, not nil, as json.Unmarshal sets it.
func (r *fastReader) slice(ft *fastType, v reflect.Value, depth int) bool {
	r.Pos++ // '['
	if r.Byte(']') {
		v.Set(reflect.MakeSlice(ft.typ, 0, 0))
		return true
	}
	if ft.strings {
		// As many as there are commas before the next ']', about.
		rest := r.Text[r.Pos:]
		if j := strings.IndexByte(rest, ']'); j >= 0 {
			rest = rest[:j]
		}
		list := make([]string, 0, strings.Count(rest, ",")+1)
		for {
			s, ok := "", true
			if r.Peek() == 'n' {
				ok = r.Literal("null") // null leaves a string as it is: ""
			} else {
				s, ok = r.Str()
			}
			if !ok {
				return false
			}
			list = append(list, s)
			more, ok := r.Next(']')
			if !more {
				if ok {
					v.Set(reflect.ValueOf(list))
				}
				return ok
			}
		}
	}
	for n := 0; ; n++ {
		v.Set(reflect.Append(v, reflect.New(ft.elem.typ).Elem()))
		if !r.value(ft.elem, v.Index(n), depth+1) {
			return false
		}
		if more, ok := r.Next(']'); !more {
			return ok
		}
	}
}

// object decodes an object into v (a struct of type ft), from its '{':
// every key must name a field exactly, once.
func (r *fastReader) object(ft *fastType, v reflect.Value, depth int) bool {
	r.Pos++ // '{'
	if r.Byte('}') {
		return true
	}
	var seen uint64
	for {
		r.Space()
		key, ok := r.Str()
		if !ok {
			return false
		}
		k := -1
		for j := range ft.fields {
			if ft.fields[j].name == key {
				k = j
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		if !r.Byte(':') {
			return false
		}
		f := &ft.fields[k]
		if !r.value(f.t, v.Field(f.index), depth+1) {
			return false
		}
		if more, ok := r.Next('}'); !more {
			return ok
		}
	}
}
