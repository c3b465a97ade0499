package minilm

import "math"

// panelWidth is the number of output columns a packed weight panel holds
// and the micro-kernel computes at once.
const panelWidth = 16

// kernelRows is the number of input rows the micro-kernel computes at once.
const kernelRows = 6

// linear is a dense layer y = x·Wᵀ + b with W stored the PyTorch way (out ×
// in) in the checkpoint. At load time W is transposed and packed into
// panels of panelWidth output columns: panel j holds Wᵀ[:, 16j:16j+16] as
// in×16 contiguous floats, so the micro-kernel streams it linearly.
type linear struct {
	in, out int
	panels  int       // ceil(out / panelWidth)
	w       []float32 // panels × in × panelWidth, zero padded past out
	b       []float32 // panels × panelWidth, zero padded past out
}

// newLinear packs a PyTorch weight (out × in, row-major) and bias.
func newLinear(w []float32, b []float32, out, in int) *linear {
	l := &linear{in: in, out: out, panels: (out + panelWidth - 1) / panelWidth}
	l.w = make([]float32, l.panels*in*panelWidth)
	l.b = make([]float32, l.panels*panelWidth)
	for o := 0; o < out; o++ {
		p, c := o/panelWidth, o%panelWidth
		base := p * in * panelWidth
		row := w[o*in : (o+1)*in]
		for k, v := range row {
			l.w[base+k*panelWidth+c] = v
		}
	}
	copy(l.b, b)
	return l
}

// forward computes dst[r, :out] = x[r, :in]·Wᵀ + b for r < rows. x has row
// stride in and dst row stride out. Both must hold padRows(rows) rows: the
// micro-kernel works on blocks of kernelRows rows, so the rows past rows are
// read and overwritten with values of no meaning.
func (l *linear) forward(dst, x []float32, rows int) {
	matmulPacked(dst, l.out, x, l.in, rows, l.in, l.w, l.b, l.out)
}

// matmulPacked computes dst[r*ldc+c] = bias[c] + Σ_{p<k} a[r*lda+p]·B[p][c]
// for r < padRows(rows) and c < n, where B (k × n) is packed in panels of
// panelWidth columns (panel j is B[:, 16j:16j+16] as k×16 floats at
// w[16jk:], zero padded past n) and bias is padded likewise. Rows past rows
// are computed from whatever a holds there.
func matmulPacked(dst []float32, ldc int, a []float32, lda, rows, k int, w, bias []float32, n int) {
	prows := padRows(rows)
	panels := (n + panelWidth - 1) / panelWidth
	_ = a[(prows-1)*lda+k-1]
	_ = dst[(prows-1)*ldc+n-1]
	_ = w[panels*k*panelWidth-1]
	_ = bias[panels*panelWidth-1]
	var padC [kernelRows * panelWidth]float32
	fullN := n - n%panelWidth
	for p := 0; p < panels; p++ {
		wp := w[p*k*panelWidth : (p+1)*k*panelWidth]
		bp := bias[p*panelWidth : (p+1)*panelWidth]
		col := p * panelWidth
		if col+2*panelWidth <= fullN && useAVX512 {
			// Two full panels at once.
			w2 := w[p*k*panelWidth : (p+2)*k*panelWidth]
			b2 := bias[p*panelWidth : (p+2)*panelWidth]
			for r := 0; r < prows; r += kernelRows {
				gemm6x32(k, a[r*lda:], lda, w2, b2, dst[r*ldc+col:], ldc)
			}
			p++
			continue
		}
		if col < fullN {
			gemmBlocks(prows/kernelRows, k, a, lda, wp, bp, dst[col:], ldc)
			continue
		}
		for r := 0; r < prows; r += kernelRows {
			gemm6x16(k, a[r*lda:], lda, wp, bp, padC[:], panelWidth)
			for i := 0; i < kernelRows; i++ {
				copy(dst[(r+i)*ldc+col:(r+i)*ldc+n], padC[i*panelWidth:])
			}
		}
	}
}

// gemmBlocksGo runs gemm6x16 on nb consecutive blocks of kernelRows rows.
func gemmBlocksGo(nb, k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	for i := range nb {
		r := i * kernelRows
		gemm6x16(k, a[r*lda:], lda, b, bias, c[r*ldc:], ldc)
	}
}

