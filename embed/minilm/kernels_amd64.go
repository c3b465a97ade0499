//go:build amd64 && !purego

package minilm

import (
	"math"

	"golang.org/x/sys/cpu"
)

// useAVX2, useAVX512 and useVNNI select the assembly kernels; tests flip
// them to compare every variant. useVNNI runs the int16 layers with
// AVX-512 VNNI (q16gemmBlocksVNNI).
var (
	useAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F
	useVNNI   = useAVX512 && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
)

// int16Faster reports whether the int16 linear layers run faster than
// float32 here: with the VNNI kernel, or with the AVX2 one where float32
// has no AVX-512 kernel (BENCHMARKS.md: on an AVX-512 CPU the int16 AVX2
// kernel is no faster than float32's AVX-512 one).
func int16Faster() bool { return useVNNI || useAVX2 && !useAVX512 }

//go:noescape
func gemm6x32AVX512(k int, a *float32, lda int, b *float32, bias *float32, c *float32, ldc int)

// gemm6x32 computes two adjacent panels at once (32 columns; b holds panel
// j then panel j+1) when AVX-512 is available, and reports false otherwise.
func gemm6x32(k int, a []float32, lda int, b, bias, c []float32, ldc int) bool {
	if !useAVX512 || k == 0 {
		return false
	}
	_ = a[5*lda+k-1]
	_ = b[2*k*panelWidth-1]
	_ = bias[2*panelWidth-1]
	_ = c[5*ldc+2*panelWidth-1]
	gemm6x32AVX512(k, &a[0], lda, &b[0], &bias[0], &c[0], ldc)
	return true
}

//go:noescape
func geluAVX2(x *float32, n int)

//go:noescape
func geluAVX512(x *float32, n int)

// gelu applies the exact (erf) GELU in place: x·½(1+erf(x/√2)). The
// AVX-512 and AVX2 kernels give the same bits.
func gelu(x []float32) {
	if n := len(x) &^ 15; useAVX512 && n > 0 {
		geluAVX512(&x[0], n)
		x = x[n:]
	}
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		geluGo(x)
		return
	}
	geluAVX2(&x[0], n)
	geluGo(x[n:])
}

//go:noescape
func packKTAVX512(dst, src *float32, stride, n, dh int, scale float32)

// packKT packs n rows of dh values (row j at src[j*stride:]) times scale
// as Kᵀ in panels of 16 rows (see packKTGo); the same values in every
// variant.
func packKT(dst, src []float32, stride, n, dh int, scale float32) {
	if !useAVX512 || n == 0 || dh == 0 || stride*panelWidth > math.MaxInt32/4 {
		packKTGo(dst, src, stride, n, dh, scale)
		return
	}
	_ = src[(n-1)*stride+dh-1]
	_ = dst[roundUp(n, panelWidth)*dh-1]
	packKTAVX512(&dst[0], &src[0], stride, n, dh, scale)
}

//go:noescape
func softmaxAVX512(x *float32, n int)

// softmaxFast runs softmax on x with AVX-512 (masked tails, one call), and
// reports false where that is not available or x is shorter than 16 (left
// to the portable exp32, which flushes to 0 below e^-87 as the vector
// kernels do not).
func softmaxFast(x []float32) bool {
	if !useAVX512 || len(x) < 16 {
		return false
	}
	softmaxAVX512(&x[0], len(x))
	return true
}

//go:noescape
func expSubAVX2(x *float32, n int, m float32) float32

// expSub sets x[i] = e^(x[i]-m) and returns their sum.
func expSub(x []float32, m float32) float32 {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return expSubGo(x, m)
	}
	return expSubAVX2(&x[0], n, m) + expSubGo(x[n:], m)
}

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

