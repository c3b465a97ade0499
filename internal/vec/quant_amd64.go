package vec

import "golang.org/x/sys/cpu"

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

// bounds4 is bounds4Go, four rows at a time with AVX2 when the CPU has
// it (the same operations in the same order: the same values unless the
// compiler fuses Go's multiplications and additions).
func bounds4(c *bound4, dots []int32, scale, res, inf, norm, round []float32, est, err []float64) float64 {
	k := len(dots)
	if !useAVX2 || k < 4 {
		return bounds4Go(c, dots, scale, res, inf, norm, round, est, err)
	}
	_, _, _, _, _, _, _ = scale[k-1], res[k-1], inf[k-1], norm[k-1], round[k-1], est[k-1], err[k-1]
	k4 := k &^ 3
	maxLow := bounds4AVX2(c, &dots[0], &scale[0], &res[0], &inf[0], &norm[0], &round[0], &est[0], &err[0], k4)
	if k4 < k {
		maxLow = max(maxLow, bounds4Go(c, dots[k4:], scale[k4:], res[k4:], inf[k4:], norm[k4:], round[k4:], est[k4:], err[k4:]))
	}
	return maxLow
}

// bounds4AVX2 is bounds4Go on the first n rows (n a positive multiple of
// 4); the CPU must have AVX2.
//
//go:noescape
func bounds4AVX2(c *bound4, dots *int32, scale, res, inf, norm, round *float32, est, err *float64, n int) float64
