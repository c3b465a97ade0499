package offline

import "github.com/higmem/higmem/internal/rank"

// The pruned path's score bounds by blocks. Where every speaker run is one
// unit, a unit's score bound (ScoreRange on the bounds, scoreRangeSingle)
// reads the relevance bounds of the unit and of the two units either side,
// its event's best bound and its factors. One bound holds for all the
// score bounds of a block of blockSize units: the best relevance bound
// among them and the two units either side times the sum of the largest
// shares, plus the event share of the best event bound among them, times
// the largest factors. The pass writes the units' own score bounds
// (ScoreRange, as before) only in the blocks whose bound reaches what is
// asked of them: the best score bound (the unit it starts from), then the
// floor of topScores. Every value it writes, the unit with the best bound
// and the units it lists are those of a pass over every unit, so the pruned
// path reaches the same units in the same order.

// blockSize is the number of units in a block.
const blockSize = 64

// blockMargin is the relative margin of a block's bound over its units'
// bounds: each is a sum of non-negative products, rounded at each of a
// dozen operations (a few 2⁻⁵³ each), and so is the block's bound.
const blockMargin = 1 + 1.0/(1<<30)

// blockBounder computes the bound of each block.
type blockBounder struct {
	relHi, bestHi []float64
	event, words  []int32
	lf            *lengthFactors
	n             int
	// share is what the relevance of the unit and of its neighbours adds
	// up to at most (1 + the largest shares of each neighbour); factor is
	// the product of the largest factors.
	share, eventShare, factor float64
}

// blockBounder returns the bounder of fs's blocks, for ScoreRange on
// relHi and bestHi where every run is one unit.
func (fs *fastScan) blockBounder() blockBounder {
	f, tu, n := fs.f, fs.tu, fs.n
	sf := tu.scoreFactors(f)
	bb := blockBounder{relHi: fs.relHi[:n], n: n, lf: sf.lf, eventShare: tu.EventShare}
	bb.share = 1 + max(sf.prevOf[0], sf.prevOf[1]) + max(sf.nextOf[0], sf.nextOf[1]) + 2*tu.Far
	factor := max(sf.questionOf[0], sf.questionOf[1])
	if f.Speaker != nil {
		factor *= max(sf.speakerOf[0], sf.speakerOf[1])
	}
	if f.Dated != nil {
		factor *= max(sf.datedOf[0], sf.datedOf[1])
	}
	if f.Counted != nil {
		factor *= max(sf.countedOf[0], sf.countedOf[1])
	}
	if f.Role != nil {
		ro := tu.roleFactors()
		factor *= max(ro[0], ro[1], ro[2], ro[3])
	}
	bb.factor = factor
	if sf.lf != nil {
		bb.words = f.RunWords[:n] // run i is unit i
	}
	if fs.bestHi != nil && f.Event != nil {
		bb.event, bb.bestHi = f.Event[:n], fs.bestHi
	}
	return bb
}

// of returns the bound of block b's score bounds and the best relevance
// bound among its units (at least 0).
func (bb *blockBounder) of(b int) (hi, rel float64) {
	lo, end := b*blockSize, min((b+1)*blockSize, bb.n)
	relHi := bb.relHi
	for _, x := range relHi[lo:end] {
		if x > rel {
			rel = x
		}
	}
	m := rel
	for i := max(lo-2, 0); i < lo; i++ {
		m = max(m, relHi[i])
	}
	for i := end; i < min(end+2, bb.n); i++ {
		m = max(m, relHi[i])
	}
	e := 0.0
	if bb.event != nil {
		for _, ev := range bb.event[lo:end] {
			if ev >= 0 && bb.bestHi[ev] > e {
				e = bb.bestHi[ev]
			}
		}
	}
	l := 1.0
	if bb.lf != nil {
		l = 0
		for _, w := range bb.words[lo:end] {
			if x := bb.lf.of(w); x > l {
				l = x
			}
		}
	}
	return (m*bb.share + bb.eventShare*e) * bb.factor * l * blockMargin, rel
}

// blockScoreBounds is scoreBounds where every run is one unit: it bounds
// every block (on every core), writes the score bounds of the blocks that
// can hold the best one, and returns the unit with the best score bound
// (the first among equals), as a pass over every unit would.
func (fs *fastScan) blockScoreBounds() int {
	sc := fs.sc
	nb := (fs.n + blockSize - 1) / blockSize
	sc.blockHi, sc.blockRel = grow(sc.blockHi, nb), grow(sc.blockRel, nb)
	sc.blockDone = grow(sc.blockDone, nb)
	clear(sc.blockDone)
	fs.blocks = true
	bb := fs.blockBounder()
	rank.ParallelRange(nb, max(fs.chunk()/blockSize, 1), func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			sc.blockHi[b], sc.blockRel[b] = bb.of(b)
		}
	})
	// The block of the best bound first, then every block whose bound
	// reaches the best score bound so far (written as "not below", so that
	// a NaN is scored rather than skipped).
	top := 0
	for b, x := range sc.blockHi {
		if x > sc.blockHi[top] {
			top = b
		}
	}
	r0 := fs.scoreBlock(top)
	for b, x := range sc.blockHi {
		if !(x < fs.scoreHi[r0]) && !sc.blockDone[b] {
			a := fs.scoreBlock(b)
			if fs.scoreHi[a] > fs.scoreHi[r0] || fs.scoreHi[a] == fs.scoreHi[r0] && a < r0 {
				r0 = a
			}
		}
	}
	return r0
}

// scoreBlock writes the score bounds of block b's units and returns the
// unit with the best (the first among equals; the block's first unit when
// none is positive), as ScoreRange.
func (fs *fastScan) scoreBlock(b int) int {
	fs.sc.blockDone[b] = true
	return fs.tu.ScoreRange(fs.f, fs.relHi, fs.scoreHi, fs.bestHi, nil, b*blockSize, min((b+1)*blockSize, fs.n))
}

// allScoreBounds writes the score bounds of every unit.
func (fs *fastScan) allScoreBounds() {
	if !fs.blocks {
		return
	}
	for b, done := range fs.sc.blockDone {
		if !done {
			fs.scoreBlock(b)
		}
	}
}

// scoresAtLeast appends to dst the units whose score bound is at least
// floor, in order, as fs.atLeast(fs.scoreHi, floor, dst): by blocks,
// writing the bounds of the blocks that can hold one.
func (fs *fastScan) scoresAtLeast(floor float64, dst []int) []int {
	if !fs.blocks {
		return fs.atLeast(fs.scoreHi, floor, dst)
	}
	sc := fs.sc
	for b, x := range sc.blockHi {
		if x < floor {
			continue
		}
		if !sc.blockDone[b] {
			fs.scoreBlock(b)
		}
		lo := b * blockSize
		for i, y := range fs.scoreHi[lo:min(lo+blockSize, fs.n)] {
			if y >= floor {
				dst = append(dst, lo+i)
			}
		}
	}
	return dst
}

// relAtLeast appends to dst the units whose relevance bound is at least
// floor, in order, as fs.atLeast(fs.relHi, floor, dst): by blocks, where
// they are bounded.
func (fs *fastScan) relAtLeast(floor float64, dst []int) []int {
	if !fs.blocks {
		return fs.atLeast(fs.relHi, floor, dst)
	}
	for b, x := range fs.sc.blockRel {
		if x < floor {
			continue
		}
		lo := b * blockSize
		for i, y := range fs.relHi[lo:min(lo+blockSize, fs.n)] {
			if y >= floor {
				dst = append(dst, lo+i)
			}
		}
	}
	return dst
}
