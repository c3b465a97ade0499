package postgres

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/higmem/higmem/store"
)

// timeLayout is how times are stored: UTC text of fixed width with
// nanoseconds, so that text order (the columns collate "C") is time order
// for the years 0 to 9999. PostgreSQL's timestamptz keeps microseconds
// only, and the store must give back what it was given. A zero time is
// stored as NULL. SQLite's backend stores times the same way.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// zeroTimeText is the zero time in timeLayout, for ordering NULLs like it.
const zeroTimeText = "0001-01-01T00:00:00.000000000Z"

// encodeTime returns t as stored: nil (NULL) for the zero time.
func encodeTime(what string, t time.Time) (*string, error) {
	if t.IsZero() {
		return nil, nil
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("%w: %s %v outside the years 0 to 9999", store.ErrInvalid, what, t)
	}
	s := t.Format(timeLayout)
	return &s, nil
}

// decodeTime parses a stored time; NULL is the zero time.
func decodeTime(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, *s)
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: stored time %q: %w", *s, err)
	}
	return t, nil
}

// clean returns s as PostgreSQL text can hold it: valid UTF-8 without NUL
// bytes. Each byte that is not part of valid UTF-8 becomes U+FFFD, as
// encoding/json does, and so does each NUL. Valid text is returned as is.
func clean(s string) string {
	ok := utf8.ValidString(s)
	if ok {
		for i := 0; i < len(s); i++ {
			if s[i] == 0 {
				ok = false
				break
			}
		}
	}
	if ok {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) {
			b = utf8.AppendRune(b, utf8.RuneError)
			i++
			continue
		}
		b = append(b, s[i:i+n]...)
		i += n
	}
	return string(b)
}

// cleanList cleans every string of xs; an empty list is nil (NULL).
func cleanList(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = clean(x)
	}
	return out
}

// cleanAttachments cleans the strings of attachments; empty is nil.
func cleanAttachments(as []store.Attachment) []store.Attachment {
	if len(as) == 0 {
		return nil
	}
	out := make([]store.Attachment, len(as))
	for i, a := range as {
		out[i] = store.Attachment{Kind: clean(a.Kind), URL: clean(a.URL), Caption: clean(a.Caption)}
	}
	return out
}

// cleanMap cleans the keys and values of m; empty is nil.
func cleanMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[clean(k)] = clean(v)
	}
	return out
}

// cleanFacts cleans the strings of facts; empty is nil.
func cleanFacts(fs []store.Fact) []store.Fact {
	if len(fs) == 0 {
		return nil
	}
	out := make([]store.Fact, len(fs))
	for i, f := range fs {
		out[i] = store.Fact{Time: clean(f.Time), Text: clean(f.Text), TurnID: clean(f.TurnID)}
	}
	return out
}

// encodeJSON returns v as JSON for a jsonb column, or nil (NULL) when
// empty is set.
func encodeJSON(what string, v any, empty bool) ([]byte, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrInvalid, what, err)
	}
	return b, nil
}

// encodeTimeRefs returns time refs as JSON with their times in UTC and
// their strings cleaned.
func encodeTimeRefs(rs []store.TimeRef) ([]byte, error) {
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
		r.Text, r.Granularity = clean(r.Text), clean(r.Granularity)
		norm[i] = r
	}
	return encodeJSON("time refs", norm, false)
}

// decodeJSON decodes a jsonb column into v; NULL leaves v alone.
func decodeJSON(what string, b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("postgres: stored %s: %w", what, err)
	}
	return nil
}
