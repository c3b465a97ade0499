package rules

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/store"
)

// refResolvedTimes is ResolvedTimes as it was written before it used one
// buffer: the reference it must match.
func refResolvedTimes(a store.Annotation) []string {
	var out []string
	for _, r := range a.TimeRefs {
		if r.Fuzzy || r.Start.IsZero() {
			continue
		}
		iv := temporal.Interval{Start: r.Start, End: r.End}.String()
		if iv == "" || strings.EqualFold(iv, r.Text) {
			continue
		}
		n := r.Text + " = " + iv
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// TestResolvedTimesIsReference checks ResolvedTimes against the reference
// on random annotations: vague and unplaced expressions, texts that are
// their own range in another case, repeated expressions, ranges of every
// shape, none at all.
func TestResolvedTimesIsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	texts := []string{"last week", "yesterday", "2022", "may 2023", "8 MAY 2023", "in 2022", "", "that day"}
	day := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	for range 20000 {
		var a store.Annotation
		for range rng.IntN(6) {
			s := day.AddDate(rng.IntN(3)-1, rng.IntN(5)-2, rng.IntN(40)-20)
			var e time.Time
			switch rng.IntN(5) {
			case 0:
				s = time.Date(s.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
				e = s.AddDate(1+rng.IntN(2), 0, 0)
			case 1:
				s = time.Date(s.Year(), s.Month(), 1, 0, 0, 0, 0, time.UTC)
				e = s.AddDate(0, 1+rng.IntN(3), 0)
			case 2:
				e = s.AddDate(0, 0, 1+rng.IntN(9))
			case 3:
				e = s
			default:
				s = s.Add(time.Duration(rng.IntN(86400)) * time.Second)
				e = s.Add(time.Hour)
			}
			if rng.IntN(10) == 0 {
				s = time.Time{}
			}
			a.TimeRefs = append(a.TimeRefs, store.TimeRef{Text: texts[rng.IntN(len(texts))], Start: s, End: e, Fuzzy: rng.IntN(6) == 0})
		}
		if got, want := ResolvedTimes(a), refResolvedTimes(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("ResolvedTimes(%+v) = %q, want %q", a.TimeRefs, got, want)
		}
	}
}
