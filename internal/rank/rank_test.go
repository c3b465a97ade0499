package rank

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/vec"
)

// sortedPositive returns the indexes of the positive scores, best first,
// ties by index: the full order Top takes the first k of.
func sortedPositive(scores []float64) []int {
	var idx []int
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

func TestTopMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := r.IntN(400)
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = float64(r.IntN(20)-4) / 4 // ties and non-positive scores
		}
		k := r.IntN(40)
		want := sortedPositive(scores)
		want = want[:min(k, len(want))]
		if got := Top(scores, nil, k); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("trial %d: Top %v, want %v", trial, got, want)
		}
		// Restricted to the positive indexes, it agrees.
		var only []int
		for i, s := range scores {
			if s > 0 {
				only = append(only, i)
			}
		}
		if got := Top(scores, only, k); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("trial %d: Top over only %v, want %v", trial, got, want)
		}
	}
}

func TestHybridNormalisedSum(t *testing.T) {
	lex := []float64{4, 0, 2, 0}
	touched := []int{0, 2}
	dense := []float32{0.1, 0.9, 0.5, -0.3}
	got := Hybrid(4, lex, touched, dense, 10, nil)
	// 0: 1+0.1, 1: 0+0.9, 2: 0.5+0.5, 3: nothing positive.
	if !slices.Equal(Indexes(got), []int{0, 2, 1}) {
		t.Fatalf("Hybrid = %v, want rows 0, 2, 1", got)
	}
	if got := Hybrid(4, lex, touched, dense, 1, func(i int) bool { return i != 0 }); len(got) != 1 || got[0].Index != 2 || math.Abs(got[0].Score-1.5) > 1e-6 {
		t.Errorf("Hybrid with filter = %v, want row 2 at 1+0.5 (BM25 rescaled without row 0)", got)
	}
	if got := Hybrid(4, make([]float64, 4), nil, nil, 3, nil); len(got) != 0 {
		t.Errorf("Hybrid with nothing = %v", got)
	}
}

