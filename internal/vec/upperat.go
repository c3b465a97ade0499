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
	pmax := min(32767, float64(math.MaxInt32)/float64(m.Dim*127))
	qmax, qnorm := 0.0, 0.0
	for _, x := range q {
		qmax = max(qmax, math.Abs(float64(x)))
		qnorm += float64(x) * float64(x)
	}
	qnorm = math.Sqrt(qnorm) * (1 + 1e-9)
	p := make([]int16, m.Dim)
	t := 0.0
	if qmax > 0 && !math.IsInf(qmax, 0) && !math.IsNaN(qmax) {
		t = qmax / pmax
		for j, x := range q {
			p[j] = int16(min(max(math.Round(float64(x)/t), -pmax), pmax))
		}
	} else if qmax != 0 {
		for j := range hi {
			hi[j] = math.Inf(1)
		}
		return
	}
	dots := make([]int32, len(rows))
	dotI8Rows(p, m.q.codes, m.Dim, rows, dots)
	for j, i := range rows {
		x := t * float64(m.q.scale[i]) * float64(dots[j])
		bound := qnorm*m.q.errQ[i] + t*m.q.errT[i] + 1e-15
		hi[j] = x + bound
	}
}
