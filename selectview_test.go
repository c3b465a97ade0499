package higmem

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMemberRankMatchesReference checks that memberRank.top, which ranks an
// event's members once for every layout the select call tries, chooses
// what the reference does at every n: the members in the event's order
// when they are n or fewer, else a stable sort by score (each compared
// through the score function), cut at n, in the state's order; and that it
// asks for the scores once, only when a cut needs them. Scores tie often,
// and members come in any order.
func TestMemberRankMatchesReference(t *testing.T) {
	reference := func(members []int, score func(int) float64, n int) []int {
		idx := slices.Clone(members)
		if len(idx) > n {
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
			idx = idx[:n]
			slices.Sort(idx)
		}
		return idx
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		m := rng.IntN(14)
		members := rng.Perm(40)[:m]
		scores := make([]float64, 40)
		for i := range scores {
			scores[i] = float64(rng.IntN(4)) / 2 // ties
		}
		score := func(i int) float64 { return scores[i] }
		asked := 0
		r := &memberRank{members: members, score: func() func(int) float64 { asked++; return score }}
		for n := m + 1; n >= 0; n-- { // as show tries layouts: fewer members each time
			if got, want := r.top(n), reference(members, score, n); !slices.Equal(got, want) {
				t.Fatalf("members %v, scores %v, n %d: top %v, reference %v", members, scores, n, got, want)
			}
			// The scores are asked for once, and only when a cut needs
			// them (as the reference scores nothing otherwise).
			if want := min(1, max(0, m-n)); asked != want {
				t.Fatalf("members %v, n %d: scores asked for %d times, want %d", members, n, asked, want)
			}
		}
	}
}
