package llm

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
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
	r := fastReader{s: string(doc)}
	if !r.value(ft, v, 0) {
		return false
	}
	r.space()
	return r.i == len(r.s)
}

// fastMaxDepth bounds the nesting decodeFast follows.
const fastMaxDepth = 32

// fastReader reads one document for decodeFast. Strings decoded are
// parts of s (one copy of the document for all of them).
type fastReader struct {
	s string
	i int
	// closed is set by next when it read the closing byte.
	closed bool
}

// space skips JSON white space.
func (r *fastReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// value decodes the next value into v, of type ft.
func (r *fastReader) value(ft *fastType, v reflect.Value, depth int) bool {
	if depth > fastMaxDepth {
		return false
	}
	r.space()
	if r.i >= len(r.s) {
		return false
	}
	if r.s[r.i] == 'n' {
		// null: a list is set to nil, anything else left as it is.
		if !strings.HasPrefix(r.s[r.i:], "null") {
			return false
		}
		r.i += len("null")
		if ft.kind == reflect.Slice {
			v.SetZero()
		}
		return true
	}
	switch ft.kind {
	case reflect.String:
		s, ok := r.str()
		if ok {
			v.SetString(s)
		}
		return ok
	case reflect.Bool:
		switch {
		case strings.HasPrefix(r.s[r.i:], "true"):
			r.i += len("true")
			v.SetBool(true)
		case strings.HasPrefix(r.s[r.i:], "false"):
			r.i += len("false")
			v.SetBool(false)
		default:
			return false
		}
		return true
	case reflect.Slice:
		return r.slice(ft, v, depth)
	case reflect.Struct:
		return r.object(ft, v, depth)
	}
	return false
}

// str reads a string with no escape in it, valid UTF-8 (which decodes to
// its own text).
func (r *fastReader) str() (string, bool) {
	if r.s[r.i] != '"' {
		return "", false
	}
	ascii := true
	for j := r.i + 1; j < len(r.s); j++ {
		c := r.s[j]
		switch {
		case c == '"':
			s := r.s[r.i+1 : j]
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			r.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// slice decodes a list into v (a slice of type ft). An empty list is an
// empty slice, not nil, as json.Unmarshal sets it.
func (r *fastReader) slice(ft *fastType, v reflect.Value, depth int) bool {
	if r.s[r.i] != '[' {
		return false
	}
	r.i++
	r.space()
	if r.i < len(r.s) && r.s[r.i] == ']' {
		r.i++
		v.Set(reflect.MakeSlice(ft.typ, 0, 0))
		return true
	}
	if ft.strings {
		// As many as there are commas before the next ']', about.
		n := len(r.s) - r.i
		if j := strings.IndexByte(r.s[r.i:], ']'); j >= 0 {
			n = j
		}
		list := make([]string, 0, strings.Count(r.s[r.i:r.i+n], ",")+1)
		for {
			r.space()
			if r.i >= len(r.s) {
				return false
			}
			s, ok := "", true
			if r.s[r.i] == 'n' {
				// null leaves a string as it is: "".
				if ok = strings.HasPrefix(r.s[r.i:], "null"); ok {
					r.i += len("null")
				}
			} else {
				s, ok = r.str()
			}
			if !ok {
				return false
			}
			list = append(list, s)
			if !r.next(']') {
				if r.closed {
					v.Set(reflect.ValueOf(list))
				}
				return r.closed
			}
		}
	}
	for n := 0; ; n++ {
		v.Set(reflect.Append(v, reflect.New(ft.elem.typ).Elem()))
		if !r.value(ft.elem, v.Index(n), depth+1) {
			return false
		}
		if !r.next(']') {
			return r.closed
		}
	}
}

// next reads the ',' or the closing byte after a member: it reports true
// after a ',', false after the close (closed set) or anything else
// (closed unset).
func (r *fastReader) next(close byte) bool {
	r.closed = false
	r.space()
	if r.i >= len(r.s) {
		return false
	}
	switch r.s[r.i] {
	case ',':
		r.i++
		return true
	case close:
		r.i++
		r.closed = true
	}
	return false
}

// object decodes an object into v (a struct of type ft): every key must
// name a field exactly, once.
func (r *fastReader) object(ft *fastType, v reflect.Value, depth int) bool {
	if r.s[r.i] != '{' {
		return false
	}
	r.i++
	r.space()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return true
	}
	var seen uint64
	for {
		r.space()
		if r.i >= len(r.s) {
			return false
		}
		key, ok := r.str()
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
		r.space()
		if r.i >= len(r.s) || r.s[r.i] != ':' {
			return false
		}
		r.i++
		f := &ft.fields[k]
		if !r.value(f.t, v.Field(f.index), depth+1) {
			return false
		}
		if !r.next('}') {
			return r.closed
		}
	}
}
