package offline

import (
	"math"
	"sync"
)

// The length prior of offline retrieval: a turn's context score is
// multiplied by (1 + w)^offLengthPow, w being the words of its speaker run
// (the burst the turn belongs to; in a conversation written one message
// per turn, the turn's own words). A longer burst says more, so it is more
// likely to hold what a question asks for than "Haha" or "ok, see you";
// counting the run's words rather than the message's keeps the short
// messages of an informative burst with it. The prior is a power, so only
// relative length matters: a chat of short messages and one of long
// letters rank alike.

// lengthFactors tabulates (1 + w)^pow for w below lengthTableSize words.
type lengthFactors struct {
	pow   float64
	table [lengthTableSize]float64
}

const lengthTableSize = 512

// of returns (1 + w)^pow: from the table (small enough to be inlined in
// the scorer's loop), else by ofLong.
func (lf *lengthFactors) of(w int32) float64 {
	if uint32(w) < lengthTableSize {
		return lf.table[w]
	}
	return lf.ofLong(w)
}

// ofLong is of beyond the table (or for a negative count, taken as 0). It
// is kept out of line so that of stays small enough to inline.
//
//go:noinline
func (lf *lengthFactors) ofLong(w int32) float64 {
	return math.Pow(1+float64(max(w, 0)), lf.pow)
}

// lengthTables caches the tables by power (the engine uses one).
var lengthTables sync.Map

// lengthFactorsOf returns the table of pow.
func lengthFactorsOf(pow float64) *lengthFactors {
	if lf, ok := lengthTables.Load(pow); ok {
		return lf.(*lengthFactors)
	}
	lf := &lengthFactors{pow: pow}
	for w := range lf.table {
		lf.table[w] = math.Pow(1+float64(w), pow)
	}
	got, _ := lengthTables.LoadOrStore(pow, lf)
	return got.(*lengthFactors)
}