// TestSearchMatchesFullScan checks that the pruned scan over estimates
// returns exactly the full scan's hits, on hashing and clustered vectors,
// with every kernel set of package vec, blocks and batches of several
// sizes, rows split between goroutines, ties of scores (repeated rows), k
// beyond the rows that score, and rows that are not finite.
func TestSearchMatchesFullScan(t *testing.T) {
	defer func(c, b, n, f int) {
		searchChunk, searchBlock, searchBatch, searchFirst = c, b, n, f
	}(searchChunk, searchBlock, searchBatch, searchFirst)
	eachKernel(func(kernels string) {
		r := rand.New(rand.NewPCG(7, 8))
		emb := hashing.New(0)
		words := strings.Fields("lake painting pottery guitar sister museum bread garden chess yoga kite camera hiking Kyoto Berlin bakery")
		text := func() string {
			var w []string
			for range 3 + r.IntN(8) {
				w = append(w, words[r.IntN(len(words))])
			}
			return strings.Join(w, " ")
		}
		var s Searcher
		for trial := range 48 {
			n := 50 + r.IntN(600)
			texts := make([]string, n)
			for i := range texts {
				texts[i] = text()
			}
			vs, err := emb.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if trial%2 == 1 {
				// Clustered vectors: offsets around a few centres, many
				// close cosines (the rows the 4-bit scan must not lose).
				centres := make([][]float32, 3)
				for c := range centres {
					centres[c] = make([]float32, emb.Dim())
					for j := range centres[c] {
						centres[c][j] = float32(r.NormFloat64())
					}
				}
				for i := range vs {
					c := centres[r.IntN(len(centres))]
					for j := range vs[i] {
						vs[i][j] = c[j] + 0.1*float32(r.NormFloat64())
					}
				}
			}
			if trial%8 == 2 {
				// Repeated rows: equal scores, ranked by index.
				for i := range vs {
					if r.IntN(2) == 0 {
						vs[i] = slices.Clone(vs[r.IntN(1+i/4)])
					}
				}
			}
			m := vec.Matrix{Dim: emb.Dim()}
			m.QuantizeFrom(1)
			for _, v := range vs {
				m.Append(vec.Normalize(v))
			}
			if trial%8 == 6 {
				// Rows that are not finite: an infinite bound, a NaN
				// cosine (no score).
				for range 3 {
					v := slices.Clone(m.Row(r.IntN(n)))
					v[r.IntN(len(v))] = []float32{float32(math.NaN()), float32(math.Inf(1))}[r.IntN(2)]
					m.Set(r.IntN(n), v)
				}
			}
			// BM25 scores on a quarter of the rows; on few (lexRange reads
			// touched, not every row); with a negative one, or all too small
			// to invert (Search falls back to searchBounds); or none.
			lex := make([]float64, n)
			var touched []int
			share := []int{4, 4, 40, 4, 4, 4}[trial%6]
			for i := range n {
				if r.IntN(share) == 0 {
					lex[i] = float64(1 + r.IntN(5))
					touched = append(touched, i)
				}
			}
			switch {
			case trial%6 == 3 && len(touched) > 0:
				lex[touched[r.IntN(len(touched))]] = -1
			case trial%6 == 4:
				for _, i := range touched {
					lex[i] *= 0x1p-1030
				}
			case trial%6 == 5 && trial%4 != 1:
				clear(lex)
				touched = nil
			}
			q := vec.Normalize(slices.Clone(vs[r.IntN(n)]))
			if trial%3 == 0 {
				qv, _ := emb.Embed(context.Background(), []string{text()})
				q = vec.Normalize(qv[0])
			}
			var keep func(int) bool
			if trial%4 == 1 {
				keep = func(i int) bool { return i%3 != 0 }
				if trial%8 == 5 {
					// A row the filter drops may score above the
					// maximum (even a NaN): its bound is no bound.
					for _, i := range touched {
						if !keep(i) {
							lex[i] = []float64{1e300, math.NaN(), math.Inf(1)}[trial%3]
						}
					}
				}
			}
			scores := m.Scores(q)
			for _, sizes := range [][4]int{{32768, 32, 4, 32}, {16, 32, 4, 32}, {32768, 1, 1, 2}, {32768, 3, 7, 1}, {16, 5, 2, 3}, {32768, 8, 3, 4}} {
				// Small chunks split the rows between goroutines; few
				// blocks first make the others wait.
				searchChunk, searchBlock, searchBatch, searchFirst = sizes[0], sizes[1], sizes[2], sizes[3]
				for _, k := range []int{1, 5, 10, 40, n + 10} {
					want := Hybrid(n, lex, touched, scores, k, keep)
					got := s.Search(&m, lex, touched, q, k, keep)
					if !slices.Equal(got, want) {
						t.Fatalf("%s trial %d sizes %v k %d: %v, want %v", kernels, trial, sizes, k, got, want)
					}
					if keep == nil && !slices.ContainsFunc(lex, func(x float64) bool { return x < 0 }) {
						// The greatest score given, as BM25 gives it.
						top := slices.Max(append(slices.Clone(lex), 0))
						if got := s.SearchTop(&m, lex, top, q, k); !slices.Equal(got, want) {
							t.Fatalf("%s trial %d sizes %v k %d: SearchTop %v, want %v", kernels, trial, sizes, k, got, want)
						}
					}
				}
			}
		}
	})
}

// TestSearchTopNotQuantized checks SearchTop on a matrix without 4-bit
// codes (the scores' list rebuilt for Hybrid) against Hybrid.
func TestSearchTopNotQuantized(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m := vec.Matrix{Dim: 8}
	for range 40 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		m.Append(vec.Normalize(v))
	}
	if m.Quantized() {
		t.Fatal("quantized")
	}
	lex := make([]float64, 40)
	var touched []int
	for i := range lex {
		if r.IntN(3) == 0 {
			lex[i] = 1 + r.Float64()
			touched = append(touched, i)
		}
	}
	q := m.Row(7)
	var s Searcher
	for _, k := range []int{1, 5, 50} {
		want := Hybrid(40, lex, touched, m.Scores(q), k, nil)
		if got := s.SearchTop(&m, lex, slices.Max(lex), q, k); !slices.Equal(got, want) {
			t.Fatalf("k %d: %v, want %v", k, got, want)
		}
	}
}

