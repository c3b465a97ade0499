package offline

// Scratch is one question's working memory for the scorer, sized to the
// space and reused from question to question (the caller pools it), so
// that a question allocates nothing in proportion to the space. Its zero
// value is ready to use; it is not safe for concurrent use.
type Scratch struct {
	// rel, scores and best hold the reference path's relevance, scores
	// and event bests.
	rel, scores, best []float64
	// prior holds the relevance times the role factor (Selection.Top).
	prior []float64
	// The pruned scan (Fast): upper bounds of the cosines (estimate plus
	// error bound), of relevance, scores and event bests, and exact
	// cosines computed so far (known, kept all false between questions,
	// and cand, the rows set).
	hi, relHi, scoreHi, bestHi, exact []float64
	// relTight holds tighter relevance bounds where topRelevance set them
	// (relTiers; elsewhere stale).
	relTight []float64
	// bound, est2 and bound2 hold the turn matrix's error bounds and the
	// window matrix's estimates while they are mixed (DenseMix.upper; the
	// turn matrix's estimates in hi).
	bound, est2, bound2 []float64
	known               []bool
	cand, cands         []int
	// rangeCos and rangeTmp hold the cosines of a range of rows computed
	// at once (cosRange).
	rangeCos []float64
	rangeTmp []float32
	// batch, evRows, atRows and atCos hold the turns whose cosines cosAt
	// computes at once (topRelevance's, an event's, those not known yet)
	// and their cosines.
	batch, evRows []int
	atRows        []int32
	atCos         []float64
	// fastRel, fastScores and fastBest hold exact values the pruned scan
	// computed (elsewhere stale).
	fastRel, fastScores, fastBest []float64
	// runs holds the best relevance per speaker run (exact values, where
	// computed), runsHi their upper bounds on the pruned path.
	runs, runsHi RunBests
	// tops lists, per part of the bound pass, the rows that can hold the
	// best cosine.
	tops [4][]int
	// over lists, per part of the bound pass, its units of events
	// another part owns (relevanceBounds).
	over [4][]int
	// overEvent and overBound hold, per part, the events and relevance
	// bounds of the units listed in over.
	overEvent [4][]int32
	overBound [4][]float64
	// relPre lists, per part of the bound pass where relPreOK, the units
	// whose relevance bound is at least relPreAt (for the first
	// relPreParts parts; relAtLeast).
	relPre      [4][]int
	relPreAt    [4]float64
	relPreOK    [4]bool
	relPreParts int
	// reached, runKnown and evKnown mark the units, runs and events whose
	// exact score or best relevance the pruned path has computed (they
	// stay all false between questions); runList and evList list the runs
	// and events marked.
	reached, runKnown, evKnown []bool
	runList, evList            []int32
}

// grow returns s with length n, reallocating when its capacity is short;
// the contents are unspecified.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
