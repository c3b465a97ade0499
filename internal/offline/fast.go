package offline

import (
	"math"
	"slices"
	"unsafe"

	"github.com/higmem/higmem/internal/parallel"
	"github.com/higmem/higmem/internal/rank"
)

// The pruned offline scorer. On a large space, an unfiltered offline
// question is scored from int8 estimates of its cosines (vec.Matrix.Estimate,
// with error bounds) instead of a scan of every exact cosine. The formulas
// are those of score.go, Relevance and ScoreRange, applied to
// bounds first (relevance bounds by relevanceBound, which never falls below
// Relevance) and then to exact values for the turns that can matter;
// the selection is the reference's, bit for bit (TestOfflineFastMatchesFull
// compares the two on every question). Speaker runs are bounded the same
// way: a run's best relevance from its turns' bounds, then exactly for the
// runs around each turn scored exactly.

// fastScan is the state of one pruned offline question.
type fastScan struct {
	in *Input
	tu Tuning
	dm DenseMix
	sc *Scratch
	f  *Features
	n  int
	// hi holds the upper bounds of the cosines (estimate plus error
	// bound).
	hi []float64
	// maxLo is the best lower bound of a cosine.
	maxLo float64
	scale Scale
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
	runs *RunBests
	// scoreIdx and relIdx list the units whose exact score (relevance)
	// Select may read; scoreIdx lists the reached units.
	scoreIdx, relIdx []int
	top              float64
	// loose tells whether relHi bounds relevance under a scale whose
	// best cosine is only a lower bound of the exact one (setBounds).
	loose bool
	// bestK holds the MaxK best exact scores.
	bestK *rank.TopK
}

// fast computes what Select reads for an unfiltered question on a large
// space: exact relevance for every unit that could be among the KTurn most
// relevant (listed in relIdx) and exact scores for every unit that could be
// among the MaxK best (listed in scoreIdx). ok is false when that cannot be
// guaranteed cheaply (fewer than MaxK units reach KeepRatio of the best
// score, or a tuning that is not Monotone); the caller then computes every
// score exactly.
//
// When then is not nil it is called with what the learned stage reads
// (StageInput), while the exact values are marked. When *beside is not
// nil, it runs beside the exact scores (Input.Beside) and is set to nil.
func fast(in *Input, tu Tuning, sc *Scratch, then func(*StageInput), beside *func()) (rel, scores []float64, relIdx, scoreIdx []int, ok bool) {
	if !tu.Monotone() || in.KTurn <= 0 {
		return nil, nil, nil, nil, false
	}
	fs := newFastScan(in, tu, sc)
	defer fs.release()
	r0, ok := fs.setBounds()
	if !ok {
		return nil, nil, nil, nil, false
	}
	if b := *beside; b != nil {
		*beside = nil
		parallel.For(2, func(part int) {
			if part == 0 {
				ok = fs.topScores(r0) && fs.topRelevance()
			} else {
				b()
			}
		})
	} else {
		ok = fs.topScores(r0) && fs.topRelevance()
	}
	if !ok {
		return nil, nil, nil, nil, false
	}
	if then != nil {
		// The most relevant unit is among relIdx, exactly.
		maxRel := 0.0
		for _, i := range fs.relIdx {
			maxRel = max(maxRel, fs.rel[i])
		}
		then(&StageInput{tu: tu, f: fs.f, rel: fs.rel, scores: fs.scores, idx: fs.scoreIdx, runs: fs.runs, cos: fs.cos, scale: fs.scale, maxRel: maxRel})
	}
	return fs.rel, fs.scores, fs.relIdx, fs.scoreIdx, true
}

// Monotone reports whether scores grow with every relevance and relevance
// with every cosine, which the bounds of offlineFast rely on.
func (tu Tuning) Monotone() bool {
	return tu.DenseWeight >= 0 && tu.WindowWeight >= 0 && tu.WindowWeight <= 1 && tu.Prev >= 0 && tu.PrevQuestion >= 0 && tu.Next >= 0 && tu.NextQuestion >= 0 &&
		tu.Far >= 0 && tu.EventShare >= 0 && tu.RunShare >= 0 && tu.SpeakerBump > 0 && tu.TimeBump > 0 && tu.CountBump > 0 && tu.QuestionBump >= 0 && tu.KeepRatio > 0
}

// newFastScan estimates the question's cosines (in.Dense) and computes its
// features (at once: they are independent).
func newFastScan(in *Input, tu Tuning, sc *Scratch) *fastScan {
	n, dm := in.Units, in.Dense
	fs := &fastScan{in: in, tu: tu, dm: dm, sc: sc, n: n, bestK: rank.NewTopK(tu.MaxK)}
	sc.hi = grow(sc.hi, n)
	fs.hi = sc.hi
	if dm.W > 0 && dm.W < 1 {
		sc.bound, sc.est2, sc.bound2 = grow(sc.bound, n), grow(sc.est2, n), grow(sc.bound2, n)
	}
	parallel.For(2, func(part int) {
		if part == 0 {
			fs.maxLo = dm.upper(in.Vector, fs.hi, sc.bound, sc.est2, sc.bound2)
			return
		}
		fs.f = in.Features(false)
		// The best BM25 score: the features' own, else a scan in order
		// (untouched turns score 0) with a branch that is rarely
		// taken, faster than max over the touched turns at random.
		if fs.f.LexMaxSet {
			fs.scale.MaxLex = fs.f.LexMax
		} else {
			fs.scale.MaxLex = MaxAbove(fs.f.Lex)
		}
		fs.scale.Mean = fs.f.Mean
	})
	// Exact cosines on demand; known stays all false between questions.
	sc.exact = grow(sc.exact, n)
	if len(sc.known) < n {
		sc.known = make([]bool, n+n/4)
	}
	sc.fastRel, sc.fastScores = grow(sc.fastRel, n), grow(sc.fastScores, n)
	fs.rel, fs.scores = sc.fastRel, sc.fastScores
	Complete(fs.f)
	nr := len(fs.f.RunStart)
	sc.runs.Grow(nr)
	fs.runs = &sc.runs
	// The marks below stay all false between questions (release).
	sc.reached = growFalse(sc.reached, n)
	sc.runKnown = growFalse(sc.runKnown, nr)
	if tu.EventShare != 0 {
		ne := len(in.EventUnits)
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
		sc.exact[i] = fs.dm.Exact(fs.in.Vector, i)
		sc.known[i] = true
		sc.cand = append(sc.cand, i)
	}
	return sc.exact[i]
}

