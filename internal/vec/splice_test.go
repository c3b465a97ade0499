package vec

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// built returns the matrix of rows appended one by one, quantized from q
// rows: what loading them afresh gives.
func built(dim, q int, rows [][]float32) Matrix {
	m := Matrix{Dim: dim}
	for _, r := range rows {
		m.Append(r)
	}
	m.QuantizeFrom(q)
	return m
}

// sameMatrix fails unless a and b hold the same rows, the same int8 copy
// and the same MeanDot for q, bit for bit.
func sameMatrix(t *testing.T, what string, a, b *Matrix, q []float32) {
	t.Helper()
	if a.Dim != b.Dim || !slices.Equal(a.Data, b.Data) {
		t.Fatalf("%s: rows differ", what)
	}
	if a.Quantized() != b.Quantized() {
		t.Fatalf("%s: quantized %v and %v", what, a.Quantized(), b.Quantized())
	}
	if !a.Quantized() {
		return
	}
	if !slices.Equal(a.q.codes, b.q.codes) || !slices.Equal(a.q.terms, b.q.terms) {
		t.Fatalf("%s: int8 copies differ", what)
	}
	if x, y := a.MeanDot(q), b.MeanDot(q); x != y {
		t.Fatalf("%s: MeanDot %v and %v", what, x, y)
	}
}

// TestSpliceEqualsBuilt checks that dropping, keeping and inserting rows
// with Splice gives exactly the matrix built from the resulting rows one
// by one, also across the quantization threshold, and that Set leaves
// MeanDot exact.
func TestSpliceEqualsBuilt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim, qAt = 32, 8
	row := func() []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return Normalize(v)
	}
	for trial := range 200 {
		n := r.IntN(20)
		rows := make([][]float32, n)
		for i := range rows {
			rows[i] = row()
		}
		m := built(dim, qAt, rows)
		// Keep a random subset of rows in order, with new rows among them.
		var src []int
		var add, want [][]float32
		for i := range n {
			for r.IntN(4) == 0 {
				add = append(add, row())
				src = append(src, -len(add))
				want = append(want, add[len(add)-1])
			}
			if r.IntN(3) != 0 {
				src = append(src, i)
				want = append(want, rows[i])
			}
		}
		if r.IntN(2) == 0 {
			add = append(add, row())
			src = append(src, -len(add))
			want = append(want, add[len(add)-1])
		}
		got := m.Splice(src, add)
		exp := built(dim, qAt, want)
		q := row()
		if len(want) > 0 {
			sameMatrix(t, "splice", &got, &exp, q)
		}
		// Set then MeanDot: the sum is taken again, in row order.
		if len(want) > 0 && got.Quantized() {
			i := r.IntN(len(want))
			v := row()
			got.Set(i, v)
			want[i] = v
			exp = built(dim, qAt, want)
			sameMatrix(t, "set", &got, &exp, q)
		}
		_ = trial
	}
}