// packKTGo packs n rows of dh values (row j at src[j*stride:]) times scale
// as Kᵀ (dh × n) in panels of panelWidth rows: dst[j/16*dh*16 + d*16 +
// j%16] = src[j*stride+d]·scale, and 0 for the padding rows up to a
// multiple of panelWidth (their scores are zero, never read).
func packKTGo(dst, src []float32, stride, n, dh int, scale float32) {
	for j := 0; j < n; j++ {
		kr := src[j*stride : j*stride+dh]
		base := j/panelWidth*dh*panelWidth + j%panelWidth
		for d, v := range kr {
			dst[base+d*panelWidth] = v * scale
		}
	}
	for j := n; j < roundUp(n, panelWidth); j++ {
		base := j/panelWidth*dh*panelWidth + j%panelWidth
		for d := 0; d < dh; d++ {
			dst[base+d*panelWidth] = 0
		}
	}
}

// padRows rounds rows up to a multiple of kernelRows.
func padRows(rows int) int { return (rows + kernelRows - 1) / kernelRows * kernelRows }

// gemm6x16Go is the portable micro-kernel: for r < 6 and j < 16,
// c[r*ldc+j] = bias[j] + Σ_p a[r*lda+p]·b[p*16+j]. It works on 3×4 blocks
// so that the 12 accumulators and the operands stay in registers (measured
// about twice as fast as 2×8 blocks on amd64).
func gemm6x16Go(k int, a []float32, lda int, b, bias, c []float32, ldc int) {
	_ = a[5*lda+k-1]
	_ = b[k*panelWidth-1]
	_ = c[5*ldc+panelWidth-1]
	for r := 0; r < kernelRows; r += 3 {
		a0 := a[r*lda : r*lda+k]
		a1 := a[(r+1)*lda : (r+1)*lda+k]
		a2 := a[(r+2)*lda : (r+2)*lda+k]
		a1 = a1[:len(a0)]
		a2 = a2[:len(a0)]
		for q := 0; q < panelWidth; q += 4 {
			c00, c01, c02, c03 := bias[q], bias[q+1], bias[q+2], bias[q+3]
			c10, c11, c12, c13 := c00, c01, c02, c03
			c20, c21, c22, c23 := c00, c01, c02, c03
			bq := b[q : (k-1)*panelWidth+q+4]
			for p := range a0 {
				bp := bq[p*panelWidth : p*panelWidth+4 : p*panelWidth+4]
				x0, x1, x2 := a0[p], a1[p], a2[p]
				b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
				c00 += x0 * b0
				c01 += x0 * b1
				c02 += x0 * b2
				c03 += x0 * b3
				c10 += x1 * b0
				c11 += x1 * b1
				c12 += x1 * b2
				c13 += x1 * b3
				c20 += x2 * b0
				c21 += x2 * b1
				c22 += x2 * b2
				c23 += x2 * b3
			}
			o0 := c[r*ldc+q : r*ldc+q+4 : r*ldc+q+4]
			o0[0], o0[1], o0[2], o0[3] = c00, c01, c02, c03
			o1 := c[(r+1)*ldc+q : (r+1)*ldc+q+4 : (r+1)*ldc+q+4]
			o1[0], o1[1], o1[2], o1[3] = c10, c11, c12, c13
			o2 := c[(r+2)*ldc+q : (r+2)*ldc+q+4 : (r+2)*ldc+q+4]
			o2[0], o2[1], o2[2], o2[3] = c20, c21, c22, c23
		}
	}
}

// dotGo returns Σ a[i]·b[i].
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyGo computes y[i] += alpha·x[i].
func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// layerNorm normalises each row of x (rows × n) in place to zero mean and
// unit variance, then scales by g and shifts by b, as torch.nn.LayerNorm.
func layerNorm(x []float32, rows, n int, g, b []float32, eps float64) {
	for r := 0; r < rows; r++ {
		row := x[r*n : (r+1)*n]
		var sum float64
		for _, v := range row {
			sum += float64(v)
		}
		mean := sum / float64(n)
		var ss float64
		for _, v := range row {
			d := float64(v) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(n)+eps)
		m, s := float32(mean), float32(inv)
		for i, v := range row {
			row[i] = (v-m)*s*g[i] + b[i]
		}
	}
}

