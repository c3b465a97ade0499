package rank

import (
	"math"

	"github.com/higmem/higmem/internal/vec"
)

// searchBlock is the number of rows whose score bounds Search sums up in
// one maximum (a variable for the tests, which try small blocks).
var searchBlock = 32

// searchFirst is the number of blocks of the largest bounds that Search's
// queue starts with; the others join it only when the floor falls to
// their bounds, which spares ordering hundreds of blocks that the floor
// soon leaves out (a variable for the tests).
var searchFirst = 32

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
// block's largest into s.blockMax; then a max-queue holds blocks by their
// bounds (searchFirst of them at first), a block taken from it puts its
// rows that reach the floor into it, and a row taken is scored exactly
// (searchBatch at a time), until the best bound left is below the floor. Until k scores are kept,
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
		blockBounds(lex[lo*bs:min(end*bs, n)], hi[lo*bs:min(end*bs, n)], inv, bmax[lo:end])
	})
	// The queue starts as a heap of the searchFirst blocks of the largest
	// bounds (picked with a min-heap in one pass; a block taken is marked
	// with the bound -1); the others wait, their bounds at most rest,
	// until the floor falls to rest.
	q := s.queue[:0]
	for b, m := range bmax {
		switch {
		case !(m > 0):
		case len(q) < searchFirst:
			q = append(q, entry{m, int32(-1 - b)})
			upMin(q, len(q)-1)
		case m > q[0].key:
			q[0] = entry{m, int32(-1 - b)}
			downMin(q, 0)
		}
	}
	rest := -1.0
	if len(q) == searchFirst {
		rest = q[0].key
	}
	for _, e := range q {
		bmax[-1-e.id] = -1
	}
	for j := len(q)/2 - 1; j >= 0; j-- {
		down(q, j)
	}
	top := NewTopK(k)
	floor := math.SmallestNonzeroFloat64
	s.scored, s.done = 0, s.done[:0]
	batch := s.batch[:0]
	s.dots = grow(s.dots, searchBatch)
	dots := s.dots
	flush := func() {
		d := dots[:len(batch)]
		mat.DotsAt(qv, batch, d)
		s.scored += len(batch)
		s.done = append(s.done, batch...)
		for j, i := range batch {
			top.Offer(int(i), fused(lex[i], maxLex, float64(d[j])))
		}
		if top.Full() {
			floor = top.Last()
		}
		batch = batch[:0]
	}
	// take scores the rows of q best bound first until the best bound left
	// is below the floor, or (first) until k scores are kept; it reports
	// whether it scored every row that may enter.
	take := func(first bool) bool {
		for !first || !top.Full() {
			t := -1.0
			if len(q) > 0 {
				t = q[0].key
			}
			if t < floor || t < rest {
				if len(batch) > 0 {
					// The floor rises: the tests decide again.
					flush()
					continue
				}
				if t < floor && rest < floor {
					return true
				}
				// The blocks that wait may hold the best rows left:
				// those that reach the floor join the queue.
				for b, m := range bmax {
					if m >= floor {
						q = append(q, entry{m, int32(-1 - b)})
						up(q, len(q)-1)
						bmax[b] = -1
					}
				}
				rest = -1
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
				if h := hi[i]; h >= floor && (keep == nil || keep(i)) {
					q = append(q, entry{h, int32(i)})
					up(q, len(q)-1)
				}
			}
		}
		return false
	}
	if take(true) || !mat.Quantized() {
		// Every row that may enter is scored, or there is no int8 copy.
		take(false)
		s.queue, s.batch = q, batch
		return top.Sorted()
	}
	// With k scores kept, the rows left whose bound reaches the floor
	// (found in one pass, the rows scored set below any floor meanwhile)
	// get the tighter bounds of their int8 copies (UpperAt), and then go
	// on best bound first, without blocks.
	s.saved = grow(s.saved, len(s.done))
	for j, i := range s.done {
		s.saved[j], hi[i] = hi[i], -1
	}
	s.rows = atLeast(hi, floor, s.rows)
	for j, i := range s.done {
		hi[i] = s.saved[j]
	}
	rows := s.rows
	if keep != nil {
		c := 0
		for _, i := range rows {
			if keep(int(i)) {
				rows[c], c = i, c+1
			}
		}
		rows = rows[:c]
	}
	s.fine = grow(s.fine, len(rows))
	mat.UpperAt(qv, rows, s.fine)
	q = q[:0]
	for j, i := range rows {
		// The tighter of the two bounds (a NaN one is no bound).
		b := hi[i]
		if f := withDense(lex[i]*inv, s.fine[j]); f < b {
			b = f
		}
		if b >= floor {
			q = append(q, entry{b, i})
		}
	}
	for j := len(q)/2 - 1; j >= 0; j-- {
		down(q, j)
	}
	rest = -1
	take(false)
	s.queue, s.batch = q, batch
	return top.Sorted()
}

