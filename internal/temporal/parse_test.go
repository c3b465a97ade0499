package temporal

import (
	"errors"
	"testing"
	"time"
	_ "time/tzdata" // DST tests need America/New_York on any machine
)

func TestParseTime(t *testing.T) {
	utc := time.UTC
	at := func(y int, m time.Month, d, hh, mm, ss int) time.Time { return time.Date(y, m, d, hh, mm, ss, 0, utc) }
	tests := []struct {
		in   string
		want time.Time
		gran Granularity
	}{
		// LoCoMo's session_N_date_time and variants.
		{"1:56 pm on 8 May, 2023", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"10:37 am on 27 June, 2023", at(2023, 6, 27, 10, 37, 0), GranMinute},
		{"12:06 am on 11 November, 2022", at(2022, 11, 11, 0, 6, 0), GranMinute},
		{"12:30 pm on 1 June, 2023", at(2023, 6, 1, 12, 30, 0), GranMinute},
		{"1:56 pm on 8 May 2023", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"1:56 PM on 8 may, 2023", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"10:37 am on 27 Jun, 2023", at(2023, 6, 27, 10, 37, 0), GranMinute},
		{"1:56pm on 8th May, 2023", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"1:56 p.m. on 8 May, 2023", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"  9:55 am on 22 October, 2023  ", at(2023, 10, 22, 9, 55, 0), GranMinute},
		{"8 May 2023 at 13:56", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"May 8, 2023 at 1:56:30 pm", at(2023, 5, 8, 13, 56, 30), GranSecond},
		{"7 pm on 8 May, 2023", at(2023, 5, 8, 19, 0, 0), GranHour},
		{"Monday, 8 May 2023", at(2023, 5, 8, 0, 0, 0), GranDay},
		// Plain dates.
		{"May 8, 2023", at(2023, 5, 8, 0, 0, 0), GranDay},
		{"8 May 2023", at(2023, 5, 8, 0, 0, 0), GranDay},
		{"19 January, 2023", at(2023, 1, 19, 0, 0, 0), GranDay},
		{"Sept 3, 2022", at(2022, 9, 3, 0, 0, 0), GranDay},
		{"the 29th of February 2024", at(2024, 2, 29, 0, 0, 0), GranDay},
		{"May 2023", at(2023, 5, 1, 0, 0, 0), GranMonth},
		{"February, 2023", at(2023, 2, 1, 0, 0, 0), GranMonth},
		{"2023", at(2023, 1, 1, 0, 0, 0), GranYear},
		// ISO 8601 / RFC 3339.
		{"2023-05-08T13:56:00Z", at(2023, 5, 8, 13, 56, 0), GranSecond},
		{"2023-05-08T13:56:00+02:00", at(2023, 5, 8, 11, 56, 0), GranSecond},
		{"2023-05-08T13:56:00.123Z", at(2023, 5, 8, 13, 56, 0).Add(123 * time.Millisecond), GranSecond},
		{"2023-05-08T13:56", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"2023-05-08 13:56", at(2023, 5, 8, 13, 56, 0), GranMinute},
		{"2023-05-08 13:56:07", at(2023, 5, 8, 13, 56, 7), GranSecond},
		{"2023-05-08 13:56:07 +0000 UTC", at(2023, 5, 8, 13, 56, 7), GranSecond},
		{"2023-05-08", at(2023, 5, 8, 0, 0, 0), GranDay},
		{"2023-05", at(2023, 5, 1, 0, 0, 0), GranMonth},
		{"20230508", at(2023, 5, 8, 0, 0, 0), GranDay},
		// Unix time.
		{"1683554160", at(2023, 5, 8, 13, 56, 0), GranSecond},
		{"1683554160000", at(2023, 5, 8, 13, 56, 0), GranMillisecond},
		{"1683554160123", at(2023, 5, 8, 13, 56, 0).Add(123 * time.Millisecond), GranMillisecond},
		// Slashes are US month/day/year.
		{"05/08/2023", at(2023, 5, 8, 0, 0, 0), GranDay},
		{"12/31/2022", at(2022, 12, 31, 0, 0, 0), GranDay},
		{"2023/05/08", at(2023, 5, 8, 0, 0, 0), GranDay},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, g, err := ParseTime(tc.in, nil)
			if err != nil {
				t.Fatalf("ParseTime(%q): %v", tc.in, err)
			}
			if !got.Equal(tc.want) || g != tc.gran {
				t.Errorf("ParseTime(%q) = %v, %v; want %v, %v", tc.in, got, g, tc.want, tc.gran)
			}
			if got.Location() != utc {
				t.Errorf("ParseTime(%q) location = %v; want UTC", tc.in, got.Location())
			}
		})
	}
}

func TestParseTimeUnparsable(t *testing.T) {
	for _, in := range []string{
		"", "   ", "yesterday", "last week", "8 May", "May", "1:56 pm", "hello world",
		"31 February, 2023", "13:99 on 8 May, 2023", "25:00 on 8 May, 2023", "13:56 pm on 8 May 2023",
		"0:30 am on 8 May, 2023", "13/05/2023", "08/05/23", "2023-13-01", "2023-02-30", "123", "12345",
		"99999999999999", "1:56 pm on 8 May, 2023 and 9 May, 2023", "8 8 8", "8 May 2023 2024",
	} {
		t.Run(in, func(t *testing.T) {
			got, g, err := ParseTime(in, nil)
			if !errors.Is(err, ErrUnparsable) {
				t.Fatalf("ParseTime(%q) = %v, %v, %v; want ErrUnparsable", in, got, g, err)
			}
			if !got.IsZero() || g != GranUnknown {
				t.Errorf("ParseTime(%q) returned %v, %v with the error; want zero values", in, got, g)
			}
		})
	}
}

func TestParseTimeLocation(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// A zone-less string is wall-clock time in loc.
	got, _, err := ParseTime("1:56 pm on 8 May, 2023", ny)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2023, 5, 8, 13, 56, 0, 0, ny); !got.Equal(want) || got.Location() != ny {
		t.Errorf("zone-less: got %v, want %v", got, want)
	}
	// A zoned string keeps its instant and is returned in loc.
	got, _, err = ParseTime("2023-05-08T13:56:00Z", ny)
	if err != nil {
		t.Fatal(err)
	}
	if got.Location() != ny || got.Hour() != 9 || !got.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
		t.Errorf("zoned: got %v, want 09:56 EDT", got)
	}
	// Unix seconds are an instant too.
	got, _, err = ParseTime("1683554160", ny)
	if err != nil {
		t.Fatal(err)
	}
	if got.Location() != ny || got.Hour() != 9 {
		t.Errorf("unix: got %v, want 09:56 EDT", got)
	}
	// "UTC" in a natural-language string overrides loc for reading.
	got, _, err = ParseTime("1:56 pm UTC on 8 May, 2023", ny)
	if err != nil {
		t.Fatal(err)
	}
	if got.Location() != ny || got.Hour() != 9 {
		t.Errorf("UTC word: got %v, want 09:56 EDT", got)
	}
}