func TestParallelRangeCovers(t *testing.T) {
	for _, n := range []int{0, 1, 5, 100, 1000, 4097} {
		seen := make([]int, n)
		parts := ParallelRange(n, 100, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		if parts < 1 || parts > 4 {
			t.Fatalf("n %d: %d parts", n, parts)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d: row %d covered %d times", n, i, c)
			}
		}
	}
}

// TestQueue checks that a queue pops its rows in decreasing order of their
// scores, ties included, for random scores.
func TestQueue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		// Small queues, and large ones whose heap takes the best first.
		n, levels := r.IntN(50), 10
		if trial%2 == 1 {
			n, levels = r.IntN(5000), []int{10, 300, 100000}[r.IntN(3)]
		}
		scores := make([]float64, n)
		for i := range scores {
			scores[i] = float64(r.IntN(levels)) // ties
		}
		rows := make([]int, 0, n)
		for i := range n {
			if r.IntN(3) > 0 {
				rows = append(rows, i)
			}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		q := NewQueue(scores, slices.Clone(rows))
		if len(rows) > 4*firstBatch {
			// The heap holds the best rows, about firstBatch of them
			// when the scores are distinct.
			least := math.Inf(1)
			for _, i := range q.h {
				least = min(least, scores[i])
			}
			for _, i := range q.rest {
				if scores[i] > least {
					t.Fatalf("trial %d: row %d (%v) waits, the heap holds %v", trial, i, scores[i], least)
				}
			}
			if levels == 100000 && (len(q.h) < firstBatch/4 || len(q.h) > 2*firstBatch) {
				t.Fatalf("trial %d: the heap holds %d of %d rows at first", trial, len(q.h), len(rows))
			}
		}
		var got []float64
		for q.Len() > 0 {
			if q.Len() != len(rows)-len(got) {
				t.Fatalf("trial %d: Len %d after %d pops of %d", trial, q.Len(), len(got), len(rows))
			}
			top := q.Top()
			if i := q.Pop(); i != top {
				t.Fatalf("trial %d: Pop %d after Top %d", trial, i, top)
			}
			got = append(got, scores[top])
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d pops, want %d", trial, len(got), len(want))
		}
		for k := range want {
			if got[k] != scores[want[k]] {
				t.Fatalf("trial %d: pop %d scores %v, want %v", trial, k, got[k], scores[want[k]])
			}
		}
	}
}

// BenchmarkQueue queues 45,000 rows and pops 80 of them, as the pruned
// offline scorer does for the bench's slowest questions.
func BenchmarkQueue(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	scores := make([]float64, 100000)
	for i := range scores {
		scores[i] = r.Float64()
	}
	rows := make([]int, 45000)
	for i := range rows {
		rows[i] = 2 * i
	}
	buf := make([]int, len(rows))
	for b.Loop() {
		copy(buf, rows)
		q := NewQueue(scores, buf)
		for range 80 {
			q.Pop()
		}
	}
}

// TestLexRange checks lexRange against maxKept, bit for bit, on both of
// its ways (in order over every row, and over touched), and that it
// reports whether a touched score has its sign bit set or the maximum is
// NaN.
func TestLexRange(t *testing.T) {
	eachRankKernel(func(kernels string) { testLexRange(t, kernels) })
}

