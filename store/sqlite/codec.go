package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// timeLayout is how times are stored: UTC, fixed width, nanoseconds, so
// that text order is time order for the years 0 to 9999. A zero time is
// stored as NULL.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// zeroTimeText is the zero time in timeLayout, for ordering NULLs like it.
const zeroTimeText = "0001-01-01T00:00:00.000000000Z"

// encodeTime returns t as stored: nil for the zero time, text otherwise.
func encodeTime(what string, t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("%w: %s %v outside the years 0 to 9999", store.ErrInvalid, what, t)
	}
	return t.Format(timeLayout), nil
}

// decodeTime parses a stored time; NULL is the zero time.
func decodeTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	if t, ok := parseStoredTime(s.String); ok {
		return t, nil
	}
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: stored time %q: %w", s.String, err)
	}
	return t, nil
}

// parseStoredTime parses a time in timeLayout without time.Parse's general
// machinery (loading a space parses two per turn). ok is false for anything
// it does not recognise, which the caller then hands to time.Parse.
func parseStoredTime(s string) (t time.Time, ok bool) {
	if len(s) != len(timeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[29] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec, ns := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 29)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ns < 0 {
		return time.Time{}, false
	}
	t = time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d { // past the end of the month
		return time.Time{}, false
	}
	return t, true
}

// encodeList returns xs as a JSON array, or nil (NULL) when empty.
func encodeList[T any](what string, xs []T) (any, error) {
	if len(xs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(xs)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrInvalid, what, err)
	}
	return string(b), nil
}

// encodeMap returns m as a JSON object, or nil (NULL) when empty.
func encodeMap(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", store.ErrInvalid, err)
	}
	return string(b), nil
}

// decodeJSON decodes a JSON column into v; NULL leaves v alone.
func decodeJSON(what string, s sql.NullString, v any) error {
	if !s.Valid || s.String == "" {
		return nil
	}
	if p, ok := v.(*[]string); ok {
		if xs, ok := parseStrings(s.String); ok {
			*p = xs
			return nil
		}
	}
	if p, ok := v.(*[]store.TimeRef); ok {
		if rs, ok := parseTimeRefs(s.String); ok {
			*p = rs
			return nil
		}
	}
	if err := json.Unmarshal([]byte(s.String), v); err != nil {
		return fmt.Errorf("sqlite: stored %s: %w", what, err)
	}
	return nil
}

// parseStrings parses a JSON array of strings without escapes, such as
// encodeList writes for most lists, without encoding/json's reflection.
// ok is false for anything else (escapes, other values, odd spacing), which
// the caller then hands to encoding/json.
func parseStrings(s string) (xs []string, ok bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []string{}, true
	}
	n := strings.Count(body, `","`) + 1
	xs = make([]string, 0, n)
	for {
		if len(body) < 2 || body[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(body[1:], '"') + 1
		if end <= 0 {
			return nil, false
		}
		x := body[1:end]
		if strings.IndexByte(x, '\\') >= 0 || !utf8.ValidString(x) || hasControl(x) {
			return nil, false
		}
		xs = append(xs, x)
		body = body[end+1:]
		if body == "" {
			return xs, true
		}
		if body[0] != ',' {
			return nil, false
		}
		body = body[1:]
	}
}

// parseTimeRefs parses time refs as encodeTimeRefs writes them (json.Marshal
// of UTC times: keys in field order, "granularity" and "fuzzy" only when
// set), strings without escapes, without encoding/json's reflection. ok is
// false for anything else, which the caller then hands to encoding/json.
func parseTimeRefs(s string) (rs []store.TimeRef, ok bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []store.TimeRef{}, true
	}
	rs = make([]store.TimeRef, 0, strings.Count(body, `{"text":`))
	for {
		var r store.TimeRef
		var start, end string
		if body, ok = strings.CutPrefix(body, `{"text":`); !ok {
			return nil, false
		}
		if r.Text, body, ok = plainString(body); !ok {
			return nil, false
		}
		if body, ok = strings.CutPrefix(body, `,"start":`); !ok {
			return nil, false
		}
		if start, body, ok = plainString(body); !ok {
			return nil, false
		}
		if body, ok = strings.CutPrefix(body, `,"end":`); !ok {
			return nil, false
		}
		if end, body, ok = plainString(body); !ok {
			return nil, false
		}
		if r.Start, ok = parseUTC(start); !ok {
			return nil, false
		}
		if r.End, ok = parseUTC(end); !ok {
			return nil, false
		}
		if rest, found := strings.CutPrefix(body, `,"granularity":`); found {
			if r.Granularity, body, ok = plainString(rest); !ok || r.Granularity == "" {
				return nil, false
			}
		}
		body, r.Fuzzy = strings.CutPrefix(body, `,"fuzzy":true`)
		if body, ok = strings.CutPrefix(body, "}"); !ok {
			return nil, false
		}
		rs = append(rs, r)
		if body == "" {
			return rs, true
		}
		if body, ok = strings.CutPrefix(body, ","); !ok {
			return nil, false
		}
	}
}

// plainString cuts a JSON string without escapes (valid UTF-8, no control
// bytes) off the front of s.
func plainString(s string) (str, rest string, ok bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], '"') + 1
	if end <= 0 {
		return "", s, false
	}
	str = s[1:end]
	if strings.IndexByte(str, '\\') >= 0 || !utf8.ValidString(str) || hasControl(str) {
		return "", s, false
	}
	return str, s[end+1:], true
}

// parseUTC parses a time as json.Marshal writes a UTC time:
// 2006-01-02T15:04:05, then up to nine digits of fraction, then Z, as
// time.Time.UnmarshalJSON would.
func parseUTC(s string) (time.Time, bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	if frac := s[19 : len(s)-1]; frac != "" {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return time.Time{}, false
		}
		for i := 1; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return time.Time{}, false
			}
		}
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if s[i] < '0' || s[i] > '9' {
			return time.Time{}, false
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// hasControl reports whether s holds a byte that JSON strings must escape.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// encodeTimeRefs returns time refs as JSON with their times in UTC.
func encodeTimeRefs(rs []store.TimeRef) (any, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	norm := make([]store.TimeRef, len(rs))
	for i, r := range rs {
		for _, t := range []time.Time{r.Start, r.End} {
			if _, err := encodeTime("time ref", t); err != nil {
				return nil, err
			}
		}
		r.Start, r.End = r.Start.UTC(), r.End.UTC()
		norm[i] = r
	}
	return encodeList("time refs", norm)
}

// decodeVector unpacks a blob written by encodeVector.
func decodeVector(b []byte, dim int) ([]float32, error) {
	if len(b) != 4*dim {
		return nil, fmt.Errorf("sqlite: stored vector has %d bytes for dimension %d", len(b), dim)
	}
	if dim == 0 {
		return nil, nil
	}
	vs := make([]float32, dim)
	vec.DecodeLEInto(vs, b)
	return vs, nil
}

// rawJSON returns a change's before/after bytes as stored: nil when empty.
func rawJSON(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return []byte(m)
}
