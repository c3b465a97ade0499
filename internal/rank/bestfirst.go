package rank

import (
	"math"
	"slices"

	"github.com/higmem/higmem/internal/vec"
)

// searchBlock is the number of rows whose score bounds Search sums up in
// one maximum (a variable for the tests, which try small blocks).
var searchBlock = 32

// searchFirst is about the number of blocks of the largest maxima in
// which Search looks for the k rows of the largest bounds that it scores
// first, to set a floor (a variable for the tests). Few blocks give a low
// floor, which more rows reach; more cost more than they raise it (16 and
// 32 blocks of 32 rows were measured alike with BenchmarkBestFirst28k's
// data, 8 a quarter slower).
var searchFirst = 16

// searchBatch is the most rows Search scores exactly in one call of
// vec.Matrix.DotsAt once it has a floor: their cache misses overlap, at
// the price of up to searchBatch-1 rows scored after the floor would have
// excluded them (a variable for the tests).
var searchBatch = 4

// entry is a row in one of bestFirst's heaps (or a block, when it picks
// blocks), with the upper bound of its score (of its rows' scores).
type entry struct {
	key float64
	id  int32
}

// bestFirst is Search's pruned scan once hi holds the upper bounds of the
// rows' cosines (UpperTiered): it scores exactly only rows whose score's
// upper bound reaches the k-th best score found so far, the floor, and
// takes them best bound first, so that few rows reach it.
//
// A row's upper bound is withDense(u, hi[i]) with u = lex[i]*inv, which
// is at least lexPart's quotient (lexInverse; the scores are not
// negative): since fused's value grows with both parts, it is at most
// that bound. A first pass writes each row's bound over hi and each
// block's largest into s.blockMax (blockBounds). Then the k rows of the
// largest bounds in about searchFirst blocks of the largest maxima are
// scored at once: their k-th best score is the floor (until k scores are
// kept, the least positive float64: a score must be positive to be
// kept). The other rows whose bound reaches it are found in one pass
// (atLeast), get the tighter bounds of their int8 copies (UpperAt; none
// without one) and are scored best bound first, searchBatch at a time,
// until the best bound left is below the floor. A bound that is NaN
// counts as +Inf (its row is scored).
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
	top := NewTopK(k)
	floor := math.SmallestNonzeroFloat64
	s.scored = 0
	s.dots = grow(s.dots, max(searchBatch, min(k, n)))
	score := func(rows []int32) {
		d := s.dots[:len(rows)]
		mat.DotsAt(qv, rows, d)
		s.scored += len(rows)
		for j, i := range rows {
			top.Offer(int(i), fused(lex[i], maxLex, float64(d[j])))
		}
		if top.Full() {
			floor = top.Last()
		}
	}
	// The blocks of the largest maxima, then the rows of the largest
	// bounds in them (picked with a min-heap), scored at once. The blocks
	// are those at least the r-th largest maximum of every st-th block,
	// about searchFirst of them (at most 4*searchFirst are taken): two
	// passes without a branch that mispredicts often.
	st := max(nb/(16*searchFirst), 1)
	r := min(max(searchFirst/st, 1), 64)
	var sample [64]float64
	ns := 0
	for b := 0; b < nb; b += st {
		m := bmax[b]
		if ns < r {
			ns++
		} else if !(m > sample[ns-1]) {
			continue
		}
		// Insertion into the r largest, in decreasing order.
		j := ns - 1
		for ; j > 0 && m > sample[j-1]; j-- {
			sample[j] = sample[j-1]
		}
		sample[j] = m
	}
	least := math.SmallestNonzeroFloat64
	if ns > 0 {
		least = max(sample[ns-1], least)
	}
	blocks := s.queue[:0]
	for b, m := range bmax {
		if m >= least {
			blocks = append(blocks, entry{m, int32(b)})
			if len(blocks) == 4*searchFirst {
				break
			}
		}
	}
	first := s.first[:0]
	for _, e := range blocks {
		for i := int(e.id) * bs; i < min(int(e.id+1)*bs, n); i++ {
			h := hi[i]
			switch {
			case !(h > 0) || len(first) == k && !(h > first[0].key):
			case keep != nil && !keep(i):
			case len(first) < k:
				first = append(first, entry{h, int32(i)})
				upMin(first, len(first)-1)
			default:
				first[0] = entry{h, int32(i)}
				downMin(first, 0)
			}
		}
	}
	s.done = grow(s.done, len(first))
	for j, e := range first {
		s.done[j] = e.id
	}
	score(s.done)
	// The rows left whose bound reaches the floor (those scored set
	// below any floor meanwhile), with their int8 bounds.
	s.saved = grow(s.saved, len(s.done))
	for j, i := range s.done {
		s.saved[j], hi[i] = hi[i], -1
	}
	s.rows = atLeast(hi, bmax, floor, s.rows)
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
	if mat.Quantized() {
		mat.UpperAt(qv, rows, s.fine)
	} else {
		for j := range rows {
			s.fine[j] = math.Inf(1)
		}
	}
	q := s.queue[:0]
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
	batch := s.batch[:0]
	for {
		if len(q) == 0 || q[0].key < floor {
			if len(batch) == 0 {
				break
			}
			// The floor rises: the test above decides again.
			score(batch)
			batch = batch[:0]
			continue
		}
		batch = append(batch, q[0].id)
		last := len(q) - 1
		q[0] = q[last]
		q = q[:last]
		down(q, 0)
		if len(batch) >= searchBatch {
			score(batch)
			batch = batch[:0]
		}
	}
	s.queue, s.first, s.batch = q, first, batch
	return top.Sorted()
}

// atLeast returns the indexes i of hi with hi[i] >= floor, in order, in
// out's storage, looking only in the blocks of searchBlock rows whose
// maximum in bmax reaches floor (each at least every row of its block):
// with AVX2 eight rows at a time (atLeastAVX2).
func atLeast(hi, bmax []float64, floor float64, out []int32) []int32 {
	out = out[:0]
	bs := searchBlock
	for b, m := range bmax {
		if !(m >= floor) {
			continue
		}
		r0, r1 := b*bs, min((b+1)*bs, len(hi))
		c, i := len(out), r0
		out = slices.Grow(out, r1-r0)[:c+r1-r0]
		if useAVX2 {
			i += (r1 - r0) &^ 7
			c += atLeastAVX2(hi[r0:i], r0, floor, out[c:])
		}
		for ; i < r1; i++ {
			if hi[i] >= floor {
				out[c], c = int32(i), c+1
			}
		}
		out = out[:c]
	}
	return out
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