func testLexRange(t *testing.T, kernels string) {
	r := rand.New(rand.NewPCG(9, 10))
	specials := []float64{-1, math.Copysign(0, -1), math.NaN(), -math.NaN(), math.Inf(1), 0x1p-1074, 0}
	for trial := range 2000 {
		n := 1 + r.IntN(200)
		lex := make([]float64, n)
		var touched []int
		share := []int{1, 2, 20}[trial%3]
		for i := range n {
			if r.IntN(share) == 0 {
				lex[i] = r.Float64() * 10
				touched = append(touched, i)
			}
		}
		if trial%4 == 1 && len(touched) > 0 {
			lex[touched[r.IntN(len(touched))]] = specials[r.IntN(len(specials))]
		}
		var keep func(int) bool
		if trial%5 == 2 {
			keep = func(i int) bool { return i%3 != 0 }
		}
		want := maxKept(lex, touched, keep)
		wantOK := !math.IsNaN(want)
		for _, i := range touched {
			wantOK = wantOK && !math.Signbit(lex[i])
		}
		got, ok := lexRange(lex, touched, keep)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) || ok != wantOK {
			t.Fatalf("%s trial %d: lexRange %v, %v; want %v, %v", kernels, trial, got, ok, want, wantOK)
		}
	}
}

// TestLexInverse checks that a score times lexInverse's multiplier, rounded,
// is never below lexPart's quotient, across the range it accepts, and
// that it refuses the maxima it cannot invert.
func TestLexInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 200000 {
		maxLex := math.Ldexp(1+r.Float64(), r.IntN(2000)-1000)
		inv, ok := lexInverse(maxLex)
		if !ok {
			t.Fatalf("lexInverse(%v) refused", maxLex)
		}
		x := maxLex * r.Float64()
		if trial%3 == 0 {
			x = math.Ldexp(1+r.Float64(), r.IntN(2001)-1001)
		}
		if x*inv < lexPart(x, maxLex) {
			t.Fatalf("lexInverse(%v) = %v: %v times it is %v, below %v", maxLex, inv, x, x*inv, lexPart(x, maxLex))
		}
	}
	if inv, ok := lexInverse(0); !ok || inv != 0 {
		t.Errorf("lexInverse(0) = %v, %v; want 0, true", inv, ok)
	}
	for _, m := range []float64{-1, math.NaN(), math.Inf(1), 0x1p-1074, 0x1p-1001, 0x1p1001, math.MaxFloat64} {
		if _, ok := lexInverse(m); ok {
			t.Errorf("lexInverse(%v) accepted", m)
		}
	}
}

// TestSearchNegativeCosines checks Search where the best rows have
// negative cosines and the highest BM25 scores: their scores are the BM25
// part alone, which the pruned scan must not take for the upper bound of
// the cosine plus that part.
func TestSearchNegativeCosines(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var s Searcher
	for trial := range 20 {
		const n, dim = 300, 32
		m := vec.Matrix{Dim: dim}
		m.QuantizeFrom(1)
		vs := make([][]float32, n)
		for i := range vs {
			vs[i] = make([]float32, dim)
			for j := range vs[i] {
				vs[i][j] = float32(r.NormFloat64())
			}
			m.Append(vec.Normalize(vs[i]))
		}
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		q = vec.Normalize(q)
		lex := make([]float64, n)
		var touched []int
		for i, v := range vs {
			if c := vec.Dot(q, v); c < -0.2 {
				lex[i] = float64(-c) * 10
				touched = append(touched, i)
			}
		}
		for _, k := range []int{1, 3, 10} {
			want := Hybrid(n, lex, touched, m.Scores(q), k, nil)
			if m.Scores(q)[want[0].Index] >= 0 {
				t.Fatalf("trial %d: the best row has a cosine of %v", trial, m.Scores(q)[want[0].Index])
			}
			if got := s.Search(&m, lex, touched, q, k, nil); !slices.Equal(got, want) {
				t.Fatalf("trial %d k %d: %v, want %v", trial, k, got, want)
			}
		}
	}
}

