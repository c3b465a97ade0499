package vec

import (
	"math/rand/v2"
	"testing"
)

// TestDotI8Kernels checks both amd64 kernels (SSE2, and AVX2 when the CPU
// has it) against plain Go.
func TestDotI8Kernels(t *testing.T) {
	kernels := map[string]func([]int16, []int8, int, []int32){"sse2": dotI8SSE2}
	if useAVX2 {
		kernels["avx2"] = dotI8AVX2
	} else {
		t.Log("no AVX2 on this CPU: only SSE2 tested")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for name, kernel := range kernels {
		for _, dim := range []int{16, 32, 48, 256, 384} {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13} {
				p := make([]int16, dim)
				for j := range p {
					p[j] = int16(r.IntN(65535) - 32767)
				}
				codes := make([]int8, n*dim)
				for j := range codes {
					codes[j] = int8(r.IntN(255) - 127)
				}
				out := make([]int32, n)
				kernel(p, codes, dim, out)
				for i := range n {
					var want int64
					for j := range dim {
						want += int64(p[j]) * int64(codes[i*dim+j])
					}
					if int64(out[i]) != want {
						t.Fatalf("%s dim %d row %d: %d, want %d", name, dim, i, out[i], want)
					}
				}
			}
		}
	}
}
