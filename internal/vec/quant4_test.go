package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDotU4 checks the 4-bit kernel (AVX2 when the CPU has it) against
// plain Go at the extremes of the codes and query bytes.
func TestDotU4(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, rowBytes := range []int{32, 64, 128, 192, 384} {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 13} {
			p := make([]int8, 2*rowBytes)
			for j := range p {
				p[j] = int8(r.IntN(255) - 127)
				if j%7 == 0 {
					p[j] = -127
				} else if j%11 == 0 {
					p[j] = 127
				}
			}
			codes := make([]byte, n*rowBytes)
			for j := range codes {
				codes[j] = byte(r.IntN(256))
				if j%5 == 0 {
					codes[j] = 0xFF
				}
			}
			got, want := make([]int32, n), make([]int32, n)
			dotU4(p, codes, rowBytes, got)
			for i := range n {
				var s int64
				for j := range 2 * rowBytes {
					// Code j: chunk j/64, byte j%32 of it, low nibble for
					// the first 32 coordinates.
					b := codes[i*rowBytes+j/64*32+j%32]
					u := b & 15
					if j%64 >= 32 {
						u = b >> 4
					}
					s += int64(p[j]) * int64(u)
				}
				want[i] = int32(s)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d bytes a row, %d rows: %v, want %v", rowBytes, n, got, want)
			}
			dotU4Go(p, codes, rowBytes, got)
			if !slices.Equal(got, want) {
				t.Fatalf("Go kernel, %d bytes a row, %d rows: %v, want %v", rowBytes, n, got, want)
			}
		}
	}
}

// tieredRows returns n unit rows of dimension dim: "random" (Gaussian),
// "sparse" (a sixth of the coordinates set), "clustered" (a few centres
// with small offsets, so that many cosines are close: the rows a first
// pass must not lose) or "spiky" (one large coordinate, the rest tiny,
// where the codes round most coordinates to zero).
func tieredRows(r *rand.Rand, kind string, n, dim int) [][]float32 {
	centres := make([][]float32, 4)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range centres[c] {
			centres[c][j] = float32(r.NormFloat64())
		}
	}
	rows := make([][]float32, n)
	for i := range rows {
		v := make([]float32, dim)
		switch kind {
		case "sparse":
			for j := range v {
				if r.IntN(6) == 0 {
					v[j] = float32(r.NormFloat64())
				}
			}
		case "clustered":
			c := centres[r.IntN(len(centres))]
			for j := range v {
				v[j] = c[j] + 0.05*float32(r.NormFloat64())
			}
		case "spiky":
			for j := range v {
				v[j] = 1e-3 * float32(r.NormFloat64())
			}
			v[r.IntN(dim)] = 1
		default:
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
		}
		rows[i] = Normalize(v)
	}
	return rows
}

// TestEstimateTieredBounds checks that every exact score lies within its
// tiered estimate's bound, whatever the rescan's floor (every row, none,
// the rows near the best), on random, sparse, clustered and spiky rows of
// dimensions that are and are not multiples of the 4-bit block; that
// rescanning every row gives bounds no looser than Estimate's; that the
// returned lower bound is at least every est-err and at most the best Dot;
// and that the 4-bit bounds are tight enough to prune.
func TestEstimateTieredBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, kind := range []string{"random", "sparse", "clustered", "spiky"} {
		for _, dim := range []int{16, 48, 64, 256, 384} {
			n := 300 + r.IntN(200)
			rows := tieredRows(r, kind, n, dim)
			m := Matrix{Dim: dim}
			m.QuantizeFrom(10)
			for _, v := range rows {
				m.Append(v)
			}
			m.Set(3, make([]float32, dim)) // a zero row
			queries := tieredRows(r, kind, 6, dim)
			queries = append(queries, make([]float32, dim)) // a zero query
			for qi, q := range queries {
				est8, err8 := make([]float64, n), make([]float64, n)
				m.Estimate(q, est8, err8)
				for _, floor := range []string{"all", "none", "near"} {
					refine := func(maxLow float64) float64 {
						switch floor {
						case "all":
							return math.Inf(-1)
						case "none":
							return math.Inf(1)
						}
						return maxLow - 0.05
					}
					est, err := make([]float64, n), make([]float64, n)
					got := m.EstimateTiered(q, est, err, refine)
					want, best := math.Inf(-1), math.Inf(-1)
					worst := 0.0
					for i := range n {
						d := float64(Dot(q, m.Row(i)))
						if !(math.Abs(d-est[i]) <= err[i]) {
							t.Fatalf("%s dim %d query %d (%s): row %d: Dot %v, estimate %v ± %v", kind, dim, qi, floor, i, d, est[i], err[i])
						}
						if floor == "all" && err[i] > err8[i] {
							t.Fatalf("%s dim %d query %d: row %d bound %v, Estimate's %v", kind, dim, qi, i, err[i], err8[i])
						}
						want = max(want, est[i]-err[i])
						best = max(best, d)
						worst = max(worst, err[i])
					}
					if !(got >= want && got <= best) {
						t.Fatalf("%s dim %d query %d (%s): largest lower bound %v, want at least %v and at most the best Dot %v", kind, dim, qi, floor, got, want, best)
					}
					if floor == "none" && worst > 0.3 {
						t.Errorf("%s dim %d query %d: 4-bit bounds up to %v, too loose to prune", kind, dim, qi, worst)
					}
				}
			}
		}
	}
}

