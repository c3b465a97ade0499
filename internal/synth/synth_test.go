package synth

import (
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/offline"
)

func TestGenerateDeterministic(t *testing.T) {
	a := Generate(Options{Turns: 500, Seed: 7})
	b := Generate(Options{Turns: 500, Seed: 7})
	c := Generate(Options{Turns: 500, Seed: 8})
	if len(a.Turns) != 500 || len(a.Questions) == 0 {
		t.Fatalf("%d turns, %d questions", len(a.Turns), len(a.Questions))
	}
	if !slices.EqualFunc(a.Turns, b.Turns, func(x, y higmem.TurnInput) bool { return x.ID == y.ID && x.Text == y.Text && x.Time == y.Time }) {
		t.Fatal("same seed, different output")
	}
	if slices.EqualFunc(a.Turns, c.Turns, func(x, y higmem.TurnInput) bool { return x.Text == y.Text }) {
		t.Fatal("different seeds, same output")
	}
	ids := map[string]bool{}
	sessions := map[string]bool{}
	for _, tr := range a.Turns {
		if ids[tr.ID] || tr.Text == "" || tr.Speaker == "" || tr.Time == "" {
			t.Fatalf("bad turn %+v", tr)
		}
		ids[tr.ID] = true
		sessions[tr.SessionID] = true
	}
	if len(sessions) < 10 {
		t.Fatalf("%d sessions for 500 turns", len(sessions))
	}
	for _, q := range a.Questions {
		if !ids[q.Evidence] {
			t.Fatalf("question %q points at missing turn %s", q.Text, q.Evidence)
		}
	}
}

func TestGenerateFromCorpus(t *testing.T) {
	c := Generate(Options{Turns: 50, Seed: 1, Corpus: []string{"alpha", "beta"}})
	for _, tr := range c.Turns {
		if tr.Text != "alpha" && tr.Text != "beta" {
			t.Fatalf("text %q not from the corpus", tr.Text)
		}
	}
}

// TestGenerateUserAssistant checks the "ua" shape: two speakers taking
// turns, the assistant's replies long enough that offline retrieval takes
// the conversation for a user–assistant chat (Shape.Assist 1), and the
// chat shape not taken for one.
func TestGenerateUserAssistant(t *testing.T) {
	for _, tc := range []struct {
		shape  string
		assist float64
	}{{ShapeUA, 1}, {"", 0}} {
		c := Generate(Options{Turns: 400, Seed: 3, Shape: tc.shape})
		if len(c.Turns) != 400 || len(c.Questions) == 0 {
			t.Fatalf("shape %q: %d turns, %d questions", tc.shape, len(c.Turns), len(c.Questions))
		}
		var st offline.SpeakerStats
		for i, tr := range c.Turns {
			sp := int32(i % 2)
			if want := []string{"user", "assistant"}[sp]; tc.shape == ShapeUA && tr.Speaker != want {
				t.Fatalf("turn %d said by %q, want %q", i, tr.Speaker, want)
			}
			st.Add(sp, int32(len(strings.Fields(tr.Text))))
		}
		if got := st.Shape().Assist(); got != tc.assist {
			t.Errorf("shape %q: Assist %v (ratio %.2f), want %v", tc.shape, got, st.Shape().Ratio, tc.assist)
		}
	}
}
