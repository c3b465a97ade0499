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
func renderContext(ev []Evidence) string {
	var b strings.Builder
	for _, e := range ev {
		date := e.Date
		if date == "" {
			date = "unknown date"
		}
		fmt.Fprintf(&b, "[%s] %s | %s%s: %s", e.Turn.ID, date, e.Turn.Speaker, excerptMarker(e.Excerpt), content(e.Turn))
		if len(e.Times) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(e.Times, "; "))
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
func evidenceTokens(e *Evidence) int {
	return estimateTokens(e.Turn.Speaker+excerptMarker(e.Excerpt)+e.Date+content(e.Turn)) + 8
}
