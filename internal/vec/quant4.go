package vec

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// A 4-bit copy of a quantized matrix, half the bytes of its int8 copy,
// which EstimateTiered scans first. Row i is stored as codes c (|c_j| <= 7)
// and a scale s with v ≈ s*c; the query q is rounded to int8 words p with
// q ≈ t*p (the kernel multiplies unsigned bytes by signed ones). With
// r = v − s*c, the error of t*s*(p·c) is
//
//	q·v − t*s*(p·c) = q·r + (q − t*p)·(s*c)
//
// so it is bounded per row by min(||q||*||r||, ||q||₁*max|r_j|) +
// ||q − t*p||*||s*c||, plus Dot's own float32 rounding, (dim+8)*2⁻²⁴*||q||*
// ||v||. The four row terms are kept as float32, rounded up.
type quant4 struct {
	// rowBytes is the bytes of one row: the dimension padded to a
	// multiple of 64, two codes a byte. In each 32 bytes, byte k holds
	// code k+8 of its 64 coordinates in its low nibble and code k+32+8 in
	// its high nibble; padding codes are 0 (stored 8).
	rowBytes int
	codes    []byte
	scale    []float32
	// res is ||r||, inf max_j |r_j|, norm ||s*c||, round (dim+8)*2⁻²⁴*||v||.
	res, inf, norm, round []float32
}

// quant4Chunk is the coordinates one 32-byte block of codes holds.
const quant4Chunk = 64

func (q *quant4) init(n, d, capRows int) {
	q.rowBytes = (d + quant4Chunk - 1) / quant4Chunk * quant4Chunk / 2
	q.codes = make([]byte, n*q.rowBytes, capRows*q.rowBytes)
	q.scale = make([]float32, n, capRows)
	q.res = make([]float32, n, capRows)
	q.inf = make([]float32, n, capRows)
	q.norm = make([]float32, n, capRows)
	q.round = make([]float32, n, capRows)
}

// grow adds a row, to be set.
func (q *quant4) grow(d int) {
	if q.rowBytes == 0 {
		q.init(0, d, 0)
	}
	q.codes = append(q.codes, make([]byte, q.rowBytes)...)
	q.scale = append(q.scale, 0)
	q.res = append(q.res, 0)
	q.inf = append(q.inf, 0)
	q.norm = append(q.norm, 0)
	q.round = append(q.round, 0)
}

func (q *quant4) copyRows(j int, src *quant4, lo, hi int) {
	k, b := j+hi-lo, q.rowBytes
	copy(q.codes[j*b:k*b], src.codes[lo*b:hi*b])
	copy(q.scale[j:k], src.scale[lo:hi])
	copy(q.res[j:k], src.res[lo:hi])
	copy(q.inf[j:k], src.inf[lo:hi])
	copy(q.norm[j:k], src.norm[lo:hi])
	copy(q.round[j:k], src.round[lo:hi])
}

func (q *quant4) truncate(n int) {
	q.codes, q.scale = q.codes[:n*q.rowBytes], q.scale[:n]
	q.res, q.inf, q.norm, q.round = q.res[:n], q.inf[:n], q.norm[:n], q.round[:n]
}

func (q *quant4) bytes() int64 {
	return int64(cap(q.codes)) + int64(cap(q.scale)+cap(q.res)+cap(q.inf)+cap(q.norm)+cap(q.round))*4
}

// up32 returns the smallest float32 at least x (x >= 0; +Inf above the
// float32 range).
func up32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// useless makes every estimate of row i unbounded (a row that is not
// finite).
func (q *quant4) useless(i int) {
	row := q.codes[i*q.rowBytes : (i+1)*q.rowBytes]
	for j := range row {
		row[j] = 0x88
	}
	inf := float32(math.Inf(1))
	q.scale[i], q.res[i], q.inf[i], q.norm[i], q.round[i] = 0, inf, inf, 0, 0
}

// quantize writes the codes and bounds of row i, a finite row whose
// largest magnitude is maxAbs and squared norm norm2.
func (q *quant4) quantize(i int, v []float32, maxAbs float32, norm2 float64) {
	row := q.codes[i*q.rowBytes : (i+1)*q.rowBytes]
	clear(row)
	s := maxAbs / 7
	var inv float64
	if s > 0 {
		inv = 1 / float64(s)
	}
	var res, inf, norm float64
	for j, x := range v {
		// To nearest, halves away from zero, as quant.quantize (any
		// rounding will do: the bounds come from the codes).
		y := min(max(float64(x)*inv, -7), 7)
		c := float64(int32(y + math.Copysign(0.5, y)))
		// Code j: byte j%32 of its block of 64, the high nibble for the
		// block's second 32.
		row[j>>6<<5|j&31] |= byte(int32(c)+8) << (j >> 5 & 1 << 2)
		sc := float64(s) * c
		r := float64(x) - sc
		res += r * r
		inf = max(inf, math.Abs(r))
		norm += sc * sc
	}
	for j := len(v); j < 2*q.rowBytes; j++ {
		row[j>>6<<5|j&31] |= 8 << (j >> 5 & 1 << 2) // padding: code 0
	}
	const margin = 1 + 1e-9
	q.scale[i] = s
	q.res[i] = up32(math.Sqrt(res)*margin + 1e-30)
	q.inf[i] = up32(inf*margin + 1e-30)
	q.norm[i] = up32(math.Sqrt(norm) * margin)
	q.round[i] = up32(float64(len(v)+8)*0x1p-24*math.Sqrt(norm2)*margin + 1e-30)
}

