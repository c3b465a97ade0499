package minilm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// naiveLinear is y = x·Wᵀ + b with W as stored by PyTorch (out × in).
func naiveLinear(x, w, b []float32, rows, in, out int) []float32 {
	y := make([]float32, rows*out)
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			s := float64(b[o])
			for k := 0; k < in; k++ {
				s += float64(x[r*in+k]) * float64(w[o*in+k])
			}
			y[r*out+o] = float32(s)
		}
	}
	return y
}

// kernelVariants runs f with the assembly kernels (when the CPU has them)
// and with the portable Go ones.
func kernelVariants(t *testing.T, f func(t *testing.T)) {
	saved2, saved512, savedVNNI := useAVX2, useAVX512, useVNNI
	defer func() { useAVX2, useAVX512, useVNNI = saved2, saved512, savedVNNI }()
	if savedVNNI {
		t.Run("vnni", f)
	}
	useVNNI = false
	if saved512 {
		t.Run("avx512", f)
	}
	useAVX512 = false
	if saved2 {
		t.Run("avx2", f)
	}
	useAVX2 = false
	t.Run("go", f)
}

func TestLinearMatchesNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, tc := range []struct{ rows, in, out int }{
			{1, 8, 16}, {3, 5, 32}, {4, 7, 48}, {5, 384, 384}, {6, 384, 1152}, {7, 1536, 384}, {13, 3, 40}, {40, 384, 1536},
		} {
			x := randSlice(r, padRows(tc.rows)*tc.in)
			w := randSlice(r, tc.out*tc.in)
			b := randSlice(r, tc.out)
			l := newLinear(w, b, tc.out, tc.in)
			got := make([]float32, padRows(tc.rows)*tc.out)
			l.forward(got, x, tc.rows)
			want := naiveLinear(x, w, b, tc.rows, tc.in, tc.out)
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Sqrt(float64(tc.in)+1) {
					t.Fatalf("%+v: y[%d] = %v, want %v", tc, i, got[i], want[i])
				}
			}
		}
	})
}

func TestDotAxpyMatchNaive(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{0, 1, 7, 8, 9, 16, 24, 64, 65, 384} {
			a, b := randSlice(r, n), randSlice(r, n)
			var want float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
			}
			if got := dot(a, b); math.Abs(float64(got)-want) > 1e-5*float64(n+1) {
				t.Errorf("dot n=%d: %v, want %v", n, got, want)
			}
			y := randSlice(r, n)
			wantY := make([]float32, n)
			for i := range y {
				wantY[i] = y[i] + 0.75*a[i]
			}
			axpy(0.75, a, y)
			for i := range y {
				if math.Abs(float64(y[i]-wantY[i])) > 1e-6 {
					t.Fatalf("axpy n=%d: y[%d] = %v, want %v", n, i, y[i], wantY[i])
				}
			}
		}
	})
}

func TestErf32(t *testing.T) {
	worst := 0.0
	for x := -6.0; x <= 6.0; x += 1.0 / 4096 {
		d := math.Abs(float64(erf32(float32(x))) - math.Erf(x))
		worst = max(worst, d)
	}
	if worst > 1e-6 {
		t.Errorf("erf32: max abs error %g > 1e-6", worst)
	}
	t.Logf("erf32 max abs error %.3g", worst)
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := -87.0; x <= 88.0; x += 1.0 / 512 {
		want := math.Exp(x)
		d := math.Abs(float64(exp32(float32(x)))-want) / want
		worst = max(worst, d)
	}
	if worst > 1e-6 {
		t.Errorf("exp32: max relative error %g > 1e-6", worst)
	}
	if exp32(-200) != 0 || !math.IsInf(float64(exp32(200)), 1) || exp32(0) != 1 {
		t.Errorf("exp32 edge cases: %v %v %v", exp32(-200), exp32(200), exp32(0))
	}
	t.Logf("exp32 max relative error %.3g", worst)
}

func TestSoftmaxAndLayerNorm(t *testing.T) {
	x := []float32{1, 2, 3, 1000}
	softmax(x)
	if x[3] != 1 || x[0] != 0 {
		t.Errorf("softmax with a dominant entry: %v", x)
	}
	y := []float32{0, 1, 2}
	softmax(y)
	e := []float64{1, math.E, math.E * math.E}
	sum := e[0] + e[1] + e[2]
	for i := range y {
		if math.Abs(float64(y[i])-e[i]/sum) > 1e-6 {
			t.Errorf("softmax(0,1,2)[%d] = %v, want %v", i, y[i], e[i]/sum)
		}
	}
	row := []float32{1, 2, 3, 4}
	layerNorm(row, 1, 4, []float32{1, 1, 2, 2}, []float32{0, 0, 0, 1}, 1e-12)
	// mean 2.5, var 1.25.
	s := 1 / math.Sqrt(1.25)
	want := []float64{-1.5 * s, -0.5 * s, 2 * 0.5 * s, 2*1.5*s + 1}
	for i := range row {
		if math.Abs(float64(row[i])-want[i]) > 1e-6 {
			t.Errorf("layerNorm[%d] = %v, want %v", i, row[i], want[i])
		}
	}
}

