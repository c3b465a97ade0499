package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// schema is the subset of JSON Schema that jsonx understands: type (a name
// or a list of names), properties, required, items, enum and nullable.
// Everything else (additionalProperties, descriptions, formats) is ignored.
type schema struct {
	Types      []string
	Properties map[string]*schema
	Required   []string
	Items      *schema
	Enum       []any
}

// rawSchema is the wire form of schema.
type rawSchema struct {
	Type       json.RawMessage            `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Items      json.RawMessage            `json:"items"`
	Enum       []any                      `json:"enum"`
	Nullable   bool                       `json:"nullable"`
}

// compileSchema reads a JSON Schema document.
func compileSchema(doc json.RawMessage) (*schema, error) {
	s, err := compileNode(doc, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	return s, nil
}

func compileNode(doc json.RawMessage, depth int) (*schema, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nested too deeply")
	}
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || string(doc) == "true" {
		return &schema{}, nil
	}
	var raw rawSchema
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	s := &schema{Required: raw.Required, Enum: raw.Enum}
	if t := bytes.TrimSpace(raw.Type); len(t) > 0 {
		switch t[0] {
		case '"':
			var name string
			if err := json.Unmarshal(t, &name); err != nil {
				return nil, err
			}
			s.Types = []string{name}
		case '[':
			if err := json.Unmarshal(t, &s.Types); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("type must be a string or a list of strings")
		}
	}
	for _, t := range s.Types {
		switch t {
		case "object", "array", "string", "number", "integer", "boolean", "null":
		default:
			return nil, fmt.Errorf("unknown type %q", t)
		}
	}
	if raw.Nullable && len(s.Types) > 0 && !s.allows("null") {
		s.Types = append(s.Types, "null")
	}
	if len(raw.Properties) > 0 {
		s.Properties = make(map[string]*schema, len(raw.Properties))
		for k, v := range raw.Properties {
			p, err := compileNode(v, depth+1)
			if err != nil {
				return nil, fmt.Errorf("properties.%s: %v", k, err)
			}
			s.Properties[k] = p
		}
	}
	if it := bytes.TrimSpace(raw.Items); len(it) > 0 && it[0] == '{' {
		p, err := compileNode(it, depth+1)
		if err != nil {
			return nil, fmt.Errorf("items: %v", err)
		}
		s.Items = p
	}
	if len(s.Types) == 0 && (s.Properties != nil || len(s.Required) > 0) {
		s.Types = []string{"object"}
	}
	return s, nil
}

// allows reports whether the schema admits type t ("integer" also admits
// "number" checks elsewhere). An untyped schema allows everything.
func (s *schema) allows(t string) bool {
	if len(s.Types) == 0 {
		return true
	}
	for _, x := range s.Types {
		if x == t {
			return true
		}
	}
	return false
}

// only reports whether the schema has exactly the one type t (optionally
// also null).
func (s *schema) only(t string) bool {
	for _, x := range s.Types {
		if x != t && x != "null" {
			return false
		}
	}
	return s.allows(t) && len(s.Types) > 0
}

// singleRequired returns the one required key of an object schema whose
// property has type typ ("" for any type).
func (s *schema) singleRequired(typ string) (string, bool) {
	if !s.only("object") || len(s.Required) != 1 {
		return "", false
	}
	key := s.Required[0]
	if typ == "" {
		return key, true
	}
	p := s.Properties[key]
	if p == nil || !p.only(typ) {
		return "", false
	}
	return key, true
}

// wrap fits a bare value into an object schema with a single required key
// (a model asked for {"ids": [...]} often answers with the list alone), and
// unwraps a one-key object whose value is the array an array schema wants.
func (s *schema) wrap(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if s.only("array") && len(x) == 1 {
			for _, inner := range x {
				if arr, ok := inner.([]any); ok {
					return arr
				}
			}
		}
		return v
	case nil:
		return v
	}
	if key, ok := s.singleRequired(""); ok {
		return map[string]any{key: v}
	}
	return v
}

// typeName names the JSON type of a decoded value.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// isInteger reports whether n is integral.
func isInteger(n json.Number) bool {
	_, ok := asInteger(n)
	return ok
}

// asInteger returns n written as an integer ("3.0" → "3") when n is
// integral.
func asInteger(n json.Number) (json.Number, bool) {
	if _, err := n.Int64(); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) {
		return "", false
	}
	if math.Abs(f) < 1e21 {
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), true
	}
	return n, true
}

func schemaErr(path, format string, args ...any) error {
	return &SchemaError{Path: path, Problem: fmt.Sprintf(format, args...)}
}

// expected describes the schema's types for error messages.
func (s *schema) expected() string {
	return strings.Join(s.Types, " or ")
}

// coerce converts v towards s where that is safe and validates it. It
// returns the possibly converted value.
func (s *schema) coerce(v any, path string) (any, error) {
	if len(s.Types) == 0 {
		return s.checkEnum(v, path)
	}
	got := typeName(v)
	// Exact matches first.
	switch {
	case got == "null" && s.allows("null"):
		return nil, nil
	case got == "object" && s.allows("object"):
		return s.coerceObject(v.(map[string]any), path)
	case got == "array" && s.allows("array"):
		return s.coerceArray(v.([]any), path)
	case got == "integer" && s.allows("integer") && !s.allows("number"):
		n, _ := asInteger(v.(json.Number)) // "5.0" → 5
		return s.checkEnum(n, path)
	case got == "string" && s.allows("string"),
		got == "boolean" && s.allows("boolean"),
		got == "integer" && s.allows("number"),
		got == "number" && s.allows("number"):
		return s.checkEnum(v, path)
	}
	// Safe coercions.
	switch x := v.(type) {
	case nil:
		if s.allows("array") {
			return []any{}, nil
		}
	case json.Number:
		if s.allows("integer") {
			if n, ok := asInteger(x); ok {
				return s.checkEnum(n, path)
			}
		}
		if s.allows("string") {
			return s.checkEnum(string(x), path)
		}
	case bool:
		if s.allows("string") {
			return s.checkEnum(strconv.FormatBool(x), path)
		}
	case string:
		t := strings.TrimSpace(x)
		if s.allows("number") || s.allows("integer") {
			if n, ok := parseNumber(t); ok {
				if s.allows("number") {
					return s.checkEnum(n, path)
				}
				if i, ok := asInteger(n); ok {
					return s.checkEnum(i, path)
				}
			}
		}
		if s.allows("boolean") {
			switch strings.ToLower(t) {
			case "true", "yes":
				return s.checkEnum(true, path)
			case "false", "no":
				return s.checkEnum(false, path)
			}
		}
		if s.allows("array") {
			// A list the model wrote as a JSON string.
			if strings.HasPrefix(t, "[") {
				var arr any
				if err := decode([]byte(t), &arr); err == nil {
					if a, ok := arr.([]any); ok {
						return s.coerceArray(a, path)
					}
				}
			}
			// A lone value where a list of such values is wanted.
			if s.Items == nil || s.Items.allows("string") || s.Items.allows("number") || s.Items.allows("integer") {
				return s.coerceArray([]any{x}, path)
			}
		}
		if s.allows("object") && strings.HasPrefix(t, "{") {
			var obj any
			if err := decode([]byte(t), &obj); err == nil {
				if o, ok := obj.(map[string]any); ok {
					return s.coerceObject(o, path)
				}
			}
		}
	}
	// A lone scalar where a list is wanted.
	if s.allows("array") && got != "object" && got != "array" && got != "null" {
		return s.coerceArray([]any{v}, path)
	}
	return nil, schemaErr(path, "expected %s, got %s", s.expected(), describe(v))
}

// describe names v's type and, for short scalars, its value.
func describe(v any) string {
	t := typeName(v)
	if t == "integer" {
		t = "number"
	}
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("%s %q", t, x)
	case json.Number, bool:
		return fmt.Sprintf("%s %v", t, x)
	}
	return t
}

// parseNumber reads a decimal number from a string ("3", " 2.5", "+1",
// ".5"); hex, NaN and infinities are refused.
func parseNumber(t string) (json.Number, bool) {
	t = strings.TrimPrefix(t, "+")
	if t == "" || strings.ContainsAny(t, "xXpP_") {
		return "", false
	}
	if (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) && json.Valid([]byte(t)) {
		return json.Number(t), true
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
}

func (s *schema) coerceObject(obj map[string]any, path string) (any, error) {
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	// Rename keys that differ from a declared property only in case or
	// separators ("Answer", "event-ids"). Properties are taken in name
	// order, and each takes the least matching key, so that the same
	// reply is always renamed the same way when a key matches two
	// properties ("A" and "a") or two keys match one.
	for _, name := range names {
		if _, ok := obj[name]; ok {
			continue
		}
		want := normKey(name)
		from, found := "", false
		for k := range obj {
			if _, declared := s.Properties[k]; declared {
				continue
			}
			if (!found || k < from) && normKey(k) == want {
				from, found = k, true
			}
		}
		if found {
			obj[name] = obj[from]
			delete(obj, from)
		}
	}
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return nil, schemaErr(path, "missing required key %q", name)
		}
	}
	for _, name := range names {
		v, ok := obj[name]
		if !ok {
			continue
		}
		c, err := s.Properties[name].coerce(v, path+"."+name)
		if err != nil {
			return nil, err
		}
		obj[name] = c
	}
	return s.checkEnum(obj, path)
}

// normKey folds case and separators for key matching.
func normKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.NewReplacer("-", "_", " ", "_").Replace(k)
}

func (s *schema) coerceArray(arr []any, path string) (any, error) {
	if s.Items != nil {
		for i, v := range arr {
			c, err := s.Items.coerce(v, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			arr[i] = c
		}
	}
	return s.checkEnum(arr, path)
}

// checkEnum validates v against the schema's enum. A string differing from
// an allowed string only in case or surrounding space is replaced by it.
func (s *schema) checkEnum(v any, path string) (any, error) {
	if len(s.Enum) == 0 {
		return v, nil
	}
	got, _ := json.Marshal(v)
	for _, e := range s.Enum {
		want, _ := json.Marshal(e)
		if bytes.Equal(got, want) {
			return e, nil
		}
	}
	if str, ok := v.(string); ok {
		for _, e := range s.Enum {
			if es, ok := e.(string); ok && strings.EqualFold(strings.TrimSpace(str), es) {
				return es, nil
			}
		}
	}
	allowed := make([]string, 0, len(s.Enum))
	for _, e := range s.Enum {
		b, _ := json.Marshal(e)
		allowed = append(allowed, string(b))
	}
	return nil, schemaErr(path, "%s is not one of %s", describe(v), strings.Join(allowed, ", "))
}
