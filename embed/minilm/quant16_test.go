package minilm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantizeWeights16 checks each row's budget (Σ|q| ≤ q16SumMax, |q| ≤
// MaxInt16), that the largest weight takes the largest value the budget
// allows, and that every weight is within half a step of its float.
func TestQuantizeWeights16(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		name    string
		out, in int
		fill    func(row []float32)
	}{
		{"gaussian 384", 8, 384, func(row []float32) {
			for k := range row {
				row[k] = float32(r.NormFloat64())
			}
		}},
		{"gaussian 1536", 8, 1536, func(row []float32) {
			for k := range row {
				row[k] = float32(r.NormFloat64())
			}
		}},
		{"all at the maximum", 4, 1536, func(row []float32) {
			for k := range row {
				row[k] = -0.5
			}
		}},
		{"one spike", 4, 384, func(row []float32) {
			clear(row)
			row[r.IntN(len(row))] = 3
		}},
		{"zero row", 2, 40, func(row []float32) { clear(row) }},
		{"odd width", 3, 7, func(row []float32) {
			for k := range row {
				row[k] = r.Float32() - 0.5
			}
		}},
	} {
		w := make([]float32, tc.out*tc.in)
		for o := 0; o < tc.out; o++ {
			tc.fill(w[o*tc.in : (o+1)*tc.in])
		}
		q, scale := quantizeWeights16(w, tc.out, tc.in)
		for o := 0; o < tc.out; o++ {
			var sum int64
			var top int16
			for k := 0; k < tc.in; k++ {
				v := q[o*tc.in+k]
				sum += int64(max(v, -v))
				top = max(top, v, -v)
				if d := math.Abs(float64(w[o*tc.in+k]) - float64(scale[o])*float64(v)); d > 0.5001*float64(scale[o]) {
					t.Fatalf("%s: row %d weight %d: %v against %v·%d", tc.name, o, k, w[o*tc.in+k], scale[o], v)
				}
			}
			if sum > q16SumMax {
				t.Errorf("%s: row %d: Σ|q| = %d over %d", tc.name, o, sum, q16SumMax)
			}
			if tc.name == "zero row" {
				continue
			}
			// The scale is as fine as the budget allows: one step finer
			// would break it (or pass int16).
			if top < math.MaxInt16 && 2*q16ActMax*(sum+int64(tc.in)) < math.MaxInt32 {
				t.Errorf("%s: row %d: largest |q| %d, Σ|q| %d: a finer scale fits", tc.name, o, top, sum)
			}
		}
	}
	if _, err := newQLinear16(make([]int16, 2*4), []float32{1, 1}, []float32{0, 0}, 2, 3); !errors.Is(err, ErrBadConfig) {
		t.Errorf("newQLinear16 with a short weight: %v", err)
	}
	over := slices.Repeat([]int16{math.MaxInt16}, 2*1000)
	if _, err := newQLinear16(over, []float32{1, 1}, []float32{0, 0}, 2, 1000); !errors.Is(err, ErrBadConfig) {
		t.Errorf("newQLinear16 with a row over the int32 budget: %v", err)
	}
}

// TestQ16GemmBlocks checks the int16 micro-kernel against int64 sums done
// here, at the top of its int32 budget (every input at q16ActMax, weights
// summing to q16SumMax in magnitude, all of one sign) and on random values,
// in every variant: the sums are exact, so the outputs are the same bits.
func TestQ16GemmBlocks(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(23, 24))
		for _, tc := range []struct {
			nb, kg, ldc int
			extreme     bool
		}{{1, 1, 16, false}, {1, 192, 16, false}, {3, 192, 48, false}, {5, 768, 400, false}, {2, 0, 16, false}, {2, 768, 16, true}, {1, 192, 16, true}} {
			lda := 2*tc.kg + 6 // rows longer than the products read
			rows := tc.nb * qRows
			a := make([]int16, rows*lda)
			for i := range a {
				a[i] = int16(r.IntN(q16ActMax + 1))
				if tc.extreme {
					a[i] = q16ActMax
				}
			}
			// Weights of column j in row k of B: packed b[32g+2j+i] = B[2g+i][j].
			k := 2 * tc.kg
			bw := make([][]int16, panelWidth) // by column
			for j := range bw {
				bw[j] = make([]int16, k)
				left := int64(q16SumMax)
				for p := range bw[j] {
					if tc.extreme {
						// Column j all of one sign, Σ|q| = q16SumMax.
						v := min(left, int64(q16SumMax)/int64(k)+1, math.MaxInt16)
						if p == k-1 {
							v = min(left, math.MaxInt16)
						}
						left -= v
						if j%2 == 1 {
							v = -v
						}
						bw[j][p] = int16(v)
						continue
					}
					bw[j][p] = int16(r.IntN(2*170+1) - 170)
				}
			}
			b := make([]int16, max(tc.kg, 1)*32)
			for g := 0; g < tc.kg; g++ {
				for j := range panelWidth {
					for i := range 2 {
						b[32*g+2*j+i] = bw[j][2*g+i]
					}
				}
			}
			rs, rm := randSlice(r, rows), randSlice(r, rows)
			cs, csum, bias := randSlice(r, panelWidth), randSlice(r, panelWidth), randSlice(r, panelWidth)
			got := randSlice(r, rows*tc.ldc)
			keep := slices.Clone(got)
			q16gemmBlocks(tc.nb, tc.kg, a, lda, b, got, tc.ldc, rs, rm, cs, csum, bias)
			checkQ16Out(t, tc, tc.extreme, a, lda, bw, rs, rm, cs, csum, bias, got, keep, tc.ldc)
		}
	})
}

