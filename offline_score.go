package higmem

import (
	"math"
	"strings"

	"github.com/higmem/higmem/internal/rank"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
)

// The offline scorer, in its reference form: every turn gets a relevance
// (relevanceOf) and a context score (scoreRange), and the best turns are
// kept down to where scores fall off (cut). offline_fast.go computes the
// same selection on large spaces while reading few exact cosines; this file
// is what it is proven equal to.

// retrieveOffline selects turns without an LLM. Every turn gets a relevance
// (BM25 fused with dense similarity by a normalised sum) and a context score
// (relevance plus its neighbours' and its event's, times speaker, time and
// number cues); the best turns are kept down to where scores fall off. The
// trace records the KTurn most relevant turns ("search") and the selection
// ("final"); a selected turn's source is "search" when it is among the
// former and "neighbour" when its context score brought it in.
//
// A question that names a person and asks about an attribute of their
// profile also gets the turns that state the attribute's value (see
// addProfileEvidence), unless Ablations.NoProfiles.
func (m *Memory) retrieveOffline(q *query) {
	q.selectOffline(defaultOfflineTuning())
	if !q.noProfiles {
		q.addProfileEvidence()
	}
}

// selectOffline runs offline retrieval with the given tuning: the best
// turns by context score, as many as the stopping rule keeps, or, with a
// learned stage (q.learned, offline_stage.go) on a space written turn by
// turn, that many of the stageCands best in the stage's order.
func (q *query) selectOffline(tu offlineTuning) {
	st := q.st
	var order []int
	stu, then := q.learnedStage(tu, &order)
	rel, scores, relIdx, scoreIdx := q.offlineScores(stu, then)
	byRel := rank.Top(rel, relIdx, q.ro.KTurn)
	search := make([]string, 0, len(byRel))
	inSearch := make(map[int]bool, len(byRel))
	for _, i := range byRel {
		search = append(search, st.turns[i].ID)
		inSearch[i] = true
	}
	q.stage("search", search)
	ranked := rank.Top(scores, scoreIdx, tu.MaxK)
	k := tu.cut(ranked, scores)
	if order != nil {
		ids := make([]string, len(order))
		for j, i := range order {
			ids[j] = st.turns[i].ID
		}
		q.stage("reranked", ids)
		ranked = order
	}
	for _, i := range ranked[:k] {
		src := "neighbour"
		if inSearch[i] {
			src = "search"
		}
		q.addCand(st.turns[i].ID, src, scores[i])
	}
}

// offlineScores computes the relevance and the score of the turns under
// tu: on the pruned path (offlineFast) when it can decide, rel holds the
// KTurn most relevant and scores the tu.MaxK best (relIdx and scoreIdx
// list the rows set); otherwise every row, and the lists are nil. When
// then is not nil, it is called with what the learned stage reads.
func (q *query) offlineScores(tu offlineTuning, then func(*stageInput)) (rel, scores []float64, relIdx, scoreIdx []int) {
	st, sc := q.st, q.sc
	dm := q.denseOf(tu.WindowWeight)
	if q.sumMean(dm) && !st.limits.noOfflineFast {
		if rel, scores, relIdx, scoreIdx, ok := q.offlineFast(tu, dm, sc, then); ok {
			return rel, scores, relIdx, scoreIdx
		}
	}
	f := q.featuresIn(sc, dm, true)
	n := len(f.lex)
	sc.rel = grow(sc.rel, n)
	rel = tu.relevanceInto(f, sc.rel)
	sc.scores = grow(sc.scores, n)
	var best []float64
	if tu.EventShare != 0 {
		sc.best = grow(sc.best, len(st.events))
		best = sc.best
	}
	scores = tu.scoreInto(f, rel, sc.scores, best, &sc.runs)
	if then != nil {
		then(fullStageInput(tu, f, rel, scores, &sc.runs))
	}
	return rel, scores, nil, nil
}

