// Package jsonerr turns encoding/json errors into messages for people: the
// line (and column) where the problem is, the field, and JSON kinds ("an
// integer", "an array") instead of Go types. The CLI's file readers and the
// server's request decoder both use it, so a mistake reads the same at
// every door.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// Describe explains err, an error from decoding data with encoding/json.
// data may be nil when the input is not at hand; the message then names no
// line.
func Describe(err error, data []byte) string {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		tpe *time.ParseError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		if len(data) > 0 {
			return fmt.Sprintf("%s: unexpected end of JSON (an object, array or string is not closed)", Position(data, int64(len(data))))
		}
		return "unexpected end of JSON (an object, array or string is not closed)"
	case errors.As(err, &syn):
		// Offset counts the offending byte.
		return prefix(data, syn.Offset-1) + strings.TrimPrefix(syn.Error(), "json: ")
	case errors.As(err, &typ):
		want := Kind(typ.Type)
		at := prefix(data, valueStart(data, typ.Offset))
		if typ.Field == "" {
			return fmt.Sprintf("%swant %s, got %s", at, want, got(typ.Value))
		}
		return fmt.Sprintf("%sfield %q: want %s, got %s", at, typ.Field, want, got(typ.Value))
	case errors.As(err, &tpe):
		field, off := timeField(data, tpe.Value)
		where := ""
		if off >= 0 {
			where = prefix(data, off)
		}
		if field != "" {
			where += fmt.Sprintf("field %q: ", field)
		}
		return fmt.Sprintf("%swant an RFC 3339 time such as \"2024-05-01T15:04:05Z\", got %q", where, tpe.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

// Position renders a byte offset of data as "line L, column C" (both
// 1-based; the column counts bytes).
func Position(data []byte, off int64) string {
	off = max(0, min(off, int64(len(data))))
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

// Line returns the 1-based line of a byte offset of data.
func Line(data []byte, off int64) int {
	off = max(0, min(off, int64(len(data))))
	n := 1
	for _, b := range data[:off] {
		if b == '\n' {
			n++
		}
	}
	return n
}

// valueStart finds where the value ends at off begins: encoding/json
// reports a type error after the value (after the opening bracket of an
// array or object).
func valueStart(data []byte, off int64) int64 {
	if off <= 0 || off > int64(len(data)) {
		return off
	}
	i := off - 1
	switch data[i] {
	case '[', '{':
		return i
	case '"':
		for j := i - 1; j >= 0; j-- {
			if data[j] != '"' {
				continue
			}
			bs := 0
			for k := j - 1; k >= 0 && data[k] == '\\'; k-- {
				bs++
			}
			if bs%2 == 0 {
				return j
			}
		}
		return off
	}
	for i > 0 && strings.IndexByte(" \t\r\n:,[{", data[i-1]) < 0 {
		i--
	}
	return i
}

func prefix(data []byte, off int64) string {
	if len(data) == 0 {
		return ""
	}
	return Position(data, off) + ": "
}

// got renders the Value of an UnmarshalTypeError ("number 1.5", "string",
// "array") as a phrase.
func got(v string) string {
	kind, lit, hasLit := strings.Cut(v, " ")
	if hasLit {
		return lit
	}
	switch kind {
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return kind
}

// Kind names the JSON value a Go type decodes from.
func Kind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(time.Time{}) {
		return "an RFC 3339 time string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Struct:
		return "an object"
	case reflect.Interface:
		return "a value"
	}
	return "a " + t.Kind().String()
}

// timeField finds the key whose string value is v in data, for a time that
// did not parse (encoding/json does not say which field it was). It returns
// "" and -1 when v is not found.
func timeField(data []byte, v string) (string, int64) {
	lit, err := json.Marshal(v)
	if err != nil || len(data) == 0 {
		return "", -1
	}
	s := string(data)
	for from := 0; ; {
		i := strings.Index(s[from:], string(lit))
		if i < 0 {
			return "", -1
		}
		i += from
		from = i + 1
		j := i - 1
		for j >= 0 && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
			j--
		}
		if j < 0 || s[j] != ':' {
			continue
		}
		j--
		for j >= 0 && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
			j--
		}
		if j < 0 || s[j] != '"' {
			continue
		}
		end := j
		k := j - 1
		for k >= 0 && (s[k] != '"' || (k > 0 && s[k-1] == '\\')) {
			k--
		}
		if k < 0 {
			continue
		}
		var key string
		if json.Unmarshal([]byte(s[k:end+1]), &key) != nil {
			continue
		}
		return key, int64(i)
	}
}
