package vec

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/higmem/higmem/internal/parallel"
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
// ||v||. That rounding term is added to both arms of the minimum (||q||₁ >=
// ||q||, so the second arm only grows by more), leaving three row terms
// beside the scale; all four are kept as bfloat16 (the top half of a
// float32), the terms rounded up and the scale rounded up before the codes
// are taken with it: 8 bytes a row, in one array beside the codes.
type quant4 struct {
	// rowBytes is the bytes of one row: the dimension padded to a
	// multiple of 64, two codes a byte. In each 32 bytes, byte k holds
	// code k+8 of its 64 coordinates in its low nibble and code k+32+8 in
	// its high nibble; padding codes are 0 (stored 8).
	rowBytes int
	codes    []byte
	terms    []terms4
}

// terms4 are the scale and bound terms of a row of a quant4, as bfloat16
// bits: s, ||r|| + round, max_j |r_j| + round and ||s*c||, where round is
// (dim+8)*2⁻²⁴*||v||. scan4AVX2 reads them by offset: keep the order.
type terms4 struct {
	scale, res, inf, norm uint16
}

// bf16 returns the bfloat16 x is (exactly, as a float64).
func bf16(x uint16) float64 { return float64(math.Float32frombits(uint32(x) << 16)) }

// bf16Up returns the smallest bfloat16 at least x (x >= 0; +Inf above the
// range).
func bf16Up(x float64) uint16 {
	b := math.Float32bits(up32(x))
	if b&0xFFFF != 0 {
		b += 0x10000 // the next bfloat16 up (+Inf past the largest)
	}
	return uint16(b >> 16)
}

// quant4Chunk is the coordinates one 32-byte block of codes holds.
const quant4Chunk = 64

func (q *quant4) init(n, d, capRows int) {
	q.rowBytes = (d + quant4Chunk - 1) / quant4Chunk * quant4Chunk / 2
	q.codes = make([]byte, n*q.rowBytes, capRows*q.rowBytes)
	q.terms = make([]terms4, n, capRows)
}

// grow adds a row, to be set.
func (q *quant4) grow(d int) {
	if q.rowBytes == 0 {
		q.init(0, d, 0)
	}
	q.codes = append(q.codes, make([]byte, q.rowBytes)...)
	q.terms = append(q.terms, terms4{})
}

func (q *quant4) copyRows(j int, src *quant4, lo, hi int) {
	k, b := j+hi-lo, q.rowBytes
	copy(q.codes[j*b:k*b], src.codes[lo*b:hi*b])
	copy(q.terms[j:k], src.terms[lo:hi])
}

func (q *quant4) truncate(n int) {
	q.codes, q.terms = q.codes[:n*q.rowBytes], q.terms[:n]
}

func (q *quant4) bytes() int64 {
	return int64(cap(q.codes)) + int64(cap(q.terms))*8
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
	inf := bf16Up(math.Inf(1))
	q.terms[i] = terms4{res: inf, inf: inf}
}

// quantize writes the codes and bounds of row i, a finite row whose
// largest magnitude is maxAbs and squared norm norm2.
func (q *quant4) quantize(i int, v []float32, maxAbs float32, norm2 float64) {
	row := q.codes[i*q.rowBytes : (i+1)*q.rowBytes]
	clear(row)
	// The scale as its bfloat16 rounded up: |x|/s stays within 7.
	sb := bf16Up(float64(maxAbs) / 7)
	s := float32(bf16(sb))
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
	round := float64(len(v)+8)*0x1p-24*math.Sqrt(norm2)*margin + 1e-30
	q.terms[i] = terms4{
		scale: sb,
		res:   bf16Up((math.Sqrt(res)*margin + 1e-30 + round) * margin),
		inf:   bf16Up((inf*margin + 1e-30 + round) * margin),
		norm:  bf16Up(math.Sqrt(norm) * margin),
	}
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
	if len(est) != m.Rows() || len(err) != m.Rows() {
		panic(fmt.Sprintf("vec: EstimateTiered: %d estimates, %d bounds for %d rows", len(est), len(err), m.Rows()))
	}
	return m.tiered(q, est, err, refineAt)
}

