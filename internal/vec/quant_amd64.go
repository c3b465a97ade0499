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
