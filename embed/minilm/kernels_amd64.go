//go:build amd64 && !purego

package minilm

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels; tests flip it to compare both.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func gemm6x16AVX2(k int, a *float32, lda int, b *float32, bias *float32, c *float32, ldc int)

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
	gemm6x16AVX2(k, &a[0], lda, &b[0], &bias[0], &c[0], ldc)
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
