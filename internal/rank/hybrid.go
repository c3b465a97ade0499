package rank

import (
	"math"
	"slices"

	"github.com/higmem/higmem/internal/vec"
)

// DenseWeight weighs cosine similarity against BM25 in hybrid search,
// where a row scores BM25/max(BM25) + DenseWeight*max(cosine, 0). This
// normalised sum was measured against reciprocal-rank fusion (k=60) on the
// LoCoMo dev conversations (TestOfflineLoCoMoSweep in package higmem,
// fusion table): turn recall at 8 is 0.642 with the sum and 0.522 with RRF,
// which lets MiniLM's weaker ranking (0.401 alone) drag BM25's (0.602)
// down.
const DenseWeight = 1.0

// Hybrid fuses lexical and dense scores by the normalised sum and returns
// the best k rows of n. lex[i] is row i's BM25 score, non-zero only for the
// rows listed in touched; dense holds every row's cosine, or is nil. keep
// filters rows (nil keeps all).
func Hybrid(n int, lex []float64, touched []int, dense []float32, k int, keep func(int) bool) []Hit {
	maxLex := maxKept(lex, touched, keep)
	score := func(i int) float64 {
		d := 0.0
		if dense != nil {
			d = float64(dense[i])
		}
		return fused(lex[i], maxLex, d)
	}
	top := NewTopK(k)
	if dense == nil {
		// Only rows with a BM25 score can score above 0.
		for _, i := range touched {
			if keep == nil || keep(i) {
				top.Offer(i, score(i))
			}
		}
	} else {
		for i := range n {
			if keep == nil || keep(i) {
				top.Offer(i, score(i))
			}
		}
	}
	return top.Sorted()
}

// fused is the hybrid score formula, the one place it is written: a row's
// BM25 score x over the best, maxLex, plus DenseWeight times its cosine d
// (negative cosines count as 0). It grows with d, so that bounds of the
// cosine give bounds of the score.
func fused(x, maxLex, d float64) float64 { return withDense(lexPart(x, maxLex), d) }

// lexPart is the BM25 part of fused: x over maxLex (0 without a match).
func lexPart(x, maxLex float64) float64 {
	if x != 0 && maxLex > 0 {
		return x / maxLex
	}
	return 0
}

// withDense adds the dense part of fused to the BM25 part l.
func withDense(l, d float64) float64 { return l + DenseWeight*max(d, 0) }

// maxKept returns the best BM25 score among the touched rows keep accepts.
func maxKept(lex []float64, touched []int, keep func(int) bool) float64 {
	maxLex := 0.0
	for _, i := range touched {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, lex[i])
		}
	}
	return maxLex
}

// lexRange returns maxKept(lex, touched, keep) and whether it may take the
// pruned scan's shortcut (lexInverse): no row of touched has a score with
// its sign bit set (a negative score, -0, a NaN of that sign) and the
// maximum is not NaN. Without keep, when touched lists many of the rows,
// it reads lex in order (every row not touched is 0) rather than at
// random, and compares the scores' bits as integers: for floats without
// the sign bit they order as the values do, so the maximum is maxKept's,
// bit for bit, whenever it reports true (with AVX2, lexMaxAVX2 takes the
// rows eight at a time).
func lexRange(lex []float64, touched []int, keep func(int) bool) (maxLex float64, ok bool) {
	if keep != nil || len(touched) < len(lex)/8 {
		ok = true
		for _, i := range touched {
			ok = ok && !math.Signbit(lex[i])
		}
		maxLex = maxKept(lex, touched, keep)
		return maxLex, ok && !math.IsNaN(maxLex)
	}
	var m0, m1, m2, m3 uint64
	var or uint64
	i := 0
	if useAVX2 {
		i = len(lex) &^ 7
		m0, or = lexMaxAVX2(lex[:i])
	}
	for ; i+4 <= len(lex); i += 4 {
		x := lex[i : i+4 : i+4]
		b0, b1, b2, b3 := math.Float64bits(x[0]), math.Float64bits(x[1]), math.Float64bits(x[2]), math.Float64bits(x[3])
		m0, m1, m2, m3 = max(m0, b0), max(m1, b1), max(m2, b2), max(m3, b3)
		or |= b0 | b1 | b2 | b3
	}
	for ; i < len(lex); i++ {
		b := math.Float64bits(lex[i])
		m0, or = max(m0, b), or|b
	}
	maxLex = math.Float64frombits(max(m0, m1, m2, m3))
	if or>>63 != 0 || math.IsNaN(maxLex) {
		return maxKept(lex, touched, nil), false
	}
	return maxLex, true
}

