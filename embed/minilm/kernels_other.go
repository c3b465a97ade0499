//go:build !amd64 || purego

package minilm

// useAVX2, useAVX512 and useVNNI are always false without the amd64
// assembly.
var useAVX2, useAVX512, useVNNI = false, false, false

// int16Faster reports false: without assembly the int16 layers run in
// portable Go, slower than float32.
func int16Faster() bool { return false }

// q16gemmBlocks3 reports false: there is no three-panel int16 kernel here.
func q16gemmBlocks3(nb, kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32, next []int16) bool {
	return false
}

// gemm6x32 reports false: there is no two-panel kernel here.
func gemm6x32(k int, a []float32, lda int, b, bias, c []float32, ldc int) bool { return false }

// gemm6x16 computes c[r*ldc+j] = bias[j] + Σ_p a[r*lda+p]·b[p*16+j] for
// r < 6, j < 16.
func gemm6x16(k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	gemm6x16Go(k, a, lda, b, bias, c, ldc)
}

// dot returns Σ a[i]·b[i] over len(a).
func dot(a, b []float32) float32 { return dotGo(a, b) }

// axpy computes y[i] += alpha·x[i] over len(x).
func axpy(alpha float32, x, y []float32) { axpyGo(alpha, x, y) }

// gelu applies the exact (erf) GELU in place: x·½(1+erf(x/√2)).
func gelu(x []float32) { geluGo(x) }

// packKT packs n rows of dh values times scale as Kᵀ (see packKTGo).
func packKT(dst, src []float32, stride, n, dh int, scale float32) {
	packKTGo(dst, src, stride, n, dh, scale)
}

// softmaxFast reports false: there is no vector softmax here.
func softmaxFast(x []float32) bool { return false }

// expSub sets x[i] = e^(x[i]-m) and returns their sum.
func expSub(x []float32, m float32) float32 { return expSubGo(x, m) }

// qgemm4x16 is the int8 micro-kernel (see qgemm4x16Go).
func qgemm4x16(kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	qgemm4x16Go(kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
}

// quantRow sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, 255].
func quantRow(x []float32, dst []uint8, mn, inv float32) { quantRowGo(x, dst, mn, inv) }

// minMax returns the least and greatest of x (not empty).
func minMax(x []float32) (mn, mx float32) { return minMaxGo(x) }

// addSum sets dst[i] += src[i] and returns Σ dst[i].
func addSum(dst, src []float32) float32 { return addSumGo(dst, src) }

// sumSqDev returns Σ (x[i]-mean)².
func sumSqDev(x []float32, mean float32) float32 { return sumSqDevGo(x, mean) }

// normAffine sets dst[i] = (x[i]-mean)·inv·g[i] + b[i].
func normAffine(dst, x []float32, mean, inv float32, g, b []float32) {
	normAffineGo(dst, x, mean, inv, g, b)
}

// maxf returns the greatest of x (not empty).
func maxf(x []float32) float32 { return maxGo(x) }

// scale sets x[i] *= s.
func scale(x []float32, s float32) { scaleGo(x, s) }

// qgemmBlocks runs qgemm4x16 on nb consecutive blocks of qRows rows.
func qgemmBlocks(nb, kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	qgemmBlocksGo(nb, kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
}

// gemmBlocks runs gemm6x16 on nb consecutive blocks of kernelRows rows.
func gemmBlocks(nb, k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	gemmBlocksGo(nb, k, a, lda, b, bias, c, ldc)
}

// mulMinMax sets dst[i] = x[i]·s[i] and returns the least and greatest
// (x not empty; dst and s at least as long).
func mulMinMax(dst, x, s []float32) (mn, mx float32) { return mulMinMaxGo(dst, x, s) }

// q16gemmBlocks runs the int16 micro-kernel on nb consecutive blocks of
// qRows rows (see q16gemm4x16Go).
func q16gemmBlocks(nb, kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	q16gemmBlocksGo(nb, kg, a, lda, b, c, ldc, rs, rm, cs, csum, bias)
}

// quantRow16 sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, q16ActMax].
func quantRow16(x []float32, dst []int16, mn, inv float32) { quantRow16Go(x, dst, mn, inv) }