// BenchmarkGemm measures one 40×384 · 384×1536 product (the FFN
// up-projection of a LoCoMo-sized turn) with each kernel variant.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	rows, in, out := 40, 384, 1536
	x := randSlice(r, padRows(rows)*in)
	l := newLinear(randSlice(r, out*in), randSlice(r, out), out, in)
	y := make([]float32, padRows(rows)*out)
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	for _, v := range []struct {
		name         string
		avx2, avx512 bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"go", false, false}} {
		if v.avx2 && !saved2 || v.avx512 && !saved512 {
			continue
		}
		useAVX2, useAVX512 = v.avx2, v.avx512
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				l.forward(y, x, rows)
			}
			b.ReportMetric(float64(b.N)*2*float64(padRows(rows)*in*out)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

func TestGeluMatchesErf(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		var x []float32
		for v := -8.0; v <= 8.0; v += 1.0 / 256 {
			x = append(x, float32(v))
		}
		x = append(x, 0, float32(math.Copysign(0, -1)), 100, -100, 1e-30)
		got := slices.Clone(x)
		gelu(got)
		for i, v := range x {
			want := float64(v) * 0.5 * (1 + math.Erf(float64(v)/math.Sqrt2))
			if d := math.Abs(float64(got[i]) - want); d > 1e-6*max(1, math.Abs(want)) {
				t.Fatalf("gelu(%v) = %v, want %v", v, got[i], want)
			}
		}
	})
}

// TestGeluAVX512SameBits checks that the AVX-512 GELU gives the AVX2 one's
// bits (the same operations on wider registers), tails included.
func TestGeluAVX512SameBits(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU (or purego)")
	}
	r := rand.New(rand.NewPCG(31, 32))
	x := randSlice(r, 16*40+13)
	for i := range x {
		x[i] *= 6
	}
	x[5], x[17], x[33] = 100, -100, 1e-30
	got, want := slices.Clone(x), slices.Clone(x)
	gelu(got)
	useAVX512 = false
	gelu(want)
	useAVX512 = true
	for i := range x {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("gelu(%v): AVX-512 %v, AVX2 %v", x[i], got[i], want[i])
		}
	}
}

func TestExpSubMatchesExp(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		for _, n := range []int{1, 7, 8, 9, 40, 257} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%37)*2.5 - 80 // -80 .. 10
			}
			got := slices.Clone(x)
			sum := expSub(got, 3)
			var wantSum float64
			for i, v := range x {
				want := math.Exp(float64(v) - 3)
				wantSum += want
				if d := math.Abs(float64(got[i])-want) / want; d > 1e-6 {
					t.Fatalf("n=%d: exp(%v-3) = %v, want %v", n, v, got[i], want)
				}
			}
			if d := math.Abs(float64(sum)-wantSum) / wantSum; d > 1e-5 {
				t.Errorf("n=%d: sum %v, want %v", n, sum, wantSum)
			}
		}
		// Far below the range: 0 or a negligible tiny value, never garbage.
		x := []float32{-1000, -1000, -1000, -1000, -1000, -1000, -1000, -1000, 0}
		if sum := expSub(x, 0); sum < 1 || sum > 1+1e-30 {
			t.Errorf("sum with underflowing inputs = %v, want 1", sum)
		}
	})
}

// TestGemmBlocksMatchesBlockByBlock checks that gemmBlocks gives, bit for
// bit, what gemm6x16 gives called block by block (as matmulPacked did
// before it), so that moving the loop into the kernel changes no vector.
func TestGemmBlocksMatchesBlockByBlock(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, tc := range []struct{ nb, k, lda, ldc int }{{1, 1, 1, 16}, {1, 32, 1152, 16}, {3, 32, 1152, 48}, {17, 100, 100, 32}, {5, 384, 390, 1536}} {
			rows := tc.nb * kernelRows
			a := randSlice(r, rows*tc.lda+tc.k)
			b := randSlice(r, max(tc.k, 1)*panelWidth)
			bias := randSlice(r, panelWidth)
			want := randSlice(r, rows*tc.ldc)
			got := slices.Clone(want)
			for i := range tc.nb {
				row := i * kernelRows
				gemm6x16(tc.k, a[row*tc.lda:], tc.lda, b, bias, want[row*tc.ldc:], tc.ldc)
			}
			gemmBlocks(tc.nb, tc.k, a, tc.lda, b, bias, got, tc.ldc)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v: c[%d] = %v, block by block %v", tc, i, got[i], want[i])
				}
			}
		}
	})
}

// TestPackKT checks the Kᵀ packing of attention against the definition in
// every variant: the same values (a product each), zeros in the last
// panel's padding rows, nothing written past the panels.
func TestPackKT(t *testing.T) {
	kernelVariants(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(33, 34))
		for _, tc := range []struct{ n, dh, stride int }{{1, 32, 1152}, {5, 32, 96}, {16, 32, 1152}, {17, 32, 1152}, {40, 7, 9}, {57, 32, 1152}, {64, 16, 48}} {
			src := randSlice(r, (tc.n-1)*tc.stride+tc.dh)
			scale := float32(0.17677669)
			lp := roundUp(tc.n, panelWidth)
			dst := randSlice(r, lp*tc.dh+5)
			keep := slices.Clone(dst)
			packKT(dst, src, tc.stride, tc.n, tc.dh, scale)
			for j := range lp {
				for d := range tc.dh {
					got := dst[j/panelWidth*tc.dh*panelWidth+d*panelWidth+j%panelWidth]
					var want float32
					if j < tc.n {
						want = src[j*tc.stride+d] * scale
					}
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%+v: key %d dim %d: %v, want %v", tc, j, d, got, want)
					}
				}
			}
			if !slices.Equal(dst[lp*tc.dh:], keep[lp*tc.dh:]) {
				t.Fatalf("%+v: written past the panels", tc)
			}
		}
	})
}
