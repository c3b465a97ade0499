package higmem_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmtest"
)

// TestCostBudget holds default mode to its budget on a 400-turn synthetic
// conversation with LoCoMo's session length (about 22 turns) and the
// scripted model: one build_batch call per batch (it also writes the
// records of the events the batch touched), so at most 0.1 LLM calls per
// ingested turn (FriendsQA's scenes of about 16 turns too: see
// TestCostBudgetShortSessions); per question at
// most 3 calls in at most 2 sequential rounds and 5,000 prompt tokens (the
// fake counts 4 bytes per token). Paper mode keeps the reference's calls:
// 3 per turn (annotate, affiliate, update), and per question a rewrite, a
// prediction per candidate event, a filter and the answer.
func TestCostBudget(t *testing.T) {
	t.Parallel() // counts calls and tokens, not time: safe beside other tests
	conv := synth.Generate(synth.Options{Turns: 400, Seed: 7, SessionTurns: 22})
	qs := conv.Questions[:min(20, len(conv.Questions))]
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			m := open(t, higmem.Options{Mode: mode, MemoryModel: llmtest.NewScripted(), Embedder: hashing.New(0)})
			res, err := m.Add(ctx, sp, conv.Turns)
			if err != nil {
				t.Fatal(err)
			}
			perTurn := float64(len(res.Calls)) / float64(len(conv.Turns))
			byOp := map[string]int{}
			for _, c := range res.Calls {
				byOp[c.Operation]++
			}
			for _, q := range qs {
				ans, err := m.Ask(ctx, sp, q.Text, higmem.RetrieveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				tokens, ops := 0, map[string]int{}
				for _, c := range ans.Trace.Calls {
					tokens += c.Usage.PromptTokens
					ops[c.Operation]++
				}
				switch mode {
				case higmem.ModeDefault:
					if len(ans.Trace.Calls) > 3 || ans.Trace.Rounds > 2 || tokens > 5000 {
						t.Errorf("%q: %d calls %v in %d rounds, %d prompt tokens: over the budget of 3 calls, 2 rounds, 5,000 tokens",
							q.Text, len(ans.Trace.Calls), ops, ans.Trace.Rounds, tokens)
					}
				case higmem.ModePaper:
					if ops[prompt.Query] != 1 || ops[prompt.Predict] < len(ans.Trace.Stage("events")) || ops[prompt.Filter] == 0 || ops[prompt.Answer] != 1 || ans.Trace.Rounds != 4 {
						t.Errorf("%q: paper mode made %v in %d rounds: want the reference's calls", q.Text, ops, ans.Trace.Rounds)
					}
				}
			}
			switch mode {
			case higmem.ModeDefault:
				if perTurn > 0.1 {
					t.Errorf("construction: %.3f calls per turn, budget 0.1", perTurn)
				}
				if len(byOp) != 1 || byOp[prompt.BuildBatch] == 0 {
					t.Errorf("construction: %v: want build_batch calls only, one per batch", byOp)
				}
			case higmem.ModePaper:
				if perTurn < 3 {
					t.Errorf("construction: %.3f calls per turn, the reference makes 3", perTurn)
				}
			}
			t.Logf("%s: %.3f calls per turn %v", mode, perTurn, byOp)
		})
	}
}

// FriendsQA's scenes are short (about 16 turns): construction stays within
// 0.1 calls per turn on sessions of 12 turns too, one build_batch call per
// session.
func TestCostBudgetShortSessions(t *testing.T) {
	conv := synth.Generate(synth.Options{Turns: 240, Seed: 3, SessionTurns: 12})
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: llmtest.NewScripted(), Embedder: hashing.New(0)})
	res, err := m.Add(t.Context(), sp, conv.Turns)
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]bool{}
	for _, tr := range conv.Turns {
		sessions[tr.SessionID] = true
	}
	perTurn := float64(len(res.Calls)) / float64(len(conv.Turns))
	if perTurn > 0.1 || len(res.Calls) != len(sessions) {
		t.Errorf("%d calls for %d turns in %d sessions (%.3f per turn): want one per session, at most 0.1 per turn", len(res.Calls), len(conv.Turns), len(sessions), perTurn)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A select call shows at most about 2,700 tokens of events and turns, so
// that with the answer's evidence a question stays within 5,000 prompt
// tokens, however long the turns: the events shown lose members first,
// and the search hits always show.
func TestSelectPromptBounded(t *testing.T) {
	var turns []higmem.TurnInput
	filler := strings.Repeat("We talked about the garden, the weather, the neighbours and the long drive home again. ", 6)
	for i := range 80 {
		turns = append(turns, higmem.TurnInput{ID: fmt.Sprintf("D%d:%d", i/20+1, i%20+1), SessionID: fmt.Sprint(i/20 + 1), Speaker: []string{"Ann", "Bo"}[i%2],
			Text: fmt.Sprintf("Turn %d about the garden: %s", i, filler), Time: fmt.Sprintf("2024-03-%02dT10:%02d:00Z", i/20+1, i%20)})
	}
	rec := &recording{inner: llmtest.NewScripted()}
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: rec, Embedder: hashing.New(0)})
	if _, err := m.Add(t.Context(), sp, turns); err != nil {
		t.Fatal(err)
	}
	ans, err := m.Ask(t.Context(), sp, "What did Ann say about the garden and the long drive home?", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := 0
	for _, c := range ans.Trace.Calls {
		tokens += c.Usage.PromptTokens
	}
	sel := rec.of(prompt.Select)
	if len(sel) != 1 || len(sel[0])/4 > 3000 || tokens > 5000 {
		t.Errorf("%d select prompts of %d bytes; %d prompt tokens for the question", len(sel), len(sel[0]), tokens)
	}
	shown := ans.Trace.Stage("shown")
	for _, id := range ans.Trace.Stage("search") {
		if !slices.Contains(shown, id) {
			t.Errorf("search hit %s not shown", id)
		}
	}
	if !strings.Contains(sel[0], "\nEvent:\n") {
		t.Errorf("no event shown:\n%s", sel[0])
	}
}
