package sqlite

import (
	"database/sql"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

func FuzzVectorRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 128, 63, 0, 0, 128, 191})
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = raw[:len(raw)/4*4]
		vs, err := decodeVector(raw, len(raw)/4)
		if err != nil {
			t.Fatalf("decodeVector: %v", err)
		}
		// Bit-exact, NaNs included.
		back := vec.EncodeLE(vs)
		if len(raw) > 0 && !slices.Equal(back, raw) {
			t.Fatalf("round trip changed bytes: %x -> %x", raw, back)
		}
		if _, err := decodeVector(raw, len(raw)/4+1); err == nil {
			t.Fatal("decodeVector accepted a wrong dimension")
		}
	})
}

func FuzzTimeRoundTrip(f *testing.F) {
	f.Add(int64(0), int64(0), 0)
	f.Add(int64(1683554160), int64(123456789), 7200)
	f.Add(int64(-62135596800), int64(1), -3600)
	f.Add(int64(253402300799), int64(999999999), 0)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		in := time.Unix(sec, nsec%1e9).In(time.FixedZone("z", offset%(24*3600)))
		v, err := encodeTime("t", in)
		if y := in.UTC().Year(); y < 0 || y > 9999 {
			if err == nil {
				t.Fatalf("encodeTime(%v) accepted a year outside 0..9999", in)
			}
			return
		}
		if err != nil {
			t.Fatalf("encodeTime(%v): %v", in, err)
		}
		ns := sql.NullString{}
		if v != nil {
			ns = sql.NullString{String: v.(string), Valid: true}
		}
		out, err := decodeTime(ns)
		if err != nil {
			t.Fatalf("decodeTime(%q): %v", ns.String, err)
		}
		if !out.Equal(in) || out != out.UTC().Round(0) || out.IsZero() != in.IsZero() {
			t.Fatalf("round trip %v -> %q -> %v", in, ns.String, out)
		}
		if v != nil && len(v.(string)) != len(timeLayout) {
			t.Fatalf("stored time %q is not fixed width", v)
		}
	})
}

func TestTimeTextOrder(t *testing.T) {
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2023, 5, 8, 13, 56, 0, 10, time.UTC),
		time.Date(2023, 5, 8, 13, 56, 0, 9, time.UTC).Add(time.Nanosecond * 2),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	text := func(tm time.Time) string {
		if tm.IsZero() {
			return zeroTimeText
		}
		v, err := encodeTime("t", tm)
		if err != nil {
			t.Fatal(err)
		}
		return v.(string)
	}
	for i := 1; i < len(times); i++ {
		a, b := text(times[i-1]), text(times[i])
		if (a < b) != times[i-1].Before(times[i]) || (a == b) != times[i-1].Equal(times[i]) {
			t.Errorf("text order of %q and %q differs from time order", a, b)
		}
	}
}