// gemm6x16 computes c[r*ldc+j] = bias[j] + Σ_p a[r*lda+p]·b[p*16+j] for
// r < 6, j < 16.
func gemm6x16(k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	if !useAVX2 || k == 0 {
		gemm6x16Go(k, a, lda, b, bias, c, ldc)
		return
	}
	_ = a[5*lda+k-1]
	_ = b[k*panelWidth-1]
	_ = bias[panelWidth-1]
	_ = c[5*ldc+panelWidth-1]
	gemmBlocksAVX2(1, k, &a[0], lda, &b[0], &bias[0], &c[0], ldc)
}

//go:noescape
func gemmBlocksAVX2(nb, k int, a *float32, lda int, b, bias, c *float32, ldc int)

// gemmBlocks runs gemm6x16 on nb consecutive blocks of kernelRows rows (of
// a and c) in one call; the results are gemm6x16's, bit for bit.
func gemmBlocks(nb, k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	if !useAVX2 || k == 0 || nb == 0 {
		gemmBlocksGo(nb, k, a, lda, b, bias, c, ldc)
		return
	}
	last := (nb - 1) * kernelRows
	_ = a[(last+5)*lda+k-1]
	_ = b[k*panelWidth-1]
	_ = bias[panelWidth-1]
	_ = c[(last+5)*ldc+panelWidth-1]
	gemmBlocksAVX2(nb, k, &a[0], lda, &b[0], &bias[0], &c[0], ldc)
}

// dot returns Σ a[i]·b[i] over len(a); b must be at least as long.
func dot(a, b []float32) float32 {
	n := len(a) &^ 7
	if !useAVX2 || n == 0 {
		return dotGo(a, b)
	}
	_ = b[len(a)-1]
	s := dotAVX2(&a[0], &b[0], n)
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}

// axpy computes y[i] += alpha·x[i] over len(x); y must be at least as long.
func axpy(alpha float32, x, y []float32) {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		axpyGo(alpha, x, y)
		return
	}
	_ = y[len(x)-1]
	axpyAVX2(alpha, &x[0], &y[0], n)
	for i := n; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

//go:noescape
func qgemmBlocksAVX2(nb, kg int, a *uint8, lda int, b *int8, c *float32, ldc int, rs, rm, cs, csum, bias *float32)

//go:noescape
func quantRowAVX2(x *float32, n int, dst *uint8, mn, inv float32)

//go:noescape
func minMaxAVX2(x *float32, n int) (mn, mx float32)

