package vec

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// dotI8 computes out[r] = sum_j p[j]*codes[r*dim+j] exactly, with AVX2 when
// the CPU has it, else SSE2. dim must be a positive multiple of 16, len(p)
// >= dim and len(codes) >= len(out)*dim (the caller checks), and no sum may
// overflow an int32.
func dotI8(p []int16, codes []int8, dim int, out []int32) {
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

// listSum appends to dst base+j for each j with a[j]+b[j] >= floor, in
// order (len(b) >= len(a)), and returns it: four at a time with AVX2 when
// the CPU has it.
func listSum(a, b []float64, floor float64, base int, dst []int32) []int32 {
	q := len(a) &^ 3
	if !useAVX2 || q == 0 {
		return listSumGo(a, b, floor, base, dst)
	}
	_ = b[q-1]
	dst = slices.Grow(dst, q)
	n0 := len(dst)
	k := listSum4AVX2(&a[0], &b[0], q, floor, unsafe.SliceData(dst[n0:n0+q]))
	dst = dst[:n0+k]
	for j := n0; j < len(dst); j++ {
		dst[j] += int32(base) // offsets from a[0]
	}
	return listSumGo(a[q:], b[q:], floor, base+q, dst)
}

// listSum4AVX2 writes to dst the offsets j < n with a[j]+b[j] >= floor,
// in order, and returns how many; n is a positive multiple of 4 and dst
// has room for n. The CPU must have AVX2.
//
//go:noescape
func listSum4AVX2(a, b *float64, n int, floor float64, dst *int32) int

// block writes the 4-bit estimates and bounds of rows b to e-1 (at most
// blockRows), appends to cands the rows whose est+err reaches floor, in
// order, and returns the largest of maxLow and their lower bounds: with
// AVX2 in one pass (scan4AVX2: the dot products, bounds and list of four
// rows at a time in registers), the rest as blockGo. The values are
// blockGo's, bit for bit.
func (sc *scan4) block(q4 *quant4, est, err []float64, b, e int, floor, maxLow float64, cands []int32) (float64, []int32) {
	k4 := (e - b) &^ 3
	if !useAVX2 || k4 == 0 || q4.rowBytes == 0 {
		return sc.blockGo(q4, est, err, b, e, floor, maxLow, cands)
	}
	// Every array holds the k4 rows (the assembly reads them).
	m := b + k4
	_, _, _ = q4.terms[m-1], est[m-1], err[m-1]
	_ = q4.codes[m*q4.rowBytes-1]
	_ = sc.p[2*q4.rowBytes-1]
	cands = slices.Grow(cands, k4)
	n0 := len(cands)
	a := scan4Args{
		c: &sc.c, p: &sc.p[0], codes: &q4.codes[b*q4.rowBytes], rowBytes: int64(q4.rowBytes), terms: &q4.terms[b],
		est: &est[b], err: &err[b], list: unsafe.SliceData(cands[n0 : n0+k4]),
		n: int64(k4), base: int64(b), floor: floor, maxLow: maxLow,
	}
	scan4AVX2(&a)
	cands = cands[:n0+int(a.nlist)]
	if m < e {
		return sc.blockGo(q4, est, err, m, e, floor, a.maxLow, cands)
	}
	return a.maxLow, cands
}

// scan4AVX2 is blockGo on a.n rows, four at a time, with the dot
// products of dotU4AVX2's four-row loop and the operations of bounds4Go
// and listSum4AVX2 (the same values); the CPU must have AVX2.
//
//go:noescape
func scan4AVX2(a *scan4Args)
