package vec

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// An int8 copy of a matrix makes scanning it four times cheaper in memory
// traffic, which is what bounds a scan of a large matrix. Row i is stored as
// codes c (|c_j| <= 127) and a scale s with v ≈ s*c. A query q is rounded to
// int16 words p with q ≈ t*p, so that the estimate t*s*(p·c) of Dot(q, v)
// is an exact integer dot product, scaled. Its error is bounded per row:
//
//	|q·v − t*s*(p·c)| <= |q·(v − s*c)| + s*|(q − t*p)·c|
//	                  <= ||q||*||v − s*c|| + s*(t/2)*||c||₁
//
// and Dot's own float32 rounding differs from q·v by at most
// (dim+8)*2⁻²⁴*||q||*||v||. Estimate reports the sum of these bounds (with
// a margin for its own rounding), so callers can find the exact top rows
// from estimates and compute Dot only for the rows that could be among them.
type quant struct {
	codes []int8
	scale []float32
	// errQ is ||v − s*c|| plus Dot's rounding bound per unit ||q||; errT is
	// s*||c||₁/2, the bound per unit t. Both are rounded up.
	errQ, errT []float64
	// sum is the sum of the rows, for MeanDot.
	sum []float64
}

// QuantizeFrom makes the matrix keep an int8 copy of its rows (see
// Estimate) once it has at least n rows; 0 never. Rows of a dimension that
// is not a multiple of 16 are never quantized.
func (m *Matrix) QuantizeFrom(n int) {
	m.quantizeAt = n
	m.maybeQuantize()
}

// Quantized reports whether the matrix keeps an int8 copy of its rows.
func (m *Matrix) Quantized() bool { return m.q != nil }

func (m *Matrix) maybeQuantize() {
	if m.q != nil || m.quantizeAt <= 0 || m.Dim == 0 || m.Dim%16 != 0 || m.Rows() < m.quantizeAt {
		return
	}
	n := m.Rows()
	m.q = &quant{
		codes: make([]int8, 0, cap(m.Data)),
		scale: make([]float32, 0, n),
		errQ:  make([]float64, 0, n),
		errT:  make([]float64, 0, n),
		sum:   make([]float64, m.Dim),
	}
	for i := range n {
		m.q.append(m.Row(i))
	}
}

// append quantizes v as a new row.
func (q *quant) append(v []float32) {
	q.codes = append(q.codes, make([]int8, len(v))...)
	q.scale = append(q.scale, 0)
	q.errQ = append(q.errQ, 0)
	q.errT = append(q.errT, 0)
	q.set(len(q.scale)-1, v)
}

// addSum adds sign*v to the sum of the rows.
func (q *quant) addSum(v []float32, sign float64) {
	for j, x := range v {
		q.sum[j] += sign * float64(x)
	}
}

// set quantizes v into row i (whose previous value, if any, the caller has
// taken out of the sum).
func (q *quant) set(i int, v []float32) {
	q.addSum(v, 1)
	d := len(v)
	codes := q.codes[i*d : (i+1)*d]
	maxAbs := 0.0
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
	}
	s := float32(maxAbs / 127)
	var resid, norm, l1 float64
	for j, x := range v {
		c := 0.0
		if s > 0 {
			c = math.Round(float64(x) / float64(s))
			c = min(max(c, -127), 127)
		}
		codes[j] = int8(c)
		r := float64(x) - float64(s)*c
		resid += r * r
		norm += float64(x) * float64(x)
		l1 += math.Abs(c)
	}
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		// No finite bound: every estimate of this row is useless.
		q.scale[i], q.errQ[i], q.errT[i] = 0, math.Inf(1), 0
		return
	}
	q.scale[i] = s
	q.errQ[i] = (math.Sqrt(resid)+float64(d+8)*0x1p-24*math.Sqrt(norm))*(1+1e-9) + 1e-12
	q.errT[i] = float64(s) * l1 / 2 * (1 + 1e-9)
}

// MeanDot returns the mean over the rows of their dot product with q,
// computed as q·(sum of rows)/Rows() in float64: equal to the mean of the
// Scores up to rounding, in O(Dim). The matrix must be Quantized.
func (m *Matrix) MeanDot(q []float32) float64 {
	if m.q == nil {
		panic("vec: MeanDot on a matrix that is not quantized")
	}
	s := 0.0
	for j, x := range q[:m.Dim] {
		s += float64(x) * m.q.sum[j]
	}
	return s / float64(m.Rows())
}

// Estimate writes, for every row i, an estimate est[i] of Dot(q, Row(i))
// and a bound err[i] with |Dot(q, Row(i)) − est[i]| <= err[i], and returns
// the largest lower bound est[i]−err[i] (−Inf without rows). est and err
// must have length Rows(). The matrix must be Quantized. Large matrices are
// scanned by up to GOMAXPROCS goroutines at once.
func (m *Matrix) Estimate(q []float32, est, err []float64) (maxLow float64) {
	n := m.Rows()
	if m.q == nil {
		panic("vec: Estimate on a matrix that is not quantized")
	}
	if len(est) != n || len(err) != n || len(q) != m.Dim {
		panic(fmt.Sprintf("vec: Estimate: %d estimates, %d bounds, query of length %d for %d rows of dimension %d", len(est), len(err), len(q), n, m.Dim))
	}
	// Round q to int16 words small enough that no row sum overflows.
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
		for i := range n {
			est[i], err[i] = 0, math.Inf(1)
		}
		return math.Inf(-1)
	}
	run := func(lo, hi int) (maxLow float64) {
		maxLow = math.Inf(-1)
		var dots [blockRows]int32
		for b := lo; b < hi; b += blockRows {
			e := min(b+blockRows, hi)
			out := dots[:e-b]
			dotI8(p, m.q.codes[b*m.Dim:e*m.Dim], m.Dim, out)
			for j, dot := range out {
				i := b + j
				x := t * float64(m.q.scale[i]) * float64(dot)
				bound := qnorm*m.q.errQ[i] + t*m.q.errT[i]
				bound += 1e-9*(math.Abs(x)+bound) + 1e-300
				est[i], err[i] = x, bound
				maxLow = max(maxLow, x-bound)
			}
		}
		return maxLow
	}
	workers := min(runtime.GOMAXPROCS(0), 4, n*m.Dim/(4*parallelFloats))
	if workers <= 1 {
		return run(0, n)
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	lows := make([]float64, workers)
	for w := 1; w < workers; w++ {
		lo := w * per
		wg.Go(func() { lows[w] = run(min(lo, n), min(lo+per, n)) })
	}
	lows[0] = run(0, min(per, n))
	wg.Wait()
	return slices.Max(lows)
}
