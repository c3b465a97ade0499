package rank

import (
	"golang.org/x/sys/cpu"

	"github.com/higmem/higmem/internal/vec"
)

// eachKernel calls fn with each CPU-feature set of package vec's scans
// (vec.EachKernel) and this package's kernels: the Go loops with vec's
// Go and SSE2 sets, AVX2 with the others.
func eachKernel(fn func(name string)) {
	defer func(old bool) { useAVX2 = old }(useAVX2)
	vec.EachKernel(func(name string) {
		useAVX2 = cpu.X86.HasAVX2 && name != "go" && name != "sse2"
		fn(name)
	})
}

// eachRankKernel calls fn with this package's kernels, the Go loops and
// AVX2 (where the CPU has it).
func eachRankKernel(fn func(name string)) {
	defer func(old bool) { useAVX2 = old }(useAVX2)
	useAVX2 = false
	fn("go")
	if cpu.X86.HasAVX2 {
		useAVX2 = true
		fn("avx2")
	}
}
