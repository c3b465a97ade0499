package temporal

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"1:56 pm on 8 May, 2023", "10:37 am on 27 June, 2023", "2023-05-08T13:56:00Z", "1683554160000",
	"05/08/2023", "May 2023", "the 8th of May", "yesterday", "two weekends ago", "last Fri.",
	"since the end of last year", "for about four months now", "in the last month", "mid-2022",
	"on the 31st", "a couple of", "the day before", "5/8/2023x", "2023-05-08-1", "early", "the end of",
	"since", "in 0000", "9999-12-31T23:59:59Z", "February 29, 2023", "12:00 am on 1 January, 1000",
	"last sun", "this coming weekend", "around circa about 2016", "tomorrow’s", "It’s been ages",
}

func FuzzParseTime(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	loc := time.FixedZone("X", -5*3600)
	f.Fuzz(func(t *testing.T, s string) {
		got, g, err := ParseTime(s, loc)
		if err != nil {
			if !errors.Is(err, ErrUnparsable) {
				t.Fatalf("ParseTime(%q): error %v is not ErrUnparsable", s, err)
			}
			if !got.IsZero() || g != GranUnknown {
				t.Fatalf("ParseTime(%q): non-zero result with error", s)
			}
			return
		}
		if g == GranUnknown || got.IsZero() {
			t.Fatalf("ParseTime(%q) = %v, %v: success must give a time and a granularity", s, got, g)
		}
		if got.Location() != loc {
			t.Fatalf("ParseTime(%q) location %v; want %v", s, got.Location(), loc)
		}
		// Parsing is deterministic.
		again, g2, _ := ParseTime(s, loc)
		if !again.Equal(got) || g2 != g {
			t.Fatalf("ParseTime(%q) not deterministic", s)
		}
	})
}

func FuzzResolve(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, int64(1683554160+i*86400*37))
	}
	f.Add("I went hiking last week and yesterday, and I'm going in June", int64(-62135596800)) // year 1
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		// Keep the reference in a sane range of years so that time.Date does
		// not overflow; the text is unconstrained.
		unix %= 1 << 37
		ref := time.Unix(unix, 0).In(time.FixedZone("Y", 3600))
		refs := Resolve(text, ref)
		prevEnd := 0
		for _, r := range refs {
			if r.End.Before(r.Start) {
				t.Fatalf("Resolve(%q): %q has Start %v after End %v", text, r.Text, r.Start, r.End)
			}
			if r.Pos < prevEnd || r.Pos+len(r.Text) > len(text) || text[r.Pos:r.Pos+len(r.Text)] != r.Text {
				t.Fatalf("Resolve(%q): bad span %d %q", text, r.Pos, r.Text)
			}
			if r.Text == "" || strings.TrimSpace(r.Text) != r.Text {
				t.Fatalf("Resolve(%q): span %q is empty or untrimmed", text, r.Text)
			}
			if utf8.ValidString(text) && !utf8.ValidString(r.Text) {
				t.Fatalf("Resolve(%q): span %q splits a rune", text, r.Text)
			}
			if r.Kind == KindUnknown || r.Granularity < GranDay {
				t.Fatalf("Resolve(%q): %+v has no kind or a finer-than-day granularity", text, r)
			}
			if r.Start.Location() != ref.Location() || !isMidnight(r.Start) || !isMidnight(r.End) {
				t.Fatalf("Resolve(%q): %+v not midnight-aligned in ref's location", text, r)
			}
			_ = Describe(r)
			prevEnd = r.Pos + len(r.Text)
		}
		_ = AnalyzeQuestionAt(text, ref)
	})
}
