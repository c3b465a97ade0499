package vec

import (
	"fmt"
	"math"
)

// UpperAt writes into hi[j] the upper bound of Dot(q, Row(rows[j])) that
// Estimate gives, est+err (that float64 sum, bit for bit), for the listed
// rows alone: from their int8 copies, a quarter of the float rows' bytes,
// for a caller that needs tighter bounds than EstimateTiered's 4-bit ones
// for a few hundred rows anywhere in the matrix. The matrix must be
// Quantized; hi must have the length of rows.
func (m *Matrix) UpperAt(q []float32, rows []int32, hi []float64) {
	if m.q == nil {
		panic("vec: UpperAt on a matrix that is not quantized")
	}
	n := m.Rows()
	if len(hi) != len(rows) || len(q) != m.Dim {
		panic(fmt.Sprintf("vec: UpperAt: %d bounds for %d rows, query of length %d for rows of dimension %d", len(hi), len(rows), len(q), m.Dim))
	}
	for _, i := range rows {
		if i < 0 || int(i) >= n {
			panic(fmt.Sprintf("vec: UpperAt: row %d of %d", i, n))
		}
	}
	// The query's int16 words, as Estimate rounds them.
	p, t, qnorm, ok := int16Query(q)
	if !ok {
		for j := range hi {
			hi[j] = math.Inf(1)
		}
		return
	}
	dots := make([]int32, len(rows))
	dotI8Rows(p, m.q, m.Dim, rows, dots)
	for j, i := range rows {
		// x converted: not fused with the sum (Estimate's est+err).
		x := float64(t * float64(m.q.terms[i].scale) * float64(dots[j]))
		hi[j] = x + m.q.bound(int(i), qnorm, t)
	}
}