// geluGo applies the exact (erf) GELU in place: x·½(1+erf(x/√2)).
func geluGo(x []float32) {
	for i, v := range x {
		x[i] = v * 0.5 * (1 + erf32(v*(math.Sqrt2/2)))
	}
}

// residualLayerNorm sets each of the rows rows of x (width n) to
// LayerNorm(x + y) (as layerNorm), using y as scratch: the residual
// connection and the normalisation of a BERT layer in three passes.
func residualLayerNorm(x, y []float32, rows, n int, g, b []float32, eps float64) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*n:(r+1)*n], y[r*n:(r+1)*n]
		mean := float64(addSum(yr, xr)) / float64(n)
		ss := float64(sumSqDev(yr, float32(mean)))
		inv := 1 / math.Sqrt(ss/float64(n)+eps)
		normAffine(xr, yr, float32(mean), float32(inv), g, b)
	}
}

// addSumGo sets dst[i] += src[i] and returns Σ dst[i].
func addSumGo(dst, src []float32) float32 {
	src = src[:len(dst)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		dst[i] += src[i]
		dst[i+1] += src[i+1]
		dst[i+2] += src[i+2]
		dst[i+3] += src[i+3]
		s0 += dst[i]
		s1 += dst[i+1]
		s2 += dst[i+2]
		s3 += dst[i+3]
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
		s0 += dst[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sumSqDevGo returns Σ (x[i]-mean)².
func sumSqDevGo(x []float32, mean float32) float32 {
	var s0, s1 float32
	i := 0
	for ; i+2 <= len(x); i += 2 {
		d0, d1 := x[i]-mean, x[i+1]-mean
		s0 += d0 * d0
		s1 += d1 * d1
	}
	for ; i < len(x); i++ {
		d := x[i] - mean
		s0 += d * d
	}
	return s0 + s1
}

// normAffineGo sets dst[i] = (x[i]-mean)·inv·g[i] + b[i].
func normAffineGo(dst, x []float32, mean, inv float32, g, b []float32) {
	x, g, b = x[:len(dst)], g[:len(dst)], b[:len(dst)]
	for i, v := range x {
		dst[i] = (v-mean)*inv*g[i] + b[i]
	}
}

// maxGo returns the greatest of x (not empty).
func maxGo(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m { // not max(): its NaN and -0 handling is slow
			m = v
		}
	}
	return m
}

// scaleGo sets x[i] *= s.
func scaleGo(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// softmax normalises x in place to exp(x-max)/Σ.
func softmax(x []float32) {
	if softmaxFast(x) {
		return
	}
	m := maxf(x)
	scale(x, 1/expSub(x, m))
}

// expSubGo sets x[i] = e^(x[i]-m) and returns their sum.
func expSubGo(x []float32, m float32) float32 {
	var sum float32
	for i, v := range x {
		e := exp32(v - m)
		x[i] = e
		sum += e
	}
	return sum
}

// erf32 approximates erf in float32 with a rational minimax polynomial on
// [-4, 4] (the approximation Eigen and XLA use); outside, erf is ±1 in
// float32. Its absolute error is below 1e-6 (see TestErf32).
func erf32(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	p *= x
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return p / q
}

// exp32 approximates e^x in float32 (Cephes expf: range reduction by ln 2
// and a degree-5 polynomial), within a few ulp of math.Exp (see TestExp32).
func exp32(x float32) float32 {
	const (
		hi    = 88.3762626647949
		lo    = -87.3365447505531 // below this e^x is subnormal: flush to 0
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
	)
	if x > hi {
		return float32(math.Inf(1))
	}
	if x < lo {
		return 0
	}
	if x != x {
		return x
	}
	fx := float32(math.Floor(float64(x*log2e + 0.5)))
	x = x - fx*ln2Hi - fx*ln2Lo
	y := float32(1.9875691500e-4)
	y = y*x + 1.3981999507e-3
	y = y*x + 8.3334519073e-3
	y = y*x + 4.1665795894e-2
	y = y*x + 1.6666665459e-1
	y = y*x + 5.0000001201e-1
	y = y*x*x + x + 1
	return y * math.Float32frombits(uint32(int32(fx)+127)<<23)
}