// fullStageInput returns what the learned stage reads of a question scored
// by the reference path: every turn's relevance and score, the runs' bests
// filled from them.
func fullStageInput(tu offlineTuning, f *turnFeatures, rel, scores []float64, runs *runBests) *stageInput {
	in := &stageInput{tu: tu, f: f, rel: rel, scores: scores, runs: runs, scale: scaleOf(f)}
	for i, r := range rel {
		if f.visible[i] {
			in.maxRel = max(in.maxRel, r)
		}
	}
	if f.dense != nil {
		in.cos = func(i int) float64 { return f.dense[i] }
	}
	return in
}

// denseOf returns the question's dense feature under window weight w (see
// denseOf), reading the turn vectors first when it reads them: with w below
// 1, or for a question that must not see some turns (its hidden windows
// fall back to the turn's own cosine, see featuresIn). A failed read is the
// query's error. Caller holds st.mu.
func (q *query) denseOf(w float64) denseMix {
	st := q.st
	if q.qv != nil && (q.keepTurn != nil || w < 1 || st.winVec.Rows() != len(st.turns)) {
		if err := st.ensureTurnVectors(q.ctx); err != nil && q.err == nil {
			q.err = err
		}
	}
	return denseOf(st, w)
}

// scoredTurns returns the k turns of the best offline score (relevance,
// context, cues and length prior, with the engine's tuning), best first,
// none scoring 0: default mode's turn search, so that the model chooses
// among the turns offline retrieval ranks highest rather than among those
// that only match the question's words. With a learned stage (see
// selectOffline) the stageCands best come first in its order.
func (q *query) scoredTurns(k int) []rank.Hit {
	if k <= 0 || len(q.st.turns) == 0 {
		return nil
	}
	var order []int
	tu, then := q.learnedStage(defaultOfflineTuning(), &order)
	tu.MaxK = max(tu.MaxK, k)
	_, scores, _, scoreIdx := q.offlineScores(tu, then)
	ranked := rank.Top(scores, scoreIdx, k)
	if order != nil {
		// The stage's order, then the rest of the k best by score.
		ranked = append(order[:min(k, len(order)):min(k, len(order))], ranked[min(k, len(order)):]...)
	}
	var hits []rank.Hit
	for _, i := range ranked {
		if scores[i] > 0 {
			hits = append(hits, rank.Hit{Index: i, Score: scores[i]})
		}
	}
	return hits
}

// relevanceScale is what one question's relevance is normalised by: the
// best BM25 score and the mean and best cosine over the visible turns. A
// question without a dense part (no vectors, or no cosine above the mean)
// has mean +Inf.
type relevanceScale struct {
	maxLex, mean, maxD float64
}

// noDense is the cosine given to relevanceOf for a turn without one.
var noDense = math.Inf(-1)

// relevanceOf is the offline relevance formula, the one place it is
// written: a visible turn's BM25 score lex divided by the best, plus
// DenseWeight times its cosine d centred on the mean and scaled so that the
// best turn gets 1 (cosines at or below the mean add nothing). It grows with
// lex and with d, so that bounds of them give bounds of it.
//
// It selects rather than branches on lex and d (a scan over every turn
// would mispredict them): a part that does not apply is 0, and adding +0
// leaves a sum as it is.
func (tu offlineTuning) relevanceOf(lex, d float64, s relevanceScale) float64 {
	r := 0.0
	if s.maxLex > 0 {
		r = lex/s.maxLex + 0 // +0 for lex 0, whatever its sign
	}
	dense := [2]float64{0, tu.DenseWeight * (d - s.mean) / (s.maxD - s.mean)}
	return r + dense[b2i(d > s.mean)]
}

// scaleOf returns the relevance scale of f. Cosines of unrelated texts are
// far from 0 and their spread varies by question, so the dense part is
// centred on the mean over visible turns (or f.mean when f.meanSet) and
// scaled by the distance from it to the best.
func scaleOf(f *turnFeatures) relevanceScale {
	s := relevanceScale{mean: math.Inf(1)}
	for i, v := range f.lex {
		if f.visible[i] {
			s.maxLex = max(s.maxLex, v)
		}
	}
	if f.dense == nil {
		return s
	}
	mean, maxD, cnt := 0.0, math.Inf(-1), 0
	for i, d := range f.dense {
		if f.visible[i] {
			mean += d
			maxD = max(maxD, d)
			cnt++
		}
	}
	if cnt == 0 {
		return s
	}
	mean /= float64(cnt)
	if f.meanSet {
		mean = f.mean
	}
	if maxD > mean {
		s.mean, s.maxD = mean, maxD
	}
	return s
}

