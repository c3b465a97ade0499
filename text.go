package higmem

import (
	"fmt"
	"strings"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// content is the turn text with any image caption (rules.Content).
func content(t store.Turn) string { return rules.Content(t) }

func promptTurn(t store.Turn) prompt.Turn {
	return prompt.Turn{ID: t.ID, Date: rules.DateOf(t), Speaker: t.Speaker, Text: rules.Cut(content(t), maxPromptTurnBytes)}
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
