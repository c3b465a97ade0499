package higmem

import (
	"cmp"
	"math"
	"slices"

	"github.com/higmem/higmem/internal/rank"
)

// The pruned offline scorer. On a large space, an unfiltered offline
// question is scored from int8 estimates of its cosines (vec.Matrix.Estimate,
// with error bounds) instead of a scan of every exact cosine. The formulas
// are those of offline_score.go, relevanceOf and scoreRange, applied to
// bounds first (relevance bounds by relevanceBound, which never falls below
// relevanceOf) and then to exact values for the turns that can matter;
// the selection is the reference's, bit for bit (TestOfflineFastMatchesFull
// compares the two on every question). Speaker runs are bounded the same
// way: a run's best relevance from its turns' bounds, then exactly for the
// runs around each turn scored exactly.

// fastScan is the state of one pruned offline question. Caller holds st.mu.
type fastScan struct {
	q  *query
	tu offlineTuning
	dm denseMix
	sc *scratch
	f  *turnFeatures
	n  int
	// est and bound are the estimated cosines and their error bounds.
	est, bound []float64
	// maxLo is the best lower bound of a cosine.
	maxLo float64
	scale relevanceScale
	// relHi, scoreHi and bestHi are upper bounds of relevance, scores and
	// the best relevance per event (bestHi is nil when EventShare is 0).
	relHi, scoreHi, bestHi []float64
	// rel, best and scores hold exact values where they have been
	// computed (rel around each scored turn, best at its event); elsewhere
	// they are stale.
	rel, best, scores []float64
	// runs holds the exact best relevance per speaker run, for the runs
	// marked in sc.runKnown (elsewhere stale); best is exact at the events
	// marked in sc.evKnown, and scores at the turns marked in sc.reached.
	runs *runBests
	// scoreIdx and relIdx list the turns whose exact score (relevance)
	// selectOffline may read; scoreIdx lists the reached turns.
	scoreIdx, relIdx []int
	top              float64
	// bestK holds the MaxK best exact scores.
	bestK *rank.TopK
}

// offlineFast computes what selectOffline reads for an unfiltered question
// on a large space: exact relevance for every turn that could be among the
// KTurn most relevant (listed in relIdx) and exact scores for every turn
// that could be among the MaxK best (listed in scoreIdx). ok is false when
// that cannot be guaranteed cheaply (fewer than MaxK turns reach KeepRatio
// of the best score, or a tuning that is not monotone); the caller then
// computes every score exactly.
//
// When then is not nil it is called with what the learned stage reads
// (stageInput), while the exact values are marked.
func (q *query) offlineFast(tu offlineTuning, dm denseMix, sc *scratch, then func(*stageInput)) (rel, scores []float64, relIdx, scoreIdx []int, ok bool) {
	if !tu.monotone() || q.ro.KTurn <= 0 {
		return nil, nil, nil, nil, false
	}
	fs := newFastScan(q, tu, dm, sc)
	defer fs.release()
	r0, ok := fs.setBounds()
	if !ok || !fs.topScores(r0) || !fs.topRelevance() {
		return nil, nil, nil, nil, false
	}
	if then != nil {
		// The most relevant turn is among relIdx, exactly.
		maxRel := 0.0
		for _, i := range fs.relIdx {
			maxRel = max(maxRel, fs.rel[i])
		}
		then(&stageInput{tu: tu, f: fs.f, rel: fs.rel, scores: fs.scores, idx: fs.scoreIdx, runs: fs.runs, cos: fs.cos, scale: fs.scale, maxRel: maxRel})
	}
	return fs.rel, fs.scores, fs.relIdx, fs.scoreIdx, true
}

// monotone reports whether scores grow with every relevance and relevance
// with every cosine, which the bounds of offlineFast rely on.
func (tu offlineTuning) monotone() bool {
	return tu.DenseWeight >= 0 && tu.WindowWeight >= 0 && tu.WindowWeight <= 1 && tu.Prev >= 0 && tu.PrevQuestion >= 0 && tu.Next >= 0 && tu.NextQuestion >= 0 &&
		tu.Far >= 0 && tu.EventShare >= 0 && tu.RunShare >= 0 && tu.SpeakerBump > 0 && tu.TimeBump > 0 && tu.CountBump > 0 && tu.QuestionBump >= 0 && tu.KeepRatio > 0
}