// TestQuantRow16Variants checks that the assembly quantiser rounds and
// clamps exactly as the portable one, NaN and infinities included.
func TestQuantRow16Variants(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	x := randSlice(r, 16*9+7)
	x[3], x[40] = -2, 2
	x[41], x[42], x[43], x[44] = 1000, float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1))
	x[45] = 3e9 // past the int32 range once scaled
	mn, mx := minMaxGo(x[:40])
	inv := q16ActMax / (mx - mn)
	want := make([]int16, len(x))
	quantRow16Go(x, want, mn, inv)
	kernelVariants(t, func(t *testing.T) {
		got := make([]int16, len(x))
		quantRow16(x, got, mn, inv)
		if !slices.Equal(got, want) {
			t.Fatalf("quantRow16 = %v, want %v", got[:48], want[:48])
		}
	})
	if want[3] != 0 || want[40] != q16ActMax || want[41] != q16ActMax || want[42] != 0 || want[43] != 0 || want[44] != 0 || want[45] != 0 {
		t.Errorf("clamping: %v", want[40:46])
	}
	for i, v := range want {
		if v < 0 || v > q16ActMax {
			t.Fatalf("u[%d] = %d", i, v)
		}
	}
}

// TestQLinear16MatchesNaive checks the int16 layer against float arithmetic
// on the same quantised operands (the integer sums are exact, so only
// float32 rounding differs), and against the float layer: far nearer than
// the int8 layer gets.
func TestQLinear16MatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(27, 28))
		for _, tc := range []struct{ rows, in, out int }{
			{1, 8, 16}, {3, 5, 32}, {4, 7, 48}, {5, 384, 384}, {6, 384, 1152}, {7, 1536, 384}, {13, 3, 40}, {41, 384, 1536}, {2, 64, 8},
		} {
			x := randSlice(r, roundUp(tc.rows, qRows)*tc.in)
			for i := range x {
				x[i] *= 3
			}
			x[0] = 40 // an outlier
			w := randSlice(r, tc.out*tc.in)
			b := randSlice(r, tc.out)
			q, scale := quantizeWeights16(w, tc.out, tc.in)
			l, err := newQLinear16(q, scale, b, tc.out, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			s := &qscratch{rs: make([]float32, roundUp(tc.rows, qRows)), rm: make([]float32, roundUp(tc.rows, qRows))}
			got := make([]float32, roundUp(tc.rows, qRows)*tc.out)
			l.forward(got, x, tc.rows, s)
			want := naiveLinear(quantizeRows16Ref(x, tc.rows, tc.in), dequantize(q, scale, tc.out, tc.in), b, tc.rows, tc.in, tc.out)
			for i := range tc.rows * tc.out {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%+v: y[%d] = %v, want %v", tc, i, got[i], want[i])
				}
			}
			exact := naiveLinear(x, w, b, tc.rows, tc.in, tc.out)
			var se, ss float64
			for i := range tc.rows * tc.out {
				d := float64(got[i] - exact[i])
				se += d * d
				ss += float64(exact[i]) * float64(exact[i])
			}
			if rel := math.Sqrt(se / ss); rel > 2e-3 {
				t.Errorf("%+v: relative error %.2e against float", tc, rel)
			}
		}
	})
}

