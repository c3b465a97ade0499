package llmfake

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/jsonx"
)

// Conform returns what a model that wanted to write text writes when a
// grammar built from schema constrains it, as llama.cpp does with the
// schema of {"type":"json_object","schema":S}: the nearest instance of the
// schema. It stands in for grammar-constrained decoding in tests, where
// the fake's text plays the model's intent:
//
//   - text that holds no JSON becomes the empty intent (the grammar forces
//     JSON from the first token);
//   - an object keeps its properties in schema order, the required ones
//     always (generated when the text had none), the optional ones when
//     written, and nothing else;
//   - a value outside an enum becomes the enum member sharing the longest
//     prefix with it: the grammar let the model write the prefix and then
//     only a member. On a tie the first member not yet chosen by an
//     earlier item of the same array wins (a model lists the ids shown in
//     their order), else the first;
//   - arrays are cut at maxItems and padded to minItems with generated
//     items; strings are cut at maxLength and padded to minLength;
//   - a value of the wrong type becomes a generated one.
//
// Keywords the grammar converters of llama.cpp ignore (uniqueItems,
// format) are ignored here too. A schema that does not decode gives text
// back unchanged.
func Conform(text string, schema json.RawMessage) string {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return text
	}
	var intent any
	if doc, err := jsonx.Extract(text); err == nil {
		_ = json.Unmarshal(doc, &intent)
	}
	out, _ := json.Marshal(conform(intent, s, nil))
	return string(out)
}

// chosen records, per enum (by its text), the members the earlier items
// of one array took.
type chosen map[string]map[any]bool

// conform projects v onto schema s (see Conform); used holds the enum
// members the enclosing array's earlier items chose (nil outside arrays).
func conform(v any, s map[string]any, used chosen) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		key := fmt.Sprint(enum)
		m := nearestMember(v, enum, used[key])
		if used != nil {
			if used[key] == nil {
				used[key] = map[any]bool{}
			}
			used[key][m] = true
		}
		return m
	}
	if c, ok := s["const"]; ok {
		return c
	}
	switch typeOf(s) {
	case "object":
		obj, _ := v.(map[string]any)
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		for _, r := range asList(s["required"]) {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
		out := jsonx.NewObject()
		for _, name := range propOrder(s) {
			ps, _ := props[name].(map[string]any)
			val, written := obj[name]
			if !written && !required[name] {
				continue
			}
			out.Set(name, conform(val, ps, used))
		}
		return out
	case "array":
		arr, _ := v.([]any)
		items, _ := s["items"].(map[string]any)
		if hi, ok := intOf(s["maxItems"]); ok && len(arr) > hi {
			arr = arr[:hi]
		}
		out := make([]any, 0, len(arr))
		mine := chosen{}
		for _, x := range arr {
			out = append(out, conform(x, items, mine))
		}
		lo, _ := intOf(s["minItems"])
		for len(out) < lo {
			out = append(out, conform(nil, items, mine))
		}
		return out
	case "string":
		str, ok := v.(string)
		if !ok {
			str = ""
			if v != nil {
				if b, err := json.Marshal(v); err == nil {
					str = string(b)
				}
			}
		}
		if hi, ok := intOf(s["maxLength"]); ok && utf8.RuneCountInString(str) > hi {
			str = string([]rune(str)[:hi])
		}
		if lo, ok := intOf(s["minLength"]); ok && utf8.RuneCountInString(str) < lo {
			str += strings.Repeat("x", lo-utf8.RuneCountInString(str))
		}
		return str
	case "boolean":
		b, _ := v.(bool)
		return b
	case "number", "integer":
		if n, ok := v.(float64); ok {
			return n
		}
		return 0
	case "null":
		return nil
	}
	return v // an untyped schema admits anything
}

// nearestMember returns v when it is in enum, else the member sharing
// the longest prefix with v's text, preferring one not in taken.
func nearestMember(v any, enum []any, taken map[any]bool) any {
	text := ""
	if v != nil {
		text = fmt.Sprint(v)
	}
	best, bestLen, bestTaken := enum[0], -1, true
	for _, m := range enum {
		if m == v {
			return m
		}
		ms := fmt.Sprint(m)
		n := 0
		for n < len(ms) && n < len(text) && ms[n] == text[n] {
			n++
		}
		if n > bestLen || n == bestLen && bestTaken && !taken[m] {
			best, bestLen, bestTaken = m, n, taken[m]
		}
	}
	return best
}

// typeOf returns a schema's type name ("" when untyped; the first of a
// list).
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		if len(t) > 0 {
			name, _ := t[0].(string)
			return name
		}
	}
	if s["properties"] != nil {
		return "object"
	}
	if s["items"] != nil {
		return "array"
	}
	return ""
}

// propOrder returns the property names of an object schema: the required
// ones first, in the order the schema's "required" lists them, then the
// rest sorted (a decoded map has lost the document's order).
func propOrder(s map[string]any) []string {
	props, _ := s["properties"].(map[string]any)
	var out []string
	seen := map[string]bool{}
	for _, r := range asList(s["required"]) {
		if name, ok := r.(string); ok && props[name] != nil && !seen[name] {
			out = append(out, name)
			seen[name] = true
		}
	}
	var rest []string
	for name := range props {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func intOf(v any) (int, bool) {
	f, ok := v.(float64)
	return int(f), ok
}

// SchemaAt returns the part of a decoded JSON Schema at path: property
// names, "[]" for an array's items; nil when the schema has none there.
// Tests read what a request sent with it.
func SchemaAt(s map[string]any, path ...string) map[string]any {
	for _, p := range path {
		if p == "[]" {
			s, _ = s["items"].(map[string]any)
			continue
		}
		props, _ := s["properties"].(map[string]any)
		s, _ = props[p].(map[string]any)
	}
	return s
}