// newFastScan estimates the question's cosines (dm) and computes its
// features (at once: they are independent).
func newFastScan(q *query, tu offlineTuning, dm denseMix, sc *scratch) *fastScan {
	st := q.st
	n := len(st.turns)
	fs := &fastScan{q: q, tu: tu, dm: dm, sc: sc, n: n, bestK: rank.NewTopK(tu.MaxK)}
	sc.est, sc.bound = grow(sc.est, n), grow(sc.bound, n)
	fs.est, fs.bound = sc.est, sc.bound
	if dm.w > 0 && dm.w < 1 {
		sc.est2, sc.bound2 = grow(sc.est2, n), grow(sc.bound2, n)
	}
	estimated := make(chan struct{})
	go func() {
		defer close(estimated)
		fs.maxLo = dm.estimate(q.qv, fs.est, fs.bound, sc.est2, sc.bound2)
	}()
	fs.f = q.featuresIn(sc, dm, false)
	// The best BM25 score, while the estimates may still be running: a
	// scan in order (untouched turns score 0) with a branch that is
	// rarely taken, faster than max over the touched turns at random.
	maxLex := 0.0
	for _, x := range fs.f.lex {
		if x > maxLex {
			maxLex = x
		}
	}
	fs.scale.maxLex = maxLex
	fs.scale.mean = fs.f.mean
	<-estimated
	// Exact cosines on demand; known stays all false between questions.
	sc.exact = grow(sc.exact, n)
	if len(sc.known) < n {
		sc.known = make([]bool, n+n/4)
	}
	sc.fastRel, sc.fastScores = grow(sc.fastRel, n), grow(sc.fastScores, n)
	fs.rel, fs.scores = sc.fastRel, sc.fastScores
	singleRuns(fs.f)
	nr := len(fs.f.runStart)
	sc.runs.grow(nr)
	fs.runs = &sc.runs
	// The marks below stay all false between questions (release).
	sc.reached = growFalse(sc.reached, n)
	sc.runKnown = growFalse(sc.runKnown, nr)
	if tu.EventShare != 0 {
		ne := len(st.events)
		sc.bestHi, sc.fastBest = grow(sc.bestHi, ne), grow(sc.fastBest, ne)
		fs.bestHi, fs.best = sc.bestHi, sc.fastBest
		sc.evKnown = growFalse(sc.evKnown, ne)
	}
	return fs
}

// growFalse returns marks with length n, all false when they were (a
// reallocation adds room to spare, as grow).
func growFalse(marks []bool, n int) []bool {
	if cap(marks) < n {
		return make([]bool, n, n+n/4)
	}
	return marks[:n]
}

// release clears the marks of what was computed exactly (cosines, run and
// event bests, scores), for the next question.
func (fs *fastScan) release() {
	sc := fs.sc
	for _, i := range sc.cand {
		sc.known[i] = false
	}
	sc.cand = sc.cand[:0]
	for _, i := range fs.scoreIdx {
		sc.reached[i] = false
	}
	for _, r := range sc.runList {
		sc.runKnown[r] = false
	}
	sc.runList = sc.runList[:0]
	for _, e := range sc.evList {
		sc.evKnown[e] = false
	}
	sc.evList = sc.evList[:0]
}

// cos returns the exact cosine of turn i.
func (fs *fastScan) cos(i int) float64 {
	sc := fs.sc
	if !sc.known[i] {
		sc.exact[i] = fs.dm.exact(fs.q.qv, i)
		sc.known[i] = true
		sc.cand = append(sc.cand, i)
	}
	return sc.exact[i]
}

// relX returns the exact relevance of turn i.
func (fs *fastScan) relX(i int) float64 {
	return fs.tu.relevanceOf(fs.f.lex[i], fs.cos(i), fs.scale)
}

