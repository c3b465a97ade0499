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
