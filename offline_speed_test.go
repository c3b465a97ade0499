package higmem

import (
	"math/rand/v2"
	"testing"
)

// benchFeatures returns features of n turns shaped like the bench's
// synthetic spaces: about half the turns match the question's words, runs
// of one to a few messages, events of a few turns.
func benchFeatures(n int) (*turnFeatures, []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	f := randomFeatures(r, n, n/4)
	for i := range f.event {
		f.event[i] = i / 4
		f.visible[i] = true
	}
	speaker, words := make([]int32, n), make([]int32, n)
	for i := range n {
		speaker[i] = int32(r.IntN(2))
		words[i] = int32(3 + r.IntN(20))
	}
	withRunWords(f, speaker, words)
	rel := make([]float64, n)
	for i := range rel {
		rel[i] = r.Float64() * 1.5
	}
	return f, rel
}

// BenchmarkScoreRange times the context score formula over 100k turns, as
// the pruned path's bound pass and the full path run it.
func BenchmarkScoreRange(b *testing.B) {
	n := 100000
	f, rel := benchFeatures(n)
	tu := defaultOfflineTuning()
	best := make([]float64, n/4+1)
	eventBest(f, rel, best)
	var rb runBests
	rb.fill(f, rel)
	out := make([]float64, n)
	b.ResetTimer()
	for b.Loop() {
		tu.scoreRange(f, rel, out, best, &rb, 0, n)
	}
}