// qgemm4x16 is the int8 micro-kernel (see qgemm4x16Go).
func qgemm4x16(kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	if !useAVX2 || kg == 0 {
		qgemm4x16Go(kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
		return
	}
	_ = a[3*lda+4*kg-1]
	_ = b[kg*64-1]
	_ = c[3*ldc+panelWidth-1]
	_, _ = rs[3], rm[3]
	_, _, _ = cs[panelWidth-1], csum[panelWidth-1], bias[panelWidth-1]
	qgemmBlocksAVX2(1, kg, &a[0], lda, &b[0], &c[0], ldc, &rs[0], &rm[0], &cs[0], &csum[0], &bias[0])
}

// qgemmBlocks runs qgemm4x16 on nb consecutive blocks of qRows rows (of a,
// rs, rm and c) in one call; the results are qgemm4x16's, bit for bit.
func qgemmBlocks(nb, kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	if !useAVX2 || kg == 0 || nb == 0 {
		qgemmBlocksGo(nb, kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
		return
	}
	last := (nb - 1) * qRows
	_ = a[(last+3)*lda+4*kg-1]
	_ = b[kg*64-1]
	_ = c[(last+3)*ldc+panelWidth-1]
	_, _ = rs[last+3], rm[last+3]
	_, _, _ = cs[panelWidth-1], csum[panelWidth-1], bias[panelWidth-1]
	qgemmBlocksAVX2(nb, kg, &a[0], lda, &b[0], &c[0], ldc, &rs[0], &rm[0], &cs[0], &csum[0], &bias[0])
}

//go:noescape
func q16gemmBlocksAVX2(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32)

//go:noescape
func quantRow16AVX2(x *float32, n int, dst *int16, mn, inv float32)

// q16gemmBlocks runs the int16 micro-kernel (see q16gemm4x16Go) on nb
// consecutive blocks of qRows rows (of a, rs, rm and c) in one call.
func q16gemmBlocks(nb, kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	if !useAVX2 || kg == 0 || nb == 0 {
		q16gemmBlocksGo(nb, kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
		return
	}
	last := (nb - 1) * qRows
	_ = a[(last+3)*lda+2*kg-1]
	_ = b[kg*32-1]
	_ = c[(last+3)*ldc+panelWidth-1]
	_, _ = rs[last+3], rm[last+3]
	_, _, _ = cs[panelWidth-1], csum[panelWidth-1], bias[panelWidth-1]
	q16gemmBlocksAVX2(nb, kg, &a[0], lda, &b[0], &c[0], ldc, &rs[0], &rm[0], &cs[0], &csum[0], &bias[0])
}

//go:noescape
func q16gemm8x48VNNI(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32, pf *int16)

//go:noescape
func q16gemm4x48VNNI(nb, kg int, a *int16, lda int, b *int16, c *float32, ldc int, rs, rm, cs, csum, bias *float32, pf *int16)

// q16gemmBlocks3 runs the int16 micro-kernel on nb blocks of qRows rows and
// three adjacent packed panels at once (b holds panel j, then j+1 kg*32
// values later, then j+2; c, cs, csum and bias cover 48 columns) with
// AVX-512 VNNI, and reports false where that is not available. The results
// are q16gemmBlocks' on each panel, bit for bit. It prefetches next (the
// weights used after b, may be empty) into L2 as it goes.
func q16gemmBlocks3(nb, kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32, next []int16) bool {
	if !useVNNI || kg == 0 || nb == 0 {
		return false
	}
	pf := &b[0]
	if len(next) > 0 {
		pf = &next[0]
	}
	last := (nb - 1) * qRows
	_ = a[(last+3)*lda+2*kg-1]
	_ = b[3*kg*32-1]
	_ = c[(last+3)*ldc+3*panelWidth-1]
	_, _ = rs[last+3], rm[last+3]
	_, _, _ = cs[3*panelWidth-1], csum[3*panelWidth-1], bias[3*panelWidth-1]
	if nb8 := nb / 2; nb8 > 0 {
		q16gemm8x48VNNI(nb8, kg, &a[0], lda, &b[0], &c[0], ldc, &rs[0], &rm[0], &cs[0], &csum[0], &bias[0], pf)
		if i := nb8 * kg * 32; i < len(next) {
			pf = &next[i] // where the 8-row kernel's prefetches stopped
		}
	}
	if nb%2 == 1 {
		q16gemm4x48VNNI(1, kg, &a[last*lda], lda, &b[0], &c[last*ldc], ldc, &rs[last], &rm[last], &cs[0], &csum[0], &bias[0], pf)
	}
	return true
}

//go:noescape
func quantRow16AVX512(x *float32, n int, dst *int16, mn, inv float32)

// quantRow16 sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, q16ActMax], 0 for a NaN. Every variant gives the same values.
func quantRow16(x []float32, dst []int16, mn, inv float32) {
	if n := len(x) &^ 31; useAVX512 && n > 0 {
		_ = dst[n-1]
		quantRow16AVX512(&x[0], n, &dst[0], mn, inv)
		x, dst = x[n:], dst[n:]
	}
	n := len(x) &^ 15
	if !useAVX2 || n == 0 {
		quantRow16Go(x, dst, mn, inv)
		return
	}
	_ = dst[len(x)-1]
	quantRow16AVX2(&x[0], n, &dst[0], mn, inv)
	quantRow16Go(x[n:], dst[n:], mn, inv)
}

// quantRow sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, 255].
func quantRow(x []float32, dst []uint8, mn, inv float32) {
	n := len(x) &^ 31
	if !useAVX2 || n == 0 {
		quantRowGo(x, dst, mn, inv)
		return
	}
	_ = dst[len(x)-1]
	quantRowAVX2(&x[0], n, &dst[0], mn, inv)
	quantRowGo(x[n:], dst[n:], mn, inv)
}

//go:noescape
func minMaxAVX512(x *float32, n int) (mn, mx float32)

// minMax returns the least and greatest of x (not empty).
func minMax(x []float32) (mn, mx float32) {
	if n := len(x) &^ 15; useAVX512 && n > 0 {
		mn, mx = minMaxAVX512(&x[0], n)
		if n < len(x) {
			m2, x2 := minMax(x[n:])
			mn, mx = min(mn, m2), max(mx, x2)
		}
		return mn, mx
	}
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return minMaxGo(x)
	}
	mn, mx = minMaxAVX2(&x[0], n)
	if n < len(x) {
		m2, x2 := minMaxGo(x[n:])
		mn, mx = min(mn, m2), max(mx, x2)
	}
	return mn, mx
}

//go:noescape
func mulMinMaxAVX2(dst, x, s *float32, n int) (mn, mx float32)

// mulMinMax sets dst[i] = x[i]·s[i] and returns the least and greatest
// (x not empty; dst and s at least as long).
func mulMinMax(dst, x, s []float32) (mn, mx float32) {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return mulMinMaxGo(dst, x, s)
	}
	_, _ = dst[len(x)-1], s[len(x)-1]
	mn, mx = mulMinMaxAVX2(&dst[0], &x[0], &s[0], n)
	if n < len(x) {
		m2, x2 := mulMinMaxGo(dst[n:], x[n:], s[n:])
		mn, mx = min(mn, m2), max(mx, x2)
	}
	return mn, mx
}

//go:noescape
func addSumAVX2(dst, src *float32, n int) float32

//go:noescape
func sumSqDevAVX2(x *float32, n int, mean float32) float32

//go:noescape
func normAffineAVX2(dst, x *float32, n int, mean, inv float32, gamma, bias *float32)

//go:noescape
func maxAVX2(x *float32, n int) float32

//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// addSum sets dst[i] += src[i] and returns Σ dst[i]; src must be at least
// as long as dst.
func addSum(dst, src []float32) float32 {
	n := len(dst) &^ 7
	if !useAVX2 || n == 0 {
		return addSumGo(dst, src)
	}
	_ = src[len(dst)-1]
	return addSumAVX2(&dst[0], &src[0], n) + addSumGo(dst[n:], src[n:])
}

// sumSqDev returns Σ (x[i]-mean)².
func sumSqDev(x []float32, mean float32) float32 {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return sumSqDevGo(x, mean)
	}
	return sumSqDevAVX2(&x[0], n, mean) + sumSqDevGo(x[n:], mean)
}

// normAffine sets dst[i] = (x[i]-mean)·inv·g[i] + b[i]; x, g and b must be
// at least as long as dst.
func normAffine(dst, x []float32, mean, inv float32, g, b []float32) {
	n := len(dst) &^ 7
	if !useAVX2 || n == 0 {
		normAffineGo(dst, x, mean, inv, g, b)
		return
	}
	_, _, _ = x[len(dst)-1], g[len(dst)-1], b[len(dst)-1]
	normAffineAVX2(&dst[0], &x[0], n, mean, inv, &g[0], &b[0])
	normAffineGo(dst[n:], x[n:], mean, inv, g[n:], b[n:])
}

// maxf returns the greatest of x (not empty).
func maxf(x []float32) float32 {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return maxGo(x)
	}
	m := maxAVX2(&x[0], n)
	if n < len(x) {
		m = max(m, maxGo(x[n:]))
	}
	return m
}

// scale sets x[i] *= s.
func scale(x []float32, s float32) {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		scaleGo(x, s)
		return
	}
	scaleAVX2(&x[0], n, s)
	scaleGo(x[n:], s)
}