// TestBestFirstTightBounds checks bestFirst against Hybrid when its upper
// bounds of the cosines are the cosines themselves, or a little above,
// or NaN (no bound): bounds that equal the floor, the scores and each
// other, so that a row whose bound ties the k-th best score, and wins
// the tie by its index, must still be scored. It also checks that it
// scores few rows: those whose bound reaches the final floor, those it
// scores first to set a floor, and at most a batch less one more. Half the matrices are quantized, where the
// rows left once k are scored take their int8 bounds too.
func TestBestFirstTightBounds(t *testing.T) {
	defer func(c, b, n, f int) {
		searchChunk, searchBlock, searchBatch, searchFirst = c, b, n, f
	}(searchChunk, searchBlock, searchBatch, searchFirst)
	eachRankKernel(func(kernels string) { testBestFirstTightBounds(t, kernels) })
}

func testBestFirstTightBounds(t *testing.T, kernels string) {
	r := rand.New(rand.NewPCG(15, 16))
	var s Searcher
	for trial := range 400 {
		const dim = 16
		n := 1 + r.IntN(300)
		m := vec.Matrix{Dim: dim}
		if trial%2 == 0 {
			// Int8 bounds for the rows left once k are scored.
			m.QuantizeFrom(1)
		}
		distinct := 1 + r.IntN(6)
		rows := make([][]float32, distinct)
		for j := range rows {
			rows[j] = make([]float32, dim)
			for d := range rows[j] {
				rows[j][d] = float32(r.IntN(5) - 1)
			}
		}
		for range n {
			m.Append(rows[r.IntN(distinct)])
		}
		q := make([]float32, dim)
		for d := range q {
			q[d] = float32(r.IntN(3))
		}
		lex := make([]float64, n)
		var touched []int
		for i := range n {
			if r.IntN(2) == 0 {
				lex[i] = float64(r.IntN(4))
				touched = append(touched, i)
			}
		}
		var keep func(int) bool
		if trial%5 == 3 {
			keep = func(i int) bool { return i%4 != 1 }
		}
		maxLex, ok := lexRange(lex, touched, keep)
		inv, invOK := lexInverse(maxLex)
		if !ok || !invOK {
			t.Fatalf("trial %d: lexRange %v, %v; lexInverse %v", trial, maxLex, ok, invOK)
		}
		scores := m.Scores(q)
		searchChunk, searchBlock, searchBatch = []int{32768, 7}[trial%2], []int{1 + r.IntN(9), 8, 16}[trial%3], 1+r.IntN(5)
		searchFirst = []int{1, 2, 5, 32}[r.IntN(4)]
		for _, k := range []int{1, 2, 5, n + 1} {
			s.est = grow(s.est, n)
			for i, c := range scores {
				s.est[i] = float64(c)
				switch r.IntN(8) {
				case 0:
					s.est[i] += float64(r.IntN(2))
				case 1:
					s.est[i] = math.NaN()
				}
			}
			want := Hybrid(n, lex, touched, scores, k, keep)
			got := s.bestFirst(&m, lex, maxLex, inv, q, k, keep)
			if !slices.Equal(got, want) {
				t.Fatalf("%s trial %d k %d block %d batch %d first %d: %v, want %v", kernels, trial, k, searchBlock, searchBatch, searchFirst, got, want)
			}
			// Best bound first, it scores the rows whose bound (s.est
			// now) reaches the final floor, the rows it scores first
			// (s.done) that do not, and at most a batch less one more.
			floor, need := math.SmallestNonzeroFloat64, 0
			if len(got) == k {
				floor = got[k-1].Score
			}
			for i, b := range s.est[:n] {
				if b >= floor && (keep == nil || keep(i)) {
					need++
				}
			}
			for _, i := range s.done {
				if s.est[i] < floor {
					need++
				}
			}
			if s.scored > need+searchBatch-1 {
				t.Fatalf("%s trial %d k %d block %d batch %d first %d: %d rows scored, %d reach the floor", kernels, trial, k, searchBlock, searchBatch, searchFirst, s.scored, need)
			}
		}
	}
}