// relevanceInto writes each turn's own relevance (relevanceOf) into rel, of
// length len(f.lex), and returns it. Invisible turns get 0.
func (tu offlineTuning) relevanceInto(f *turnFeatures, rel []float64) []float64 {
	s := scaleOf(f)
	for i := range rel {
		rel[i] = 0
		if !f.visible[i] {
			continue
		}
		d := noDense
		if f.dense != nil {
			d = f.dense[i]
		}
		rel[i] = tu.relevanceOf(f.lex[i], d, s)
	}
	return rel
}

// scoreInto writes each turn's context score (see scoreRange) into out, of
// length len(rel), and returns it; best is scratch space for the best
// relevance per event, with room for every event index in f.event (nil when
// EventShare is 0 or f.event is nil), and rb for the best relevance per
// speaker run.
func (tu offlineTuning) scoreInto(f *turnFeatures, rel, out, best []float64, rb *runBests) []float64 {
	singleRuns(f)
	eventBest(f, rel, best)
	rb.fill(f, rel)
	tu.scoreRange(f, rel, out, best, rb, 0, len(rel))
	return out
}

// eventBest sets best[e] to the best relevance among the turns whose first
// event is e (0 when none); nil best is left alone.
func eventBest(f *turnFeatures, rel, best []float64) {
	if best == nil {
		return
	}
	clear(best)
	for i, e := range f.event {
		if e >= 0 {
			best[e] = max(best[e], rel[i])
		}
	}
}

// scoreRange is the offline context score formula, the one place it is
// written. It sets out[i] for the turns lo to hi-1: a visible turn's
// relevance plus shares of the relevance of the speaker runs one and two
// before and after its own within the session (each run counts with its
// best turn, rb.best; the share of the run just before or after is larger
// when that run asks a question), of the best relevance among the other
// turns of its own run (rb.second when the turn is its run's best, else
// rb.best) and of the best relevance in its event (best[e], when best is
// not nil), times the speaker, time and number cues; invisible turns score
// 0. Where every run is one turn, the neighbours are the turns around it
// and the run share is 0. It reads rel only at lo to hi-1, rb only at the
// runs of those turns and the two runs either side, and best only at their
// events; where every run is one turn, rel at those turns and the two
// either side and rb not at all (it may be nil; scoreRangeSingle). It returns the index of the best score written (lo when none is
// positive). The score grows with every relevance it adds up, so bounds of
// them give bounds of it.
func (tu offlineTuning) scoreRange(f *turnFeatures, rel, out, best []float64, rb *runBests, lo, hi int) (arg int) {
	n := len(rel)
	if len(f.runStart) == n {
		return tu.scoreRangeSingle(f, rel, out, best, lo, hi)
	}
	// The turns' slices end at hi, which spares the loop their bounds
	// checks.
	rel, out = rel[:hi:n], out[:hi]
	vis := f.visible[:hi:n]
	run, links, cues := f.run[:hi:n], f.runLinks, f.cues[:hi:n]
	rbest, rsecond, rarg := rb.best, rb.second, rb.arg
	// The flags of a turn select among two factors each, rather than
	// branch on it (they vary from turn to turn and would be mispredicted):
	// a missing factor is 1, and so is a share of 0, which leaves every sum
	// and product as the formula writes it. Loop-invariant tests stay
	// branches.
	sf := tu.scoreFactors(f)
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf, lf := sf.prevOf, sf.nextOf, sf.speakerOf, sf.datedOf, sf.countedOf, sf.questionOf, sf.lf
	// The cues come from one byte per turn (cues): question always,
	// dated and counted when the question asks for them.
	spk, dated, counted, runWords := f.speaker, f.dated != nil, f.counted != nil, f.runWords
	if spk != nil {
		spk = spk[:hi:n]
	}
	var event []int32
	if best != nil {
		event = f.event[:hi:n]
	}
	arg, top := lo, 0.0
	for i := lo; i < hi; i++ {
		if !vis[i] {
			out[i] = 0
			continue
		}
		// Neighbours are runs, and count only within the session (a run
		// continues the session when its first turn does): the run's
		// links say which (runLinksOf).
		r := int(run[i])
		l := links[r]
		var p1, p2, n1, n2 float64
		if l&linkPrev != 0 {
			p1 = rbest[r-1]
			if l&linkPrev2 != 0 {
				p2 = rbest[r-2]
			}
		}
		if l&linkNext != 0 {
			n1 = rbest[r+1]
			if l&linkNext2 != 0 {
				n2 = rbest[r+2]
			}
		}
		pq, nq := l/linkPrevAsks&1, l/linkNextAsks&1
		mates := [2]float64{rbest[r], rsecond[r]}
		mate := mates[b2i(int(rarg[r]) == i)]
		x := rel[i]
		var b float64
		if event != nil {
			if e := event[i]; e >= 0 {
				b = best[e]
			}
		}
		s := x + prevOf[pq]*p1 + nextOf[nq]*n1 + tu.Far*(p2+n2)
		s += tu.RunShare * mate
		s += tu.EventShare * b
		if spk != nil {
			s *= speakerOf[b2i(spk[i])]
		}
		c := cues[i]
		if dated {
			s *= datedOf[c/cueDated&1]
		}
		if counted {
			s *= countedOf[c/cueCounted&1]
		}
		s *= questionOf[c&cueQuestion]
		if lf != nil {
			s *= lf.of(runWords[r])
		}
		// Every term 0 scores +0, whatever its signs.
		s += 0
		out[i] = s
		if s > top {
			arg, top = i, s
		}
	}
	return arg
}