// dotU4Go computes out[r] = sum_j p[j]*u_j over the 2*rowBytes codes u
// (stored, 0 to 15) of row r: dotU4's reference.
func dotU4Go(p []int8, codes []byte, rowBytes int, out []int32) {
	for r := range out {
		var s int32
		row := codes[r*rowBytes : (r+1)*rowBytes]
		for b := 0; b < rowBytes; b += 32 {
			pp := p[2*b : 2*b+64]
			for k, x := range row[b : b+32] {
				s += int32(pp[k])*int32(x&15) + int32(pp[k+32])*int32(x>>4)
			}
		}
		out[r] = s
	}
}

// EstimateTiered is Estimate from two copies of the rows: it scans the
// 4-bit copy of every row (half the bytes of the int8 copy), then calls
// refineAt with the largest lower bound found and rescans, in the int8
// copy, each row whose upper bound reaches the value returned, keeping
// the tighter of its two bounds. Every bound holds as Estimate's do, so
// whatever refineAt returns, a caller that reads only the bounds (and
// exact values where they do not decide) decides as it would from
// Estimate; refineAt only moves the work between the scans. A
// refineAt of -Inf rescans every row (bounds never looser than
// Estimate's); +Inf none. refineAt must not fall as its argument rises
// (it is also called with lower bounds found part way). The largest
// lower bound returned is taken over both scans' bounds of every row
// scanned: at least every est[i]-err[i], and at most the largest Dot.
func (m *Matrix) EstimateTiered(q []float32, est, err []float64, refineAt func(maxLow float64) float64) (maxLow float64) {
	n := m.Rows()
	if m.q == nil {
		panic("vec: EstimateTiered on a matrix that is not quantized")
	}
	if len(est) != n || len(err) != n || len(q) != m.Dim {
		panic(fmt.Sprintf("vec: EstimateTiered: %d estimates, %d bounds, query of length %d for %d rows of dimension %d", len(est), len(err), len(q), n, m.Dim))
	}
	q4 := &m.q.q4
	qmax, qnorm, ql1 := 0.0, 0.0, 0.0
	for _, x := range q {
		a := math.Abs(float64(x))
		qmax = max(qmax, a)
		qnorm += a * a
		ql1 += a
	}
	if math.IsInf(qmax, 0) || math.IsNaN(qmax) {
		for i := range n {
			est[i], err[i] = 0, math.Inf(1)
		}
		return math.Inf(-1)
	}
	if qmax == 0 {
		// Every Dot is 0, except with a row that is not finite.
		maxLow := math.Inf(-1)
		for i := range n {
			est[i], err[i] = 0, 0
			if math.IsInf(float64(q4.res[i]), 1) {
				err[i] = math.Inf(1)
			}
			maxLow = max(maxLow, -err[i])
		}
		return maxLow
	}
	const margin = 1 + 1e-9
	qnorm = math.Sqrt(qnorm) * margin
	// p: q rounded to int8 words (padded with zeros), and the norm of the
	// rounding error; psum corrects for the stored codes' offset of 8.
	p := make([]int8, 2*q4.rowBytes)
	t, qerr := qmax/127, 0.0
	var psum int32
	for j, x := range q {
		c := min(max(math.Round(float64(x)/t), -127), 127)
		p[j] = int8(c)
		psum += int32(c)
		e := float64(x) - t*c
		qerr += e * e
	}
	qerr = math.Sqrt(qerr) * margin
	// The two passes run on up to four goroutines, each on its own range
	// of rows: the first gives each range's largest lower bound, the
	// second rescans.
	workers := max(1, min(runtime.GOMAXPROCS(0), 4, n*m.Dim/(4*parallelFloats)))
	per := (n + workers - 1) / workers
	lows := make([]float64, workers)
	parallel := func(f func(w, lo, hi int)) {
		if workers == 1 {
			f(0, 0, n)
			return
		}
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			wg.Go(func() { f(w, min(w*per, n), min((w+1)*per, n)) })
		}
		f(0, 0, min(per, n))
		wg.Wait()
	}
	// The bound's multipliers carry a relative margin of 1e-9 for the
	// rounding of t, p and the products and sums (see Estimate).
	sc := scan4{p: p, c: bound4{t: t, qnorm: qnorm * margin, ql1: ql1 * margin, qerr: qerr * margin, eps: 1e-15, off: 8 * psum}}
	// Each range lists the rows above a provisional floor, refineAt of
	// its best lower bound so far: refineAt does not fall as its argument
	// rises, so the final floor is at least as high and every row above it
	// is listed.
	cands := make([][]int32, workers)
	for w := range cands {
		cands[w] = getCands()
	}
	defer func() {
		for _, c := range cands {
			putCands(c)
		}
	}()
	parallel(func(w, lo, hi int) { lows[w], cands[w] = sc.rows(q4, est, err, lo, hi, refineAt, cands[w]) })
	floor := refineAt(slices.Max(lows))
	// The int8 rescan, as Estimate's.
	pmax := min(32767, float64(math.MaxInt32)/float64(m.Dim*127))
	p16 := make([]int16, m.Dim)
	t16 := qmax / pmax
	for j, x := range q {
		p16[j] = int16(min(max(math.Round(float64(x)/t16), -pmax), pmax))
	}
	d := m.Dim
	parallel(func(w, lo, hi int) {
		maxLow := lows[w]
		var dot [1]int32
		for _, i := range cands[w] {
			if est[i]+err[i] >= floor {
				dotI8(p16, m.q.codes[int(i)*d:(int(i)+1)*d], d, dot[:])
				x := t16 * float64(m.q.scale[i]) * float64(dot[0])
				bound := qnorm*m.q.errQ[i] + t16*m.q.errT[i] + 1e-15
				maxLow = max(maxLow, x-bound)
				if bound < err[i] {
					est[i], err[i] = x, bound
				}
			}
		}
		lows[w] = maxLow
	})
	return slices.Max(lows)
}

