package offline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchFeaturesRuns returns features of n turns shaped like the bench's
// synthetic spaces, with a relevance for each: sessions of 20 turns, the
// speakers taking turns (with a burst now and then when bursts is set),
// events of four turns, a speaker cue on about half the turns.
func benchFeaturesRuns(n int, bursts bool) (*Features, []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	f := randomFeatures(r, n, n/4)
	f.Dated, f.Counted = nil, nil
	speaker, words := make([]int32, n), make([]int32, n)
	for i := range n {
		f.Event[i] = int32(i / 4)
		f.Visible[i] = true
		f.SameSession[i] = i%20 != 0
		speaker[i] = int32(i % 2)
		if r.IntN(8) == 0 && bursts {
			speaker[i] = 1 - speaker[i] // a burst now and then
		}
		words[i] = int32(3 + r.IntN(20))
	}
	withRunWords(f, speaker, words)
	Complete(f) // the cues
	rel := make([]float64, n)
	for i := range rel {
		rel[i] = r.Float64() * 1.5
	}
	return f, rel
}

// BenchmarkScoreRange times the context score formula over 100k turns on
// one core, as the full path runs it and the pruned path's bound pass runs
// it on each part.
func BenchmarkScoreRange(b *testing.B) {
	for _, bursts := range []bool{true, false} {
		name := "bursts"
		if !bursts {
			name = "single"
		}
		b.Run(name, func(b *testing.B) {
			n := 100000
			f, rel := benchFeaturesRuns(n, bursts)
			tu := DefaultTuning()
			best := make([]float64, n/4+1)
			eventBest(f, rel, best)
			var rb RunBests
			rb.Fill(f, rel)
			out := make([]float64, n)
			for b.Loop() {
				tu.ScoreRange(f, rel, out, best, &rb, 0, n)
			}
		})
	}
}

// TestScoreRangeSingle checks that ScoreRange where every run is one turn
// (scoreRangeSingle) scores bit for bit as its general loop: the same
// features with one more, empty, run at the end take the general loop.
func TestScoreRangeSingle(t *testing.T) {
	n := 5000
	f, rel := benchFeaturesRuns(n, false)
	if len(f.RunStart) != n {
		t.Fatalf("%d runs of %d turns", len(f.RunStart), n)
	}
	r := rand.New(rand.NewPCG(5, 6))
	f.Visible = slices.Clone(f.Visible)
	f.Dated, f.Counted = make([]bool, n), make([]bool, n)
	for i := range n {
		f.Visible[i] = r.IntN(10) != 0
		f.Dated[i], f.Counted[i] = r.IntN(5) == 0, r.IntN(7) == 0
		if !f.Visible[i] {
			rel[i] = 0
		}
	}
	f.Cues = nil
	Complete(f)
	best := make([]float64, n/4+1)
	eventBest(f, rel, best)
	var rb RunBests
	rb.Fill(f, rel)
	tu := DefaultTuning()
	tu.RunShare = 0.8
	single := make([]float64, n)
	argS := tu.ScoreRange(f, rel, single, best, &rb, 0, n)

	g := *f
	g.RunStart = append(slices.Clone(f.RunStart), int32(n))
	g.RunLinks = append(slices.Clone(f.RunLinks), 0)
	g.RunWords = append(slices.Clone(f.RunWords), 0)
	rg := RunBests{best: append(slices.Clone(rb.best), 0), second: append(slices.Clone(rb.second), 0), arg: append(slices.Clone(rb.arg), -1)}
	general := make([]float64, n)
	argG := tu.ScoreRange(&g, rel, general, best, &rg, 0, n)
	for i := range n {
		if math.Float64bits(single[i]) != math.Float64bits(general[i]) {
			t.Fatalf("turn %d: %v, general loop %v", i, single[i], general[i])
		}
	}
	if argS != argG {
		t.Errorf("best turn %d, general loop %d", argS, argG)
	}
	// And a part of the range, as the pruned path scores one turn.
	for _, i := range []int{0, 1, 2, n / 2, n - 2, n - 1} {
		out := make([]float64, n)
		tu.ScoreRange(f, rel, out, best, &rb, i, i+1)
		if math.Float64bits(out[i]) != math.Float64bits(general[i]) {
			t.Errorf("turn %d alone: %v, want %v", i, out[i], general[i])
		}
	}
}