// FuzzParseStrings checks the fast list decoder against encoding/json: it
// either declines or decodes exactly what json.Unmarshal does.
func FuzzParseStrings(f *testing.F) {
	for _, s := range []string{`[]`, `["a"]`, `["a","b c"]`, `["é","\u00e9"]`, `["a\"b"]`, `[ "a" ]`, `["a",]`, `["\x01"]`, `null`, `[1]`, `["a""b"]`, `["<&>"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseStrings(s)
		if !ok {
			return
		}
		var want []string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("parseStrings(%q) = %q, json: %v", s, got, err)
		}
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("parseStrings(%q) = %q, json %q", s, got, want)
		}
	})
}

func TestParseStringsRoundTrip(t *testing.T) {
	for _, xs := range [][]string{{"a"}, {"Caroline", "LGBTQ support group"}, {"", "x"}, {"naïve café"}} {
		v, err := encodeList("x", xs)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseStrings(v.(string))
		if !ok || !slices.Equal(got, xs) {
			t.Fatalf("parseStrings(%q) = %q, %v", v, got, ok)
		}
	}
}

// FuzzParseStoredTime checks the fast time parser against time.Parse: it
// either declines or returns the identical time.
func FuzzParseStoredTime(f *testing.F) {
	for _, s := range []string{"2023-05-08T13:56:00.000000010Z", "0000-01-01T00:00:00.000000000Z", "9999-12-31T23:59:59.999999999Z",
		"2023-02-29T00:00:00.000000000Z", "2024-02-29T00:00:00.000000000Z", "2023-13-01T00:00:00.000000000Z", "2023-05-08T24:00:00.000000000Z", "2023-05-08 13:56:00.000000000Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseStoredTime(s)
		if !ok {
			return
		}
		want, err := time.Parse(timeLayout, s)
		if err != nil {
			t.Fatalf("parseStoredTime(%q) = %v, time.Parse: %v", s, got, err)
		}
		if got != want {
			t.Fatalf("parseStoredTime(%q) = %#v, time.Parse %#v", s, got, want)
		}
	})
}

// FuzzParseTimeRefs checks the fast time-ref decoder against
// encoding/json: it either declines or decodes exactly what json.Unmarshal
// does (every field, the times' locations included).
func FuzzParseTimeRefs(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `[{}]`,
		`[{"text":"this morning","start":"2023-01-02T00:00:00Z","end":"2023-01-03T00:00:00Z","granularity":"day"}]`,
		`[{"text":"a","start":"2023-01-02T00:00:00.5Z","end":"2023-01-03T00:00:00.123456789Z","fuzzy":true},{"text":"b","start":"0001-01-01T00:00:00Z","end":"0001-01-01T00:00:00Z"}]`,
		`[{"text":"x","start":"2023-01-02T00:00:00+01:00","end":"2023-01-03T00:00:00Z"}]`,
		`[{"text":"a\"b","start":"2023-01-02T00:00:00Z","end":"2023-01-03T00:00:00Z"}]`,
		`[{"text":"x","start":"2023-13-02T00:00:00Z","end":"2023-01-03T00:00:00Z"}]`,
		`[{"text":"x","start":"2023-01-02T00:00:00Z","end":"2023-01-03T00:00:00Z","granularity":""}]`,
		`[{"text":"x","start":"2023-01-02T00:00:00Z","end":"2023-01-03T00:00:00Z","fuzzy":false}]`,
		`[{"text":"x","start":"2023-01-02T24:00:00Z","end":"2023-01-03T00:00:00Z"}]`,
		`[{"text":"x","start":"2023-01-02T00:00:00.Z","end":"2023-01-03T00:00:00Z"}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseTimeRefs(s)
		if !ok {
			return
		}
		var want []store.TimeRef
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("parseTimeRefs(%q) = %v, json: %v", s, got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseTimeRefs(%q) = %#v, json %#v", s, got, want)
		}
	})
}

// What encodeTimeRefs writes, the fast decoder reads (it would decline
// otherwise, and every read would go through encoding/json), as
// encoding/json does.
func TestParseTimeRefsRoundTrip(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	day := time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC)
	for _, rs := range [][]store.TimeRef{
		{{Text: "yesterday", Start: day, End: day.AddDate(0, 0, 1), Granularity: "day", Fuzzy: true}},
		{{Text: "naïve café, at noon", Start: day.Add(12*time.Hour + 123456789), End: day.Add(13 * time.Hour).In(paris)},
			{Text: "", Start: time.Time{}, End: day}, {Text: "for three years now", Start: day.AddDate(-3, 0, 0), End: day, Granularity: "year"}},
	} {
		v, err := encodeTimeRefs(rs)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseTimeRefs(v.(string))
		var want []store.TimeRef
		if err := json.Unmarshal([]byte(v.(string)), &want); err != nil {
			t.Fatal(err)
		}
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseTimeRefs(%s) = %#v, %v; json %#v", v, got, ok, want)
		}
	}
}
