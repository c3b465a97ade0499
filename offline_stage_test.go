package higmem

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store/memstore"
)

// namedEmbedder is an embedder under another ID, so that the engine takes
// that model's paths (here, its learned stage) on cheap vectors.
type namedEmbedder struct {
	embed.Embedder
	id string
}

func (e namedEmbedder) ID() string { return e.id }

// TestStageInRetrieve checks the learned stage through Retrieve: with an
// embedder it has weights for, on a conversation written turn by turn, the
// trace records the re-ordered candidates and the evidence is the first of
// them; with Ablations.NoStage, or in a conversation of bursts, there is
// no such stage.
func TestStageInRetrieve(t *testing.T) {
	ctx := t.Context()
	e5 := namedEmbedder{hashing.New(0), "minilm:e5-small-v2:512"}
	topics := strings.Fields("sailing baking chess hiking painting guitar gardening cycling")
	conv := func(burst bool) []TurnInput {
		var in []TurnInput
		sp := 0
		for i := range 120 {
			if !burst || i%3 == 0 {
				sp = 1 - sp
			}
			in = append(in, TurnInput{ID: fmt.Sprint("t", i), SessionID: fmt.Sprint("s", i/30), Speaker: []string{"Ann", "Bob"}[sp],
				Text: fmt.Sprintf("I spent the weekend %s with my cousin, turn %d.", topics[i%len(topics)], i)})
		}
		return in
	}
	for _, c := range []struct {
		name      string
		burst     bool
		noStage   bool
		wantStage bool
	}{
		{"turn by turn", false, false, true},
		{"NoStage", false, true, false},
		{"bursts", true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: e5, Ablations: Ablations{NoStage: c.noStage}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			sp := Space{UserID: "stage"}
			if _, err := m.Add(ctx, sp, conv(c.burst)); err != nil {
				t.Fatal(err)
			}
			res, err := m.Retrieve(ctx, sp, "Who went sailing with their cousin?", RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var reranked []string
			for _, s := range res.Trace.Stages {
				if s.Name == "reranked" {
					reranked = s.IDs
				}
			}
			if (reranked != nil) != c.wantStage {
				t.Fatalf("reranked stage %v, want one: %v (stages %v)", reranked, c.wantStage, res.Trace.Stages)
			}
			if !c.wantStage {
				return
			}
			if len(reranked) != offline.StageCands || len(res.Evidence) == 0 {
				t.Fatalf("%d reranked, %d evidence", len(reranked), len(res.Evidence))
			}
			// The evidence is the first len(evidence) of the stage's order.
			first := map[string]bool{}
			for _, id := range reranked[:len(res.Evidence)] {
				first[id] = true
			}
			for _, e := range res.Evidence {
				if !first[e.Turn.ID] {
					t.Errorf("evidence %s is not among the stage's first %d: %v", e.Turn.ID, len(res.Evidence), reranked)
				}
			}
		})
	}
}

// TestLLMDownFallbackKeepsStage checks that when the memory model fails
// in the middle of a default-mode retrieval, the offline selection that
// takes over runs the learned stage as offline mode does (query.fresh once
// dropped it): the same evidence and a "reranked" stage.
func TestLLMDownFallbackKeepsStage(t *testing.T) {
	ctx := t.Context()
	e5 := namedEmbedder{hashing.New(0), "minilm:e5-small-v2:512"}
	topics := strings.Fields("sailing baking chess hiking painting guitar gardening cycling")
	var in []TurnInput
	for i := range 120 {
		in = append(in, TurnInput{ID: fmt.Sprint("t", i), SessionID: fmt.Sprint("s", i/30), Speaker: []string{"Ann", "Bob"}[i%2],
			Text: fmt.Sprintf("I spent the weekend %s with my cousin, turn %d.", topics[i%len(topics)], i)})
	}
	st := memstore.New()
	off, err := Open(ctx, Options{Mode: ModeOffline, Store: st, Embedder: e5})
	if err != nil {
		t.Fatal(err)
	}
	sp := Space{UserID: "down"}
	if _, err := off.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	const question = "Who went sailing with their cousin?"
	want, err := off.Retrieve(ctx, sp, question, RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	down := llm.ModelFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{}, fmt.Errorf("connection refused: %w", llm.ErrUnavailable)
	})
	m, err := Open(ctx, Options{Mode: ModeDefault, Store: st, Embedder: e5, MemoryModel: down})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Retrieve(ctx, sp, question, RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Trace.Calls) == 0 {
		t.Fatal("no model call: the fallback path was not taken")
	}
	if r := got.Trace.Stage("reranked"); r == nil {
		t.Errorf("the fallback ran no learned stage; stages %v", got.Trace.Stages)
	}
	ids := func(r *Result) []string {
		var out []string
		for _, e := range r.Evidence {
			out = append(out, e.Turn.ID)
		}
		return out
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Errorf("fallback evidence %v, offline mode's %v", g, w)
	}
}