// cosAt computes the exact cosines of the turns listed not known yet, at
// once (DenseMix.ExactAt: the reads of their scattered rows overlap).
func (fs *fastScan) cosAt(rows []int) {
	sc := fs.sc
	todo := sc.atRows[:0]
	for _, i := range rows {
		if !sc.known[i] {
			todo = append(todo, int32(i))
		}
	}
	sc.atRows = todo
	if len(todo) < 2 {
		return // cos computes it when asked
	}
	sc.atCos = grow(sc.atCos, len(todo))
	if cap(sc.rangeTmp) < len(todo) {
		sc.rangeTmp = make([]float32, len(todo))
	}
	fs.dm.ExactAt(fs.in.Vector, todo, sc.atCos, sc.rangeTmp[:cap(sc.rangeTmp)])
	for j, i := range todo {
		sc.exact[i] = sc.atCos[j]
		sc.known[i] = true
		sc.cand = append(sc.cand, int(i))
	}
}

// cosRange computes the exact cosines of the turns lo to hi-1 not known
// yet, at once (DenseMix.ExactInto: four rows at a time), after trimming
// the known ones at either end; when most of what is left is known (a
// long run reached before, between two that were not), it leaves them
// to cos, one at a time.
func (fs *fastScan) cosRange(lo, hi int) {
	sc := fs.sc
	for lo < hi && sc.known[lo] {
		lo++
	}
	for lo < hi && sc.known[hi-1] {
		hi--
	}
	unknown := 0
	for _, k := range sc.known[lo:hi] {
		unknown += b2i(!k)
	}
	if unknown < 2 || 2*unknown < hi-lo {
		return // cos computes them when asked
	}
	sc.rangeCos = grow(sc.rangeCos, hi-lo)
	if cap(sc.rangeTmp) < hi-lo {
		sc.rangeTmp = make([]float32, hi-lo)
	}
	fs.dm.ExactInto(fs.in.Vector, lo, sc.rangeCos, sc.rangeTmp)
	for j, x := range sc.rangeCos {
		if i := lo + j; !sc.known[i] {
			sc.exact[i] = x
			sc.known[i] = true
			sc.cand = append(sc.cand, i)
		}
	}
}

// relX returns the exact relevance of turn i.
func (fs *fastScan) relX(i int) float64 {
	return fs.tu.Relevance(fs.f.Lex[i], fs.cos(i), fs.scale)
}

// setBounds computes the upper bounds of every unit's relevance, event best
// and score, on every core, and returns the unit with the best score bound.
// It sets the relevance scale (the mean from the matrices' sums of rows,
// the best cosine and the best BM25 score) and reports false when its
// dense part would vanish.
//
// The relevance bounds and the bounds of each run's bests are one pass
// (relevanceBounds). The best cosine is not known yet in that pass: only
// the rows whose upper bound reaches the best lower bound, maxLo, can hold
// it, and the pass lists them. The pass scales the dense part by maxLo
// instead, which bounds the best cosine from below, and Relevance grows as
// its scale's best cosine falls (each rounded operation is monotone), so
// its values bound relevance all the same; they are a little looser. When
// maxLo is not above the mean, the best cosine is found first.
func (fs *fastScan) setBounds() (r0 int, ok bool) {
	hiScale := fs.scale
	hiScale.MaxD = fs.maxLo
	exactFirst := !(fs.maxLo > fs.scale.Mean)
	if exactFirst {
		if !fs.bestCosine(func(yield func(int) bool) {
			for i := range fs.n {
				if fs.hi[i] >= fs.maxLo && !yield(i) {
					return
				}
			}
		}) {
			return 0, false
		}
		hiScale = fs.scale
	}
	fs.loose = !exactFirst
	rh, parts := fs.relevanceBounds(hiScale)
	if !exactFirst && !fs.bestCosine(func(yield func(int) bool) {
		for _, top := range fs.sc.tops[:parts] {
			for _, i := range top {
				if !yield(i) {
					return
				}
			}
		}
	}) {
		return 0, false
	}
	return fs.scoreBounds(rh), true
}

// bestCosine sets the scale's best cosine to the best exact cosine of the
// rows listed, and reports whether it is above the mean (else the dense
// part vanishes).
func (fs *fastScan) bestCosine(rows func(yield func(int) bool)) bool {
	fs.scale.MaxD = math.Inf(-1)
	for i := range rows {
		fs.scale.MaxD = max(fs.scale.MaxD, fs.cos(i))
	}
	return fs.scale.MaxD > fs.scale.Mean
}

