package offline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSplitOf checks splitOf against the r-th best of the samples sorted,
// with NaN among the values, floors above the split, and arrays too short
// for samples.
func TestSplitOf(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{0, 100, 2*tierSamples - 1, 2 * tierSamples, 3000, 100000} {
		for _, target := range []int{0, 1, 8, 512, 5000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = r.Float64() * 10
				if r.IntN(50) == 0 {
					xs[i] = math.NaN()
				}
			}
			for _, floor := range []float64{math.Inf(-1), 5, 9.99, 11} {
				got := splitOf(xs, floor, target)
				// The reference: every st-th value, NaN left out, sorted.
				want := floor
				if st := n / tierSamples; st >= 2 && target > 0 {
					rr := max(target/st, 4)
					var s []float64
					for j := 0; j < n; j += st {
						if !math.IsNaN(xs[j]) {
							s = append(s, xs[j])
						}
					}
					slices.Sort(s)
					if rr <= tierSamples/4 && len(s) >= rr && s[len(s)-rr] > floor {
						want = s[len(s)-rr]
					}
				}
				if got != want {
					t.Fatalf("n %d target %d floor %v: split %v, want %v", n, target, floor, got, want)
				}
			}
		}
	}
}

// TestTierQueueMatchesFull runs TestFastTieredMatchesFull (the pruned
// path against the full scan, bit for bit) with first tiers of topScores'
// queue of a few turns, so that the second tier is listed, and of every
// turn.
func TestTierQueueMatchesFull(t *testing.T) {
	defer func(k int) { scoreTier = k }(scoreTier)
	for _, k := range []int{1, 64, 1 << 30} {
		t.Run(fmt.Sprintf("tier=%d", k), func(t *testing.T) {
			scoreTier = k
			fills := tierFills.Load()
			TestFastTieredMatchesFull(t)
			fills = tierFills.Load() - fills
			if k == 1 && fills == 0 {
				t.Error("no second tier was listed")
			}
			t.Logf("%d second tiers listed", fills)
		})
	}
}

// TestTierQueueOrder pops every unit of tierQueues over random bounds
// (with ties and NaN), split at every sampled level and at none: each unit
// whose bound reaches the floor once, in order of decreasing bounds.
func TestTierQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{5, 1500, 20000} {
		for _, target := range []int{0, 1, 50, 1000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(r.IntN(1000)) / 100 // ties
				if r.IntN(100) == 0 {
					xs[i] = math.NaN()
				}
			}
			for _, floor := range []float64{math.Inf(-1), 3, 9.5} {
				fs := &fastScan{in: &Input{Chunk: 700}, sc: new(Scratch)}
				split := splitOf(xs, floor, target)
				q := fs.newTierQueue(xs, floor, split)
				var got, want []int
				prev := math.Inf(1)
				for q.Len() > 0 {
					top := q.Top()
					i := q.Pop()
					if i != top {
						t.Fatalf("Top %d, Pop %d", top, i)
					}
					if xs[i] > prev {
						t.Fatalf("n %d target %d floor %v split %v: bound %v after %v", n, target, floor, split, xs[i], prev)
					}
					prev = xs[i]
					got = append(got, i)
				}
				for i, x := range xs {
					if x >= floor {
						want = append(want, i)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("n %d target %d floor %v split %v: popped %d units, want %d", n, target, floor, split, len(got), len(want))
				}
			}
		}
	}
}
