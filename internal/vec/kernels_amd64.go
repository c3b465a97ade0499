package vec

import "golang.org/x/sys/cpu"

// EachKernel calls fn once for each set of CPU-feature kernels this
// machine can run (the Go loops and SSE2 only, AVX2, AVX-512, AVX-512 with
// GFNI), with the package's scans switched to that set during the call
// and restored after, so that the tests of other packages compare every
// variant; name says which. The results of every set are the same, bit
// for bit. For tests only: it must not run beside any other use of the
// package.
func EachKernel(fn func(name string)) {
	defer func(a2, a512, gf, at bool) { useAVX2, useAVX512, useGFNI, useDotsAt = a2, a512, gf, at }(useAVX2, useAVX512, useGFNI, useDotsAt)
	type set struct {
		name                 string
		a2, a512, gf, at, ok bool
	}
	has512 := cpu.X86.HasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
	for _, s := range []set{
		{"go", false, false, false, false, true},
		{"sse2", false, false, false, true, true},
		{"avx2", true, false, false, true, cpu.X86.HasAVX2},
		{"avx512", true, true, false, true, has512},
		{"avx512+gfni", true, true, true, true, has512 && cpu.X86.HasAVX512GFNI},
	} {
		if s.ok {
			useAVX2, useAVX512, useGFNI, useDotsAt = s.a2, s.a512, s.gf, s.at
			fn(s.name)
		}
	}
}