// relevanceBounds is the first bound pass, on every core, split by runs (a
// run's units are consecutive): every unit's relevance bound under hiScale
// (relHi), the bounds of every run's best and second best (rh; nil where
// every run is one unit: ScoreRange then reads no run bests, see
// scoreRangeSingle), of every event's best (bestHi), and per part the rows
// whose cosine can be the best (sc.tops). It returns rh and the number of
// parts.
//
// Each part owns a range of events (eventSplit), whose bests it clears and
// writes in bestHi itself, and lists its units of other events (sc.over),
// merged after the pass: the units of an event are mostly a few
// consecutive ones, so that the parts' event ranges barely overlap (on the
// bench's 100k turns, a few hundred units are listed), where a slice of
// bests per part to clear and merge cost ~0.03 ms of the pass. Where every
// run is one unit, with AVX-512, each part also lists the units whose bound
// reaches its preAt (sc.relPre, for relAtLeast).
func (fs *fastScan) relevanceBounds(hiScale Scale) (rh *RunBests, parts int) {
	n, f, sc := fs.n, fs.f, fs.sc
	sc.relHi = grow(sc.relHi, n)
	fs.relHi = sc.relHi
	nr := len(f.RunStart)
	single := nr == n
	if !single {
		rh = &sc.runsHi
		rh.Grow(nr)
	}
	var events []int32
	if fs.bestHi != nil && f.Event != nil {
		events = f.Event[:n]
	}
	// The parts of rank.ParallelRange, by runs; each part's first unit.
	parts = parallel.Parts(nr, fs.chunk(), 4)
	per := (nr + parts - 1) / parts
	var first [5]int
	for p := range parts + 1 {
		r := min(p*per, nr)
		first[p] = n
		if r < nr {
			first[p], _ = runUnits(f, r, n)
		}
	}
	var eLo [5]int32
	if events != nil {
		eLo = eventSplit(events, len(fs.bestHi), first[:parts+1])
	}
	parallel.For(parts, func(p int) {
		lo, hi := min(p*per, nr), min((p+1)*per, nr)
		bp := boundPart{
			hi: fs.hi[:n], lex: f.Lex[:n], relHi: fs.relHi[:n], events: events,
			maxLo: fs.maxLo, rb: relBound(fs.tu, hiScale), top: sc.tops[p][:0],
		}
		if events != nil {
			bp.eb, bp.eLo, bp.eHi, bp.over = fs.bestHi, eLo[p], eLo[p+1], sc.over[p][:0]
			clear(fs.bestHi[bp.eLo:bp.eHi])
		}
		sc.relPreOK[p] = false
		if single {
			// Run r is unit r. With AVX-512, the units whose bound
			// reaches a value below the first tier's split of
			// topRelevance are listed too (relTiers).
			if at, ok := fs.preSplit(bp.rb, lo, hi); ok && useBoundsAVX512 {
				bp.withPre, bp.pre, bp.preAt = true, sc.relPre[p][:0], at
			}
			bp.singles(lo, hi)
			sc.relPre[p], sc.relPreAt[p], sc.relPreOK[p] = bp.pre, bp.preAt, bp.preOK
		} else {
			for r := lo; r < hi; r++ {
				a, b := runUnits(f, r, n)
				rh.best[r], rh.second[r], rh.arg[r] = bp.units(a, b, true)
			}
		}
		sc.tops[p], sc.over[p] = bp.top, bp.over
		if events != nil {
			// The units of events another part owns: their events and
			// bounds read here, on the core that wrote them (the merge
			// below then reads two lists in order).
			ev, xs := sc.overEvent[p][:0], sc.overBound[p][:0]
			for _, i := range bp.over {
				ev, xs = append(ev, events[i]), append(xs, bp.relHi[i])
			}
			sc.overEvent[p], sc.overBound[p] = ev, xs
		}
	})
	sc.relPreParts = parts
	if events == nil && fs.bestHi != nil {
		clear(fs.bestHi) // no events: every best is 0
	}
	if events != nil {
		best := fs.bestHi
		for p := range parts {
			ev := sc.overEvent[p]
			for j, x := range sc.overBound[p][:len(ev)] {
				if e := ev[j]; e >= 0 {
					best[e] = max(best[e], x)
				}
			}
		}
	}
	return rh, parts
}

// eventSplit returns the first event each part owns, and after them ne (the
// number of events): part p owns the events from split[p] to split[p+1]-1.
// first holds each part's first unit, then the number of units. A part
// owns from the event of its first unit (0 for the first part; the next
// part's start where that is past it, or none), so that where the units
// of each event are consecutive every part owns the events of its units.
// Any split is correct (the units of events a part does not own are listed
// and merged after).
func eventSplit(events []int32, ne int, first []int) (split [5]int32) {
	parts := len(first) - 1
	for p := 1; p < parts; p++ {
		e := split[p-1]
		if u := first[p]; u < len(events) {
			e = max(e, events[u])
		}
		split[p] = min(e, int32(ne))
	}
	split[parts] = int32(ne)
	return split
}

// boundPart is one part of the first bound pass (relevanceBounds).
type boundPart struct {
	// hi holds the cosines' upper bounds.
	hi, lex, relHi, eb []float64
	events             []int32
	// eb[eLo:eHi] are the event bests the part owns: it lists its units
	// of other events (not negative) in over, offsets from 0.
	eLo, eHi int32
	over     []int
	// With withPre, pre lists the units whose bound is at least preAt
	// (singles, with AVX-512: then preOK).
	withPre bool
	pre     []int
	preAt   float64
	preOK   bool
	maxLo   float64
	rb      relevanceBound
	// top lists the rows whose cosine can be the best.
	top []int
}