// setBounds computes the upper bounds of every turn's relevance, event best
// and score, on every core, and returns the turn with the best score bound.
// It sets the relevance scale (the mean from the matrix's sum of rows, see
// limits.offlineFastRows, the best cosine and the best BM25 score) and
// reports false when its dense part would vanish.
//
// The relevance bounds and the bounds of each run's bests are one pass,
// split by runs (a run's turns are consecutive). The best cosine is not
// known yet in that pass: only the rows whose upper bound reaches the best
// lower bound, maxLo, can hold it, and the pass lists them. The pass
// scales the dense part by maxLo instead, which bounds the best cosine
// from below, and relevanceOf grows as its scale's best cosine falls (each
// rounded operation is monotone), so its values bound relevance all the
// same; they are a little looser. When maxLo is not above the mean, the
// best cosine is found first.
func (fs *fastScan) setBounds() (r0 int, ok bool) {
	n, f, tu := fs.n, fs.f, fs.tu
	sc := fs.sc
	sc.relHi = grow(sc.relHi, n)
	fs.relHi = sc.relHi
	hiScale := fs.scale
	hiScale.maxD = fs.maxLo
	exactFirst := !(fs.maxLo > fs.scale.mean)
	if exactFirst {
		fs.scale.maxD = math.Inf(-1)
		for i := range n {
			if fs.est[i]+fs.bound[i] >= fs.maxLo {
				fs.scale.maxD = max(fs.scale.maxD, fs.cos(i))
			}
		}
		if !(fs.scale.maxD > fs.scale.mean) {
			return 0, false
		}
		hiScale = fs.scale
	}
	// The best relevance bound per run bounds the run's best, and the
	// bound of the other turns' best bounds the best of a run's others.
	// Where every run is one turn (run r is turn r), a run's best is its
	// turn's bound: scoreRange then reads no run bests
	// (scoreRangeSingle), and the pass writes relHi alone.
	var rh *runBests
	single := len(f.runStart) == n
	if !single {
		rh = &sc.runsHi
		rh.grow(len(f.runStart))
	}
	maxLo := fs.maxLo
	rb := relBound(tu, hiScale)
	// The event bests too: each part into its own slice (part 0 into
	// bestHi), merged after.
	var events []int32
	if fs.bestHi != nil && f.event != nil {
		events = f.event[:n]
	}
	parts := rank.ParallelRange(len(f.runStart), fs.chunk(), func(p, lo, hi int) {
		top := sc.tops[p][:0]
		est, bound, lex, relHi := fs.est[:n], fs.bound[:n], f.lex[:n], fs.relHi[:n]
		var eb []float64
		if events != nil {
			eb = fs.bestHi
			if p > 0 {
				sc.bestParts[p] = grow(sc.bestParts[p], len(fs.bestHi))
				eb = sc.bestParts[p]
			}
			clear(eb)
		}
		if single {
			// The loop below, for runs of one turn: lo to hi-1 are
			// turns.
			for i := lo; i < hi; i++ {
				u := est[i] + bound[i]
				if u >= maxLo {
					top = append(top, i)
				}
				x := rb.of(lex[i], u)
				relHi[i] = x
				if events != nil {
					if e := events[i]; e >= 0 {
						eb[e] = max(eb[e], x)
					}
				}
			}
			sc.tops[p] = top
			return
		}
		for r := lo; r < hi; r++ {
			a, b := runTurns(f, r, n)
			// As runBests.setRun, on the bounds as they are made.
			best, second, arg := 0.0, 0.0, int32(-1)
			for i := a; i < b; i++ {
				u := est[i] + bound[i]
				if u >= maxLo {
					top = append(top, i)
				}
				x := rb.of(lex[i], u)
				relHi[i] = x
				if events != nil {
					if e := events[i]; e >= 0 {
						eb[e] = max(eb[e], x)
					}
				}
				best, second, arg = bestTwo(best, second, arg, x, int32(i))
			}
			rh.best[r], rh.second[r], rh.arg[r] = best, second, arg
		}
		sc.tops[p] = top
	})
	if !exactFirst {
		fs.scale.maxD = math.Inf(-1)
		for _, top := range sc.tops[:parts] {
			for _, i := range top {
				fs.scale.maxD = max(fs.scale.maxD, fs.cos(i))
			}
		}
		if !(fs.scale.maxD > fs.scale.mean) {
			return 0, false
		}
	}
	if events == nil && fs.bestHi != nil {
		clear(fs.bestHi) // no events: every best is 0
	}
	if events != nil {
		for _, eb := range sc.bestParts[1:parts] {
			for e, x := range eb {
				fs.bestHi[e] = max(fs.bestHi[e], x)
			}
		}
	}
	sc.scoreHi = grow(sc.scoreHi, n)
	fs.scoreHi = sc.scoreHi
	var args [4]int
	parts = rank.ParallelRange(n, fs.chunk(), func(p, lo, hi int) { args[p] = tu.scoreRange(f, fs.relHi, fs.scoreHi, fs.bestHi, rh, lo, hi) })
	r0 = args[0]
	for _, a := range args[1:parts] {
		if fs.scoreHi[a] > fs.scoreHi[r0] || fs.scoreHi[a] == fs.scoreHi[r0] && a < r0 {
			r0 = a
		}
	}
	return r0, true
}

