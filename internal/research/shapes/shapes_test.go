package shapes

import (
	"math"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/passage"
)

// TestPassagesAreTheEngines: the research loop's passages of a turn are
// the engine's (internal/passage.Split), trimmed, covering the text.
func TestPassagesAreTheEngines(t *testing.T) {
	if got := Passages(strings.Repeat("w ", passage.MinWords)); got != nil {
		t.Errorf("a turn of %d words: %d passages, want none", passage.MinWords, len(got))
	}
	text := strings.TrimSpace(strings.Repeat("Some words of a long reply here. ", 60))
	got := Passages(text)
	spans := passage.Split(text)
	if len(got) < 2 || len(got) != len(spans) {
		t.Fatalf("%d passages, want the engine's %d (at least 2)", len(got), len(spans))
	}
	words := 0
	for k, p := range got {
		if p != spans[k].Text(text) || p != strings.TrimSpace(p) {
			t.Errorf("passage %d is %q, want the engine's %q", k, p, spans[k].Text(text))
		}
		words += len(strings.Fields(p))
	}
	if words != len(strings.Fields(text)) {
		t.Errorf("the passages hold %d words, the text %d", words, len(strings.Fields(text)))
	}
}

func TestWindowTexts(t *testing.T) {
	// The engine's window: turns before in the session, nearest first,
	// while they hold fewer than 30 words, at most 4.
	c := &Conv{Units: []Unit{
		{Speaker: "A", Text: "hi", Words: 1, Session: 1},
		{Speaker: "B", Text: strings.TrimSpace(strings.Repeat("x ", 40)), Words: 40, Session: 1},
		{Speaker: "A", Text: "ok", Words: 1, Session: 1},
		{Speaker: "B", Text: "new", Words: 1, Session: 2},
	}}
	w := windowTexts(c)
	if w[0] != "A: hi" || w[2] != "B: "+c.Units[1].Text+"\nA: ok" || w[3] != "B: new" {
		t.Errorf("windows %q", w)
	}
}

func TestScore(t *testing.T) {
	var s Score
	s.Add([]int{1, 2, 3, 4}, []int{2, 9})
	s.Add([]int{5}, []int{-1})
	m := s.Mean()
	if math.Abs(m.R-0.25) > 1e-12 || math.Abs(m.P-0.125) > 1e-12 || m.K != 2.5 {
		t.Errorf("mean %+v, want R 0.25 P 0.125 K 2.5", m)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("Hey Mel! Good to see you. How are you?")
	if len(got) != 3 || got[1] != "Good to see you." {
		t.Errorf("%q", got)
	}
}