// scoreFactors are the factors scoreRange selects among per turn, by its
// flags (index 1 when the flag is set): the shares of the runs just before
// and after (larger when that run asks), the speaker, time, number and
// question cues, and the length prior (nil without one).
type scoreFactors struct {
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf [2]float64
	lf                                                        *lengthFactors
}

// scoreFactors returns tu's factors for features f.
func (tu offlineTuning) scoreFactors(f *turnFeatures) scoreFactors {
	sf := scoreFactors{
		prevOf: [2]float64{tu.Prev, tu.PrevQuestion}, nextOf: [2]float64{tu.Next, tu.NextQuestion},
		speakerOf: [2]float64{1, tu.SpeakerBump}, datedOf: [2]float64{1, tu.TimeBump},
		countedOf: [2]float64{1, tu.CountBump}, questionOf: [2]float64{1, tu.QuestionBump},
	}
	if tu.QuestionBump == 0 {
		sf.questionOf[1] = 1
	}
	if tu.LengthPow != 0 && f.runWords != nil {
		sf.lf = lengthFactorsOf(tu.LengthPow)
	}
	return sf
}

// scoreRangeSingle is scoreRange where every speaker run is one turn (as
// many runs as turns): run r is turn r, a run's best relevance is its
// turn's, and the other turns of its run add nothing. It reads the
// neighbours' relevance from rel rather than the runs' bests (equal there,
// see runBests.setRun), which spares the scan three of its slices; the
// sums and products are scoreRange's, in its order, so the scores are
// bit for bit the same (TestOfflineFastMatchesFull, TestScoreRangeSingle).
func (tu offlineTuning) scoreRangeSingle(f *turnFeatures, rel, out, best []float64, lo, hi int) (arg int) {
	n := len(rel)
	rel, out = rel[:n:n], out[:hi]
	vis := f.visible[:hi:n]
	links, cues := f.runLinks[:hi:n], f.cues[:hi:n]
	sf := tu.scoreFactors(f)
	prevOf, nextOf, speakerOf, datedOf, countedOf, questionOf, lf := sf.prevOf, sf.nextOf, sf.speakerOf, sf.datedOf, sf.countedOf, sf.questionOf, sf.lf
	spk, dated, counted, runWords := f.speaker, f.dated != nil, f.counted != nil, f.runWords
	if spk != nil {
		spk = spk[:hi:n]
	}
	var event []int32
	if best != nil {
		event = f.event[:hi:n]
	}
	arg, top := lo, 0.0
	for i := lo; i < hi; i++ {
		if !vis[i] {
			out[i] = 0
			continue
		}
		l := links[i]
		var p1, p2, n1, n2 float64
		if l&linkPrev != 0 {
			p1 = rel[i-1]
			if l&linkPrev2 != 0 {
				p2 = rel[i-2]
			}
		}
		if l&linkNext != 0 {
			n1 = rel[i+1]
			if l&linkNext2 != 0 {
				n2 = rel[i+2]
			}
		}
		pq, nq := l/linkPrevAsks&1, l/linkNextAsks&1
		x := rel[i]
		var b float64
		if event != nil {
			if e := event[i]; e >= 0 {
				b = best[e]
			}
		}
		s := x + prevOf[pq]*p1 + nextOf[nq]*n1 + tu.Far*(p2+n2)
		s += tu.RunShare * 0 // the run's other turns: none
		s += tu.EventShare * b
		if spk != nil {
			s *= speakerOf[b2i(spk[i])]
		}
		c := cues[i]
		if dated {
			s *= datedOf[c/cueDated&1]
		}
		if counted {
			s *= countedOf[c/cueCounted&1]
		}
		s *= questionOf[c&cueQuestion]
		if lf != nil {
			s *= lf.of(runWords[i])
		}
		s += 0
		out[i] = s
		if s > top {
			arg, top = i, s
		}
	}
	return arg
}