// TestEstimateTieredEdges checks queries that are not finite (every bound
// infinite) and rows that are not finite (their bounds infinite).
func TestEstimateTieredEdges(t *testing.T) {
	m := Matrix{Dim: 64}
	m.QuantizeFrom(1)
	r := rand.New(rand.NewPCG(25, 26))
	for _, v := range tieredRows(r, "random", 5, 64) {
		m.Append(v)
	}
	bad := make([]float32, 64)
	bad[7] = float32(math.Inf(1))
	m.Append(bad)
	est, err := make([]float64, 6), make([]float64, 6)
	q := tieredRows(r, "random", 1, 64)[0]
	m.EstimateTiered(q, est, err, func(float64) float64 { return math.Inf(-1) })
	if !math.IsInf(err[5], 1) {
		t.Fatalf("row with +Inf: bound %v", err[5])
	}
	for i := range 5 {
		if d := float64(Dot(q, m.Row(i))); !(math.Abs(d-est[i]) <= err[i]) || math.IsInf(err[i], 0) {
			t.Fatalf("row %d: Dot %v, estimate %v ± %v", i, d, est[i], err[i])
		}
	}
	q[3] = float32(math.NaN())
	if low := m.EstimateTiered(q, est, err, func(float64) float64 { return 0 }); !math.IsInf(low, -1) {
		t.Fatalf("NaN query: largest lower bound %v", low)
	}
	for i, e := range err {
		if !math.IsInf(e, 1) {
			t.Fatalf("NaN query: row %d bound %v", i, e)
		}
	}
}

// TestQuant4Splice checks that the 4-bit copy follows the rows through
// Set, Splice (reordered and compacted) and whole-matrix quantization, as
// a copy built row by row from the same rows.
func TestQuant4Splice(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	dim := 80
	rows := tieredRows(r, "random", 200, dim)
	a := Matrix{Dim: dim}
	a.QuantizeFrom(1)
	for _, v := range rows {
		a.Append(v)
	}
	b := Matrix{Dim: dim}
	for _, v := range rows {
		b.Append(v)
	}
	b.QuantizeFrom(100) // at once, in parallel
	same := func(name string, x, y *quant4) {
		t.Helper()
		if x.rowBytes != y.rowBytes || !slices.Equal(x.codes, y.codes) || !slices.Equal(x.scale, y.scale) || !slices.Equal(x.res, y.res) ||
			!slices.Equal(x.inf, y.inf) || !slices.Equal(x.norm, y.norm) || !slices.Equal(x.round, y.round) {
			t.Fatalf("%s: 4-bit copies differ", name)
		}
	}
	same("whole", &a.q.q4, &b.q.q4)
	fresh := func(rows [][]float32) *Matrix {
		m := Matrix{Dim: dim}
		m.QuantizeFrom(1)
		for _, v := range rows {
			m.Append(v)
		}
		return &m
	}
	// Reordered, with a new row: the copying Splice.
	extra := tieredRows(r, "sparse", 1, dim)[0]
	src := []int{5, 6, 7, 0, 1, -1, 100, 101}
	var want [][]float32
	for _, s := range src {
		if s < 0 {
			want = append(want, extra)
		} else {
			want = append(want, rows[s])
		}
	}
	got := a.Splice(src, [][]float32{extra})
	same("splice", &got.q.q4, &fresh(want).q.q4)
	// Rows dropped in order, one appended: the compacting Splice.
	src = []int{0, 2, 3, 10, -1}
	want = [][]float32{rows[0], rows[2], rows[3], rows[10], extra}
	got = a.Splice(src, [][]float32{extra})
	same("compact", &got.q.q4, &fresh(want).q.q4)
	got.Set(1, rows[50])
	want[1] = rows[50]
	same("set", &got.q.q4, &fresh(want).q.q4)
}

