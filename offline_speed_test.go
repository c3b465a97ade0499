package higmem

import (
	"math/rand/v2"
	"testing"
)

// benchFeatures returns features of n turns shaped like the bench's
// synthetic spaces, with a relevance for each: sessions of 20 turns, the
// speakers taking turns with a burst now and then, events of four turns,
// a speaker cue on about half the turns.
func benchFeatures(n int) (*turnFeatures, []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	f := randomFeatures(r, n, n/4)
	f.dated, f.counted = nil, nil
	speaker, words := make([]int32, n), make([]int32, n)
	for i := range n {
		f.event[i] = int32(i / 4)
		f.visible[i] = true
		f.sameSession[i] = i%20 != 0
		speaker[i] = int32(i % 2)
		if r.IntN(8) == 0 {
			speaker[i] = 1 - speaker[i] // a burst now and then
		}
		words[i] = int32(3 + r.IntN(20))
	}
	withRunWords(f, speaker, words)
	singleRuns(f) // the cues
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
	n := 100000
	f, rel := benchFeatures(n)
	tu := defaultOfflineTuning()
	best := make([]float64, n/4+1)
	eventBest(f, rel, best)
	var rb runBests
	rb.fill(f, rel)
	out := make([]float64, n)
	for b.Loop() {
		tu.scoreRange(f, rel, out, best, &rb, 0, n)
	}
}