// relevanceBound computes upper bounds of relevanceOf with multiplications
// where relevanceOf divides (a scan of every turn's bound is bound by its
// two divisions otherwise). Rounding a product by a rounded reciprocal
// differs from rounding the quotient by a few units in the last place:
// margin, far larger, covers that.
type relevanceBound struct {
	invLex, mean, perD float64
}

// relMargin is the relative margin of relevanceBound, 2⁻⁴⁰ (about 1e-12,
// against errors of a few 2⁻⁵³).
const relMargin = 1 + 1.0/(1<<40)

// relBound returns the bound of relevanceOf under tu and s.
func relBound(tu offlineTuning, s relevanceScale) relevanceBound {
	b := relevanceBound{mean: s.mean, perD: tu.DenseWeight / (s.maxD - s.mean)}
	if s.maxLex > 0 {
		b.invLex = 1 / s.maxLex
	}
	return b
}

// of returns a value at least relevanceOf(lex, d, s), for lex >= 0.
func (b relevanceBound) of(lex, d float64) float64 {
	dense := [2]float64{0, (d - b.mean) * b.perD}
	return (lex*b.invLex + dense[b2i(d > b.mean)]) * relMargin
}

// chunk returns the fewest turns or runs each core takes in a pass (see
// limits.offlineChunk).
func (fs *fastScan) chunk() int {
	if c := fs.q.st.limits.offlineChunk; c > 0 {
		return c
	}
	return 16384
}

// atLeast appends to dst the indexes of xs whose value is at least floor,
// in order, and returns it: on every core, each part's list in order, then
// the lists in the parts' order.
func (fs *fastScan) atLeast(xs []float64, floor float64, dst []int) []int {
	tops := &fs.sc.tops
	parts := rank.ParallelRange(len(xs), fs.chunk(), func(p, lo, hi int) {
		top := tops[p][:0]
		for i, x := range xs[lo:hi] {
			if x >= floor {
				top = append(top, lo+i)
			}
		}
		tops[p] = top
	})
	for _, top := range tops[:parts] {
		dst = append(dst, top...)
	}
	return dst
}

// bestOf returns the exact best relevance among the turns whose first event
// is e, and keeps it in fs.best.
func (fs *fastScan) bestOf(e int) float64 {
	sc := fs.sc
	if sc.evKnown[e] {
		return fs.best[e]
	}
	b := 0.0
	for _, j := range fs.q.st.evTurns[e] {
		if int(j) < fs.n && int(fs.f.event[j]) == e {
			b = max(b, fs.relX(int(j)))
		}
	}
	fs.best[e] = b
	sc.evKnown[e] = true
	sc.evList = append(sc.evList, int32(e))
	return b
}

// runOf makes the entries of run r in fs.runs exact, from the exact
// relevance of its turns.
func (fs *fastScan) runOf(r int) {
	sc := fs.sc
	if sc.runKnown[r] {
		return
	}
	lo, hi := runTurns(fs.f, r, fs.n)
	for j := lo; j < hi; j++ {
		fs.rel[j] = fs.relX(j)
	}
	fs.runs.setRun(fs.f, fs.rel, r, fs.n)
	sc.runKnown[r] = true
	sc.runList = append(sc.runList, int32(r))
}

// reach computes the exact score of turn i with scoreRange, from the exact
// relevance of the turns of its run and of the two runs either side, and
// the exact best of its event. A turn is reached once.
func (fs *fastScan) reach(i int) {
	if fs.sc.reached[i] {
		return
	}
	r := int(fs.f.run[i])
	for k := max(r-2, 0); k <= min(r+2, len(fs.f.runStart)-1); k++ {
		fs.runOf(k)
	}
	if e := fs.f.event[i]; e >= 0 && fs.best != nil {
		fs.bestOf(int(e))
	}
	fs.tu.scoreRange(fs.f, fs.rel, fs.scores, fs.best, fs.runs, i, i+1)
	fs.sc.reached[i] = true
	fs.scoreIdx = append(fs.scoreIdx, i)
	fs.top = max(fs.top, fs.scores[i])
	fs.bestK.Offer(i, fs.scores[i])
}