// BenchmarkEstimateTiered times the tiered scan of 100k rows beside
// Estimate, with the floor offline retrieval uses.
func BenchmarkEstimateTiered(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 100000
	m := Matrix{Dim: 256}
	for _, v := range tieredRows(r, "sparse", n, 256) {
		m.Append(v)
	}
	m.QuantizeFrom(1)
	q := tieredRows(r, "sparse", 1, 256)[0]
	est, bound := make([]float64, n), make([]float64, n)
	b.Run("int8", func(b *testing.B) {
		for b.Loop() {
			m.Estimate(q, est, bound)
		}
	})
	b.Run("tiered", func(b *testing.B) {
		mean := m.MeanDot(q)
		for b.Loop() {
			m.EstimateTiered(q, est, bound, func(lo float64) float64 { return mean + 0.9*max(0, lo-mean) })
		}
	})
}

// TestBounds4 checks the AVX2 bound loop against Go's on random terms,
// rows that are not finite among them, for lengths that are and are not
// multiples of 4. The two take the same operations in the same order;
// where Go's compiler fuses a multiplication and an addition (GOAMD64=v3)
// they may differ in the last bits, hence the relative 1e-12.
func TestBounds4(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	near := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b))
	}
	for _, k := range []int{1, 3, 4, 5, 8, 13, 256} {
		c := &bound4{t: r.Float64() * 1e-2, qnorm: 1 + r.Float64(), ql1: 3 + r.Float64(), qerr: r.Float64() * 1e-2, eps: 1e-15, off: int32(r.IntN(2000) - 1000)}
		dots := make([]int32, k)
		scale, res, inf, norm, round := make([]float32, k), make([]float32, k), make([]float32, k), make([]float32, k), make([]float32, k)
		for j := range k {
			dots[j] = int32(r.IntN(200000) - 100000)
			scale[j], res[j], inf[j] = r.Float32()*0.1, r.Float32()*0.2, r.Float32()*0.05
			norm[j], round[j] = r.Float32(), r.Float32()*1e-5
			if j%7 == 3 {
				scale[j], res[j], inf[j], norm[j], round[j] = 0, float32(math.Inf(1)), float32(math.Inf(1)), 0, 0
			}
		}
		est, err := make([]float64, k), make([]float64, k)
		est2, err2 := make([]float64, k), make([]float64, k)
		got := bounds4(c, dots, scale, res, inf, norm, round, est, err)
		want := bounds4Go(c, dots, scale, res, inf, norm, round, est2, err2)
		if !near(got, want) {
			t.Fatalf("%d rows: largest lower bound %v, Go %v", k, got, want)
		}
		for j := range k {
			if !near(est[j], est2[j]) || !near(err[j], err2[j]) {
				t.Fatalf("%d rows, row %d: %v ± %v, Go %v ± %v", k, j, est[j], err[j], est2[j], err2[j])
			}
		}
	}
}

