package higmem

import (
	"cmp"
	"slices"

	"github.com/higmem/higmem/internal/vec"
)

// scored is a search hit: an index into turns or events and a score.
type scored struct {
	idx   int
	score float64
}

// hybridDenseWeight weighs cosine similarity against BM25 in hybrid
// search, where a hit scores BM25/max(BM25) + hybridDenseWeight*cosine.
// This normalised sum was measured against reciprocal-rank fusion (k=60)
// on the LoCoMo dev conversations (TestOfflineLoCoMoSweep, fusion table):
// turn recall at 8 is 0.642 with the sum and 0.522 with RRF, which lets
// MiniLM's weaker ranking (0.401 alone) drag BM25's (0.602) down.
const hybridDenseWeight = 1.0

// hybrid fuses lexical and dense scores by a normalised sum and returns the
// best k. lex maps a row to its BM25 score (rows without a match are
// absent); dense holds every row's cosine, or is nil. keep filters rows (nil
// keeps all).
func hybrid(n int, lex map[int]float64, dense []float32, k int, keep func(int) bool) []scored {
	scores := make([]float64, n)
	touched := make([]int, 0, len(lex))
	for i, s := range lex {
		if i >= 0 && i < n {
			scores[i] = s
			touched = append(touched, i)
		}
	}
	return hybridTop(n, scores, touched, dense, k, keep)
}

// hybridTop is hybrid with the BM25 scores in a slice: lex[i] is row i's
// score, non-zero only for the rows listed in touched.
func hybridTop(n int, lex []float64, touched []int, dense []float32, k int, keep func(int) bool) []scored {
	maxLex := 0.0
	for _, i := range touched {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, lex[i])
		}
	}
	score := func(i int) float64 {
		s := 0.0
		if maxLex > 0 {
			s = lex[i] / maxLex
		}
		if dense != nil {
			s += hybridDenseWeight * max(float64(dense[i]), 0)
		}
		return s
	}
	top := newTopK(k)
	if dense == nil {
		// Only rows with a BM25 score can score above 0.
		for _, i := range touched {
			if keep == nil || keep(i) {
				top.offer(i, score(i))
			}
		}
	} else {
		for i := range n {
			if keep == nil || keep(i) {
				top.offer(i, score(i))
			}
		}
	}
	return top.sorted()
}

// topK keeps the k best positive scores offered, in the order of
// sortScored (score descending, then index ascending).
type topK struct {
	k int
	h []scored // min-heap: the root ranks last
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]scored, 0, max(k, 0))} }

// worse reports whether a ranks after b.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.idx > b.idx
}

// offer considers row i with score s; scores that are not positive are
// ignored.
func (t *topK) offer(i int, s float64) {
	if !(s > 0) || t.k <= 0 {
		return
	}
	c := scored{i, s}
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		for j := len(t.h) - 1; j > 0; {
			p := (j - 1) / 2
			if !worse(t.h[j], t.h[p]) {
				break
			}
			t.h[j], t.h[p] = t.h[p], t.h[j]
			j = p
		}
		return
	}
	if !worse(t.h[0], c) {
		return
	}
	t.h[0] = c
	for j := 0; ; {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == j {
			break
		}
		t.h[j], t.h[w] = t.h[w], t.h[j]
		j = w
	}
}

// sorted returns the kept rows, best first.
func (t *topK) sorted() []scored {
	out := t.h
	sortScored(out)
	return out
}

// sortScored orders hits by score descending, then index ascending.
func sortScored(s []scored) {
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
}

// searchTurnsIn ranks turns for a query: BM25 fused with dense similarity
// (when qv is non-nil) by hybrid. keep filters turn indexes (nil keeps
// all). It uses the query's scratch, whose lexical scores it leaves set
// (see query.turnLexScores). Caller holds st.mu.
func (st *spaceState) searchTurnsIn(sc *scratch, query string, qv []float32, k int, keep func(int) bool) []scored {
	n := len(st.turns)
	if k <= 0 || n == 0 {
		return nil
	}
	lex, touched := sc.lexScores(st.turnLex, n, query)
	sc.turnLex = true
	if qv == nil || st.turnVec.Rows() != n {
		return hybridTop(n, lex, touched, nil, k, keep)
	}
	return sc.hybridSearch(&st.turnVec, lex, touched, qv, k, keep)
}

// searchEvents ranks events for a query like searchTurnsIn. Caller holds
// st.mu.
func (st *spaceState) searchEvents(query string, qv []float32, k int, keep func(int) bool) []scored {
	n := len(st.events)
	if k <= 0 || n == 0 {
		return nil
	}
	sc := st.getScratch()
	defer st.putScratch(sc)
	lex, touched := sc.lexScores(st.eventLex, n, query)
	if qv == nil || st.eventVec.Rows() != n {
		return hybridTop(n, lex, touched, nil, k, keep)
	}
	return sc.hybridSearch(&st.eventVec, lex, touched, qv, k, keep)
}

// hybridSearch is hybridTop with the dense scores of mat for qv. On a
// quantized matrix it scans estimates instead: a row can be among the best
// k only when its score's upper bound reaches the k-th best lower bound, so
// only those rows get an exact cosine. The result is exactly hybridTop's.
func (sc *scratch) hybridSearch(mat *vec.Matrix, lex []float64, touched []int, qv []float32, k int, keep func(int) bool) []scored {
	n := mat.Rows()
	if k <= 0 {
		return nil
	}
	if !mat.Quantized() {
		sc.dense = grow(sc.dense, n)
		mat.ScoresInto(sc.dense, qv)
		return hybridTop(n, lex, touched, sc.dense, k, keep)
	}
	sc.est, sc.bound = grow(sc.est, n), grow(sc.bound, n)
	est, bound := sc.est, sc.bound
	mat.Estimate(qv, est, bound)
	maxLex := 0.0
	for _, i := range touched {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, lex[i])
		}
	}
	// The arithmetic of hybridTop, for upper and lower bounds of the
	// cosine (it grows with the cosine); the k-th best lower bound is the
	// floor a row's upper bound must reach.
	sc.scoreHi = grow(sc.scoreHi, n)
	hi := sc.scoreHi
	var parts [4]*topK
	np := parallelRange(n, 32768, func(p, lo, hi_ int) {
		lows := newTopK(k)
		for i := lo; i < hi_; i++ {
			if keep != nil && !keep(i) {
				hi[i] = -1
				continue
			}
			l := 0.0
			if x := lex[i]; x != 0 && maxLex > 0 {
				l = x / maxLex
			}
			h := l
			if u := est[i] + bound[i]; u > 0 {
				h += hybridDenseWeight * u
			}
			if d := est[i] - bound[i]; d > 0 {
				l += hybridDenseWeight * d
			}
			hi[i] = h
			if l > 0 && (len(lows.h) < k || l > lows.h[0].score) {
				lows.offer(i, l)
			}
		}
		parts[p] = lows
	})
	lows := parts[0]
	for _, p := range parts[1:np] {
		for _, c := range p.h {
			lows.offer(c.idx, c.score)
		}
	}
	floor := 0.0
	if len(lows.h) == k {
		floor = lows.h[0].score
	}
	top := newTopK(k)
	for i, h := range hi {
		if h >= floor && h > 0 {
			s := 0.0
			if maxLex > 0 {
				s = lex[i] / maxLex
			}
			top.offer(i, s+hybridDenseWeight*max(float64(vec.Dot(qv, mat.Row(i))), 0))
		}
	}
	return top.sorted()
}
