package temporal

import (
	"math/rand/v2"
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
