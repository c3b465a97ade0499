package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotsOfRows checks DotsOfRows against Dot, bit for bit, for every number of
// rows to 13 (scattered, repeated), dimensions that are and are not
// multiples of four (dotRows and the loop of Dot), and scratch reused.
func TestDotsOfRows(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, dim := range []int{3, 4, 12, 64, 256, 384} {
		m := &Matrix{Dim: dim}
		for range 50 {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			m.Append(v)
		}
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		tmp := make([]float32, 4*dim)
		for n := range 14 {
			rows := make([]int, n)
			for j := range rows {
				rows[j] = r.IntN(m.Rows())
			}
			out := make([]float32, n)
			m.DotsOfRows(q, rows, out, tmp)
			for j, i := range rows {
				if want := Dot(q, m.Row(i)); math.Float32bits(out[j]) != math.Float32bits(want) {
					t.Fatalf("dim %d, %d rows: row %d (%d) %v, Dot %v", dim, n, j, i, out[j], want)
				}
			}
		}
	}
}