// units bounds the relevance of units a to b-1 (relHi) and the bests of
// the events they own (eb; the units of others listed in over), and lists
// those whose cosine bound reaches maxLo. With bests, the units are one
// run, and it returns the best and second best bound and the best's unit,
// as RunBests.setRun on the bounds.
func (bp *boundPart) units(a, b int, bests bool) (best, second float64, arg int32) {
	hi, lex, relHi, eb, events, maxLo, rb, top := bp.hi, bp.lex, bp.relHi, bp.eb, bp.events, bp.maxLo, bp.rb, bp.top
	arg = -1
	for i := a; i < b; i++ {
		u := hi[i]
		if u >= maxLo {
			top = append(top, i)
		}
		x := rb.of(lex[i], u)
		relHi[i] = x
		if events != nil {
			if e := events[i]; e >= bp.eLo && e < bp.eHi {
				eb[e] = max(eb[e], x)
			} else if e >= 0 {
				bp.over = append(bp.over, i)
			}
		}
		if bests {
			best, second, arg = bestTwo(best, second, arg, x, int32(i))
		}
	}
	bp.top = top
	return best, second, arg
}

// singles is units(a, b, false) where every run is one unit: the same
// values, eight units at a time with AVX-512 or four with AVX2 where the
// CPU has them (relBounds8AVX512, relBounds4AVX2), the rest in singlesGo.
func (bp *boundPart) singles(a, b int) {
	q := (b - a) &^ 3
	avx512 := false
	if q8 := (b - a) &^ 7; useBoundsAVX512 && q8 > 0 {
		q, avx512 = q8, true
	}
	if !useBoundsAVX2 || q == 0 {
		bp.singlesGo(a, b)
		return
	}
	// Every slice holds the q units (the assembly reads them), eb the
	// events owned.
	_, _, _ = bp.hi[a:b][q-1], bp.lex[a:b][q-1], bp.relHi[a:b][q-1]
	top := slices.Grow(bp.top, q)
	n0 := len(top)
	ra := relBoundsArgs{
		hi: &bp.hi[a], lex: &bp.lex[a], relHi: &bp.relHi[a],
		maxLo: bp.maxLo, mean: bp.rb.mean, perD: bp.rb.perD, invLex: bp.rb.invLex,
		top: unsafe.SliceData(top[n0 : n0+q]), n: int64(q),
	}
	var pre []int
	n1 := 0
	if bp.withPre && avx512 {
		pre = slices.Grow(bp.pre, q)
		n1 = len(pre)
		ra.pre, ra.preAt = unsafe.SliceData(pre[n1:n1+q]), bp.preAt
	}
	var over []int
	if bp.events != nil {
		_ = bp.events[a:b][q-1]
		eLo, eHi := bp.eLo, bp.eHi
		if eLo < 0 || eHi < eLo || int(eHi) > len(bp.eb) {
			panic("offline: the events owned out of range")
		}
		over = slices.Grow(bp.over, q)
		ra.events, ra.eb, ra.eLo, ra.eHi = &bp.events[a], unsafe.SliceData(bp.eb), int64(eLo), int64(eHi)
		ra.over = unsafe.SliceData(over[len(over) : len(over)+q])
	}
	if avx512 { // called directly: ra stays on the stack
		relBounds8AVX512(&ra)
	} else {
		relBounds4AVX2(&ra)
	}
	top = top[:n0+int(ra.ntop)]
	for j := n0; j < len(top); j++ {
		top[j] += a // offsets from a, listed in order
	}
	bp.top = top
	if bp.events != nil {
		n1 := len(over)
		over = over[:n1+int(ra.nover)]
		for j := n1; j < len(over); j++ {
			over[j] += a
		}
		bp.over = over
	}
	bp.singlesGo(a+q, b)
	if ra.pre != nil {
		pre = pre[:n1+int(ra.npre)]
		for j := n1; j < len(pre); j++ {
			pre[j] += a
		}
		for i, x := range bp.relHi[a+q : b] {
			if x >= bp.preAt {
				pre = append(pre, a+q+i)
			}
		}
		bp.pre, bp.preOK = pre, true
	}
}

// preSplit returns a value at or below the split that topRelevance's
// splitOf(relHi, floor, relTier) returns above floor: the relTier-th best
// (by the same count r) of its samples from units lo to hi-1, their bounds
// under rb (relHi's values, bit for bit). ok is false when splitOf would
// not sample or the part holds fewer than r samples.
func (fs *fastScan) preSplit(rb relevanceBound, lo, hi int) (at float64, ok bool) {
	b, st, ok := newSampleBest(fs.n, relTier)
	if !ok {
		return 0, false
	}
	lex, hs := fs.f.Lex, fs.hi
	for j := (lo + st - 1) / st * st; j < hi; j += st {
		b.add(rb.of(lex[j], hs[j]))
	}
	return b.best()
}