// lexInverse returns a multiplier inv such that x*inv, rounded, is at
// least lexPart(x, maxLex) for every x >= 0 (rounding is monotone, so it
// is enough that inv is at least 1/maxLex), and whether it has one: when
// maxLex is 0 (lexPart is 0: inv is 0), or is far enough from the ends
// of the float64 range that 1/maxLex is rounded with a relative error of
// at most 2⁻⁵³, which the factor 1+2⁻⁴⁸ more than covers.
func lexInverse(maxLex float64) (inv float64, ok bool) {
	switch {
	case maxLex == 0:
		return 0, true
	case !(maxLex >= 0x1p-1000 && maxLex <= 0x1p1000):
		return 0, false
	}
	return 1 / maxLex * (1 + 0x1p-48), true
}

// searchRefine is the share of the best lower bound of a cosine from
// which searchBounds rescans a row's 4-bit estimate in the int8 copy.
const searchRefine = 0.9

// searchChunk is the fewest rows Search gives a goroutine (a variable
// for the tests, which split small matrices).
var searchChunk = 32768

// Searcher runs hybrid searches over a vector matrix, reusing its buffers
// from one search to the next. The zero value is ready to use; a Searcher
// must not be used by two goroutines at once.
type Searcher struct {
	dense      []float32
	est, bound []float64
	// cands lists, for each range of rows, those whose upper bound may
	// reach the floor (searchBounds).
	cands [4][]int
	// blockMax, queue, first, batch, dots, done, saved, rows and fine
	// are bestFirst's: each block's largest bound, the blocks picked and
	// then the queue, the rows scored first, the rows to score and their
	// cosines, the rows scored first again and their bounds, the rows to
	// bound in the int8 copy and their bounds.
	blockMax []float64
	queue    []entry
	first    []entry
	batch    []int32
	dots     []float32
	done     []int32
	saved    []float64
	rows     []int32
	fine     []float64
	// scored is the number of rows the last bestFirst scored exactly
	// (for the tests and benchmarks).
	scored int
}

// grow returns s with length n; the contents are unspecified.
func grow[T any](s []T, n int) []T { return slices.Grow(s[:0], n)[:n] }

// Search is Hybrid with the dense scores of mat for the query vector qv
// (mat has n rows). On a quantized matrix it scans upper bounds of the
// cosines instead (vec.Matrix.UpperTiered): a row can be among the best k
// only when its score's upper bound reaches the k-th best score found so
// far, so only those rows get an exact cosine. The result is exactly
// Hybrid's.
func (s *Searcher) Search(mat *vec.Matrix, lex []float64, touched []int, qv []float32, k int, keep func(int) bool) []Hit {
	n := mat.Rows()
	if k <= 0 {
		return nil
	}
	if !mat.Quantized() {
		s.dense = grow(s.dense, n)
		mat.ScoresInto(s.dense, qv)
		return Hybrid(n, lex, touched, s.dense, k, keep)
	}
	maxLex, ok := lexRange(lex[:n], touched, keep)
	return s.searchQuantized(mat, lex, maxLex, ok, qv, k, keep)
}

// SearchTop is Search without keep for BM25 scores whose greatest is top
// (0 when none), as the index gave it (bm25.Index.ScoreRefsTop), every
// one positive: it reads no list of the rows scored, and on a quantized
// matrix takes top for the greatest score rather than look for it.
func (s *Searcher) SearchTop(mat *vec.Matrix, lex []float64, top float64, qv []float32, k int) []Hit {
	n := mat.Rows()
	if k <= 0 {
		return nil
	}
	if !mat.Quantized() {
		var touched []int
		for i, x := range lex[:n] {
			if x != 0 {
				touched = append(touched, i)
			}
		}
		return s.Search(mat, lex, touched, qv, k, nil)
	}
	return s.searchQuantized(mat, lex, top, !math.Signbit(top) && !math.IsNaN(top), qv, k, nil)
}

