package vec

import "golang.org/x/sys/cpu"

// useAVX512 reports whether the AVX-512 kernels (dotI8AVX512,
// scan4AVX512) run in place of the AVX2 ones; their results are the same,
// bit for bit. A variable so that the tests can compare both paths.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
	cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// useGFNI reports whether scan4AVX512 takes the high nibbles with
// GF2P8AFFINEQB (one instruction in place of two); the results are the
// same. A variable so that the tests can compare both paths.
var useGFNI = useAVX512 && cpu.X86.HasAVX512GFNI

// maxRowBytes512 is the longest row scan4AVX512 takes: its doubleword
// lanes hold sums of 4*rowBytes/64 products of at most 15*128.
const maxRowBytes512 = 1 << 16

//go:noescape
func dotI8AVX512(p []int16, codes []int8, dim int, out []int32)

//go:noescape
func scan4AVX512(a *scan4Args)

// dotI8RowsAVX512 is dotI8AVX512 on the rows rows of codes, each
// prefetched ahead rows ahead with its terms (terms[rows[k]], 16 bytes);
// len(out) >= len(rows) > 0, ahead > 0, and every row in range of codes
// and of terms (the caller checks).
//
//go:noescape
func dotI8RowsAVX512(p []int16, codes []int8, dim int, rows, out []int32, terms *termsI8, ahead int)

// zmmQuery returns the query bytes p of a 4-bit scan (2*rowBytes, rowBytes
// a multiple of 32) in the order scan4AVX512 reads them: for each 128
// codes (64 bytes of a row: two blocks of 32 bytes, each holding codes k
// and k+32 of its 64 in byte k), the 64 bytes of the low nibbles' codes
// (0-31 and 64-95), then the 64 of the high nibbles' (32-63, 96-127); a
// last 64 codes as they are (the low nibbles' 32, then the high ones').
func zmmQuery(p []int8) []int8 {
	z := make([]int8, len(p))
	j := 0
	for ; j+128 <= len(p); j += 128 {
		copy(z[j:j+32], p[j:j+32])
		copy(z[j+32:j+64], p[j+64:j+96])
		copy(z[j+64:j+96], p[j+32:j+64])
		copy(z[j+96:j+128], p[j+96:j+128])
	}
	copy(z[j:], p[j:])
	return z
}

// rescanAVX512 is rescanGo on a.n > 0 rows in one pass (see rescanArgs):
// dotI8RowsAVX512's dot products, and the estimates, bounds and stores of
// rescanGo's loop, row by row, the same values.
//
//go:noescape
func rescanAVX512(a *rescanArgs)

// pickAVX512 is list4.pick on the first n entries of a list, n a positive
// multiple of 8, with sel and at of at least n entries; it returns the
// number of rows kept.
//
//go:noescape
func pickAVX512(rows *int32, est, err *float64, n int, floor float64, sel, at *int32) int
