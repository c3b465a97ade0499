package rank

import (
	"math"

	"github.com/higmem/higmem/internal/vec"
)

// searchBlock is the number of rows whose score bounds Search sums up in
// one maximum (a variable for the tests, which try small blocks).
var searchBlock = 32

// searchBatch is the most rows Search scores exactly in one call of
// vec.Matrix.DotsAt: their cache misses overlap, at the price of up to
// searchBatch-1 rows scored after the floor would have excluded them (a
// variable for the tests).
var searchBatch = 4

// entry is a row (id >= 0) or a block of rows (id = -1-block) in
// bestFirst's queue, with the upper bound of its score (of its rows').
type entry struct {
	key float64
	id  int32
}

// bestFirst is Search's pruned scan once hi holds the upper bounds of the
// rows' cosines (UpperTiered): it scores exactly only rows whose score's
// upper bound reaches the k-th best score found so far, the floor, and
// takes them best bound first, so that the floor rises at once and few
// rows reach it.
//
// A row's upper bound is withDense(u, hi[i]) with u = lex[i]*inv, which
// is at least lexPart's quotient (lexInverse; the scores are not
// negative): since fused's value grows with both parts, it is at most
// that bound. A first pass writes each row's bound over hi and each
// block's largest into s.blockMax; then a max-queue holds the blocks by
// their bounds, a block taken from it puts its rows that reach the floor
// into it, and a row taken is scored exactly (searchBatch at a time),
// until the best bound left is below the floor. Until k scores are kept,
// the floor is the least positive float64 (a score must be positive to be
// kept). A bound that is NaN counts as +Inf (its row is scored).
func (s *Searcher) bestFirst(mat *vec.Matrix, lex []float64, maxLex, inv float64, qv []float32, k int, keep func(int) bool) []Hit {
	n := mat.Rows()
	hi := s.est[:n]
	lex = lex[:n]
	bs := searchBlock
	nb := (n + bs - 1) / bs
	s.blockMax = grow(s.blockMax, nb)
	bmax := s.blockMax
	ParallelRange(nb, max(searchChunk/bs, 1), func(_, lo, end int) {
		for b := lo; b < end; b++ {
			r0, r1 := b*bs, min((b+1)*bs, n)
			bmax[b] = rowBounds(lex[r0:r1], hi[r0:r1], inv)
		}
	})
	// The queue starts as a heap of the blocks that may hold a positive
	// score.
	q := s.queue[:0]
	for b, m := range bmax {
		if m > 0 {
			q = append(q, entry{m, int32(-1 - b)})
		}
	}
	for j := len(q)/2 - 1; j >= 0; j-- {
		down(q, j)
	}
	top := NewTopK(k)
	floor := math.SmallestNonzeroFloat64
	s.scored = 0
	batch := s.batch[:0]
	s.dots = grow(s.dots, searchBatch)
	dots := s.dots
	flush := func() {
		d := dots[:len(batch)]
		mat.DotsAt(qv, batch, d)
		s.scored += len(batch)
		for j, i := range batch {
			top.Offer(int(i), fused(lex[i], maxLex, float64(d[j])))
		}
		if top.Full() {
			floor = top.Last()
		}
		batch = batch[:0]
	}
	for {
		if len(q) == 0 || q[0].key < floor {
			if len(batch) == 0 {
				break
			}
			// The floor rises: the test above decides again.
			flush()
			continue
		}
		e := q[0]
		last := len(q) - 1
		q[0] = q[last]
		q = q[:last]
		down(q, 0)
		if e.id >= 0 {
			if batch = append(batch, e.id); len(batch) >= searchBatch {
				flush()
			}
			continue
		}
		b := int(-1 - e.id)
		for i := b * bs; i < min((b+1)*bs, n); i++ {
			h := hi[i]
			if h < floor || keep != nil && !keep(i) {
				continue
			}
			q = append(q, entry{h, int32(i)})
			up(q, len(q)-1)
		}
	}
	s.queue, s.batch = q, batch
	return top.Sorted()
}

// rowBounds writes over hi the upper bounds withDense(lex[i]*inv, hi[i])
// of the rows' scores (hi and lex have the same length) and returns the
// largest, or +Inf when one is NaN (which it then sets to +Inf). The
// bounds are not negative, so that their bits compare as the values do;
// a NaN compares above +Inf.
func rowBounds(lex, hi []float64, inv float64) float64 {
	hi = hi[:len(lex)]
	var m uint64
	for i, x := range lex {
		u, h := x*inv, hi[i]
		b := u + h
		if h < 0 {
			b = u
		}
		hi[i] = b
		m = max(m, math.Float64bits(b))
	}
	if inf := math.Float64bits(math.Inf(1)); m > inf {
		for i, b := range hi {
			if b != b {
				hi[i] = math.Inf(1)
			}
		}
		m = inf
	}
	return math.Float64frombits(m)
}

// up moves q[j] up to its place in the max-heap q.
func up(q []entry, j int) {
	for j > 0 {
		p := (j - 1) / 2
		if q[p].key >= q[j].key {
			return
		}
		q[p], q[j] = q[j], q[p]
		j = p
	}
}

// down moves q[j] down to its place in the max-heap q.
func down(q []entry, j int) {
	for {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(q) && q[l].key > q[w].key {
			w = l
		}
		if r < len(q) && q[r].key > q[w].key {
			w = r
		}
		if w == j {
			return
		}
		q[j], q[w] = q[w], q[j]
		j = w
	}
}
