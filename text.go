package higmem

import (
	"fmt"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// content is the turn text with any image caption (rules.Content).
func content(t store.Turn) string { return rules.Content(t) }

func promptTurn(t store.Turn) prompt.Turn { return promptTurnDated(t, rules.DateOf(t)) }

// promptTurnDated is promptTurn with the turn's date (rules.DateOf) made
// already.
func promptTurnDated(t store.Turn, date string) prompt.Turn {
	return prompt.Turn{ID: t.ID, Date: date, Speaker: t.Speaker, Text: rules.Cut(content(t), maxPromptTurnBytes)}
}

// dayMemo formats turns' dates (rules.DateOf), remembering the last day
// it formatted: a layout's turns mostly come in runs said on one day. The
// date of a known time is its day, month and year, whatever its location
// ("8 May 2023").
type dayMemo struct {
	y, d int
	m    time.Month
	s    string
	set  bool
}

// dateOf returns rules.DateOf(*t).
func (dm *dayMemo) dateOf(t *store.Turn) string {
	if t.OccurredAt.IsZero() {
		return rules.DateOf(*t)
	}
	y, m, d := t.OccurredAt.Date()
	if !dm.set || y != dm.y || m != dm.m || d != dm.d {
		dm.y, dm.m, dm.d, dm.s, dm.set = y, m, d, rules.DateOf(*t), true
	}
	return dm.s
}

func promptTurns(ts []store.Turn) []prompt.Turn {
	out := make([]prompt.Turn, len(ts))
	for i, t := range ts {
		out[i] = promptTurn(t)
	}
	return out
}

// estimateTokens approximates a token count (about 4 bytes per token).
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// renderContext renders evidence as the answer model sees it.
// Each evidence is a line "[id] date | speaker(excerpt marker): content
// (time; time)", written piece by piece (no fmt on the question path).
func renderContext(ev []Evidence) string {
	var b strings.Builder
	// Room for the lines, about (their fixed parts and a time or two):
	// no copies as the text grows.
	n := 0
	for i := range ev {
		n += len(ev[i].Turn.ID) + len(ev[i].Date) + len(ev[i].Turn.Speaker) + len(ev[i].Turn.Text) + 32
	}
	b.Grow(n)
	for _, e := range ev {
		date := e.Date
		if date == "" {
			date = "unknown date"
		}
		b.WriteByte('[')
		b.WriteString(e.Turn.ID)
		b.WriteString("] ")
		b.WriteString(date)
		b.WriteString(" | ")
		b.WriteString(e.Turn.Speaker)
		b.WriteString(excerptMarker(e.Excerpt))
		b.WriteString(": ")
		b.WriteString(content(e.Turn))
		if len(e.Times) > 0 {
			b.WriteString(" (")
			for i, t := range e.Times {
				if i > 0 {
					b.WriteString("; ")
				}
				b.WriteString(t)
			}
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// excerptMarker is what follows the speaker of an evidence that shows part
// of a long turn ("" for a whole turn).
func excerptMarker(ex *Excerpt) string {
	if ex == nil {
		return ""
	}
	return fmt.Sprintf(" (excerpt of a longer message: %d of its %d passages)", len(ex.Passages), ex.Of)
}

// evidenceTokens is what an evidence costs the evidence budget: its line
// in the answer model's context, near enough.
//
// It is estimateTokens of the four strings joined, from their lengths.
func evidenceTokens(e *Evidence) int {
	n := len(e.Turn.Speaker) + len(excerptMarker(e.Excerpt)) + len(e.Date) + len(content(e.Turn))
	return (n+3)/4 + 8
}
