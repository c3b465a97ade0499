package vec

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// dotI8 computes out[r] = sum_j p[j]*codes[r*dim+j] exactly, with AVX2 when
// the CPU has it, else SSE2. dim must be a positive multiple of 16, len(p)
// >= dim and len(codes) >= len(out)*dim (the caller checks), and no sum may
// overflow an int32. With AVX-512 (useAVX512), dotI8AVX512.
func dotI8(p []int16, codes []int8, dim int, out []int32) {
	if useAVX512 {
		dotI8AVX512(p, codes, dim, out)
		return
	}
	if useAVX2 {
		dotI8AVX2(p, codes, dim, out)
		return
	}
	dotI8SSE2(p, codes, dim, out)
}

var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func dotI8SSE2(p []int16, codes []int8, dim int, out []int32)

//go:noescape
func dotI8AVX2(p []int16, codes []int8, dim int, out []int32)

// dotU4 computes out[r] = sum_j p[j]*u_j over the codes u (0 to 15) of row
// r of a 4-bit copy (see quant4), with AVX2 when the CPU has it, else in
// Go. rowBytes must be a positive multiple of 32 and len(p) >= 2*rowBytes.
func dotU4(p []int8, codes []byte, rowBytes int, out []int32) {
	if useAVX2 {
		dotU4AVX2(p, codes, rowBytes, out)
		return
	}
	dotU4Go(p, codes, rowBytes, out)
}

//go:noescape
func dotU4AVX2(p []int8, codes []byte, rowBytes int, out []int32)

// block writes the 4-bit estimates and bounds of rows b to e-1 (at most
// blockRows; or their sums alone, into est, when err is nil), lists in l
// the rows whose est+err reaches floor, in order, and returns the largest
// of maxLow and their lower bounds: with AVX-512 eight rows at a time
// (scan4AVX512), then with AVX2 four at a time (scan4AVX2: the dot
// products, bounds and list in registers in one pass), the rest as
// blockGo. The values are blockGo's, bit for bit.
func (sc *scan4) block(q4 *quant4, est, err []float64, b, e int, floor, maxLow float64, l *list4) float64 {
	if q4.rowBytes == 0 {
		return sc.blockGo(q4, est, err, b, e, floor, maxLow, l)
	}
	if k8 := (e - b) &^ 7; useAVX512 && k8 > 0 && q4.rowBytes <= maxRowBytes512 {
		if len(sc.pz) != len(sc.p) {
			sc.pz = zmmQuery(sc.p)
		}
		maxLow = sc.fused(true, &sc.pz[0], q4, est, err, b, b+k8, floor, maxLow, l)
		b += k8
	}
	if k4 := (e - b) &^ 3; useAVX2 && k4 > 0 {
		maxLow = sc.fused(false, &sc.p[0], q4, est, err, b, b+k4, floor, maxLow, l)
		b += k4
	}
	if b < e {
		return sc.blockGo(q4, est, err, b, e, floor, maxLow, l)
	}
	return maxLow
}

// fused runs scan4AVX512 (avx512) or scan4AVX2, with p the query bytes in
// its order, on rows b to m-1, m-b a multiple of its rows at a time. (The
// kernels are called directly: through a func value, the arguments would
// escape to the heap.)
func (sc *scan4) fused(avx512 bool, p *int8, q4 *quant4, est, err []float64, b, m int, floor, maxLow float64, l *list4) float64 {
	k := m - b
	// Every array holds the k rows (the assembly reads them).
	_, _ = q4.terms[m-1], est[m-1]
	var errp *float64
	if err != nil {
		_ = err[m-1]
		errp = &err[b]
	}
	_ = q4.codes[m*q4.rowBytes-1]
	_ = sc.p[2*q4.rowBytes-1]
	l.rows, l.est, l.err = slices.Grow(l.rows, k), slices.Grow(l.est, k), slices.Grow(l.err, k)
	n0 := len(l.rows)
	a := scan4Args{
		c: &sc.c, p: p, codes: &q4.codes[b*q4.rowBytes], rowBytes: int64(q4.rowBytes), terms: &q4.terms[b],
		est: &est[b], err: errp, list: unsafe.SliceData(l.rows[n0 : n0+k]),
		lest: unsafe.SliceData(l.est[n0 : n0+k]), lerr: unsafe.SliceData(l.err[n0 : n0+k]),
		n: int64(k), base: int64(b), floor: floor, maxLow: maxLow, gfni: avx512 && useGFNI,
	}
	if avx512 {
		scan4AVX512(&a)
	} else {
		scan4AVX2(&a)
	}
	n := n0 + int(a.nlist)
	l.rows, l.est, l.err = l.rows[:n], l.est[:n], l.err[:n]
	return a.maxLow
}

// scan4AVX2 is blockGo on a.n rows, four at a time, with the dot
// products of dotU4AVX2's four-row loop and the operations of bounds4Go
// (the same values); the CPU must have AVX2.
//
//go:noescape
func scan4AVX2(a *scan4Args)
