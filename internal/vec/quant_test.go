package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEstimateBounds checks that every exact score lies within its
// estimate's bound, for dense and sparse rows, after appends past the
// quantization threshold and after Set, and that bounds are tight enough
// to be useful.
func TestEstimateBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		dim, n int
		sparse bool
	}{{16, 50, false}, {256, 700, true}, {384, 500, false}, {32, 3, false}} {
		m := Matrix{Dim: tc.dim}
		m.QuantizeFrom(10)
		row := func() []float32 {
			v := make([]float32, tc.dim)
			for j := range v {
				if tc.sparse && r.IntN(6) != 0 {
					continue
				}
				v[j] = float32(r.NormFloat64())
			}
			return Normalize(v)
		}
		for range tc.n {
			m.Append(row())
		}
		if m.Quantized() != (tc.n >= 10) {
			t.Fatalf("%d rows: Quantized() = %v", tc.n, m.Quantized())
		}
		if !m.Quantized() {
			continue
		}
		m.Set(tc.n/2, row())
		m.Set(0, make([]float32, tc.dim)) // a zero row
		for trial := range 5 {
			q := row()
			if trial == 4 {
				q = make([]float32, tc.dim) // a zero query
			}
			est := make([]float64, tc.n)
			bound := make([]float64, tc.n)
			m.Estimate(q, est, bound)
			worst := 0.0
			for i := range tc.n {
				d := float64(Dot(q, m.Row(i)))
				if math.Abs(d-est[i]) > bound[i] {
					t.Fatalf("dim %d row %d: Dot %v, estimate %v ± %v", tc.dim, i, d, est[i], bound[i])
				}
				worst = max(worst, bound[i])
			}
			if worst > 0.05 {
				t.Errorf("dim %d: bound up to %v, too loose to prune", tc.dim, worst)
			}
		}
	}
}

// TestDotI8 checks the integer kernel against plain Go, at the extremes of
// the ranges Estimate uses.
func TestDotI8(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, dim := range []int{16, 32, 256, 384} {
		for _, n := range []int{0, 1, 2, 3, 5} {
			p := make([]int16, dim)
			codes := make([]int8, n*dim)
			for j := range p {
				p[j] = int16(r.IntN(65535) - 32767)
				if j%7 == 0 {
					p[j] = -32767
				}
			}
			for j := range codes {
				codes[j] = int8(r.IntN(255) - 127)
				if j%5 == 0 {
					codes[j] = -127
				}
			}
			out := make([]int32, n)
			dotI8(p, codes, dim, out)
			for i := range n {
				var want int64
				for j := range dim {
					want += int64(p[j]) * int64(codes[i*dim+j])
				}
				if int64(out[i]) != want {
					t.Fatalf("dim %d row %d: %d, want %d", dim, i, out[i], want)
				}
			}
		}
	}
}

func BenchmarkEstimate(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			m := Matrix{Dim: 256}
			m.QuantizeFrom(1)
			row := make([]float32, 256)
			for range n {
				for j := range row {
					row[j] = float32(r.NormFloat64())
				}
				m.Append(Normalize(row))
			}
			q := Normalize(row)
			est, bound := make([]float64, n), make([]float64, n)
			for b.Loop() {
				m.Estimate(q, est, bound)
			}
		})
	}
}

func TestMeanDot(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	m := Matrix{Dim: 16}
	m.QuantizeFrom(2)
	row := func() []float32 {
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return Normalize(v)
	}
	for range 300 {
		m.Append(row())
	}
	m.Set(7, row())
	q := row()
	want := 0.0
	for i := range m.Rows() {
		want += float64(Dot(q, m.Row(i)))
	}
	want /= float64(m.Rows())
	if got := m.MeanDot(q); math.Abs(got-want) > 1e-9 {
		t.Fatalf("MeanDot = %v, want %v", got, want)
	}
}

// TestQuantizeWholeMatchesIncremental checks that quantizing a full matrix
// at once (in parallel) gives the same copy, sum included, as quantizing
// row by row while appending.
func TestQuantizeWholeMatchesIncremental(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, dim := 3*parallelFloats/64+7, 64
	a, b := Matrix{Dim: dim}, Matrix{Dim: dim}
	a.QuantizeFrom(1)
	for range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		a.Append(v)
		b.Append(v)
	}
	b.QuantizeFrom(100)
	if !b.Quantized() {
		t.Fatal("not quantized")
	}
	if !slices.Equal(a.q.codes, b.q.codes) || !slices.Equal(a.q.terms, b.q.terms) || !slices.Equal(a.q.sum, b.q.sum) {
		t.Fatal("whole-matrix quantization differs from row by row")
	}
}

func BenchmarkQuantize(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	m := Matrix{Dim: 256}
	row := make([]float32, 256)
	for range 20000 {
		for j := range row {
			row[j] = float32(r.NormFloat64())
		}
		m.Append(Normalize(row))
	}
	for b.Loop() {
		m.q = nil
		m.QuantizeFrom(1)
	}
}

// TestQuantTermsI8 checks each row's int8 terms against their definitions
// from its codes: errT (from the stored ||c||₁) is s*||c||₁/2*(1+1e-9)
// and errQ (||v − s*c|| + (dim+8)*2⁻²⁴*||v||)*(1+1e-9) + 1e-12, the
// float64 values the bounds took when they were stored as such; a row
// that is not finite has scale 0, errQ +Inf and errT 0.
func TestQuantTermsI8(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, dim := range []int{16, 256, 384} {
		m := Matrix{Dim: dim}
		for i := range 200 {
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(r.NormFloat64() * math.Exp(r.Float64()*8-4))
			}
			if i == 7 {
				v[3] = float32(math.Inf(1))
			}
			m.Append(v)
		}
		m.QuantizeFrom(1)
		for i := range m.Rows() {
			tm := m.q.terms[i]
			v := m.Row(i)
			if i == 7 {
				if tm.scale != 0 || !math.IsInf(tm.errQ, 1) || tm.errT() != 0 {
					t.Fatalf("row %d (not finite): terms %+v, errT %v", i, tm, tm.errT())
				}
				continue
			}
			s := tm.scale
			var l1, resid, norm float64
			for j, c := range m.q.codes[i*dim : (i+1)*dim] {
				l1 += math.Abs(float64(c))
				x := float64(v[j]) - float64(s)*float64(c)
				resid += x * x
				norm += float64(v[j]) * float64(v[j])
			}
			errT := float64(s) * l1 / 2 * (1 + 1e-9)
			errQ := (math.Sqrt(resid)+float64(dim+8)*0x1p-24*math.Sqrt(norm))*(1+1e-9) + 1e-12
			if tm.errT() != errT || tm.errQ != errQ {
				t.Fatalf("dim %d row %d: errT %v errQ %v, want %v and %v", dim, i, tm.errT(), tm.errQ, errT, errQ)
			}
		}
	}
}
