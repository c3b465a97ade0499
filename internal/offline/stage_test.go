package offline

import (
	"math"
	"slices"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
)

// TestStageFeatures checks the learned stage's features on a hand-made
// question: two sessions of three turns, one turn per speaker run.
func TestStageFeatures(t *testing.T) {
	f := &Features{
		Lex:         []float64{1, 1, 1, 1, 1, 1},
		Dense:       []float64{0.5, 0.6, 1.0, 0.4, 0.9, 0.7},
		Visible:     []bool{true, true, true, true, true, true},
		SameSession: []bool{false, true, true, false, true, true},
		Question:    []bool{false, true, false, false, false, false},
		Event:       []int32{-1, -1, -1, -1, -1, -1},
		Speaker:     []bool{false, false, true, false, false, false},
	}
	Complete(f)
	rel := []float64{0.2, 0.5, 1.0, 0.1, 0.4, 0.3}
	scores := []float64{0.3, 0.6, 2.0, 0.2, 0.8, 0.5}
	var rb RunBests
	rb.Fill(f, rel)
	in := FullStageInput(DefaultTuning(), f, rel, scores, &rb)
	if in.maxRel != 1 || in.scale.MaxD != 1 || math.Abs(in.scale.Mean-0.68333333333) > 1e-9 {
		t.Fatalf("maxRel %g, scale %+v", in.maxRel, in.scale)
	}
	ranked := []int{2, 4, 1, 5, 0, 3}
	x := make([][StageDim]float64, len(ranked))
	if !StageFeatures(in, ranked, x) {
		t.Fatal("no features")
	}
	mean := in.scale.Mean
	want := [][StageDim]float64{
		// Turn 2: the best; the question in turn 1 just before it, turn 0
		// two before; nothing after in its session.
		{1, 1, 1, 0.5, 0, 0.2, 0.5, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0.3, 0},
		// Turn 4: in the other session; turn 3 before, 5 after.
		{0.4, 0.4, (0.9 - mean) / (1 - mean), 0.1, 0.3, 0, 0, 0, 0, 0, 0, 0, 0, 0.16, 0, 0, 0.3, math.Log1p(1)},
		// Turn 1: asks; next to the best turn, in its session.
		{0.3, 0.5, (0.6 - mean) / (1 - mean), 0.2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0.09, 1, 0.5, 0.3, math.Log1p(2)},
	}
	for j, w := range want {
		for k := range StageDim {
			if math.Abs(x[j][k]-w[k]) > 1e-12 {
				t.Errorf("candidate %d (turn %d), feature %s: %g, want %g", j, ranked[j], StageFeatureNames[k], x[j][k], w[k])
			}
		}
	}
	// Nothing to scale by: no stage.
	if StageFeatures(FullStageInput(DefaultTuning(), f, make([]float64, 6), make([]float64, 6), &rb), ranked, x) {
		t.Error("features of a question with no positive score")
	}
}

// TestStageOrder checks that the stage orders candidates by log-odds, ties
// in the context score's order, and which embedders have a stage.
func TestStageOrder(t *testing.T) {
	m := &Stage{}
	m.w[0] = 1 // sr alone
	ranked := []int{7, 3, 9, 4}
	x := make([][StageDim]float64, 4)
	for j, v := range []float64{0.5, 0.9, 0.5, 0.1} {
		x[j][0] = v
	}
	m.order(ranked, x, make([]float64, 4))
	if want := []int{3, 7, 9, 4}; !slices.Equal(ranked, want) {
		t.Errorf("order %v, want %v", ranked, want)
	}
	for id, want := range map[string]bool{"minilm:e5-small-v2:512": true, "minilm:e5-small-v2:512:int8": true, "minilm:e5-small-v2:256": true, "minilm:all-MiniLM-L6-v2:256": false, hashing.New(0).ID(): false, "": false} {
		if got := StageFor(id) != nil; got != want {
			t.Errorf("StageFor(%q): %v, want %v", id, got, want)
		}
	}
}