// searchQuantized is Search on a quantized matrix, the greatest kept
// BM25 score maxLex and ok as lexRange gives them.
func (s *Searcher) searchQuantized(mat *vec.Matrix, lex []float64, maxLex float64, ok bool, qv []float32, k int, keep func(int) bool) []Hit {
	n := mat.Rows()
	inv, invOK := lexInverse(maxLex)
	if !ok || !invOK || DenseWeight != 1 {
		return s.searchBounds(mat, lex, maxLex, qv, k, keep)
	}
	s.est = grow(s.est, n)
	hi := s.est
	// The 4-bit scan alone, no int8 rescan: bestFirst takes the int8
	// bounds of the rows that reach its floor only (vec.Matrix.UpperAt),
	// a few hundred at most on the bench's 28,038 events. Then the rows
	// whose score's upper bound reaches the k-th best score found so far
	// are scored, best bound first.
	mat.UpperTiered(qv, hi, func(float64) float64 { return math.Inf(1) })
	return s.bestFirst(mat, lex, maxLex, inv, qv, k, keep)
}

// searchBounds is Search over EstimateTiered's estimates and bounds, for
// what Search's shortcut does not cover (negative or NaN BM25 scores, a
// maximum that lexInverse cannot invert): a row can be among the best k
// only when its score's upper bound reaches the k-th best lower bound, so
// only those rows get an exact cosine. maxLex is maxKept's.
func (s *Searcher) searchBounds(mat *vec.Matrix, lex []float64, maxLex float64, qv []float32, k int, keep func(int) bool) []Hit {
	n := mat.Rows()
	s.est, s.bound = grow(s.est, n), grow(s.bound, n)
	est, bound := s.est, s.bound
	// The 4-bit scan, then the int8 one for the rows whose cosine may
	// reach 0.9 of the best lower bound (at least 0, where max(d, 0)
	// starts to count). The bounds hold whichever rows it rescans, so the
	// result is the same: the floor only trades the rescan against exact
	// cosines below.
	mat.EstimateTiered(qv, est, bound, func(maxLow float64) float64 { return searchRefine * max(maxLow, 0) })
	// The arithmetic of Hybrid, for upper and lower bounds of the cosine
	// (it grows with the cosine); the k-th best lower bound is the floor a
	// row's upper bound must reach. Each range keeps the k best lower
	// bounds it has seen, whose last only rises and never passes the
	// final floor, so a row whose upper bound is below it there cannot
	// reach the floor: each range lists only the others, in order.
	var parts [4]*TopK
	np := ParallelRange(n, searchChunk, func(p, lo, end int) {
		lows := NewTopK(k)
		cands := s.cands[p][:0]
		for i := lo; i < end; i++ {
			if keep != nil && !keep(i) {
				continue
			}
			l := lexPart(lex[i], maxLex)
			h := withDense(l, est[i]+bound[i])
			l = withDense(l, est[i]-bound[i])
			if l > 0 && (len(lows.h) < k || l > lows.h[0].Score) {
				lows.Offer(i, l)
			}
			if h > 0 && (len(lows.h) < k || h >= lows.h[0].Score) {
				cands = append(cands, i)
			}
		}
		parts[p], s.cands[p] = lows, cands
	})
	lows := parts[0]
	for _, p := range parts[1:np] {
		for _, c := range p.h {
			lows.Offer(c.Index, c.Score)
		}
	}
	floor := 0.0
	if lows.Full() {
		floor = lows.Last()
	}
	top := NewTopK(k)
	for _, cands := range s.cands[:np] {
		for _, i := range cands {
			if h := withDense(lexPart(lex[i], maxLex), est[i]+bound[i]); h >= floor {
				top.Offer(i, fused(lex[i], maxLex, float64(vec.Dot(qv, mat.Row(i)))))
			}
		}
	}
	return top.Sorted()
}