// singlesGo is singles in Go, in one loop over slices of equal length (no
// bounds checks but the events').
func (bp *boundPart) singlesGo(a, b int) {
	hi := bp.hi[a:b]
	lex, relHi := bp.lex[a:b][:len(hi)], bp.relHi[a:b][:len(hi)]
	maxLo, rb, top := bp.maxLo, bp.rb, bp.top
	if bp.events == nil {
		for i, u := range hi {
			if u >= maxLo {
				top = append(top, a+i)
			}
			relHi[i] = rb.of(lex[i], u)
		}
		bp.top = top
		return
	}
	events, eb, eLo, eHi, over := bp.events[a:b][:len(hi)], bp.eb, bp.eLo, bp.eHi, bp.over
	for i, u := range hi {
		if u >= maxLo {
			top = append(top, a+i)
		}
		x := rb.of(lex[i], u)
		relHi[i] = x
		if ev := events[i]; ev >= eLo && ev < eHi {
			eb[ev] = max(eb[ev], x)
		} else if ev >= 0 {
			over = append(over, a+i)
		}
	}
	bp.top, bp.over = top, over
}

// scoreBounds is the second bound pass, on every core: ScoreRange on the
// bounds (scoreHi). It returns the unit with the best score bound (the
// first among equals).
func (fs *fastScan) scoreBounds(rh *RunBests) int {
	sc := fs.sc
	sc.scoreHi = grow(sc.scoreHi, fs.n)
	fs.scoreHi = sc.scoreHi
	var args [4]int
	parts := rank.ParallelRange(fs.n, fs.chunk(), func(p, lo, hi int) {
		if rh == nil {
			args[p] = fs.tu.scoreBoundsSingle(fs.f, fs.relHi, fs.scoreHi, fs.bestHi, lo, hi)
		} else {
			args[p] = fs.tu.ScoreRange(fs.f, fs.relHi, fs.scoreHi, fs.bestHi, rh, lo, hi)
		}
	})
	r0 := args[0]
	for _, a := range args[1:parts] {
		if fs.scoreHi[a] > fs.scoreHi[r0] || fs.scoreHi[a] == fs.scoreHi[r0] && a < r0 {
			r0 = a
		}
	}
	return r0
}

