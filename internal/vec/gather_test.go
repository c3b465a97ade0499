package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsAt checks DotsAt against Dot, bit for bit, with every kernel set
// (EachKernel): rows in any order, repeated, counts that are and are not
// multiples of four, dimensions that the assembly takes (multiples of 4)
// and that it leaves to Dot, and values whose sums round differently in
// another order, with infinities and NaNs.
func TestDotsAt(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	EachKernel(func(name string) {
		for trial := range 300 {
			dim := []int{4, 8, 12, 256, 384, 7, 1}[trial%7]
			n := 1 + r.IntN(60)
			m := Matrix{Dim: dim}
			for range n {
				v := make([]float32, dim)
				for j := range v {
					v[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
				}
				if trial%11 == 5 {
					v[r.IntN(dim)] = []float32{float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1))}[r.IntN(3)]
				}
				m.Append(v)
			}
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
			}
			rows := make([]int32, r.IntN(13))
			for j := range rows {
				rows[j] = int32(r.IntN(n))
			}
			out := make([]float32, len(rows))
			m.DotsAt(q, rows, out)
			for j, i := range rows {
				want := Dot(q, m.Row(int(i)))
				if math.Float32bits(out[j]) != math.Float32bits(want) && !(want != want && out[j] != out[j]) {
					t.Fatalf("%s trial %d dim %d: row %d (%d of %d) = %v, want %v", name, trial, dim, i, j, len(rows), out[j], want)
				}
			}
		}
	})
}

// TestDotsAtPanics checks that DotsAt refuses rows out of range and
// mismatched lengths.
func TestDotsAtPanics(t *testing.T) {
	m := Matrix{Dim: 4}
	m.Append([]float32{1, 2, 3, 4})
	q := []float32{1, 1, 1, 1}
	for name, f := range map[string]func(){
		"row -1":    func() { m.DotsAt(q, []int32{-1}, make([]float32, 1)) },
		"row 1":     func() { m.DotsAt(q, []int32{0, 1}, make([]float32, 2)) },
		"short out": func() { m.DotsAt(q, []int32{0, 0}, make([]float32, 1)) },
		"short q":   func() { m.DotsAt(q[:3], []int32{0}, make([]float32, 1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestUpperAt checks UpperAt against Estimate's est+err, bit for bit, with
// every kernel set, for rows in any order, rows that are not finite, and
// queries that are zero or not finite.
func TestUpperAt(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	EachKernel(func(name string) {
		for trial := range 100 {
			dim := []int{16, 32, 256, 384}[trial%4]
			n := 1 + r.IntN(300)
			m := Matrix{Dim: dim}
			m.QuantizeFrom(1)
			for range n {
				v := make([]float32, dim)
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				if trial%7 == 3 && r.IntN(10) == 0 {
					v[r.IntN(dim)] = float32(math.Inf(1))
				}
				m.Append(Normalize(v))
			}
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
			switch trial % 10 {
			case 4:
				clear(q)
			case 5:
				q[0] = float32(math.NaN())
			}
			est, bound := make([]float64, n), make([]float64, n)
			m.Estimate(q, est, bound)
			rows := make([]int32, r.IntN(40))
			for j := range rows {
				rows[j] = int32(r.IntN(n))
			}
			hi := make([]float64, len(rows))
			m.UpperAt(q, rows, hi)
			for j, i := range rows {
				if want := est[i] + bound[i]; math.Float64bits(hi[j]) != math.Float64bits(want) {
					t.Fatalf("%s trial %d: row %d: %v, want %v", name, trial, i, hi[j], want)
				}
			}
		}
	})
}
