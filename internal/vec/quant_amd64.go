package vec

import "golang.org/x/sys/cpu"

// dotI8 computes out[r] = sum_j p[j]*codes[r*dim+j] exactly: with AVX-512
// VNNI when the CPU has it and dim is a multiple of 32 (32 codes an
// instruction, multiplied and accumulated at once), else with AVX2 when the
// CPU has it, else SSE2. All three give the same sums (integer arithmetic).
// dim must be a positive multiple of 16, len(p) >= dim and len(codes) >=
// len(out)*dim (the caller checks), and no sum may overflow an int32.
func dotI8(p []int16, codes []int8, dim int, out []int32) {
	if useVNNI && dim%32 == 0 {
		dotI8VNNI(p, codes, dim, out)
		return
	}
	if useAVX2 {
		dotI8AVX2(p, codes, dim, out)
		return
	}
	dotI8SSE2(p, codes, dim, out)
}

var useAVX2 = cpu.X86.HasAVX2

// useVNNI: the kernel needs AVX512BW (VPMOVSXBW on 512 bits) and
// AVX512_VNNI (VPDPWSSD); x/sys/cpu reports them only when the OS saves
// the 512-bit registers.
var useVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI

//go:noescape
func dotI8SSE2(p []int16, codes []int8, dim int, out []int32)

//go:noescape
func dotI8AVX2(p []int16, codes []int8, dim int, out []int32)

//go:noescape
func dotI8VNNI(p []int16, codes []int8, dim int, out []int32)