// atLeast returns the indexes i of hi with hi[i] >= floor, in order, in
// out's storage: with AVX2 eight rows at a time (atLeastAVX2).
func atLeast(hi []float64, floor float64, out []int32) []int32 {
	out = grow(out, len(hi))
	c, i := 0, 0
	if useAVX2 {
		i = len(hi) &^ 7
		c = atLeastAVX2(hi[:i], floor, out)
	}
	for ; i < len(hi); i++ {
		if hi[i] >= floor {
			out[c], c = int32(i), c+1
		}
	}
	return out[:c]
}

// blockBounds is rowBounds for each block of searchBlock rows of lex and
// hi, each block's result in bmax: with AVX2 for whole blocks when
// searchBlock is a multiple of 8 (blockBoundsAVX2, the same values).
func blockBounds(lex, hi []float64, inv float64, bmax []float64) {
	bs := searchBlock
	b := 0
	if useAVX2 && bs%8 == 0 {
		b = len(lex) / bs
		if blockBoundsAVX2(lex[:b*bs], hi[:b*bs], inv, bs, bmax[:b]) {
			for j := range b {
				bmax[j] = mendNaN(hi[j*bs:(j+1)*bs], bmax[j])
			}
		}
	}
	for ; b < len(bmax); b++ {
		r0, r1 := b*bs, min((b+1)*bs, len(lex))
		bmax[b] = rowBounds(lex[r0:r1], hi[r0:r1], inv)
	}
}

// rowBounds writes over hi the upper bounds withDense(lex[i]*inv, hi[i])
// of the rows' scores (hi and lex have the same length), each as
// lex[i]*inv + max(hi[i], 0) (a NaN hi[i] stays), and returns the largest
// (0 for none), or +Inf when one is NaN, which it then sets to +Inf.
func rowBounds(lex, hi []float64, inv float64) float64 {
	hi = hi[:len(lex)]
	// The largest as the largest bits without the sign: the bounds are at
	// least 0 (-0 compares as 0) or NaN, which compares above +Inf.
	var m uint64
	for i, x := range lex {
		h := hi[i]
		if h < 0 {
			h = 0
		}
		b := x*inv + h
		hi[i] = b
		m = max(m, math.Float64bits(b)&^(1<<63))
	}
	if m > math.Float64bits(math.Inf(1)) {
		return mendNaN(hi, math.Inf(1))
	}
	return math.Float64frombits(m)
}

// mendNaN sets every NaN of hi to +Inf and returns m, or +Inf when it set
// one.
func mendNaN(hi []float64, m float64) float64 {
	for i, b := range hi {
		if b != b {
			hi[i], m = math.Inf(1), math.Inf(1)
		}
	}
	return m
}

// upMin moves q[j] up to its place in the min-heap q.
func upMin(q []entry, j int) {
	for j > 0 {
		p := (j - 1) / 2
		if q[p].key <= q[j].key {
			return
		}
		q[p], q[j] = q[j], q[p]
		j = p
	}
}

// downMin moves q[j] down to its place in the min-heap q.
func downMin(q []entry, j int) {
	for {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(q) && q[l].key < q[w].key {
			w = l
		}
		if r < len(q) && q[r].key < q[w].key {
			w = r
		}
		if w == j {
			return
		}
		q[j], q[w] = q[w], q[j]
		j = w
	}
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