// scoreBoundsSingle writes to out[lo:hi] upper bounds of the scores that
// ScoreRange(f, rel, out, best, nil, lo, hi) writes where every run is one
// turn (scoreRangeSingle, which reads no session bests without run bests),
// and returns the index of the best bound written (the first among equals;
// lo when none is positive). The pruned path reads its score bounds only as
// bounds (topScores), so they need not be ScoreRange's values bit for bit:
// two loops (four turns at a time with AVX2 and FMA where the CPU has them,
// scoreBounds4AVX2) select each turn's neighbour weights by its link byte
// and its factors by its cue byte and speaker mark (the Go loops from
// small tables built once, the kernel from pairs of constants, one bit
// each, without gathers), and multiply by relMargin, far above the few units in the last
// place by which their sums and products, in another order, may round
// below ScoreRange's (every term is non-negative). Turns within two of
// either end of rel, runs of lengthTableSize words or more, and spaces
// with roles, session shares or no event bests are scored by
// scoreRangeSingle itself. TestScoreBoundsSingle checks the bounds against
// scoreRangeSingle.
func (tu Tuning) scoreBoundsSingle(f *Features, rel, out, best []float64, lo, hi int) (arg int) {
	n := len(rel)
	a, b := max(lo, 2), min(hi, n-2)
	if a >= b || f.Role != nil || tu.SessionShare != 0 || best == nil {
		return tu.scoreRangeSingle(f, rel, out, best, nil, lo, hi)
	}
	arg, top := lo, 0.0
	if lo < a {
		arg = tu.scoreRangeSingle(f, rel, out, best, nil, lo, a)
		top = out[arg]
	}
	sf := tu.scoreFactors(f)
	// The neighbours' weights by link byte: the runs one before, two
	// before, one after and two after (0 where not linked).
	var w [64][4]float64
	for l := range w {
		if l&linkPrev != 0 {
			w[l][0] = sf.prevOf[l/linkPrevAsks&1]
			if l&linkPrev2 != 0 {
				w[l][1] = tu.Far
			}
		}
		if l&linkNext != 0 {
			w[l][2] = sf.nextOf[l/linkNextAsks&1]
			if l&linkNext2 != 0 {
				w[l][3] = tu.Far
			}
		}
	}
	// The factors by cue byte (its three bits) and speaker mark (bit 3),
	// with the margin.
	dated, counted, spk := f.Dated != nil, f.Counted != nil, f.Speaker != nil
	var g [16]float64
	for c := range g {
		x := relMargin
		if spk {
			x *= sf.speakerOf[c>>3]
		}
		if dated {
			x *= sf.datedOf[c/cueDated&1]
		}
		if counted {
			x *= sf.countedOf[c/cueCounted&1]
		}
		g[c] = x * sf.questionOf[c&cueQuestion]
	}
	// Slices of the loop's length (no bounds checks) from a to b-1; rel
	// two either side. Without speaker marks, named is any []bool of that
	// length (g does not read its bit); without a length prior, words any
	// []int32 and lt a table of ones.
	rr := rel[a+2 : b+2]
	m := len(rr)
	vis, links, cues, event, o := f.Visible[a:b][:m], f.RunLinks[a:b][:m], f.Cues[a:b][:m], f.Event[a:b][:m], out[a:b][:m]
	nm, ws, lt := f.Visible, f.Event, &ones
	if spk {
		nm = f.Speaker
	}
	lf := sf.lf
	if lf != nil {
		ws, lt = f.RunWords, &lf.table
	}
	named, words := nm[a:b][:m], ws[a:b][:m]
	es := tu.EventShare
	// Four turns at a time with AVX2 where the CPU has it (q of them),
	// the rest below.
	q, long, arg0 := 0, uint32(0), -1
	if useBoundsAVX2 && m >= 4 && len(best) > 0 && int64(len(best)) < 1<<31 {
		q = m &^ 3
		ba := boundsArgs{
			rel: &rel[a-2], links: &links[0], cues: &cues[0], named: (*uint8)(unsafe.Pointer(&named[0])), vis: (*uint8)(unsafe.Pointer(&vis[0])),
			words: &words[0], event: &event[0], best: &best[0], maxEvent: int64(len(best) - 1),
			lt: lt, out: &o[0], n: int64(q),
			prev: pair(sf.prevOf), next: pair(sf.nextOf), far: [4]float64{tu.Far, tu.Far, tu.Far, tu.Far}, es: [4]float64{es, es, es, es},
			question: pair([2]float64{relMargin * sf.questionOf[0], relMargin * sf.questionOf[1]}),
		}
		// Factors of 1 for the cues the question does not have.
		ba.counted, ba.dated, ba.speaker = pair([2]float64{1, 1}), pair([2]float64{1, 1}), pair([2]float64{1, 1})
		if counted {
			ba.counted = pair(sf.countedOf)
		}
		if dated {
			ba.dated = pair(sf.datedOf)
		}
		if spk {
			ba.speaker = pair(sf.speakerOf)
		}
		// With AVX-512, eight turns at a time first (the same bounds, bit
		// for bit), then four with AVX2.
		k0 := 0
		if q8 := m &^ 7; useBoundsAVX512 && q8 > 0 {
			ba.n = int64(q8)
			ba.boundFactors()
			scoreBounds8AVX512(&ba)
			long = ba.long
			for l, t := range ba.top {
				if k := int(ba.arg[l]); t > top || t == top && t > 0 && k < arg0 {
					arg0, top = k, t
				}
			}
			k0 = q8
		}
		if k0 < q {
			ba.rel, ba.links, ba.cues = &rel[a-2+k0], &links[k0], &cues[k0]
			ba.named, ba.vis = (*uint8)(unsafe.Pointer(&named[k0])), (*uint8)(unsafe.Pointer(&vis[k0]))
			ba.words, ba.event, ba.out, ba.n = &words[k0], &event[k0], &o[k0], int64(q-k0)
			ba.top, ba.arg = [8]float64{}, [8]int64{}
			scoreBounds4AVX2(&ba)
			long |= ba.long
			for l, t := range ba.top {
				if k := k0 + int(ba.arg[l]); t > top || t == top && t > 0 && k < arg0 {
					arg0, top = k, t
				}
			}
		}
	}
	// Each turn's own relevance, its neighbours' and its event's share
	// (p2 is the relevance two before turn a+k, p1 one before, x its own,
	// n1 one after; rr[k] the one two after).
	p2, p1, x, n1 := rel[a+q-2], rel[a+q-1], rel[a+q], rel[a+q+1]
	for k, n2 := range rr[q:] {
		k += q
		wl := &w[links[k]&63]
		s := x + wl[0]*p1 + wl[2]*n1 + wl[1]*p2 + wl[3]*n2
		if e := event[k]; e >= 0 {
			s += es * best[e]
		}
		o[k] = s
		p2, p1, x, n1 = p1, x, n1, n2
	}
	// Then the factors. A run of lengthTableSize words or more takes the
	// table's last factor here and its score below (ofLong).
	for k, s := range o[q:] {
		k += q
		c := cues[k]&7 | uint8(b2i(named[k]))<<3
		wk := uint32(words[k])
		long |= wk
		s *= g[c&15] * lt[min(wk, lengthTableSize-1)]
		if !vis[k] {
			s = 0
		}
		o[k] = s
		if s > top {
			arg0, top = k, s
		}
	}
	if arg0 >= 0 {
		arg = a + arg0
	}
	if lf != nil && long >= lengthTableSize {
		// Some run may be that long (or its count negative): those
		// turns' scores instead, then the best again.
		for k, wk := range words {
			if uint32(wk) >= lengthTableSize {
				tu.scoreRangeSingle(f, rel, out, best, nil, a+k, a+k+1)
			}
		}
		arg, top = lo, 0
		for i, s := range out[lo:b] {
			if s > top {
				arg, top = lo+i, s
			}
		}
	}
	if b < hi {
		if i := tu.scoreRangeSingle(f, rel, out, best, nil, b, hi); out[i] > top {
			arg = i
		}
	}
	return arg
}

// boundFactors sets ba.factors from the pairs of factors: entry c is the
// factor scoreBounds4AVX2 multiplies the turns of cue byte c&7 and speaker
// mark c>>3 by, the same product in the same order.
func (ba *boundsArgs) boundFactors() {
	for c := range ba.factors {
		ba.factors[c] = ba.question[c&1] * ba.counted[c>>1&1] * ba.dated[c>>2&1] * ba.speaker[c>>3&1]
	}
}

// pair returns f twice, as scoreBounds4AVX2 reads a factor selected by one
// bit.
func pair(f [2]float64) [4]float64 {
	return [4]float64{f[0], f[1], f[0], f[1]}
}

// ones is the factors of no length prior (scoreBoundsSingle).
var ones = func() (t [lengthTableSize]float64) {
	for i := range t {
		t[i] = 1
	}
	return t
}()

// relevanceBound computes upper bounds of Relevance with multiplications
// where Relevance divides (a scan of every turn's bound is bound by its
// two divisions otherwise). Rounding a product by a rounded reciprocal
// differs from rounding the quotient by a few units in the last place:
// margin, far larger, covers that.
type relevanceBound struct {
	invLex, mean, perD float64
}

