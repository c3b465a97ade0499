package higmem_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// TestCaps checks every cap of the engine: over the limit, the call fails
// with ErrTooLarge (and ErrInvalidInput), the message names the size and
// the limit, and nothing is stored; a negative option lifts the cap.
func TestCaps(t *testing.T) {
	ctx := t.Context()
	m := open(t, higmem.Options{MaxTurnBytes: 100, MaxBatchTurns: 3, MaxQuestionBytes: 50})
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "ok", Speaker: "a", Text: "a turn that fits"}}); err != nil {
		t.Fatal(err)
	}
	small := higmem.TurnInput{Speaker: "a", Text: "fits"}
	cases := []struct {
		name string
		call func() error
		msg  string
	}{
		{"turn over MaxTurnBytes", func() error {
			_, err := m.Add(ctx, sp, []higmem.TurnInput{small, {ID: "big", Speaker: "a", Text: strings.Repeat("x", 101)}})
			return err
		}, `turn 2 ("big"): text is 101 bytes, over the limit of 100 bytes per turn`},
		{"captions count", func() error {
			_, err := m.Add(ctx, sp, []higmem.TurnInput{{Speaker: "a", Text: strings.Repeat("x", 60),
				Attachments: []higmem.Attachment{{Kind: "image", Caption: strings.Repeat("c", 41)}}}})
			return err
		}, "text is 101 bytes"},
		{"batch over MaxBatchTurns", func() error {
			_, err := m.Add(ctx, sp, []higmem.TurnInput{small, small, small, small})
			return err
		}, "4 turns in one add, over the limit of 3"},
		{"question over MaxQuestionBytes", func() error {
			_, err := m.Retrieve(ctx, sp, strings.Repeat("why ", 13), higmem.RetrieveOptions{})
			return err
		}, "question is 51 bytes, over the limit of 50"},
		{"ask question over MaxQuestionBytes", func() error {
			_, err := m.Ask(ctx, sp, strings.Repeat("why ", 13), higmem.RetrieveOptions{})
			return err
		}, "over the limit of 50"},
		{"k_turn over MaxK", func() error {
			_, err := m.Retrieve(ctx, sp, "turn", higmem.RetrieveOptions{KTurn: higmem.MaxK + 1})
			return err
		}, fmt.Sprintf("k_turn is %d, over the limit of %d", higmem.MaxK+1, higmem.MaxK)},
		{"max_evidence over MaxK", func() error {
			_, err := m.Retrieve(ctx, sp, "turn", higmem.RetrieveOptions{MaxEvidence: higmem.MaxK + 1})
			return err
		}, "max_evidence is"},
		{"import turn over MaxTurnBytes", func() error {
			src := open(t, higmem.Options{MaxTurnBytes: -1})
			if _, err := src.Add(ctx, sp, []higmem.TurnInput{{ID: "i1", Speaker: "a", Text: strings.Repeat("y", 500)}}); err != nil {
				return err
			}
			var b bytes.Buffer
			if err := src.Export(ctx, sp, &b); err != nil {
				return err
			}
			_, err := m.Import(ctx, sp, &b)
			return err
		}, `import line 2: turn "i1": text is 500 bytes, over the limit of 100 bytes per turn`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, higmem.ErrTooLarge) || !errors.Is(err, higmem.ErrInvalidInput) {
				t.Fatalf("err = %v; want ErrTooLarge and ErrInvalidInput", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %q; want it to say %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), "Options.") {
				t.Errorf("err = %q names a Go option", err)
			}
		})
	}
	if st, err := m.Stats(ctx, sp); err != nil || st.Turns != 1 {
		t.Errorf("after the refusals: %+v, %v; want only the first turn stored", st, err)
	}
	if _, err := higmem.Open(ctx, higmem.Options{KTurn: higmem.MaxK + 1}); !errors.Is(err, higmem.ErrInvalidInput) {
		t.Errorf("Open with KTurn over MaxK: %v; want ErrInvalidInput", err)
	}

	// Negative lifts a cap; zero is the default.
	free := open(t, higmem.Options{MaxTurnBytes: -1})
	if _, err := free.Add(ctx, sp, []higmem.TurnInput{{Speaker: "a", Text: strings.Repeat("z", higmem.DefaultMaxTurnBytes+1)}}); err != nil {
		t.Errorf("MaxTurnBytes -1: %v", err)
	}
	def := open(t, higmem.Options{})
	if _, err := def.Add(ctx, sp, []higmem.TurnInput{{Speaker: "a", Text: strings.Repeat("z", higmem.DefaultMaxTurnBytes+1)}}); !errors.Is(err, higmem.ErrTooLarge) {
		t.Errorf("default MaxTurnBytes: %v; want ErrTooLarge", err)
	}
}

