package offline

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// skipNoBounds512 skips a test of the AVX-512 kernels on a CPU without
// them.
func skipNoBounds512(t *testing.T) {
	t.Helper()
	if !useBoundsAVX512 {
		t.Skip("no AVX-512 (F, BW, VL) on this CPU")
	}
}

// TestScoreBounds512 checks the pruned path's score bounds with AVX-512
// (scoreBounds8AVX512, then scoreBounds4AVX2, then Go) against them with
// AVX2 alone, bit for bit, and the best bound's turn: every trial of
// testScoreBoundsSingle (every combination of cues, events and length
// prior), on ranges of every length mod 8 and ends within two of the
// edges.
func TestScoreBounds512(t *testing.T) {
	skipNoBounds512(t)
	defer func(old bool) { useBoundsAVX512 = old }(useBoundsAVX512)
	n := 3000
	r := rand.New(rand.NewPCG(61, 62))
	ranges := [][2]int{{0, n}, {0, 9}, {0, 12}, {1, 13}, {2, 18}, {3, 30}, {n - 20, n}, {1, n - 1}, {2, n - 2}}
	for k := range 8 {
		lo := r.IntN(n - 100)
		ranges = append(ranges, [2]int{lo, lo + 4 + 8*r.IntN(10) + k})
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for trial := range 64 {
		f, rel, tu, best := boundsTrial(t, r, trial, n)
		for _, rg := range ranges {
			lo, hi := rg[0], rg[1]
			got, want := make([]float64, n), make([]float64, n)
			useBoundsAVX512 = true
			arg := tu.scoreBoundsSingle(f, rel, got, best, lo, hi)
			useBoundsAVX512 = false
			wantArg := tu.scoreBoundsSingle(f, rel, want, best, lo, hi)
			if !slices.EqualFunc(got, want, same) || arg != wantArg {
				for i := range got {
					if !same(got[i], want[i]) {
						t.Fatalf("trial %d, range %v: turn %d bound %v with AVX-512, %v with AVX2", trial, rg, i, got[i], want[i])
					}
				}
				t.Fatalf("trial %d, range %v: best bound at %d with AVX-512, %d with AVX2", trial, rg, arg, wantArg)
			}
		}
	}
}

// TestListAtLeast512 checks listAtLeast with AVX-512 against it with AVX2
// and in Go, on every length to 40 and longer, with ties at the floor,
// NaN and infinities, and floors from -Inf to +Inf and NaN.
func TestListAtLeast512(t *testing.T) {
	skipNoBounds512(t)
	defer func(a, b bool) { useBoundsAVX2, useBoundsAVX512 = a, b }(useBoundsAVX2, useBoundsAVX512)
	r := rand.New(rand.NewPCG(63, 64))
	for _, n := range append(slices.Collect(func(yield func(int) bool) {
		for n := range 41 {
			yield(n)
		}
	}), 255, 1000) {
		xs := make([]float64, n)
		for i := range xs {
			switch r.IntN(8) {
			case 0:
				xs[i] = 0.5
			case 1:
				xs[i] = math.NaN()
			case 2:
				xs[i] = math.Inf(2*r.IntN(2) - 1)
			default:
				xs[i] = r.Float64()
			}
		}
		for _, floor := range []float64{math.Inf(-1), 0, 0.5, 0.9, math.Inf(1), math.NaN()} {
			var lists [3][]int
			for m, mode := range [][2]bool{{true, true}, {true, false}, {false, false}} {
				useBoundsAVX2, useBoundsAVX512 = mode[0], mode[1]
				lists[m] = listAtLeast(xs, floor, 7, []int{-1})
			}
			if !slices.Equal(lists[0], lists[1]) || !slices.Equal(lists[0], lists[2]) {
				t.Fatalf("%d values, floor %v: AVX-512 %v, AVX2 %v, Go %v", n, floor, lists[0], lists[1], lists[2])
			}
		}
	}
}

// BenchmarkListAtLeast times listAtLeast on 100k values, a tenth of them
// at least the floor, with AVX-512 and with AVX2.
func BenchmarkListAtLeast(b *testing.B) {
	defer func(old bool) { useBoundsAVX512 = old }(useBoundsAVX512)
	r := rand.New(rand.NewPCG(65, 66))
	xs := make([]float64, 100000)
	for i := range xs {
		xs[i] = r.Float64()
	}
	dst := make([]int, 0, len(xs))
	for _, avx512 := range []bool{true, false} {
		if avx512 && !useBoundsAVX512 {
			continue
		}
		b.Run(map[bool]string{true: "avx512", false: "avx2"}[avx512], func(b *testing.B) {
			useBoundsAVX512 = avx512
			for b.Loop() {
				dst = listAtLeast(xs, 0.9, 0, dst[:0])
			}
		})
	}
}