// relMargin is the relative margin of relevanceBound, 2⁻⁴⁰ (about 1e-12,
// against errors of a few 2⁻⁵³).
const relMargin = 1 + 1.0/(1<<40)

// relBound returns the bound of Relevance under tu and s.
func relBound(tu Tuning, s Scale) relevanceBound {
	b := relevanceBound{mean: s.Mean, perD: tu.DenseWeight / (s.MaxD - s.Mean)}
	if s.MaxLex > 0 {
		b.invLex = 1 / s.MaxLex
	}
	return b
}

// of returns a value at least Relevance(lex, d, s), for lex >= 0.
func (b relevanceBound) of(lex, d float64) float64 {
	dense := [2]float64{0, (d - b.mean) * b.perD}
	return (lex*b.invLex + dense[b2i(d > b.mean)]) * relMargin
}

// chunk returns the fewest turns or runs each core takes in a pass (see
// Input.Chunk).
func (fs *fastScan) chunk() int {
	if c := fs.in.Chunk; c > 0 {
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
		tops[p] = listAtLeast(xs[lo:hi], floor, lo, tops[p][:0])
	})
	for _, top := range tops[:parts] {
		dst = append(dst, top...)
	}
	return dst
}

// listAtLeast appends to dst lo+i for each xs[i] at least floor, in order,
// and returns it: eight at a time with AVX-512 or four with AVX2 where the
// CPU has them, the rest in Go (the same comparison).
func listAtLeast(xs []float64, floor float64, lo int, dst []int) []int {
	q := len(xs) &^ 3
	if q8 := len(xs) &^ 7; useBoundsAVX512 && q8 > 0 {
		q = q8
	}
	if useBoundsAVX2 && q > 0 {
		dst = slices.Grow(dst, q)
		n0 := len(dst)
		var k int
		if useBoundsAVX512 && q%8 == 0 {
			k = listAtLeast8AVX512(&xs[0], q, floor, unsafe.SliceData(dst[n0:n0+q]))
		} else {
			k = listAtLeast4AVX2(&xs[0], q, floor, unsafe.SliceData(dst[n0:n0+q]))
		}
		dst = dst[:n0+k]
		for j := n0; j < len(dst); j++ {
			dst[j] += lo // offsets from xs[0]
		}
	} else {
		q = 0
	}
	for i, x := range xs[q:] {
		if x >= floor {
			dst = append(dst, lo+q+i)
		}
	}
	return dst
}

// MaxAbove returns the greatest of 0 and the xs above it (NaN ignored): a
// scan in order with a branch that is rarely taken, eight at a time with
// AVX2 where the CPU has it; over BM25 scores, faster than a look at each
// touched entry at random when they are many.
func MaxAbove(xs []float64) float64 {
	m, q := 0.0, 0
	if useBoundsAVX2 && len(xs) >= 8 {
		q = len(xs) &^ 7
		m = maxAbove4AVX2(&xs[0], q)
	}
	for _, x := range xs[q:] {
		if x > m {
			m = x
		}
	}
	return m
}

// relTiers lists the first tier of topRelevance's turns (first: those
// whose relevance bound reaches split and floor) or the second (those
// whose bound reaches floor and not split), in order. Where fs.loose, it
// writes the tighter bounds under the exact scale to bounds (relHi keeps
// the first pass's, which the tiers are split by) and keeps the turns
// whose tighter bound reaches floor.
func (fs *fastScan) relTiers(floor, split float64, bounds []float64, first bool) []int {
	rc := fs.sc.cands[:0]
	if first {
		rc = fs.relAtLeast(max(floor, split), rc)
	} else {
		rc = fs.atLeast(fs.relHi, floor, rc)
		kept := rc[:0]
		for _, i := range rc {
			if fs.relHi[i] < split {
				kept = append(kept, i)
			}
		}
		rc = kept
	}
	if fs.loose {
		// The first pass bounded relevance under a scale whose best
		// cosine was a lower bound of it (setBounds): the exact scale,
		// known now, bounds the turns listed more tightly.
		rb := relBound(fs.tu, fs.scale)
		lex, hi, relHi := fs.f.Lex, fs.hi, fs.relHi
		kept := rc[:0]
		for _, i := range rc {
			x := min(relHi[i], rb.of(lex[i], hi[i]))
			bounds[i] = x
			if x >= floor {
				kept = append(kept, i)
			}
		}
		rc = kept
	}
	fs.sc.cands = rc
	return rc
}

