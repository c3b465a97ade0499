package offline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/higmem/higmem/internal/vec"
)

// TestExactInto checks DenseMix.ExactInto against Exact, bit for bit, for
// each mix (the turn's cosine, the window's, and both), over ranges of
// every length from every start, with dimensions that are and are not
// multiples of 4.
func TestExactInto(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, dim := range []int{3, 16, 20, 384} {
		n := 13
		turn, win, q := randomMix(r, dim, n)
		for _, w := range []float64{0, 1, 0.3} {
			d := DenseMix{Turn: turn, Win: win, W: w}
			for lo := range n {
				for hi := lo; hi <= n; hi++ {
					out, tmp := make([]float64, hi-lo), make([]float32, hi-lo)
					d.ExactInto(q, lo, out, tmp)
					for j, x := range out {
						if want := d.Exact(q, lo+j); math.Float64bits(x) != math.Float64bits(want) {
							t.Fatalf("dim %d w %v rows %d-%d: row %d %v, Exact %v", dim, w, lo, hi, lo+j, x, want)
						}
					}
				}
			}
		}
	}
}

// randomMix returns turn and window matrices of n random rows of
// dimension dim, and a random query.
func randomMix(r *rand.Rand, dim, n int) (turn, win *vec.Matrix, q []float32) {
	turn, win = &vec.Matrix{Dim: dim}, &vec.Matrix{Dim: dim}
	for range n {
		for _, m := range []*vec.Matrix{turn, win} {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			m.Append(v)
		}
	}
	q = make([]float32, dim)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	return turn, win, q
}

// TestExactAt checks DenseMix.ExactAt against Exact, bit for bit, for each
// mix (the turn's cosine, the window's, and both), on lists of scattered
// rows of every length to 9, with dimensions that are and are not
// multiples of 4.
func TestExactAt(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, dim := range []int{3, 16, 20, 384} {
		n := 30
		turn, win, q := randomMix(r, dim, n)
		for _, w := range []float64{0, 1, 0.3} {
			d := DenseMix{Turn: turn, Win: win, W: w}
			for k := range 10 {
				rows := make([]int32, k)
				for j, i := range r.Perm(n)[:k] {
					rows[j] = int32(i)
				}
				out, tmp := make([]float64, k), make([]float32, k)
				d.ExactAt(q, rows, out, tmp)
				for j, i := range rows {
					if want := d.Exact(q, int(i)); math.Float64bits(out[j]) != math.Float64bits(want) {
						t.Fatalf("dim %d w %v, %d rows: row %d %v, Exact %v", dim, w, k, i, out[j], want)
					}
				}
			}
		}
	}
}
