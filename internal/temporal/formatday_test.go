package temporal

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestFormatDayIsFormat checks FormatDay against time.Format with the day
// layout, for days across and beyond the years 0-9999 (negative years,
// years under 1000 and over 9999) in several locations.
func TestFormatDayIsFormat(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("x", -11*3600), time.FixedZone("y", 14*3600)}
	if l, err := time.LoadLocation("America/New_York"); err == nil {
		locs = append(locs, l)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	years := []int{-12345, -1000, -999, -10, -1, 0, 1, 9, 10, 99, 100, 999, 1000, 1969, 1970, 2023, 2024, 9999, 10000, 123456}
	check := func(tm time.Time) {
		t.Helper()
		if got, want := FormatDay(tm), tm.Format(dayLayout); got != want {
			t.Fatalf("FormatDay(%v) = %q, want %q", tm, got, want)
		}
	}
	for _, loc := range locs {
		for _, y := range years {
			for m := time.January; m <= time.December; m++ {
				for _, d := range []int{1, 9, 10, 28, 31} {
					check(time.Date(y, m, d, rng.IntN(24), rng.IntN(60), 0, 0, loc))
				}
			}
		}
		for range 20000 {
			check(time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).In(loc))
		}
	}
	if FormatDay(time.Time{}) != "" {
		t.Error("the zero time does not format as the empty string")
	}
}

func BenchmarkFormatDay(b *testing.B) {
	tm := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	b.Run("FormatDay", func(b *testing.B) {
		for b.Loop() {
			_ = FormatDay(tm)
		}
	})
	b.Run("Format", func(b *testing.B) {
		for b.Loop() {
			_ = tm.Format(dayLayout)
		}
	})
}

// refFormatRange is formatRange as it was written before AppendRange, out
// of strings: the reference AppendRange must match.
func refFormatRange(start, end time.Time) string {
	if start.IsZero() && end.IsZero() {
		return ""
	}
	if !end.After(start) {
		return FormatDay(start)
	}
	if !isMidnight(start) || !isMidnight(end) {
		return start.Format(time.RFC3339) + " – " + end.Format(time.RFC3339)
	}
	sy, sm, sd := start.Date()
	ey, em, ed := end.Date()
	if sd == 1 && ed == 1 {
		if sm == time.January && em == time.January {
			if ey == sy+1 {
				return strconv.Itoa(sy)
			}
			return strconv.Itoa(sy) + "–" + strconv.Itoa(ey-1)
		}
		last := end.AddDate(0, -1, 0)
		ly, lm, _ := last.Date()
		switch {
		case ly == sy && lm == sm:
			return sm.String() + " " + strconv.Itoa(sy)
		case ly == sy:
			return sm.String() + " – " + lm.String() + " " + strconv.Itoa(sy)
		default:
			return sm.String() + " " + strconv.Itoa(sy) + " – " + lm.String() + " " + strconv.Itoa(ly)
		}
	}
	last := addDays(end, -1)
	ly, lm, ld := last.Date()
	switch {
	case ly == sy && lm == sm && ld == sd:
		return FormatDay(start)
	case ly == sy && lm == sm:
		return strconv.Itoa(sd) + "–" + FormatDay(last)
	case ly == sy:
		return strconv.Itoa(sd) + " " + sm.String() + " – " + FormatDay(last)
	default:
		return FormatDay(start) + " – " + FormatDay(last)
	}
}

// TestAppendRangeIsFormatRange checks formatRange and AppendRange (after
// a prefix) against the reference, for intervals of every shape
// formatRange knows: whole years, whole months, days, one day, empty or
// reversed, not at midnight, around the zero time and negative years.
func TestAppendRangeIsFormatRange(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("x", -5*3600), time.FixedZone("y", 9*3600+1800)}
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(a, b time.Time) {
		t.Helper()
		want := refFormatRange(a, b)
		if got := formatRange(a, b); got != want {
			t.Fatalf("formatRange(%v, %v) = %q, want %q", a, b, got, want)
		}
		if got := string(AppendRange([]byte("x: "), a, b)); got != "x: "+want {
			t.Fatalf("AppendRange(%v, %v) = %q, want %q", a, b, got, "x: "+want)
		}
	}
	check(time.Time{}, time.Time{})
	z := time.Time{}
	for _, d := range []int{-400, -31, -1, 0, 1, 2, 31, 366} {
		check(z, z.AddDate(0, 0, d))
		check(z.AddDate(0, 0, d), z)
		check(z.AddDate(0, 0, d), z.AddDate(0, 0, d+1))
		check(z.AddDate(0, 0, d-3), z.AddDate(0, 0, d+1))
	}
	years := []int{-50, -1, 0, 1, 999, 1999, 2022, 2023, 2024, 9999, 10000}
	for _, loc := range locs {
		for range 30000 {
			y := years[rng.IntN(len(years))]
			var a time.Time
			switch rng.IntN(4) {
			case 0: // a year's start
				a = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
			case 1: // a month's start
				a = time.Date(y, time.Month(1+rng.IntN(12)), 1, 0, 0, 0, 0, loc)
			case 2: // a midnight
				a = time.Date(y, time.Month(1+rng.IntN(12)), 1+rng.IntN(31), 0, 0, 0, 0, loc)
			default: // any time
				a = time.Date(y, time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), 0, rng.IntN(2), loc)
			}
			var b time.Time
			switch rng.IntN(5) {
			case 0:
				b = a.AddDate(1+rng.IntN(3), 0, 0)
			case 1:
				b = a.AddDate(0, rng.IntN(30)-2, 0)
			case 2:
				b = a.AddDate(0, 0, rng.IntN(70)-3)
			case 3:
				b = a
			default:
				b = a.Add(time.Duration(rng.Int64N(1e15)))
			}
			check(a, b)
		}
	}
}