// scan4 is the first pass of EstimateTiered for one query: p, the query's
// int8 words, and the constants of the estimates and bounds (bound4).
type scan4 struct {
	p []int8
	c bound4
}

// bound4 holds what the estimate and bound of a row take from the query:
// t, the scale of its int8 words; the bound's multipliers (see quant4);
// eps, an absolute margin; off, 8 times the words' sum (the codes'
// offset). bounds4AVX2 reads it by offset: keep the order.
type bound4 struct {
	t, qnorm, ql1, qerr, eps float64
	off                      int32
}

// rows writes the 4-bit estimates and bounds of rows lo to hi-1, and
// returns their largest lower bound and the rows whose upper bound reaches
// refineAt of the largest lower bound found so far, appended to
// cands[:0].
func (sc *scan4) rows(q4 *quant4, est, err []float64, lo, hi int, refineAt func(float64) float64, cands []int32) (float64, []int32) {
	maxLow := math.Inf(-1)
	cands = cands[:0]
	var dots [blockRows]int32
	for b := lo; b < hi; b += blockRows {
		e := min(b+blockRows, hi)
		out := dots[:e-b]
		dotU4(sc.p, q4.codes[b*q4.rowBytes:e*q4.rowBytes], q4.rowBytes, out)
		maxLow = max(maxLow, bounds4(&sc.c, out, q4.scale[b:e], q4.res[b:e], q4.inf[b:e], q4.norm[b:e], q4.round[b:e], est[b:e], err[b:e]))
		cands = listSum(est[b:e], err[b:e], refineAt(maxLow), b, cands)
	}
	return maxLow, cands
}

// listSumGo appends to dst base+j for each j with a[j]+b[j] >= floor, in
// order (len(b) >= len(a)), and returns it: listSum's reference.
func listSumGo(a, b []float64, floor float64, base int, dst []int32) []int32 {
	b = b[:len(a)]
	for j, x := range a {
		if x+b[j] >= floor {
			dst = append(dst, int32(base+j))
		}
	}
	return dst
}

// bounds4Go writes est[j] and err[j] for the rows whose 4-bit dot products
// are dots and returns the largest est[j]-err[j] (-Inf for none): bounds4's
// reference.
func bounds4Go(c *bound4, dots []int32, scale, res, inf, norm, round []float32, est, err []float64) float64 {
	maxLow := math.Inf(-1)
	k := len(dots)
	scale, res, inf, norm, round, est, err = scale[:k], res[:k], inf[:k], norm[:k], round[:k], est[:k], err[:k]
	t, qnorm, ql1, qerr, eps, off := c.t, c.qnorm, c.ql1, c.qerr, c.eps, c.off
	for j, dot := range dots {
		x := t * float64(scale[j]) * float64(dot-off)
		// qnorm and ql1 are positive (the query is not zero): a row that
		// is not finite (res and inf +Inf, norm and round 0) gets +Inf.
		a, b := qnorm*float64(res[j]), ql1*float64(inf[j])
		if b < a {
			a = b
		}
		bound := a + qnorm*float64(round[j]) + qerr*float64(norm[j]) + eps
		est[j], err[j] = x, bound
		if x-bound > maxLow {
			maxLow = x - bound
		}
	}
	return maxLow
}

// candsPool holds the lists of rows EstimateTiered rescans (each grows
// to a block of rows at least, and often holds thousands), so that a
// scan allocates none in steady state.
var candsPool sync.Pool

// getCands returns an empty list from candsPool (nil when it has none).
func getCands() []int32 {
	if p, ok := candsPool.Get().(*[]int32); ok {
		return (*p)[:0]
	}
	return nil
}

// putCands gives c back to candsPool.
func putCands(c []int32) {
	if cap(c) > 0 {
		candsPool.Put(&c)
	}
}
