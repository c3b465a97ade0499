package vec

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/internal/parallel"
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
	// terms holds each row's scale and bound terms, 16 bytes a row: the
	// rescans read them beside scattered rows, one cache line each.
	terms []termsI8
	// The 4-bit copy that EstimateTiered scans first (quant4.go).
	q4 quant4
	// sum is the sum of the rows, for MeanDot, taken in row order as
	// appends add to it. Set and Splice leave it stale: MeanDot then sums
	// the rows again (under sumMu), so that it never depends on how the
	// matrix came to hold its rows.
	sum   []float64
	stale atomic.Bool
	sumMu sync.Mutex
}

// termsI8 are the scale s of a row of a quant and its bound's terms:
// errQ, ||v − s*c|| plus Dot's rounding bound per unit ||q||, rounded up;
// l1, ||c||₁, from which errT gives s*||c||₁/2, the bound per unit t.
type termsI8 struct {
	errQ  float64
	scale float32
	l1    uint32
}

// errT returns s*||c||₁/2 rounded up (by a relative 1e-9), the bound per
// unit t, from l1 (exact: at most 127 a coordinate). The conversion keeps
// a compiler from fusing the product with a sum.
func (t *termsI8) errT() float64 {
	return float64(float64(t.scale) * float64(t.l1) / 2 * (1 + 1e-9))
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
	n, d := m.Rows(), m.Dim
	q := newQuant(n, d, cap(m.Data)/d)
	// Rows are independent: quantize them on every core. The sum is taken
	// in row order, as appends would, so that it does not depend on how
	// the matrix was built.
	var wg sync.WaitGroup
	workers := max(1, min(runtime.GOMAXPROCS(0), 4, n*d/parallelFloats))
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Go(func() {
			for i := lo; i < min(lo+per, n); i++ {
				q.quantize(i, m.Row(i))
			}
		})
	}
	for i := range n {
		q.addSum(m.Row(i), 1)
	}
	wg.Wait()
	m.q = q
}

// newQuant returns the copy of n rows of dimension d, with room for
// capRows rows, its rows not set and its sum zero.
func newQuant(n, d, capRows int) *quant {
	capRows = max(capRows, n)
	q := &quant{
		codes: make([]int8, n*d, capRows*d),
		terms: make([]termsI8, n, capRows),
		sum:   make([]float64, d),
	}
	q.q4.init(n, d, capRows)
	return q
}

// append quantizes v as a new row.
func (q *quant) append(v []float32) {
	q.codes = append(q.codes, make([]int8, len(v))...)
	q.terms = append(q.terms, termsI8{})
	q.q4.grow(len(v))
	q.set(len(q.terms)-1, v)
}

// copyRows copies rows lo to hi-1 of src (of the same dimension d) into
// rows j onwards of q.
func (q *quant) copyRows(j int, src *quant, lo, hi, d int) {
	k := j + hi - lo
	copy(q.codes[j*d:k*d], src.codes[lo*d:hi*d])
	copy(q.terms[j:k], src.terms[lo:hi])
	q.q4.copyRows(j, &src.q4, lo, hi)
}

// truncate keeps the first n rows.
func (q *quant) truncate(n, d int) {
	q.codes, q.terms = q.codes[:n*d], q.terms[:n]
	q.q4.truncate(n)
}

// addSum adds sign*v to the sum of the rows.
func (q *quant) addSum(v []float32, sign float64) {
	for j, x := range v {
		q.sum[j] += sign * float64(x)
	}
}

// set quantizes v into row i and adds it to the sum.
func (q *quant) set(i int, v []float32) {
	q.addSum(v, 1)
	q.quantize(i, v)
}

// resum sums the rows of m again, in row order, when the sum is stale.
func (m *Matrix) resum() {
	q := m.q
	if !q.stale.Load() {
		return
	}
	q.sumMu.Lock()
	defer q.sumMu.Unlock()
	if !q.stale.Load() {
		return
	}
	sum := q.sum[:m.Dim]
	clear(sum)
	for i := range m.Rows() {
		for j, x := range m.Data[i*m.Dim : (i+1)*m.Dim : (i+1)*m.Dim][:len(sum)] {
			sum[j] += float64(x)
		}
	}
	q.stale.Store(false)
}

// quantize writes the codes, scale and error bounds of row i.
func (q *quant) quantize(i int, v []float32) {
	d := len(v)
	codes := q.codes[i*d : (i+1)*d]
	var maxAbs float32
	for _, x := range v {
		if x > maxAbs {
			maxAbs = x
		} else if -x > maxAbs {
			maxAbs = -x
		}
	}
	s := maxAbs / 127
	var inv float64
	if s > 0 {
		inv = 1 / float64(s)
	}
	var resid, norm, l1 float64
	for j, x := range v {
		// Any rounding will do (the bounds come from the actual codes);
		// this one is cheap: to nearest, halves away from zero.
		y := float64(x) * inv
		if y > 127 {
			y = 127
		} else if y < -127 {
			y = -127
		}
		c := float64(int32(y + math.Copysign(0.5, y))) // no branch on the sign
		if c > 127 || c < -127 {
			c = math.Copysign(127, c)
		}
		codes[j] = int8(c)
		r := float64(x) - float64(s)*c
		resid += r * r
		norm += float64(x) * float64(x)
		l1 += math.Abs(c)
	}
	if math.IsNaN(norm) || math.IsInf(norm, 0) || math.IsNaN(resid) {
		// No finite bound: every estimate of this row is useless.
		clear(codes)
		q.terms[i] = termsI8{errQ: math.Inf(1)}
		q.q4.useless(i)
		return
	}
	q.terms[i] = termsI8{
		errQ:  (math.Sqrt(resid)+float64(d+8)*0x1p-24*math.Sqrt(norm))*(1+1e-9) + 1e-12,
		scale: s,
		l1:    uint32(l1),
	}
	q.q4.quantize(i, v, maxAbs, norm)
}

