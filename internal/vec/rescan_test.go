package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestListPick checks list4.pick against pickRef on lists of every length
// to 70 and a long one, with upper bounds at the floor exactly, NaN and
// infinities, floors of ±Inf and NaN, and one list reused throughout (its
// scratch holds a longer list's rows when a shorter one is picked).
// TestListPickAVX512 runs it without AVX-512 too.
func TestListPick(t *testing.T) { testListPick(t) }

// testListPick is TestListPick with the kernels as set.
func testListPick(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	l, ref := new(list4), new(list4)
	lengths := []int{5000}
	for n := range 71 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for round := range 4 {
			l.rows, l.est, l.err = l.rows[:0], l.est[:0], l.err[:0]
			for k := range n {
				x, b := r.Float64()-0.5, r.Float64()*0.2
				switch r.IntN(40) {
				case 0:
					x = math.NaN()
				case 1:
					b = math.Inf(1)
				case 2:
					x = math.Inf(-1)
				}
				l.add(3*k+r.IntN(3), x, b)
			}
			floors := []float64{math.Inf(-1), math.Inf(1), math.NaN(), 0, r.Float64() - 0.5}
			if n > 0 {
				// Upper bounds at the floor exactly.
				k := r.IntN(n)
				floors = append(floors, l.est[k]+l.err[k])
			}
			for _, floor := range floors {
				ref.rows, ref.est, ref.err = l.rows, l.est, l.err
				ref.pickRef(floor)
				l.pick(floor)
				if !slices.Equal(l.sel, ref.sel) || !slices.Equal(l.at, ref.at) {
					t.Fatalf("AVX-512 %v, n %d round %d floor %v: picked %v at %v, want %v at %v", useAVX512, n, round, floor, l.sel, l.at, ref.sel, ref.at)
				}
			}
		}
	}
}