// TestEvidenceBudgetCutsLongTurn checks that the token budget is a real
// cap: a long turn comes back as the excerpt that matches (its passages,
// see passages.go), and an excerpt longer than the whole budget comes back
// cut to it with a marker and a note, while the stored turn stays whole.
func TestEvidenceBudgetCutsLongTurn(t *testing.T) {
	ctx := t.Context()
	m := open(t, higmem.Options{MaxTurnBytes: -1})
	long := "The lighthouse keeper logbook says " + strings.Repeat("storm wind wave ", 50000)
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "long", Speaker: "Ann", Text: long}, {ID: "short", Speaker: "Bo", Text: "I like tea."}}); err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{500, 40} {
		res, err := m.Retrieve(ctx, sp, "What does the lighthouse logbook say about the storm?", higmem.RetrieveOptions{EvidenceTokens: budget})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Evidence) == 0 || res.Evidence[0].Turn.ID != "long" {
			t.Fatalf("evidence %+v; want the long turn first", res.Evidence)
		}
		got := res.Evidence[0].Turn.Text
		if len(got) > budget*4 || res.Evidence[0].Excerpt == nil || !strings.HasPrefix(got, "The lighthouse keeper") {
			t.Errorf("budget %d: evidence text is %d bytes (%.60q…): want at most %d, the matching passage's start, an excerpt", budget, len(got), got, budget*4)
		}
		cut := strings.Contains(got, "[…cut: ")
		noted := strings.Contains(strings.Join(res.Trace.Notes, "\n"), "longer than the token budget")
		if want := budget < 100; cut != want || noted != want {
			t.Errorf("budget %d: cut %v, noted %v (%q); want %v", budget, cut, noted, res.Trace.Notes, want)
		}
	}
	stored, err := m.Get(ctx, sp, "long")
	if err != nil || stored.Text != strings.TrimSpace(long) {
		t.Errorf("the stored turn changed (%d bytes, %v)", len(stored.Text), err)
	}
}

// promptMeter records the largest prompt a model receives.
type promptMeter struct {
	inner llm.Model
	mu    sync.Mutex
	max   int
}

func (p *promptMeter) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	n := 0
	for _, msg := range req.Messages {
		n += len(msg.Content)
	}
	p.mu.Lock()
	p.max = max(p.max, n)
	p.mu.Unlock()
	return p.inner.Complete(ctx, req)
}

// TestPromptsBounded checks that a long turn reaches the models cut: no
// prompt of building or answering grows with the turn.
func TestPromptsBounded(t *testing.T) {
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			pm := &promptMeter{inner: llmtest.NewScripted()}
			m := open(t, higmem.Options{Mode: mode, MemoryModel: pm})
			long := "The lighthouse keeper logbook says " + strings.Repeat("storm wind wave ", 4000) // 64 KB
			if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "short", Speaker: "Bo", Text: "I like tea."}, {ID: "long", Speaker: "Ann", Text: long}}); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Ask(ctx, sp, "What does the lighthouse logbook say?", higmem.RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			if pm.max == 0 || pm.max > 32000 {
				t.Errorf("largest prompt %d bytes for a %d-byte turn: want it bounded (under 32000)", pm.max, len(long))
			}
		})
	}
}