// TestInt16MatchesNaive runs a float tiny model with int16 layers against
// the float reference encoder: nearly equal, under the float model's ID.
func TestInt16MatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12})
		m, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionInt16})
		if err != nil {
			t.Fatal(err)
		}
		if m.ID() != "minilm:tiny:12" || !m.int8 || !m.wide {
			t.Errorf("ID %q, int8 %v, wide %v", m.ID(), m.int8, m.wide)
		}
		checkNearNaive(t, tm, m, 0.99999)
	})
}

// TestPrecisionAuto checks what PrecisionAuto runs: int16 layers for a
// float file where they are the faster (VNNI, or AVX2 without AVX-512),
// float32 where not, under one ID.
func TestPrecisionAuto(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 32, layers: 2, heads: 4, inter: 64, maxPos: 16, maxSeq: 12})
	kernelVariants(t, func(t *testing.T) {
		m, err := Load(tm.dir, Options{Name: "tiny"})
		if err != nil {
			t.Fatal(err)
		}
		want := useVNNI || useAVX2 && !useAVX512
		if m.ID() != "minilm:tiny:12" || m.int8 != want || m.wide != want {
			t.Errorf("VNNI %v, AVX-512 %v, AVX2 %v: ID %q, int8 %v, wide %v", useVNNI, useAVX512, useAVX2, m.ID(), m.int8, m.wide)
		}
		f, err := Load(tm.dir, Options{Name: "tiny", Precision: PrecisionFloat32})
		if err != nil {
			t.Fatal(err)
		}
		if f.ID() != m.ID() || f.int8 {
			t.Errorf("float32: ID %q, int8 %v", f.ID(), f.int8)
		}
	})
}

// TestE5Int16NearFloat runs the real e5-small-v2 with int16 layers against
// float32 on the same texts: mean 1 − cosine was 6e-7 on 80 turns of each
// dev file (BENCHMARKS.md), the int8 layers' 4.8e-4 here; the bound is ten
// times the former.
func TestE5Int16NearFloat(t *testing.T) {
	root, err := DefaultRoot()
	if err != nil {
		t.Skipf("no models root: %v", err)
	}
	f, err := Load(E5ModelDir(root), Options{Precision: PrecisionFloat32})
	if err != nil {
		t.Skipf("e5-small-v2 not fetched in %s (`higmem models fetch --model e5-small-v2`): %v", E5ModelDir(root), err)
	}
	q, err := Load(E5ModelDir(root), Options{Precision: PrecisionInt16})
	if err != nil {
		t.Fatal(err)
	}
	if q.ID() != f.ID() {
		t.Errorf("ID %q, float %q", q.ID(), f.ID())
	}
	ctx := context.Background()
	qv, mean, worst := embedDistance(ctx, t, f, q, e5Texts)
	t.Logf("int16 against float32: 1 − cosine mean %.2e, worst %.2e", mean, worst)
	if mean > 6e-6 || worst > 2e-5 {
		t.Errorf("int16 vectors too far from float32: mean %.2e, worst %.2e", mean, worst)
	}
	if useVNNI {
		// The VNNI kernel's vectors are the AVX2 kernel's, bit for bit.
		useVNNI = false
		av, err := q.Embed(ctx, e5Texts)
		useVNNI = true
		if err != nil {
			t.Fatal(err)
		}
		for i := range av {
			if !slices.Equal(av[i], qv[i]) {
				t.Errorf("text %d: the VNNI kernel's vector differs from the AVX2 kernel's", i)
			}
		}
	}
}