// relAtLeast is atLeast(fs.relHi, floor, dst), from the lists of the
// bound pass (sc.relPre) where each part listed every unit at or above a
// value at most floor (on the bench, ~1,500 of 100k units), else from
// relHi.
func (fs *fastScan) relAtLeast(floor float64, dst []int) []int {
	sc := fs.sc
	parts := sc.relPreParts
	for p := range parts {
		if !sc.relPreOK[p] || !(sc.relPreAt[p] <= floor) {
			parts = 0
		}
	}
	if parts == 0 {
		return fs.atLeast(fs.relHi, floor, dst)
	}
	relHi := fs.relHi
	for _, pre := range sc.relPre[:parts] {
		for _, i := range pre {
			if relHi[i] >= floor {
				dst = append(dst, i)
			}
		}
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
	// The turns' cosines at once (cosAt), then their relevance.
	rows := fs.sc.evRows[:0]
	for _, j := range fs.in.EventUnits[e] {
		if int(j) < fs.n && int(fs.f.Event[j]) == e {
			rows = append(rows, int(j))
		}
	}
	fs.sc.evRows = rows
	fs.cosAt(rows)
	b := 0.0
	for _, j := range rows {
		b = max(b, fs.relX(j))
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
	lo, hi := runUnits(fs.f, r, fs.n)
	for j := lo; j < hi; j++ {
		fs.rel[j] = fs.relX(j)
	}
	fs.runs.setRun(fs.f, fs.rel, r, fs.n)
	sc.runKnown[r] = true
	sc.runList = append(sc.runList, int32(r))
}

// reach computes the exact score of turn i with ScoreRange, from the exact
// relevance of the turns of its run and of the two runs either side, and
// the exact best of its event. A turn is reached once.
func (fs *fastScan) reach(i int) {
	if fs.sc.reached[i] {
		return
	}
	r := int(fs.f.Run[i])
	r0, r1 := max(r-2, 0), min(r+2, len(fs.f.RunStart)-1)
	// The cosines of the five runs' turns (consecutive rows) at once.
	lo, _ := runUnits(fs.f, r0, fs.n)
	_, hi := runUnits(fs.f, r1, fs.n)
	fs.cosRange(lo, hi)
	for k := r0; k <= r1; k++ {
		fs.runOf(k)
	}
	if e := fs.f.Event[i]; e >= 0 && fs.best != nil {
		fs.bestOf(int(e))
	}
	fs.tu.ScoreRange(fs.f, fs.rel, fs.scores, fs.best, fs.runs, i, i+1)
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
	// The turns whose bound reaches r0's score or KeepRatio of it,
	// whichever is lower: keep below is at least that, as the best score
	// is at least r0's. The queue lists at first those above a split that
	// about scoreTier of them reach (tierQueue); without a positive
	// score, every turn at once.
	s0 := fs.scores[r0]
	var queue interface {
		Len() int
		Top() int
		Pop() int
	}
	if s0 > 0 {
		floor := min(fs.tu.KeepRatio*s0, s0)
		queue = fs.newTierQueue(fs.scoreHi, floor, splitOf(fs.scoreHi, floor, scoreTier))
	} else {
		c := fs.sc.cands[:0]
		for i := range fs.scoreHi {
			c = append(c, i)
		}
		fs.sc.cands = c
		queue = rank.NewQueue(fs.scoreHi, c)
	}
	// The turns listed, best bound first: a heap, of which a few are
	// taken (tens of a list of up to half the turns). Which of equal
	// bounds comes first does not matter: the loop below stops only
	// when every turn left is strictly below the MaxK-th exact score,
	// and Select reads the MaxK best through rank.Top.
	for queue.Len() > 0 && fs.scoreHi[queue.Top()] >= s0 {
		fs.reach(queue.Pop())
	}
	if !(fs.top > 0) {
		return false
	}
	// The other turns that can reach keep, best bound first; none left
	// in the queue was reached.
	keep := fs.tu.KeepRatio * fs.top
	for steps := 0; ; steps++ {
		if queue.Len() == 0 || fs.scoreHi[queue.Top()] < keep {
			// Every unit not reached scores below keep.
			return fs.bestK.Full() && fs.bestK.Last() >= keep
		}
		if steps%8 == 0 && fs.bestK.Full() && fs.bestK.Last() > fs.scoreHi[queue.Top()] {
			return true
		}
		fs.reach(queue.Pop())
	}
}

// topRelevance computes the exact relevance of the KTurn most relevant
// turns, in decreasing order of the relevance bounds from a floor set by
// the exact relevance of the turns reached.
//
// The first tier of turns it lists may go below split once tightened
// (fs.loose), under turns of the second: the loop stops before the
// second tier is listed only when the k-th best reaches split, above every
// turn of it, and the order of the turns taken only sets which turns'
// exact relevance is computed, not the k most relevant.
func (fs *fastScan) topRelevance() bool {
	k := fs.in.KTurn
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
	// The turns whose bound reaches the floor, best bound first (a heap:
	// a few of them are taken; which of equal bounds comes first does
	// not change the KTurn most relevant, whose order rank.Top sets), in
	// two tiers as topScores' (relTiers): first those whose bound reaches
	// a split that about relTier of them reach.
	split := splitOf(fs.relHi, floor, relTier)
	bounds := fs.relHi
	if fs.loose {
		fs.sc.relTight = grow(fs.sc.relTight, fs.n)
		bounds = fs.sc.relTight
	}
	queue := rank.NewQueue(bounds, fs.relTiers(floor, split, bounds, true))
	lower := split > floor
	relTop = rank.NewTopK(k)
	for {
		if queue.Len() == 0 {
			// Every turn of the second tier is below split, and so
			// below the k-th best when it reaches split.
			if !lower || relTop.Full() && relTop.Last() >= split {
				break
			}
			lower = false
			queue = rank.NewQueue(bounds, fs.relTiers(floor, split, bounds, false))
			relFills.Add(1)
			continue
		}
		// Up to four turns at once, best bound first, their cosines
		// read at once (cosAt); the few taken past the k-th best only add
		// exact values.
		batch := fs.sc.batch[:0]
		for len(batch) < 4 && queue.Len() > 0 {
			batch = append(batch, queue.Pop())
		}
		fs.sc.batch = batch
		fs.cosAt(batch)
		for _, i := range batch {
			fs.rel[i] = fs.relX(i)
			fs.relIdx = append(fs.relIdx, i)
			relTop.Offer(i, fs.rel[i])
		}
		if queue.Len() > 0 && relTop.Full() && relTop.Last() > bounds[queue.Top()] && (!lower || relTop.Last() >= split) {
			break
		}
	}
	return true
}
