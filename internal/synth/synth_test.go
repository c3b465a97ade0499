package synth

import (
	"github.com/higmem/higmem"
	"slices"
	"testing"
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