// The bits of a turn's cues (turnInfo.cues, turnFeatures.cues).
const (
	cueQuestion = 1 << iota // the turn asks something
	cueCounted              // it mentions a number (hasNumber)
	cueDated                // its annotation has time expressions
)

// cuesOf returns the cues of a turn that asks a question or not, mentions
// a number or not and is dated or not.
func cuesOf(question, counted, dated bool) uint8 {
	return uint8(b2i(question)*cueQuestion | b2i(counted)*cueCounted | b2i(dated)*cueDated)
}

// b2i returns 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// cut returns how many of the ranked turns to keep: at least MinK (when
// there are that many), at most MaxK, and beyond MinK only those scoring at
// least KeepRatio of the best.
func (tu offlineTuning) cut(ranked []int, scores []float64) int {
	n := 0
	for n < len(ranked) && n < tu.MaxK {
		if n >= tu.MinK && scores[ranked[n]] < tu.KeepRatio*scores[ranked[0]] {
			break
		}
		n++
	}
	return n
}

// turnFeatures describes every turn of a space for one question, indexed
// like spaceState.turns.
type turnFeatures struct {
	// lex is the BM25 score (0 when the turn shares no term with the
	// question); dense is the cosine similarity, nil without vectors.
	lex, dense []float64
	// visible is false for turns the retrieval must not see (as-of).
	visible []bool
	// sameSession[i] is true when turn i belongs to the session of turn
	// i-1 (sameSession[0] is false).
	sameSession []bool
	// question marks turns that ask something (their text has a "?").
	question []bool
	// event is the index of the turn's first event, -1 when none.
	event []int32
	// run, runStart and runAsks are the speaker runs (runInfo); nil run
	// means every turn is its own run (see singleRuns). runWords, the
	// words of each run, is nil where the length prior does not apply.
	run, runStart []int32
	runAsks       []bool
	runWords      []int32
	// runSession numbers the runs' sessions (runInfo.runSession).
	runSession []int32
	// runLinks are the runs' links (runLinksOf) and cues the turns'
	// question, counted and dated flags in one byte (cuesOf, the latter two
	// whether or not the question asks for them): what scoreRange reads,
	// derived from the slices above and speaker, dated and counted (see
	// singleRuns).
	runLinks, cues []uint8
	// speaker marks turns said by someone the question names; dated marks
	// turns that mention a time when the question asks for a time; counted
	// marks turns with a number when the question asks how many. Each is
	// nil when the question has no such cue.
	speaker, dated, counted []bool
	// mean, when meanSet, is the mean cosine over the visible turns, given
	// rather than computed from dense (see offlineSumMean).
	mean    float64
	meanSet bool
}