// TestQ16GemmBlocks3 checks the three-panel int16 kernels (AVX-512 VNNI,
// 8-row blocks and a 4-row last block) against int64 sums and against the
// one-panel kernels run on each panel (AVX2 and Go): the same bits, on
// random values and on sums at the int32 limit of both signs, with rows
// longer than the products read and c rows wider than the 48 columns
// written.
func TestQ16GemmBlocks3(t *testing.T) {
	if !useVNNI {
		t.Skip("no AVX-512 VNNI on this CPU (or purego)")
	}
	r := rand.New(rand.NewPCG(29, 30))
	for _, tc := range []struct {
		nb, kg, ldc int
		extreme     bool
	}{{1, 1, 48, false}, {2, 1, 48, false}, {1, 192, 48, false}, {3, 192, 80, false}, {5, 768, 400, false}, {20, 192, 1152, false}, {2, 768, 48, true}, {1, 192, 70, true}, {3, 5, 48, true}} {
		lda := 2*tc.kg + 6
		rows := tc.nb * qRows
		a := make([]int16, rows*lda)
		for i := range a {
			a[i] = int16(r.IntN(q16ActMax + 1))
			if tc.extreme {
				a[i] = q16ActMax
			}
		}
		k := 2 * tc.kg
		const cols = 3 * panelWidth
		bw := make([][]int16, cols) // by column
		for j := range bw {
			bw[j] = make([]int16, k)
			left := int64(q16SumMax)
			for p := range bw[j] {
				if tc.extreme {
					v := min(left, int64(q16SumMax)/int64(k)+1, math.MaxInt16)
					if p == k-1 {
						v = min(left, math.MaxInt16)
					}
					left -= v
					if (j+j/panelWidth)%2 == 1 {
						v = -v
					}
					bw[j][p] = int16(v)
					continue
				}
				// Within the int32 budget, as large as it lets them be.
				m := min(q16SumMax/k, math.MaxInt16)
				bw[j][p] = int16(r.IntN(2*m+1) - m)
			}
		}
		// Panel p, group g: b[p*kg*32 + 32g + 2j + i] = B[2g+i][16p+j].
		b := make([]int16, 3*tc.kg*32)
		for p := range 3 {
			for g := 0; g < tc.kg; g++ {
				for j := range panelWidth {
					for i := range 2 {
						b[p*tc.kg*32+32*g+2*j+i] = bw[16*p+j][2*g+i]
					}
				}
			}
		}
		rs, rm := randSlice(r, rows), randSlice(r, rows)
		cs, csum, bias := randSlice(r, cols), randSlice(r, cols), randSlice(r, cols)
		got := randSlice(r, rows*tc.ldc)
		keep := slices.Clone(got)
		if !q16gemmBlocks3(tc.nb, tc.kg, a, lda, b, got, tc.ldc, rs, rm, cs, csum, bias, b[tc.kg*32:]) {
			t.Fatal("q16gemmBlocks3 did not run")
		}
		for _, v := range []struct {
			name   string
			avx2   bool
			chosen bool
		}{{"avx2", true, useAVX2}, {"go", false, true}} {
			if !v.chosen {
				continue
			}
			saved2, savedVNNI := useAVX2, useVNNI
			useAVX2, useVNNI = v.avx2, false
			one := slices.Clone(keep)
			for p := range 3 {
				q16gemmBlocks(tc.nb, tc.kg, a, lda, b[p*tc.kg*32:], one[16*p:], tc.ldc, rs, rm, cs[16*p:], csum[16*p:], bias[16*p:])
			}
			useAVX2, useVNNI = saved2, savedVNNI
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(one[i]) {
					t.Fatalf("%+v: c[%d][%d] = %v, the %s kernel's %v", tc, i/tc.ldc, i%tc.ldc, got[i], v.name, one[i])
				}
			}
		}
		checkQ16Out(t, tc, tc.extreme, a, lda, bw, rs, rm, cs, csum, bias, got, keep, tc.ldc)
	}
}

// checkQ16Out checks c = got (rows × ldc) after an int16 kernel wrote its
// first len(bw) columns: each is q16gemm4x16Go's output step on the int64
// sum of row r of a (row stride lda) times column j of B (bw, by column),
// and the columns past them are as in keep. In an extreme case every sum
// must be near the int32 limit.
func checkQ16Out(t *testing.T, tc any, extreme bool, a []int16, lda int, bw [][]int16, rs, rm, cs, csum, bias, got, keep []float32, ldc int) {
	t.Helper()
	cols, k := len(bw), len(bw[0])
	for row := range len(got) / ldc {
		for j := range ldc {
			i := row*ldc + j
			if j >= cols {
				if math.Float32bits(got[i]) != math.Float32bits(keep[i]) {
					t.Fatalf("%+v: c[%d][%d] written past the %d columns", tc, row, j, cols)
				}
				continue
			}
			var acc int64
			for p := range k {
				acc += int64(a[row*lda+p]) * int64(bw[j][p])
			}
			if extreme && (acc > math.MaxInt32 || acc < math.MinInt32 || math.Abs(float64(acc)) < math.MaxInt32/2) {
				t.Fatalf("%+v: the extreme case sums to %d, not near the int32 limit", tc, acc)
			}
			want := fma32(float32(int32(acc)), rs[row]*cs[j], fma32(rm[row], csum[j], bias[j]))
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%+v: c[%d][%d] = %v, want %v (sum %d)", tc, row, j, got[i], want, acc)
			}
		}
	}
}
