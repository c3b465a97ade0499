//go:build !amd64 || purego

package minilm

// useAVX2 is always false without the amd64 assembly.
var useAVX2 = false

// gemm6x16 computes c[r*ldc+j] = bias[j] + Σ_p a[r*lda+p]·b[p*16+j] for
// r < 6, j < 16.
func gemm6x16(k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	gemm6x16Go(k, a, lda, b, bias, c, ldc)
}

// dot returns Σ a[i]·b[i] over len(a).
func dot(a, b []float32) float32 { return dotGo(a, b) }

// axpy computes y[i] += alpha·x[i] over len(x).
func axpy(alpha float32, x, y []float32) { axpyGo(alpha, x, y) }