// topScores computes exact scores, turn by turn in decreasing order of
// their upper bounds (from r0, the best bound), until the MaxK best are
// known: every turn not reached then scores below the MaxK-th best. It
// reports false when fewer than MaxK turns reach KeepRatio of the best.
func (fs *fastScan) topScores(r0 int) bool {
	// The best score: the turn with the best bound, then every turn whose
	// bound reaches its score.
	fs.reach(r0)
	// One scan lists the turns whose bound reaches r0's score or
	// KeepRatio of it, whichever is lower: keep below is at least that, as
	// the best score is at least r0's.
	c := fs.sc.cands[:0]
	if s0 := fs.scores[r0]; s0 > 0 {
		c = fs.atLeast(fs.scoreHi, min(fs.tu.KeepRatio*s0, s0), c)
	} else {
		for i := range fs.scoreHi {
			c = append(c, i)
		}
	}
	for _, i := range c {
		if fs.scoreHi[i] >= fs.scores[r0] {
			fs.reach(i)
		}
	}
	if !(fs.top > 0) {
		fs.sc.cands = c
		return false
	}
	keep := fs.tu.KeepRatio * fs.top
	// The other turns that can reach keep, best bound first (a heap).
	h := c[:0]
	for _, i := range c {
		if fs.scoreHi[i] >= keep && !fs.sc.reached[i] {
			h = append(h, i)
		}
	}
	fs.sc.cands = h
	higher := func(a, b int) bool { return fs.scoreHi[a] > fs.scoreHi[b] }
	down := func(j int) {
		for {
			l, r, w := 2*j+1, 2*j+2, j
			if l < len(h) && higher(h[l], h[w]) {
				w = l
			}
			if r < len(h) && higher(h[r], h[w]) {
				w = r
			}
			if w == j {
				return
			}
			h[j], h[w] = h[w], h[j]
			j = w
		}
	}
	for j := len(h)/2 - 1; j >= 0; j-- {
		down(j)
	}
	for steps := 0; ; steps++ {
		if len(h) == 0 {
			// Every turn not reached scores below keep.
			return fs.bestK.Full() && fs.bestK.Last() >= keep
		}
		if steps%8 == 0 && fs.bestK.Full() && fs.bestK.Last() > fs.scoreHi[h[0]] {
			return true
		}
		i := h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		down(0)
		fs.reach(i)
	}
}

// topRelevance computes the exact relevance of the KTurn most relevant
// turns, in decreasing order of the relevance bounds from a floor set by
// the exact relevance of the turns reached.
func (fs *fastScan) topRelevance() bool {
	k := fs.q.ro.KTurn
	relTop := rank.NewTopK(k)
	for _, i := range fs.scoreIdx {
		relTop.Offer(i, fs.relX(i))
	}
	if !relTop.Full() {
		// Fewer turns were reached than the search stage lists (max K
		// below KTurn): the turns of the best relevance bounds complete
		// the floor. Any k exact values give a floor at or below the k-th
		// best relevance.
		for _, i := range rank.Top(fs.relHi, nil, k) {
			if !fs.sc.reached[i] {
				relTop.Offer(i, fs.relX(i))
			}
		}
	}
	if !relTop.Full() {
		return false
	}
	floor := relTop.Last()
	rc := fs.atLeast(fs.relHi, floor, fs.sc.cands[:0])
	slices.SortFunc(rc, func(a, b int) int { return cmp.Compare(fs.relHi[b], fs.relHi[a]) })
	fs.sc.cands = rc
	relTop = rank.NewTopK(k)
	for j, i := range rc {
		fs.rel[i] = fs.relX(i)
		fs.relIdx = append(fs.relIdx, i)
		relTop.Offer(i, fs.rel[i])
		if j+1 < len(rc) && relTop.Full() && relTop.Last() > fs.relHi[rc[j+1]] {
			break
		}
	}
	return true
}