// TestEstimateTieredParallel checks the bounds on a matrix large enough
// for both passes to split the rows among goroutines (each range with its
// own list of rows to rescan).
func TestEstimateTieredParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	n, dim := 20000, 256
	if n*dim/(4*parallelFloats) < 2 {
		t.Fatal("too small to split")
	}
	m := Matrix{Dim: dim}
	for _, v := range tieredRows(r, "clustered", n, dim) {
		m.Append(v)
	}
	m.QuantizeFrom(1)
	est, err := make([]float64, n), make([]float64, n)
	for _, q := range tieredRows(r, "clustered", 3, dim) {
		mean := m.MeanDot(q)
		got := m.EstimateTiered(q, est, err, func(lo float64) float64 { return max(lo, mean) })
		want, best := math.Inf(-1), math.Inf(-1)
		for i := range n {
			d := float64(Dot(q, m.Row(i)))
			if !(math.Abs(d-est[i]) <= err[i]) {
				t.Fatalf("row %d: Dot %v, estimate %v ± %v", i, d, est[i], err[i])
			}
			want, best = max(want, est[i]-err[i]), max(best, d)
		}
		if !(got >= want && got <= best) {
			t.Fatalf("largest lower bound %v, want at least %v and at most %v", got, want, best)
		}
	}
}

// TestDotU4Extremes checks the 4-bit kernel where its sums are largest:
// every code 15 and every query byte 127 or -128, so that four chunks of
// word sums reach 30720 in magnitude (within int16: the kernel sums four
// chunks in words before widening them), on rows of 1 to 8 chunks.
func TestDotU4Extremes(t *testing.T) {
	for _, rowBytes := range []int{32, 128, 160, 256} {
		for _, pv := range []int8{127, -128} {
			for _, n := range []int{4, 5, 8, 11} {
				p := slices.Repeat([]int8{pv}, 2*rowBytes)
				codes := slices.Repeat([]byte{0xFF}, n*rowBytes)
				got := make([]int32, n)
				dotU4(p, codes, rowBytes, got)
				want := int32(pv) * 15 * int32(2*rowBytes)
				for i, x := range got {
					if x != want {
						t.Fatalf("%d bytes a row, query %d, row %d of %d: %d, want %d", rowBytes, pv, i, n, x, want)
					}
				}
			}
		}
	}
}

// TestListSum checks listSum (AVX2 where the CPU has it) against
// listSumGo on every length to 40: sums at the floor, NaN, -Inf and +Inf
// among them, a base and a list already begun.
func TestListSum(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	special := []float64{0.25, math.NaN(), math.Inf(1), math.Inf(-1), 0}
	for trial := range 400 {
		n := trial % 41
		a, b := make([]float64, n), make([]float64, n+r.IntN(3))
		for j := range a {
			a[j], b[j] = r.Float64()-0.3, r.Float64()*0.1
			if r.IntN(4) == 0 {
				a[j], b[j] = special[r.IntN(len(special))], 0 // at the floor too
			}
		}
		base := r.IntN(1000)
		want := listSumGo(a, b, 0.25, base, []int32{-1})
		if got := listSum(a, b, 0.25, base, []int32{-1}); !slices.Equal(got, want) {
			t.Fatalf("%v + %v: %v, want %v", a, b, got, want)
		}
	}
}

// TestEstimateTieredReusedLists checks that the lists of rows to rescan,
// reused from one call to the next, start empty: a small matrix's
// estimates are the same before and after scans of a larger one (whose
// lists hold rows the small one does not have).
func TestEstimateTieredReusedLists(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	matrix := func(n int) *Matrix {
		m := &Matrix{Dim: 256}
		for _, v := range tieredRows(r, "clustered", n, 256) {
			m.Append(v)
		}
		m.QuantizeFrom(1)
		return m
	}
	small, large := matrix(300), matrix(20000)
	q := tieredRows(r, "clustered", 1, 256)[0]
	scan := func(m *Matrix, q []float32) ([]float64, []float64, float64) {
		est, err := make([]float64, m.Rows()), make([]float64, m.Rows())
		low := m.EstimateTiered(q, est, err, func(lo float64) float64 { return math.Inf(-1) }) // rescan all
		return est, err, low
	}
	est, err, low := scan(small, q)
	for _, lq := range tieredRows(r, "clustered", 3, 256) {
		scan(large, lq)
	}
	est2, err2, low2 := scan(small, q)
	if !slices.Equal(est, est2) || !slices.Equal(err, err2) || low != low2 {
		t.Fatal("estimates of the small matrix changed after scans of a large one")
	}
}
