package rules

import (
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/store"
)

// DateOf is a turn's date as shown to models: "8 May 2023", or the raw
// string when it could not be parsed.
func DateOf(t store.Turn) string {
	if !t.OccurredAt.IsZero() {
		return temporal.FormatDay(t.OccurredAt)
	}
	return t.OccurredRaw
}

// ResolvedTimes renders an annotation's time expressions as
// "last week = 1–7 May 2023" notes, skipping vague ones.
func ResolvedTimes(a store.Annotation) []string {
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
