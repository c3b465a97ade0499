package minilm

import (
	"fmt"
	"math"
)

// Int16 linear layers.
//
// PrecisionInt16 runs a float model's linear layers with integer products
// as the int8 layers do (quant.go), on wider integers: each input row is
// quantised over its own range to 13-bit integers (u in [0, q16ActMax]),
// each weight row to int16 with a scale of its own, and the micro-kernel
// sums u·q in int32 with VPMADDWD, which multiplies two pairs of int16 and
// adds each pair in int32 exactly.
//
// The int8 kernel runs VPMADDUBSW and then VPMADDWD by ones to widen its
// int16 sums; this one runs VPMADDWD alone, twice as often. Both issue the
// same number of multiplies per multiply-add, which bound both kernels on
// AVX2 CPUs, so the wider integers cost loads and additions rather than
// multiplies, and they remove almost all of int8's rounding: 13 bits of
// input instead of 8, 10–12 bits of weight instead of 7.
//
// Nothing may overflow: for every output o the int32 sum is at most
// q16ActMax·Σ_k |q[o][k]|, and quantizeWeights16 picks each row's scale so
// that this stays under 2³¹.

// q16ActMax is the largest quantised input value of an int16 layer.
const q16ActMax = 8191

// q16SumMax bounds Σ_k |q[o][k]| of an int16 layer's weight row, so that
// q16ActMax times it fits in an int32.
const q16SumMax = math.MaxInt32 / q16ActMax

// quantizeWeights16 quantises a float weight (out × in) per output row to
// int16: row o becomes q[o][k] = round(w[o][k]/scale[o]) with the largest
// |q| as large as the row's int32 budget allows (Σ_k |q[o][k]| ≤
// q16SumMax) and at most math.MaxInt16.
func quantizeWeights16(w []float32, out, in int) (q []int16, scale []float32) {
	q = make([]int16, out*in)
	scale = make([]float32, out)
	for o := 0; o < out; o++ {
		row := w[o*in : (o+1)*in]
		var m, sum float64
		for _, v := range row {
			a := math.Abs(float64(v))
			m = max(m, a)
			sum += a
		}
		if m == 0 {
			continue
		}
		// Σ|q| ≤ top·Σ|w|/m + in/2 (each rounding adds at most ½).
		top := math.Floor(min(math.MaxInt16, (q16SumMax-float64(in)/2)*m/sum))
		for {
			s := float32(m / top)
			var qs int64
			qr := q[o*in : (o+1)*in]
			for k, v := range row {
				x := max(-math.MaxInt16, min(math.MaxInt16, math.RoundToEven(float64(v/s))))
				qr[k] = int16(x)
				qs += int64(math.Abs(x))
			}
			scale[o] = s
			if qs <= q16SumMax {
				break
			}
			top-- // float rounding of s: try a coarser step
		}
	}
	return q, scale
}

// newQLinear16 packs an int16 weight (out × in, row-major, Σ_k |q[o][k]| ≤
// q16SumMax for every o), its per-output scales and the bias. The weights
// are packed in panels of panelWidth output columns, each panel in groups
// of 2 input rows: w16[p][g][c][i] = q[16p+c][2g+i], zero padded.
func newQLinear16(q []int16, scale, b []float32, out, in int) (*qlinear, error) {
	if len(q) != out*in || len(scale) != out || len(b) != out {
		return nil, fmt.Errorf("%w: int16 layer of %d×%d has %d weights, %d scales, %d biases", ErrBadConfig, out, in, len(q), len(scale), len(b))
	}
	l := &qlinear{in: in, out: out, panels: (out + panelWidth - 1) / panelWidth, kp: roundUp(in, 2)}
	groups := l.kp / 2
	l.w16 = make([]int16, l.panels*groups*32)
	l.scale = make([]float32, l.panels*panelWidth)
	l.csum = make([]float32, l.panels*panelWidth)
	l.b = make([]float32, l.panels*panelWidth)
	for o := 0; o < out; o++ {
		p, c := o/panelWidth, o%panelWidth
		var sum, abs int64
		for k, v := range q[o*in : (o+1)*in] {
			l.w16[p*groups*32+k/2*32+c*2+k%2] = v
			sum += int64(v)
			abs += max(int64(v), -int64(v))
		}
		if abs > q16SumMax {
			return nil, fmt.Errorf("%w: int16 weight row %d sums to %d in magnitude, over %d", ErrBadConfig, o, abs, q16SumMax)
		}
		l.scale[o] = scale[o]
		l.csum[o] = scale[o] * float32(sum)
	}
	copy(l.b, b)
	return l, nil
}

