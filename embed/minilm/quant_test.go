package minilm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// dequantize returns the float weight scale[o]·q[o][k].
func dequantize(q []int8, scale []float32, out, in int) []float32 {
	w := make([]float32, out*in)
	for o := 0; o < out; o++ {
		for k := 0; k < in; k++ {
			w[o*in+k] = scale[o] * float32(q[o*in+k])
		}
	}
	return w
}

// quantizeRowsRef quantises x (rows × in) as qlinear does and returns its
// reconstruction mn + s·u, row by row.
func quantizeRowsRef(x []float32, rows, in int) []float32 {
	out := make([]float32, rows*in)
	u := make([]uint8, in)
	for r := 0; r < rows; r++ {
		xr := x[r*in : (r+1)*in]
		mn, mx := minMaxGo(xr)
		var s, inv float32
		if mx > mn {
			s = (mx - mn) / 255
			inv = 1 / s
		}
		quantRowGo(xr, u, mn, inv)
		for k := range u {
			out[r*in+k] = mn + s*float32(u[k])
		}
	}
	return out
}

// TestQLinearMatchesNaive checks the int8 layer against float arithmetic on
// the same quantised operands: the integer sums are exact, so the only
// difference is float32 rounding.
func TestQLinearMatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, tc := range []struct{ rows, in, out int }{
			{1, 8, 16}, {3, 5, 32}, {4, 7, 48}, {5, 384, 384}, {6, 384, 1152}, {7, 1536, 384}, {13, 3, 40}, {41, 384, 1536}, {2, 64, 8},
		} {
			x := randSlice(r, roundUp(tc.rows, qRows)*tc.in)
			for i := range x {
				x[i] *= 3 // a range past [-1, 1]
			}
			x[0] = 40 // an outlier
			w := randSlice(r, tc.out*tc.in)
			b := randSlice(r, tc.out)
			q, scale := quantizeWeights(w, tc.out, tc.in)
			l, err := newQLinear(q, scale, b, tc.out, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			s := &qscratch{a: make([]uint8, roundUp(tc.rows, qRows)*l.kp), rs: make([]float32, roundUp(tc.rows, qRows)), rm: make([]float32, roundUp(tc.rows, qRows))}
			got := make([]float32, roundUp(tc.rows, qRows)*tc.out)
			l.forward(got, x, tc.rows, s)
			want := naiveLinear(quantizeRowsRef(x, tc.rows, tc.in), dequantize(q, scale, tc.out, tc.in), b, tc.rows, tc.in, tc.out)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%+v: y[%d] = %v, want %v", tc, i, got[i], want[i])
				}
			}
			// And the float layer on the unquantised input is near.
			exact := naiveLinear(x, w, b, tc.rows, tc.in, tc.out)
			var se, ss float64
			for i := range exact {
				d := float64(got[i] - exact[i])
				se += d * d
				ss += float64(exact[i]) * float64(exact[i])
			}
			if rel := math.Sqrt(se / ss); rel > 0.05 {
				t.Errorf("%+v: relative error %.3f against float", tc, rel)
			}
		}
	})
}

// TestQuantRowVariants checks that the assembly quantiser rounds and clamps
// exactly as the portable one.
func TestQuantRowVariants(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randSlice(r, 32*7+5)
	x[3], x[40] = -2, 2
	x[41], x[42] = 1e6, float32(math.Inf(1))
	mn, mx := minMaxGo(x[:40])
	inv := 255 / (mx - mn)
	want := make([]uint8, len(x))
	quantRowGo(x, want, mn, inv)
	var got []uint8
	kernelVariants(t, func(t *testing.T) {
		g := make([]uint8, len(x))
		quantRow(x, g, mn, inv)
		if got != nil && !slices.Equal(g, got) {
			t.Fatal("quantRow differs between variants")
		}
		got = g
		if !slices.Equal(g, want) {
			t.Fatalf("quantRow = %v, want %v", g[:48], want[:48])
		}
		lo, hi := minMax(x[:37])
		wlo, whi := minMaxGo(x[:37])
		if lo != wlo || hi != whi {
			t.Errorf("minMax = %v, %v; want %v, %v", lo, hi, wlo, whi)
		}
	})
	if want[3] != 0 || want[41] != 255 || want[42] != 0 {
		t.Errorf("clamping: %d %d %d", want[3], want[41], want[42])
	}
}

// TestQuantizeWeightsExact checks that quantising weights that are already
// int8 times per-row scales, as a quantised file's dequantised weights
// are, gives them back exactly.
func TestQuantizeWeightsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const out, in = 5, 37
	q := make([]int8, out*in)
	scale := make([]float32, out)
	for o := range out {
		scale[o] = r.Float32() / 100
		for k := range in {
			q[o*in+k] = int8(r.IntN(2*qMaxWeight+1) - qMaxWeight)
		}
		q[o*in+r.IntN(in)] = qMaxWeight // the row's maximum, as the file has it
	}
	q2, s2 := quantizeWeights(dequantize(q, scale, out, in), out, in)
	if !slices.Equal(q, q2) || !slices.Equal(scale, s2) {
		t.Errorf("quantize(dequantize(q)) differs from q")
	}
}
