package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDotAndNormalize(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{5, 4, 3, 2, 1}
	if got := Dot(a, b); got != 35 {
		t.Fatalf("Dot = %v, want 35", got)
	}
	v := Normalize([]float32{3, 4})
	if math.Abs(float64(v[0])-0.6) > 1e-6 || math.Abs(float64(v[1])-0.8) > 1e-6 {
		t.Fatalf("Normalize = %v", v)
	}
	z := Normalize([]float32{0, 0})
	if z[0] != 0 || z[1] != 0 {
		t.Fatalf("zero vector changed: %v", z)
	}
}

func TestEncodeDecode(t *testing.T) {
	v := []float32{0, -1.5, float32(math.Pi), math.MaxFloat32, float32(math.Inf(-1))}
	got, err := Decode(Encode(v))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, v) {
		t.Fatalf("round trip = %v, want %v", got, v)
	}
	if _, err := Decode([]byte{1, 2, 3}); err == nil {
		t.Fatal("Decode of 3 bytes: want error")
	}
}

// TestTopKMatchesSort checks the heap against a full sort on random data,
// including ties and filters.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		dim := 1 + r.IntN(8)
		n := r.IntN(60)
		m := Matrix{Dim: dim}
		for range n {
			row := make([]float32, dim)
			for j := range row {
				row[j] = float32(r.IntN(5)) // small ints make ties common
			}
			m.Append(row)
		}
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(r.IntN(3))
		}
		keep := func(i int) bool { return i%3 != 1 }
		k := r.IntN(12)
		got := m.TopK(q, k, keep)
		var all []Hit
		for i := range n {
			if keep(i) {
				all = append(all, Hit{i, Dot(q, m.Row(i))})
			}
		}
		slices.SortFunc(all, func(a, b Hit) int {
			if better(a, b) {
				return -1
			}
			if better(b, a) {
				return 1
			}
			return 0
		})
		if len(all) > k {
			all = all[:k]
		}
		if !slices.Equal(got, all) {
			t.Fatalf("trial %d: TopK = %v, want %v", trial, got, all)
		}
	}
}

func BenchmarkTopK(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			m := Matrix{Dim: 384}
			row := make([]float32, 384)
			for range n {
				for j := range row {
					row[j] = r.Float32()
				}
				m.Append(Normalize(row))
			}
			q := Normalize(slices.Clone(row))
			for b.Loop() {
				m.TopK(q, 10, nil)
			}
		})
	}
}

func itoa(n int) string {
	switch n {
	case 1000:
		return "1k"
	case 10000:
		return "10k"
	}
	return "100k"
}

// TestScoresBitIdentical checks that the SIMD scan gives exactly Dot's
// float32 result (same rounding) for every dimension and row count,
// including the parallel split of large matrices.
func TestScoresBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	randMatrix := func(n, dim int) (Matrix, []float32) {
		m := Matrix{Dim: dim}
		row := make([]float32, dim)
		for range n {
			for j := range row {
				row[j] = float32(r.NormFloat64()) * float32(math.Pow(10, float64(r.IntN(7)-3)))
			}
			m.Append(row)
		}
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		return m, q
	}
	tests := []struct{ n, dim int }{
		{0, 4}, {1, 4}, {3, 8}, {4, 12}, {5, 3}, {7, 256}, {9, 384}, {13, 5}, {2, 1},
		{parallelFloats/256 + 3, 256}, {3 * parallelFloats / 384, 384},
	}
	for _, tc := range tests {
		m, q := randMatrix(tc.n, tc.dim)
		got := m.Scores(q)
		for i := range tc.n {
			if want := Dot(q, m.Row(i)); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%d×%d: row %d: Scores %v (%#x), Dot %v (%#x)", tc.n, tc.dim, i, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
	}
}

func BenchmarkScores(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			m := Matrix{Dim: 256}
			row := make([]float32, 256)
			for range n {
				for j := range row {
					row[j] = r.Float32()
				}
				m.Append(Normalize(row))
			}
			q := Normalize(slices.Clone(row))
			dst := make([]float32, n)
			for b.Loop() {
				m.ScoresInto(dst, q)
			}
		})
	}
}