// forward16 is forward for an int16 layer.
func (l *qlinear) forward16(dst, x []float32, rows int, s *qscratch) {
	prows := roundUp(rows, qRows)
	if need := prows * l.kp; len(s.a16) < need {
		s.a16 = make([]int16, need)
	}
	a := s.a16[:prows*l.kp]
	for r := 0; r < prows; r++ {
		ar := a[r*l.kp : (r+1)*l.kp]
		if r >= rows {
			clear(ar)
			s.rs[r], s.rm[r] = 0, 0
			continue
		}
		clear(ar[l.in:])
		sc, inv, mn := l.rowScale(x[r*l.in:(r+1)*l.in], s, q16ActMax)
		quantRow16(s.row, ar[:l.in], mn, inv)
		s.rs[r], s.rm[r] = sc, mn
	}
	groups := l.kp / 2
	fullN := l.out - l.out%panelWidth
	for p := 0; p < l.panels; p++ {
		col := p * panelWidth
		if col+3*panelWidth <= fullN {
			// Three full panels at once where the CPU has a kernel for it.
			wp := l.w16[p*groups*32 : (p+3)*groups*32]
			cs, csum, b := l.scale[col:col+3*panelWidth], l.csum[col:col+3*panelWidth], l.b[col:col+3*panelWidth]
			if q16gemmBlocks3(prows/qRows, groups, a, l.kp, wp, dst[col:], l.out, s.rs, s.rm, cs, csum, b, l.w16[(p+3)*groups*32:]) {
				p += 2
				continue
			}
		}
		wp := l.w16[p*groups*32 : (p+1)*groups*32]
		cs, csum, b := l.scale[col:col+panelWidth], l.csum[col:col+panelWidth], l.b[col:col+panelWidth]
		if col < fullN {
			q16gemmBlocks(prows/qRows, groups, a, l.kp, wp, dst[col:], l.out, s.rs, s.rm, cs, csum, b)
			continue
		}
		l.partialPanel(dst, col, prows, func(r int, c []float32) {
			q16gemmBlocks(1, groups, a[r*l.kp:], l.kp, wp, c, panelWidth, s.rs[r:], s.rm[r:], cs, csum, b)
		})
	}
}

// q16gemm4x16Go is the portable int16 micro-kernel: for r < 4 and j < 16,
// acc = Σ_{p<2kg} a[r*lda+p]·B[p][j] (B packed as in qlinear.w16) and
// c[r*ldc+j] = acc·rs[r]·cs[j] + rm[r]·csum[j] + bias[j].
func q16gemm4x16Go(kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	var acc [qRows][panelWidth]int32
	for r := 0; r < qRows; r++ {
		ar := a[r*lda : r*lda+2*kg]
		for g := 0; g < kg; g++ {
			bg := b[g*32 : g*32+32]
			a0, a1 := int32(ar[2*g]), int32(ar[2*g+1])
			for j := 0; j < panelWidth; j++ {
				acc[r][j] += a0*int32(bg[2*j]) + a1*int32(bg[2*j+1])
			}
		}
	}
	qOutput(&acc, c, ldc, rs, rm, cs, csum, bias)
}

// q16gemmBlocksGo runs q16gemm4x16Go on nb consecutive blocks of qRows rows.
func q16gemmBlocksGo(nb, kg int, a []int16, lda int, b []int16, c []float32, ldc int, rs, rm, cs, csum, bias []float32) {
	for i := range nb {
		r := i * qRows
		q16gemm4x16Go(kg, a[r*lda:], lda, b, c[r*ldc:], ldc, rs[r:], rm[r:], cs, csum, bias)
	}
}

// quantRow16Go sets dst[i] to (x[i]-mn)·inv rounded to even and clamped to
// [0, q16ActMax], 0 for a NaN, as quantRow16AVX2 does.
func quantRow16Go(x []float32, dst []int16, mn, inv float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		f := float64((v - mn) * inv)
		if !(f >= math.MinInt32 && f < math.MaxInt32) {
			dst[i] = 0
			continue
		}
		dst[i] = int16(max(0, min(q16ActMax, math.RoundToEven(f))))
	}
}
