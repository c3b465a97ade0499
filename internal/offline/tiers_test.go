package offline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/higmem/higmem/internal/rank"
	"github.com/higmem/higmem/internal/vec"
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
// path against the full scan, bit for bit) with first tiers of a few
// turns in topScores' queue and topRelevance's, so that second tiers are
// listed, and of every turn.
func TestTierQueueMatchesFull(t *testing.T) {
	defer func(k, kr int) { scoreTier, relTier = k, kr }(scoreTier, relTier)
	for _, k := range []int{1, 64, 1 << 30} {
		t.Run(fmt.Sprintf("tier=%d", k), func(t *testing.T) {
			scoreTier, relTier = k, k
			fills, rel := tierFills.Load(), relFills.Load()
			TestFastTieredMatchesFull(t)
			fills, rel = tierFills.Load()-fills, relFills.Load()-rel
			if k == 1 && (fills == 0 || rel == 0) {
				t.Errorf("second tiers listed: %d of scores, %d of relevance", fills, rel)
			}
			t.Logf("second tiers listed: %d of scores, %d of relevance", fills, rel)
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

// TestTopRelevanceTiers runs topRelevance on bounds from a scale whose
// best cosine is far below the exact one (fs.loose), so that the tighter
// bounds reorder the turns across the tiers' split (turns of dense
// relevance fall, turns of BM25 relevance barely move), with first tiers
// of a few turns and of every turn: the k most relevant turns, their
// order and relevance those of every turn's exact relevance, bit for bit.
func TestTopRelevanceTiers(t *testing.T) {
	defer func(k int) { relTier = k }(relTier)
	r := rand.New(rand.NewPCG(65, 66))
	n, dim, k := 4000, 16, 10
	m := vec.Matrix{Dim: dim}
	for _, v := range unitRows(r, "random", n, dim) {
		m.Append(v)
	}
	dm := MixOf(&m, &vec.Matrix{Dim: dim}, n, 0)
	tu := DefaultTuning()
	fills := relFills.Load()
	for round := range 30 {
		q := unitRows(r, "random", 1, dim)[0]
		lex, hi, cos := make([]float64, n), make([]float64, n), make([]float64, n)
		s := Scale{MaxD: math.Inf(-1)}
		for i := range n {
			cos[i] = dm.Exact(q, i)
			hi[i] = cos[i] + 0.02*r.Float64()
			s.Mean += cos[i] / float64(n)
			s.MaxD = max(s.MaxD, cos[i])
			if r.IntN(3) == 0 {
				lex[i] = r.Float64() * 8
				s.MaxLex = max(s.MaxLex, lex[i])
			}
		}
		loose := s
		loose.MaxD = s.Mean + (s.MaxD-s.Mean)*(0.2+0.5*r.Float64())
		relHi := make([]float64, n)
		rb := relBound(tu, loose)
		for i := range n {
			relHi[i] = rb.of(lex[i], hi[i])
		}
		exact := make([]float64, n)
		for i := range n {
			exact[i] = tu.Relevance(lex[i], cos[i], s)
		}
		want := rank.Top(exact, nil, k)
		reached := r.Perm(n)[:20]
		for _, tier := range []int{1, 16, 1 << 30} {
			relTier = tier
			sc := new(Scratch)
			sc.exact, sc.known, sc.fastRel, sc.reached = make([]float64, n), make([]bool, n), make([]float64, n), make([]bool, n)
			fs := &fastScan{
				in: &Input{KTurn: k, Chunk: 700, Vector: q, Dense: dm}, tu: tu, dm: dm, sc: sc, n: n,
				f: &Features{Lex: lex}, hi: hi, relHi: slices.Clone(relHi), scale: s, loose: true,
				rel: sc.fastRel, scoreIdx: reached,
			}
			if !fs.topRelevance() {
				t.Fatalf("round %d tier %d: no top relevance", round, tier)
			}
			got := rank.Top(fs.rel, fs.relIdx, k)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d tier %d: top %v, want %v", round, tier, got, want)
			}
			for _, i := range got {
				if math.Float64bits(fs.rel[i]) != math.Float64bits(exact[i]) {
					t.Fatalf("round %d tier %d unit %d: relevance %v, want %v", round, tier, i, fs.rel[i], exact[i])
				}
			}
		}
	}
	if relFills.Load() == fills {
		t.Error("no second tier was listed")
	}
}
