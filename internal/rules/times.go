package rules

import (
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
// "last week = 1–7 May 2023" notes, skipping vague ones. Each note is
// written in one buffer and becomes a string once.
func ResolvedTimes(a store.Annotation) []string {
	var out []string
	buf := make([]byte, 0, 64)
next:
	for _, r := range a.TimeRefs {
		if r.Fuzzy || r.Start.IsZero() {
			continue
		}
		buf = append(append(buf[:0], r.Text...), " = "...)
		n := len(buf)
		buf = temporal.AppendRange(buf, r.Start, r.End)
		if len(buf) == n || strings.EqualFold(string(buf[n:]), r.Text) {
			continue
		}
		for _, o := range out {
			if o == string(buf) {
				continue next
			}
		}
		out = append(out, string(buf))
	}
	return out
}