// featuresIn computes the features of every turn for a question, the
// cosines (when dense) as dm mixes them. The per-question slices live in
// sc (lex in sc.lex); the others are the space's own turnInfo slices,
// valid while the caller holds st.mu and never to be written.
func (q *query) featuresIn(sc *scratch, dm denseMix, dense bool) *turnFeatures {
	st := q.st
	n := len(st.turns)
	f := &turnFeatures{
		sameSession: st.info.sameSession[:n],
		question:    st.info.question[:n],
		event:       st.info.event[:n],
		visible:     st.info.visible[:n],
		run:         st.info.run[:n],
		runStart:    st.info.runStart,
		runAsks:     st.info.runAsks,
		runWords:    st.info.runWords,
		runSession:  st.info.runSession,
		runLinks:    st.info.runLinks,
		cues:        st.info.cues[:n],
	}
	if q.sc == sc {
		f.lex, _ = q.turnLexScores()
	} else {
		f.lex, _ = sc.lexScores(st.turnLex, n, q.search)
	}
	if q.sumMean(dm) {
		f.mean, f.meanSet = dm.meanDot(q.qv), true
	}
	if q.keepTurn != nil {
		sc.visible = grow(sc.visible, n)
		f.visible = sc.visible
		for i := range n {
			f.visible[i] = q.keepTurn(i)
		}
	}
	if dense && q.qv != nil && dm.ready(n, q.keepTurn != nil) {
		sc.dense = grow(sc.dense, n)
		sc.dense64 = grow(sc.dense64, n)
		f.dense = sc.dense64
		var winVisible func(i int) bool
		if q.keepTurn != nil {
			// A window that holds a turn the question must not see is
			// not read.
			winVisible = func(i int) bool {
				for j := int(st.info.winStart[i]); j <= i; j++ {
					if !f.visible[j] {
						return false
					}
				}
				return true
			}
		}
		dm.scoresInto(q.qv, f.dense, sc.dense, winVisible)
	}
	if speakers := questionSpeakers(st, q.info.Entities); len(speakers) > 0 {
		named := make([]bool, len(st.info.speakers))
		for id, sp := range st.info.speakers {
			named[id] = speakers[sp]
		}
		sc.speaker = grow(sc.speaker, n)
		f.speaker = sc.speaker
		for i, id := range st.info.speaker[:n] {
			f.speaker[i] = named[id]
		}
	}
	intent := temporal.AnalyzeQuestion(q.question)
	if intent.AsksTime() {
		if err := st.ensureAnnotations(q.ctx); err != nil {
			q.err = err
		}
		f.dated = st.info.dated[:n]
	}
	if asksCount(q.question) || intent.Kind == temporal.IntentFrequency {
		f.counted = st.info.number[:n]
	}
	return f
}

// sumMean reports whether the question's centred cosine uses the mean from
// the matrices' sums of rows (see limits.offlineFastRows). Caller holds
// st.mu.
func (q *query) sumMean(dm denseMix) bool {
	st := q.st
	n := len(st.turns)
	return q.keepTurn == nil && q.qv != nil && n >= st.limits.offlineFastRows && dm.ready(n, false) && dm.quantized()
}

// asksCount reports whether a question asks for a number ("how many",
// "how much").
func asksCount(question string) bool {
	toks := textnorm.Tokens(question)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] == "how" && (toks[i+1] == "many" || toks[i+1] == "much") {
			return true
		}
	}
	return false
}

// questionSpeakers returns the lower-cased speakers of the space that the
// question names, by full name or by first name.
func questionSpeakers(st *spaceState, entities []string) map[string]bool {
	if len(entities) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, e := range entities {
		names[strings.ToLower(e)] = true
	}
	out := map[string]bool{}
	for _, sp := range st.info.speakers {
		if sp == "" {
			continue
		}
		first, _, _ := strings.Cut(sp, " ")
		if names[sp] || names[first] {
			out[sp] = true
		}
	}
	return out
}
