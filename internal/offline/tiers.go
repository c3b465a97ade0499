package offline

import (
	"sync/atomic"

	"github.com/higmem/higmem/internal/rank"
)

// The queue of topScores in two tiers. Of the turns whose score bound
// reaches its floor (KeepRatio of a score found), topScores reaches a few
// tens, best bound first (on the bench's 100k turns, 19 to 81 of lists
// of 1,629 to 45,621): listing every one and queueing them cost more than
// the scores reached. The queue lists at first only the turns whose bound
// reaches a split that about scoreTier of them reach, estimated from a
// sample of the bounds, and lists the others (below the split) only if
// topScores goes on past every turn above it.

// scoreTier is about the number of turns the first tier of topScores'
// queue holds (a variable: the tests make it small, so that the second
// tier is listed).
var scoreTier = 512

// relTier is the same for topRelevance's turns (relTiers), which takes 11
// to 41 of lists of 40 to 1,859 on the bench's slow questions.
var relTier = 256

// tierSamples is the number of bounds splitOf reads.
const tierSamples = 512

// splitOf returns a value above floor that about target of xs reach, the
// r-th best of every st-th value (samples of them), or floor when that is
// not above it or xs is too short for samples of tierSamples (NaN is never
// counted).
func splitOf(xs []float64, floor float64, target int) float64 {
	b, st, ok := newSampleBest(len(xs), target)
	if !ok {
		return floor
	}
	for j := 0; j < len(xs); j += st {
		b.add(xs[j])
	}
	if at, full := b.best(); full && at > floor {
		return at
	}
	return floor
}

// sampleBest keeps the r best of the values sampled for a split (splitOf,
// preSplit), in a min-heap.
type sampleBest struct {
	top  [tierSamples / 4]float64
	k, r int
}

// newSampleBest returns the heap of the r best samples for a split that
// about target of n values reach, and st, the stride of the samples; ok is
// false when n is too short for samples of tierSamples or target asks for
// more than a quarter of them.
func newSampleBest(n, target int) (b sampleBest, st int, ok bool) {
	st = n / tierSamples
	if st < 2 || target <= 0 {
		return b, st, false
	}
	b.r = max(target/st, 4)
	return b, st, b.r <= tierSamples/4
}

// add samples s (NaN is never counted).
func (b *sampleBest) add(s float64) {
	if b.k < b.r {
		if s == s { // not NaN
			b.top[b.k] = s
			rank.SiftUp(b.top[:], b.k)
			b.k++
		}
	} else if s > b.top[0] {
		b.top[0] = s
		rank.SiftMin(b.top[:b.r], 0)
	}
}

// best returns the r-th best sample, and whether r were sampled.
func (b *sampleBest) best() (float64, bool) { return b.top[0], b.k == b.r }

// tierQueue is a queue of the units whose bound in xs reaches floor, best
// bound first (rank.Queue), that lists them in two tiers: at first those
// whose bound reaches split, then, once they are all taken, the others.
// Every unit of the second tier is below every unit of the first, so the
// order is rank.Queue's over them all. It reuses fs.sc.cands.
type tierQueue struct {
	fs           *fastScan
	xs           []float64
	floor, split float64
	q            *rank.Queue
	// lower tells whether the units below split are not listed yet.
	lower bool
}

// newTierQueue lists the first tier (every unit when split is not above
// floor).
func (fs *fastScan) newTierQueue(xs []float64, floor, split float64) *tierQueue {
	t := &tierQueue{fs: fs, xs: xs, floor: floor, split: split, lower: split > floor}
	c := fs.atLeast(xs, max(floor, split), fs.sc.cands[:0])
	fs.sc.cands = c
	t.q = rank.NewQueue(xs, c)
	return t
}

// fill lists the second tier when the first is all taken.
func (t *tierQueue) fill() {
	if t.q.Len() > 0 || !t.lower {
		return
	}
	t.lower = false
	fs := t.fs
	c := fs.atLeast(t.xs, t.floor, fs.sc.cands[:0])
	kept := c[:0]
	for _, i := range c {
		if t.xs[i] < t.split {
			kept = append(kept, i)
		}
	}
	fs.sc.cands = kept
	t.q = rank.NewQueue(t.xs, kept)
	tierFills.Add(1)
}

// tierFills and relFills count the second tiers listed by tierQueue and
// topRelevance (for the tests).
var tierFills, relFills atomic.Int64

// Len reports whether units are queued: 0 when none is left in either
// tier.
func (t *tierQueue) Len() int {
	t.fill()
	return t.q.Len()
}

// Top returns the unit of the best bound left; the queue must not be
// empty.
func (t *tierQueue) Top() int {
	t.fill()
	return t.q.Top()
}

// Pop removes and returns the unit of the best bound left; the queue must
// not be empty.
func (t *tierQueue) Pop() int {
	t.fill()
	return t.q.Pop()
}
