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
		if x.rowBytes != y.rowBytes || !slices.Equal(x.codes, y.codes) || !slices.Equal(x.terms, y.terms) {
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
// Estimate, with the floor offline retrieval uses, and UpperTiered.
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
	b.Run("upper", func(b *testing.B) {
		mean := m.MeanDot(q)
		for b.Loop() {
			m.UpperTiered(q, est, func(lo float64) float64 { return mean + 0.9*max(0, lo-mean) })
		}
	})
}

// TestBF16Up checks the rounding up of the 4-bit copy's terms: never
// below its argument, and the next bfloat16 down is.
func TestBF16Up(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, x := range []float64{0, 1e-45, 1e-30, 1.5e-5, 0.1, 1, 1.00390625, 3.4e38, math.MaxFloat32, 1e39, math.Inf(1)} {
		b := bf16Up(x)
		if got := bf16(b); !(got >= x) || b > 0 && !(bf16(b-1) < x) {
			t.Fatalf("bf16Up(%v) = %v", x, got)
		}
	}
	for range 10000 {
		x := math.Exp(r.Float64()*80 - 60)
		if b := bf16Up(x); !(bf16(b) >= x && bf16(b-1) < x && bf16(b) <= x*(1+1.0/128)) {
			t.Fatalf("bf16Up(%v) = %v", x, bf16(b))
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

// TestScan4Block checks the fused first pass (scan4AVX2 where the CPU has
// AVX2) against blockGo, its separate passes, bit for bit: estimates,
// bounds, the largest lower bound and the list, on rows of 1 to 6 chunks,
// blocks of every length to 13 and of blockRows, rows that are not finite
// among them, and floors from -Inf to +Inf and NaN.
func TestScan4Block(t *testing.T) {
	if !useAVX2 {
		t.Log("no AVX2 on this CPU: blockGo against itself")
	}
	r := rand.New(rand.NewPCG(43, 44))
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	sameList := func(a, b list4) bool {
		return slices.Equal(a.rows, b.rows) && slices.EqualFunc(a.est, b.est, same) && slices.EqualFunc(a.err, b.err, same)
	}
	floors := []float64{math.Inf(-1), -0.05, 0, 0.02, 0.1, math.Inf(1), math.NaN()}
	for _, dim := range []int{16, 64, 96, 256, 384} {
		n := blockRows + 13
		m := Matrix{Dim: dim}
		for i, v := range tieredRows(r, "clustered", n, dim) {
			if i%17 == 5 {
				v[i%dim] = float32(math.Inf(1)) // a row that is not finite
			}
			m.Append(v)
		}
		m.QuantizeFrom(1)
		q4 := &m.q.q4
		for _, q := range tieredRows(r, "random", 2, dim) {
			// The query's words and constants as EstimateTiered sets them.
			p := make([]int8, 2*q4.rowBytes)
			var psum int32
			for j, x := range q {
				p[j] = int8(math.Round(float64(x) * 127 / 0.3))
				psum += int32(p[j])
			}
			sc := scan4{p: p, c: bound4{t: 0.3 / 127, qnorm: 1, ql1: 10, qerr: 0.01, eps: 1e-15, off: 8 * psum}}
			for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 12, 13, blockRows} {
				for _, floor := range floors {
					b := r.IntN(n - k + 1)
					est, err := make([]float64, n), make([]float64, n)
					est2, err2 := make([]float64, n), make([]float64, n)
					hi, hi2 := make([]float64, n), make([]float64, n)
					l, l2, lh, lh2 := list4Of(-1), list4Of(-1), list4Of(-1), list4Of(-1)
					low := sc.block(q4, est, err, b, b+k, floor, -0.5, &l)
					low2 := sc.blockGo(q4, est2, err2, b, b+k, floor, -0.5, &l2)
					lowH := sc.block(q4, hi, nil, b, b+k, floor, -0.5, &lh)
					lowH2 := sc.blockGo(q4, hi2, nil, b, b+k, floor, -0.5, &lh2)
					if !same(low, low2) || !sameList(l, l2) || !same(lowH, low2) || !sameList(lh, l2) || !same(lowH2, low2) || !sameList(lh2, l2) {
						t.Fatalf("dim %d, rows %d to %d, floor %v: lower bound %v, list %v; Go %v, %v; upper bounds alone %v, %v; Go %v, %v",
							dim, b, b+k, floor, low, l, low2, l2, lowH, lh, lowH2, lh2)
					}
					for i := range n {
						if !same(est[i], est2[i]) || !same(err[i], err2[i]) || !same(hi[i], hi2[i]) || !same(hi[i], est2[i]+err2[i]) && i >= b && i < b+k {
							t.Fatalf("dim %d, rows %d to %d, row %d: %v ± %v (upper %v), Go %v ± %v (upper %v)", dim, b, b+k, i, est[i], err[i], hi[i], est2[i], err2[i], hi2[i])
						}
					}
					// The list holds the rows at or above the floor, with
					// their estimates and bounds.
					var want []int32
					for i := b; i < b+k; i++ {
						if est2[i]+err2[i] >= floor {
							want = append(want, int32(i))
						}
					}
					if !slices.Equal(l2.rows[1:], want) {
						t.Fatalf("dim %d, rows %d to %d, floor %v: listed %v, want %v", dim, b, b+k, floor, l2.rows[1:], want)
					}
					for j, i := range l.rows[1:] {
						if !same(l.est[j+1], est2[i]) || !same(l.err[j+1], err2[i]) {
							t.Fatalf("dim %d, row %d listed as %v ± %v, want %v ± %v", dim, i, l.est[j+1], l.err[j+1], est2[i], err2[i])
						}
					}
				}
			}
		}
	}
}

// list4Of returns a list4 already holding row i (estimated 0 ± 0).
func list4Of(i int32) list4 { return list4{rows: []int32{i}, est: []float64{0}, err: []float64{0}} }

// TestScan4BlockExtremes checks the fused first pass where its word sums
// are largest (every code 15, every query byte 127 or -128: four chunks
// reach 30720), on rows of 1 to 8 chunks, against blockGo.
func TestScan4BlockExtremes(t *testing.T) {
	for _, dim := range []int{64, 256, 320, 512} {
		for _, pv := range []int8{127, -128} {
			n := 12
			q4, sc := extremeScan4(n, dim, pv)
			est, err := make([]float64, n), make([]float64, n)
			est2, err2 := make([]float64, n), make([]float64, n)
			var list, list2 list4
			low := sc.block(q4, est, err, 0, n, math.Inf(-1), math.Inf(-1), &list)
			low2 := sc.blockGo(q4, est2, err2, 0, n, math.Inf(-1), math.Inf(-1), &list2)
			if low != low2 || !slices.Equal(list.rows, list2.rows) || !slices.Equal(est, est2) || !slices.Equal(err, err2) {
				t.Fatalf("dim %d, query %d: %v ± %v (lower bound %v), Go %v ± %v (%v)", dim, pv, est, err, low, est2, err2, low2)
			}
		}
	}
}

// TestQuant4Terms checks each row's bfloat16 terms against the rows and
// codes they describe: the codes within ±7, the scale at least the
// largest magnitude over 7, and res, inf and norm at least ||r|| + round,
// max|r_j| + round and ||s*c||, and within a bfloat16 step (and the
// margins) of them.
func TestQuant4Terms(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, kind := range []string{"random", "sparse", "clustered", "spiky"} {
		for _, dim := range []int{16, 80, 256, 384} {
			rows := tieredRows(r, kind, 50, dim)
			m := Matrix{Dim: dim}
			for _, v := range rows {
				m.Append(v)
			}
			m.QuantizeFrom(1)
			q4 := &m.q.q4
			for i, v := range rows {
				tm := q4.terms[i]
				s := bf16(tm.scale)
				var res, inf, norm, norm2, maxAbs float64
				for j, x := range v {
					b := q4.codes[i*q4.rowBytes+j/64*32+j%32]
					c := int(b & 15)
					if j%64 >= 32 {
						c = int(b >> 4)
					}
					c -= 8
					if c < -7 || c > 7 {
						t.Fatalf("%s dim %d row %d: code %d", kind, dim, i, c)
					}
					d := float64(x) - s*float64(c)
					res += d * d
					inf = max(inf, math.Abs(d))
					norm += s * float64(c) * s * float64(c)
					norm2 += float64(x) * float64(x)
					maxAbs = max(maxAbs, math.Abs(float64(x)))
				}
				round := float64(dim+8) * 0x1p-24 * math.Sqrt(norm2)
				res, norm = math.Sqrt(res)+round, math.Sqrt(norm)
				inf += round
				within := func(name string, got, want float64) {
					t.Helper()
					if !(got >= want && got <= want*(1+1.0/128)*(1+1e-8)+1e-29) {
						t.Fatalf("%s dim %d row %d: %s %v for %v", kind, dim, i, name, got, want)
					}
				}
				within("scale", s, maxAbs/7)
				within("res", bf16(tm.res), res)
				within("inf", bf16(tm.inf), inf)
				within("norm", bf16(tm.norm), norm)
			}
		}
	}
}

// TestUpperTiered checks that UpperTiered writes EstimateTiered's
// est+err, bit for bit, and returns the same largest lower bound: random
// and clustered rows, a row that is not finite, floors from -Inf to +Inf,
// a zero and a NaN query, and a matrix large enough to split the passes.
func TestUpperTiered(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	for _, n := range []int{37, 20000} {
		dim := 256
		m := Matrix{Dim: dim}
		for i, v := range tieredRows(r, "clustered", n, dim) {
			if i == 7 {
				v[3] = float32(math.Inf(-1))
			}
			m.Append(v)
		}
		m.QuantizeFrom(1)
		queries := tieredRows(r, "random", 2, dim)
		queries = append(queries, m.Row(11), make([]float32, dim), slices.Repeat([]float32{float32(math.NaN())}, dim))
		for qi, q := range queries {
			for _, f := range []float64{math.Inf(-1), 0.9, math.Inf(1)} {
				refine := func(lo float64) float64 { return max(lo*f, lo) }
				if math.IsInf(f, 0) {
					refine = func(float64) float64 { return f }
				}
				est, err, hi := make([]float64, n), make([]float64, n), make([]float64, n)
				low := m.EstimateTiered(q, est, err, refine)
				lowH := m.UpperTiered(q, hi, refine)
				if math.Float64bits(low) != math.Float64bits(lowH) {
					t.Fatalf("%d rows, query %d, floor %v: lower bound %v, upper bounds alone %v", n, qi, f, low, lowH)
				}
				for i := range n {
					if math.Float64bits(hi[i]) != math.Float64bits(est[i]+err[i]) {
						t.Fatalf("%d rows, query %d, floor %v, row %d: upper bound %v, want %v + %v", n, qi, f, i, hi[i], est[i], err[i])
					}
				}
			}
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

// extremeScan4 returns n rows of dim 4-bit codes all 15 and a first pass
// whose query bytes are all pv: the largest sums the kernels can meet.
func extremeScan4(n, dim int, pv int8) (*quant4, *scan4) {
	q4 := &quant4{}
	q4.init(n, dim, n)
	for i := range q4.codes {
		q4.codes[i] = 0xFF
	}
	for i := range n {
		q4.terms[i] = terms4{bf16Up(0.01), bf16Up(0.1), bf16Up(0.01), bf16Up(1)}
	}
	sc := &scan4{p: slices.Repeat([]int8{pv}, 2*q4.rowBytes), c: bound4{t: 1e-3, qnorm: 1, ql1: 10, qerr: 0.01, eps: 1e-15}}
	return q4, sc
}
