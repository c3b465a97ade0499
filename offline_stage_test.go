package higmem

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
)

// TestStageFeatures checks the learned stage's features on a hand-made
// question: two sessions of three turns, one turn per speaker run.
func TestStageFeatures(t *testing.T) {
	f := &turnFeatures{
		lex:         []float64{1, 1, 1, 1, 1, 1},
		dense:       []float64{0.5, 0.6, 1.0, 0.4, 0.9, 0.7},
		visible:     []bool{true, true, true, true, true, true},
		sameSession: []bool{false, true, true, false, true, true},
		question:    []bool{false, true, false, false, false, false},
		event:       []int32{-1, -1, -1, -1, -1, -1},
		speaker:     []bool{false, false, true, false, false, false},
	}
	singleRuns(f)
	rel := []float64{0.2, 0.5, 1.0, 0.1, 0.4, 0.3}
	scores := []float64{0.3, 0.6, 2.0, 0.2, 0.8, 0.5}
	var rb runBests
	rb.fill(f, rel)
	in := fullStageInput(defaultOfflineTuning(), f, rel, scores, &rb)
	if in.maxRel != 1 || in.scale.maxD != 1 || math.Abs(in.scale.mean-0.68333333333) > 1e-9 {
		t.Fatalf("maxRel %g, scale %+v", in.maxRel, in.scale)
	}
	ranked := []int{2, 4, 1, 5, 0, 3}
	x := make([][stageDim]float64, len(ranked))
	if !stageFeatures(in, ranked, x) {
		t.Fatal("no features")
	}
	mean := in.scale.mean
	want := [][stageDim]float64{
		// Turn 2: the best; the question in turn 1 just before it, turn 0
		// two before; nothing after in its session.
		{1, 1, 1, 0.5, 0, 0.2, 0.5, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0.3, 0},
		// Turn 4: in the other session; turn 3 before, 5 after.
		{0.4, 0.4, (0.9 - mean) / (1 - mean), 0.1, 0.3, 0, 0, 0, 0, 0, 0, 0, 0, 0.16, 0, 0, 0.3, math.Log1p(1)},
		// Turn 1: asks; next to the best turn, in its session.
		{0.3, 0.5, (0.6 - mean) / (1 - mean), 0.2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0.09, 1, 0.5, 0.3, math.Log1p(2)},
	}
	for j, w := range want {
		for k := range stageDim {
			if math.Abs(x[j][k]-w[k]) > 1e-12 {
				t.Errorf("candidate %d (turn %d), feature %s: %g, want %g", j, ranked[j], stageFeatureNames(stageDim)[k], x[j][k], w[k])
			}
		}
	}
	// Nothing to scale by: no stage.
	if stageFeatures(fullStageInput(defaultOfflineTuning(), f, make([]float64, 6), make([]float64, 6), &rb), ranked, x) {
		t.Error("features of a question with no positive score")
	}
}

// TestStageOrder checks that the stage orders candidates by log-odds, ties
// in the context score's order, and which embedders have a stage.
func TestStageOrder(t *testing.T) {
	m := &stageModel{}
	m.w[0] = 1 // sr alone
	ranked := []int{7, 3, 9, 4}
	x := make([][stageDim]float64, 4)
	for j, v := range []float64{0.5, 0.9, 0.5, 0.1} {
		x[j][0] = v
	}
	m.order(ranked, x, make([]float64, 4))
	if want := []int{3, 7, 9, 4}; !slices.Equal(ranked, want) {
		t.Errorf("order %v, want %v", ranked, want)
	}
	for id, want := range map[string]bool{"minilm:e5-small-v2:512": true, "minilm:e5-small-v2:256": true, "minilm:all-MiniLM-L6-v2:256": false, hashing.New(0).ID(): false, "": false} {
		if got := stageFor(id) != nil; got != want {
			t.Errorf("stageFor(%q): %v, want %v", id, got, want)
		}
	}
}

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
			if len(reranked) != stageCands || len(res.Evidence) == 0 {
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