// MeanDot returns the mean over the rows of their dot product with q,
// computed as q·(sum of rows)/Rows() in float64: equal to the mean of the
// Scores up to rounding, in O(Dim). The matrix must be Quantized.
func (m *Matrix) MeanDot(q []float32) float64 {
	if m.q == nil {
		panic("vec: MeanDot on a matrix that is not quantized")
	}
	m.resum()
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
	p, t, qnorm, ok := int16Query(q)
	if !ok {
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
			terms := m.q.terms[b:e]
			es, bs := est[b:e], err[b:e]
			for j, dot := range out {
				x := float64(t * float64(terms[j].scale) * float64(dot)) // not fused below
				bound := m.q.bound(b+j, qnorm, t)
				es[j], bs[j] = x, bound
				if x-bound > maxLow {
					maxLow = x - bound
				}
			}
		}
		return maxLow
	}
	workers := min(runtime.GOMAXPROCS(0), 4, n*m.Dim/(4*parallelFloats))
	if workers <= 1 {
		return run(0, n)
	}
	per := (n + workers - 1) / workers
	lows := make([]float64, workers)
	parallel.For(workers, func(w int) { lows[w] = run(min(w*per, n), min((w+1)*per, n)) })
	return slices.Max(lows)
}

// int16Query rounds q to int16 words p with q ≈ t*p, small enough that no
// row sum of their products with int8 codes overflows, and returns ||q||
// rounded up (by a relative 1e-9): the rounding of Estimate, of the
// tiered scan's int8 rescan and of UpperAt. A zero query gives t 0 and
// zero words; ok is false when q holds an infinity or a NaN (no bound is
// finite then).
func int16Query(q []float32) (p []int16, t, qnorm float64, ok bool) {
	qmax := 0.0
	for _, x := range q {
		qmax = max(qmax, math.Abs(float64(x)))
		qnorm += float64(x) * float64(x)
	}
	if math.IsInf(qmax, 0) || math.IsNaN(qmax) {
		return nil, 0, 0, false
	}
	qnorm = math.Sqrt(qnorm) * (1 + 1e-9)
	p, t = int16Words(q, qmax)
	return p, t, qnorm, true
}

// int16Words returns q rounded to int16 words p with q ≈ t*p, where qmax
// is max |q_j| (finite; 0 gives t 0 and zero words).
func int16Words(q []float32, qmax float64) (p []int16, t float64) {
	p = make([]int16, len(q))
	if qmax == 0 {
		return p, 0
	}
	pmax := min(32767, float64(math.MaxInt32)/float64(len(q)*127))
	t = qmax / pmax
	for j, x := range q {
		p[j] = int16(min(max(math.Round(float64(x)/t), -pmax), pmax))
	}
	return p, t
}

// bound returns the bound of |Dot(q, v) − t*s*(p·c)| for row i, with p
// and t the query's words (int16Query) and qnorm its norm rounded up.
// errQ and errT carry a relative margin of 1e-9 for the rounding of t, p
// and these products; 1e-15 covers that of x near the bound's floor.
func (q *quant) bound(i int, qnorm, t float64) float64 { return q.terms[i].bound(qnorm, t) }

// bound is quant.bound for the row of these terms. Each product is
// converted explicitly so that no compiler fuses it with the sum (as
// rescanAVX512, which does not).
func (tm *termsI8) bound(qnorm, t float64) float64 {
	return float64(qnorm*tm.errQ) + float64(t*tm.errT()) + 1e-15
}

// dotI8Rows computes out[k] = sum_j p[j]*q.codes[rows[k]*dim+j] for every
// k, exactly, as dotI8 on each row: with AVX-512 in one call that fetches
// the rows ahead, and their terms, which the rescans read next
// (dotI8RowsAVX512). len(out) must be len(rows), every row within q, and
// the conditions of dotI8 hold.
func dotI8Rows(p []int16, q *quant, dim int, rows, out []int32) {
	out = out[:len(rows)]
	n := len(q.codes) / dim
	if len(q.terms) < n {
		panic(fmt.Sprintf("vec: %d rows of codes, %d of terms", n, len(q.terms)))
	}
	for _, i := range rows {
		if uint(i) >= uint(n) {
			panic(fmt.Sprintf("vec: row %d of %d", i, n))
		}
	}
	if useAVX512 && len(rows) > 0 {
		dotI8RowsAVX512(p[:dim], q.codes, dim, rows, out, &q.terms[0], rescanAhead)
		return
	}
	for k, i := range rows {
		dotI8(p, q.codes[int(i)*dim:(int(i)+1)*dim], dim, out[k:k+1])
	}
}

// rescanAhead is how many rows ahead dotI8RowsAVX512 and rescanAVX512
// fetch a row and its terms: 12, as fast as 8 to 16 and up to a third
// faster than 4 in a probe of the slow question's rescan (7,224 sorted
// rows in 8 parts on two cores, other rows each time, after a 4-bit
// pass), no slower when the rows are cached (BENCHMARKS.md, "the 4-bit
// pass and the int8 rescan"). A variable so that the tests can vary it.
var rescanAhead = 12
