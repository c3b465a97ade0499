package sqlite

import (
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

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
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: stored time %q: %w", s.String, err)
	}
	return t, nil
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
	if err := json.Unmarshal([]byte(s.String), v); err != nil {
		return fmt.Errorf("sqlite: stored %s: %w", what, err)
	}
	return nil
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

// encodeVector packs values as little-endian float32s.
func encodeVector(vs []float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
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
	for i := range vs {
		vs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vs, nil
}

// rawJSON returns a change's before/after bytes as stored: nil when empty.
func rawJSON(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return []byte(m)
}