// UpperTiered is EstimateTiered writing only each row's upper bound,
// hi[i] = est[i]+err[i] (that float64 sum, bit for bit), for a caller that
// reads no other: half the bytes written a row. It returns the same
// largest lower bound.
func (m *Matrix) UpperTiered(q []float32, hi []float64, refineAt func(maxLow float64) float64) (maxLow float64) {
	if len(hi) != m.Rows() {
		panic(fmt.Sprintf("vec: UpperTiered: %d upper bounds for %d rows", len(hi), m.Rows()))
	}
	return m.tiered(q, hi, nil, refineAt)
}

// tiered is EstimateTiered, or UpperTiered when err is nil (est then
// holds the upper bounds).
func (m *Matrix) tiered(q []float32, est, err []float64, refineAt func(maxLow float64) float64) (maxLow float64) {
	n := m.Rows()
	if m.q == nil {
		panic("vec: EstimateTiered on a matrix that is not quantized")
	}
	if len(q) != m.Dim {
		panic(fmt.Sprintf("vec: EstimateTiered: query of length %d for rows of dimension %d", len(q), m.Dim))
	}
	// set writes row i's estimate and bound (their sum without err).
	set := func(i int, x, bound float64) {
		if err == nil {
			est[i] = x + bound
		} else {
			est[i], err[i] = x, bound
		}
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
			set(i, 0, math.Inf(1))
		}
		return math.Inf(-1)
	}
	if qmax == 0 {
		// Every Dot is 0, except with a row that is not finite.
		maxLow := math.Inf(-1)
		for i := range n {
			bound := 0.0
			if math.IsInf(bf16(q4.terms[i].res), 1) {
				bound = math.Inf(1)
			}
			set(i, 0, bound)
			maxLow = max(maxLow, -bound)
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
	// The two passes run in parts (parallel.For), each on its own range
	// of rows: the first gives each range's largest lower bound, the
	// second rescans. A P's share is split in four, so that a helper that
	// comes late (busy with the work beside the scan: a question's BM25
	// features, or the turns beside the events) takes the parts left
	// instead of leaving the caller to scan half the rows alone.
	workers := parallel.Parts(n*m.Dim, 4*parallelFloats, 4)
	if workers > 1 {
		workers = min(4*workers, max(n*m.Dim/parallelFloats, workers))
	}
	per := (n + workers - 1) / workers
	lows := make([]float64, workers)
	run := func(f func(w, lo, hi int)) {
		parallel.For(workers, func(w int) { f(w, min(w*per, n), min((w+1)*per, n)) })
	}
	// The bound's multipliers carry a relative margin of 1e-9 for the
	// rounding of t, p and the products and sums (see Estimate).
	sc := scan4{p: p, c: bound4{t: t, qnorm: qnorm * margin, ql1: ql1 * margin, qerr: qerr * margin, eps: 1e-15, off: 8 * psum}}
	if useAVX512 {
		sc.pz = zmmQuery(p)
	}
	// Each range lists the rows above a provisional floor, refineAt of
	// its best lower bound so far: refineAt does not fall as its argument
	// rises, so the final floor is at least as high and every row above it
	// is listed.
	cands := make([]*list4, workers)
	for w := range cands {
		cands[w] = getList4()
	}
	defer func() {
		for _, l := range cands {
			list4Pool.Put(l)
		}
	}()
	run(func(w, lo, hi int) { lows[w] = sc.rows(q4, est, err, lo, hi, refineAt, cands[w]) })
	floor := refineAt(slices.Max(lows))
	// The int8 rescan, as Estimate's.
	p16, t16 := int16Words(q, qmax)
	run(func(w, lo, hi int) {
		l := cands[w]
		// The rows listed at or above the floor (at: their places in the
		// list), rescanned in order.
		l.pick(floor)
		lows[w] = m.rescan(p16, t16, qnorm, l, est, err, lows[w])
	})
	return slices.Max(lows)
}

// rescan is the int8 rescan of one part of the tiered scan: for each row
// l.sel[k] (at l.at[k] in the list l), its int8 estimate x and bound, the
// largest of maxLow and their x - bound returned, and x and the bound
// written (as set does in tiered: x + bound into est when err is nil)
// when the bound is below the row's 4-bit one, l.err[l.at[k]]. p16 and t16
// are the query's int16 words, qnorm its norm (int16Query). With AVX-512
// in one kernel (rescanAVX512), else rescanGo; the same values.
func (m *Matrix) rescan(p16 []int16, t16, qnorm float64, l *list4, est, err []float64, maxLow float64) float64 {
	if !useAVX512 || len(l.sel) == 0 {
		return m.rescanGo(p16, t16, qnorm, l, est, err, maxLow)
	}
	q, n := m.q, m.Rows()
	// Every array holds the rows and places the kernel reads.
	_, _ = q.terms[n-1], est[n-1]
	var errp *float64
	if err != nil {
		_ = err[n-1]
		errp = &err[0]
	}
	_ = q.codes[n*m.Dim-1]
	_ = p16[m.Dim-1]
	at := l.at[:len(l.sel)]
	for k, i := range l.sel {
		if uint(i) >= uint(n) || uint(at[k]) >= uint(len(l.err)) {
			panic(fmt.Sprintf("vec: rescan of row %d of %d, place %d of %d", i, n, at[k], len(l.err)))
		}
	}
	a := rescanArgs{
		p: &p16[0], codes: &q.codes[0], dim: int64(m.Dim), terms: &q.terms[0],
		sel: &l.sel[0], at: &at[0], n: int64(len(l.sel)), lerr: &l.err[0], est: &est[0], err: errp,
		t16: t16, qnorm: qnorm, c1e9: 1 + 1e-9, half: 0.5, eps: 1e-15, ahead: int64(rescanAhead), maxLow: maxLow,
	}
	rescanAVX512(&a)
	return a.maxLow
}

// rescanGo is rescan in Go, after dotI8Rows: its reference, and its path
// without AVX-512.
func (m *Matrix) rescanGo(p16 []int16, t16, qnorm float64, l *list4, est, err []float64, maxLow float64) float64 {
	l.dots = slices.Grow(l.dots[:0], len(l.sel))[:len(l.sel)]
	dotI8Rows(p16, m.q, m.Dim, l.sel, l.dots)
	// The slices in locals: the stores to est could alias their headers.
	terms, rows, lerr, dots := m.q.terms, l.rows, l.err, l.dots
	for j, k := range l.at {
		i := rows[k]
		tm := &terms[i]
		// x converted: not fused with the sum below (rescanAVX512's).
		x := float64(t16 * float64(tm.scale) * float64(dots[j]))
		bound := tm.bound(qnorm, t16)
		maxLow = max(maxLow, x-bound)
		if bound < lerr[k] {
			if err == nil {
				est[i] = x + bound
			} else {
				est[i], err[i] = x, bound
			}
		}
	}
	return maxLow
}

// rescanArgs are rescanAVX512's arguments (the assembly reads the fields
// by their offsets, go_asm.h): the query's int16 words p, the int8 codes
// of rows of dim bytes and their terms; the n rows sel to rescan, their
// places at in the list and the list's 4-bit bounds lerr; est and err (nil
// for upper bounds alone) to write; t16 and qnorm, the query's scale and
// norm; c1e9, half and eps, the constants of termsI8.bound (1+1e-9, 0.5,
// 1e-15); ahead, the rows fetched ahead; maxLow, the largest lower bound
// before the rows, and after them on return.
type rescanArgs struct {
	p                           *int16
	codes                       *int8
	dim                         int64
	terms                       *termsI8
	sel, at                     *int32
	n                           int64
	lerr, est, err              *float64
	t16, qnorm, c1e9, half, eps float64
	ahead                       int64
	maxLow                      float64
}

// scan4 is the first pass of EstimateTiered for one query: p, the query's
// int8 words, and the constants of the estimates and bounds (bound4); pz
// holds p in scan4AVX512's order (zmmQuery), set by tiered before its
// goroutines start or by block on first use.
type scan4 struct {
	p, pz []int8
	c     bound4
}

// bound4 holds what the estimate and bound of a row take from the query:
// t, the scale of its int8 words; the bound's multipliers (see quant4);
// eps, an absolute margin; off, 8 times the words' sum (the codes'
// offset). scan4AVX2 reads it by offset: keep the order.
type bound4 struct {
	t, qnorm, ql1, qerr, eps float64
	off                      int32
}

// list4 holds the rows a range of the first pass lists, in order, with
// their 4-bit estimates and bounds.
type list4 struct {
	rows     []int32
	est, err []float64
	// sel, at and dots are the rescan's scratch: the rows it reads, their
	// places in rows, and their int8 dot products.
	sel, at, dots []int32
}

// list4Pool holds the lists of the first pass (each grows to a block of
// rows at least, and often holds thousands), so that a scan allocates
// none in steady state.
var list4Pool = sync.Pool{New: func() any { return new(list4) }}

// getList4 returns an empty list from list4Pool.
func getList4() *list4 {
	l := list4Pool.Get().(*list4)
	l.rows, l.est, l.err = l.rows[:0], l.est[:0], l.err[:0]
	return l
}

// add appends row i, estimated x ± bound.
func (l *list4) add(i int, x, bound float64) {
	l.rows, l.est, l.err = append(l.rows, int32(i)), append(l.est, x), append(l.err, bound)
}

// rows writes the 4-bit estimates and bounds of rows lo to hi-1 (or their
// sums alone, into est, when err is nil), lists in l the rows whose upper
// bound reaches refineAt of the largest lower bound found before their
// block of blockRows rows (refineAt does not fall as its argument rises,
// so that floor is at most the final one: every row above the final floor
// is listed), and returns the rows' largest lower bound.
func (sc *scan4) rows(q4 *quant4, est, err []float64, lo, hi int, refineAt func(float64) float64, l *list4) float64 {
	maxLow := math.Inf(-1)
	for b := lo; b < hi; b += blockRows {
		e := min(b+blockRows, hi)
		maxLow = sc.block(q4, est, err, b, e, refineAt(maxLow), maxLow, l)
	}
	return maxLow
}

// blockGo is block in separate passes (dotU4, bounds4Go, the list) over
// at most blockRows rows: block's reference, and its remainder.
func (sc *scan4) blockGo(q4 *quant4, est, err []float64, b, e int, floor, maxLow float64, l *list4) float64 {
	var dots [blockRows]int32
	var xs, bounds [blockRows]float64
	out := dots[:e-b]
	dotU4(sc.p, q4.codes[b*q4.rowBytes:e*q4.rowBytes], q4.rowBytes, out)
	maxLow = max(maxLow, bounds4Go(&sc.c, out, q4.terms[b:e], xs[:e-b], bounds[:e-b]))
	for j, x := range xs[:e-b] {
		h := x + bounds[j]
		if err == nil {
			est[b+j] = h
		} else {
			est[b+j], err[b+j] = x, bounds[j]
		}
		if h >= floor {
			l.add(b+j, x, bounds[j])
		}
	}
	return maxLow
}

// scan4Args are scan4AVX2's arguments and results (the assembly reads the
// fields by their offsets, go_asm.h). The pointers are at row base of
// their arrays (codes at its first byte, list, lest and lerr at their
// next free entry); err is nil when est is to hold the upper bounds
// alone; n is a positive multiple of 4.
type scan4Args struct {
	c        *bound4
	p        *int8
	codes    *byte
	rowBytes int64
	terms    *terms4
	est, err *float64
	// list, lest and lerr receive the rows listed, their estimates and
	// their bounds.
	list       *int32
	lest, lerr *float64
	n, base    int64
	floor      float64
	// maxLow is the largest lower bound before the rows, and after them
	// on return; nlist is the number of rows listed.
	maxLow float64
	nlist  int64
	// gfni has scan4AVX512 take the high nibbles with GF2P8AFFINEQB (the
	// CPU has GFNI) instead of a shift and a mask.
	gfni bool
}

// bounds4Go writes est[j] and err[j] for the rows whose 4-bit dot products
// are dots and terms are terms, and returns the largest est[j]-err[j]
// (-Inf for none): scan4AVX2's reference. Each product is converted
// explicitly so that no compiler fuses it with the sum.
func bounds4Go(c *bound4, dots []int32, terms []terms4, est, err []float64) float64 {
	maxLow := math.Inf(-1)
	k := len(dots)
	terms, est, err = terms[:k], est[:k], err[:k]
	t, qnorm, ql1, qerr, eps, off := c.t, c.qnorm, c.ql1, c.qerr, c.eps, c.off
	for j, dot := range dots {
		tm := &terms[j]
		x := float64(t*bf16(tm.scale)) * float64(dot-off)
		// qnorm and ql1 are positive (the query is not zero): a row that
		// is not finite (res and inf +Inf, norm and scale 0) gets +Inf.
		a, b := float64(qnorm*bf16(tm.res)), float64(ql1*bf16(tm.inf))
		if b < a {
			a = b
		}
		bound := a + float64(qerr*bf16(tm.norm)) + eps
		est[j], err[j] = x, bound
		if x-bound > maxLow {
			maxLow = x - bound
		}
	}
	return maxLow
}