// TestBlockBounds checks blockBounds, with each of this package's kernels,
// against withDense of each row: the rows' bounds bit for bit as the Go
// loop writes them, NaN bounds set to +Inf, and each block's maximum.
func TestBlockBounds(t *testing.T) {
	defer func(b int) { searchBlock = b }(searchBlock)
	r := rand.New(rand.NewPCG(17, 18))
	specials := []float64{math.NaN(), -math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 2, -2}
	for trial := range 500 {
		n := r.IntN(300)
		searchBlock = []int{8, 16, 32, 1 + r.IntN(40)}[trial%4]
		lex, hi := make([]float64, n), make([]float64, n)
		for i := range n {
			if r.IntN(3) > 0 {
				lex[i] = r.Float64() * 20
			}
			hi[i] = r.Float64()*3 - 1.5
			if r.IntN(40) == 0 {
				hi[i] = specials[r.IntN(len(specials))]
			}
		}
		inv := 1 / (20 * r.Float64())
		nb := (n + searchBlock - 1) / searchBlock
		var wantHi []float64
		eachRankKernel(func(kernels string) {
			h, bmax := slices.Clone(hi), make([]float64, nb)
			blockBounds(lex, h, inv, bmax)
			for i := range n {
				want := withDense(lex[i]*inv, hi[i])
				if want != want {
					want = math.Inf(1)
				}
				if h[i] != want {
					t.Fatalf("%s trial %d: row %d (lex %v, hi %v): bound %v, want %v", kernels, trial, i, lex[i], hi[i], h[i], want)
				}
			}
			for b := range nb {
				m := 0.0
				for _, x := range h[b*searchBlock : min((b+1)*searchBlock, n)] {
					m = max(m, x)
				}
				if bmax[b] != m {
					t.Fatalf("%s trial %d: block %d of %d rows: max %v, want %v", kernels, trial, b, searchBlock, bmax[b], m)
				}
			}
			if wantHi == nil {
				wantHi = h
				return
			}
			for i := range n {
				if math.Float64bits(h[i]) != math.Float64bits(wantHi[i]) {
					t.Fatalf("%s trial %d: row %d: bound %v, the Go loop's %v", kernels, trial, i, h[i], wantHi[i])
				}
			}
		})
	}
}

// TestAtLeast checks atLeast, with each of this package's kernels, against
// a loop, with ties of the floor, NaNs, infinities and zeros of either
// sign, blocks of several sizes and blocks that it may skip.
func TestAtLeast(t *testing.T) {
	defer func(b int) { searchBlock = b }(searchBlock)
	r := rand.New(rand.NewPCG(19, 20))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 0.5}
	eachRankKernel(func(kernels string) {
		for trial := range 500 {
			n := r.IntN(100)
			hi := make([]float64, n)
			for i := range hi {
				hi[i] = float64(r.IntN(8)) / 8
				if r.IntN(10) == 0 {
					hi[i] = specials[r.IntN(len(specials))]
				}
			}
			floor := []float64{0.5, 0, math.Inf(1), math.Inf(-1), float64(r.IntN(8)) / 8}[trial%5]
			var want []int32
			for i, h := range hi {
				if h >= floor {
					want = append(want, int32(i))
				}
			}
			// Each block's maximum (of the values that are not NaN),
			// or more.
			searchBlock = []int{8, 16, 32, 1 + r.IntN(20)}[trial%4]
			bmax := make([]float64, (n+searchBlock-1)/searchBlock)
			for b := range bmax {
				bmax[b] = math.Inf(-1)
				for _, h := range hi[b*searchBlock : min((b+1)*searchBlock, n)] {
					if h > bmax[b] {
						bmax[b] = h
					}
				}
				if r.IntN(4) == 0 {
					bmax[b] = math.Inf(1)
				}
			}
			if got := atLeast(hi, bmax, floor, nil); !slices.Equal(got, want) {
				t.Fatalf("%s trial %d: atLeast(%v, %v, %v) = %v, want %v", kernels, trial, hi, bmax, floor, got, want)
			}
		}
	})
}
