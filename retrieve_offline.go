package higmem

import (
	"fmt"
	"math"
	"strings"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/rank"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/textnorm"
)

// Retrieval without an LLM: the glue between a query and internal/offline,
// which scores plain inputs (features, matrices, the space's runs) and never
// sees a query or a space.

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
// addProfileEvidence), unless Ablations.NoProfiles, within the stopping
// rule's maximum K.
func (m *Memory) retrieveOffline(q *query) {
	tu := offline.DefaultTuning()
	q.selectOffline(tu)
	if !q.noProfiles {
		q.addProfileEvidence(tu.MaxK)
	}
}

// selectOffline runs offline retrieval with the given tuning (offline.Select)
// and records its stages and candidates.
func (q *query) selectOffline(tu offline.Tuning) {
	st := q.st
	sel := offline.Select(q.offlineInput(tu), &q.sc.off)
	search := make([]string, 0, len(sel.Search))
	inSearch := make(map[int]bool, len(sel.Search))
	for _, i := range sel.Search {
		search = append(search, st.turns[i].ID)
		inSearch[i] = true
	}
	q.stage("search", search)
	if sel.Order != nil {
		ids := make([]string, len(sel.Order))
		for j, i := range sel.Order {
			ids[j] = st.turns[i].ID
		}
		q.stage("reranked", ids)
	}
	chosen, replaced := sel.Chosen()
	top := sel.Top // the turn the selection always holds (offline.Selection.Top), -1 when none
	if replaced >= 0 {
		// The context score can rank a turn's neighbours above it (a
		// long burst of the other speaker around one message takes every
		// place): the most relevant turn takes the place of the last one
		// chosen, so that K is unchanged.
		q.trace.Notes = append(q.trace.Notes, fmt.Sprintf("the most relevant turn %s took the place of %s", st.turns[top].ID, st.turns[replaced].ID))
	}
	best, ahead := 0.0, false // the best score of the others, and whether one ties or beats top's
	for _, i := range chosen {
		if i != top {
			best = max(best, sel.Scores.Scores[i])
			ahead = ahead || top >= 0 && sel.Scores.Scores[i] >= sel.Scores.Scores[top]
		}
	}
	for _, i := range chosen {
		src := "neighbour"
		if inSearch[i] {
			src = "search"
		}
		score := sel.Scores.Scores[i]
		if i == top && ahead {
			// First in finalEvidence's order, so that neither
			// MaxEvidence nor the token budget leaves it out.
			score = math.Nextafter(best, math.Inf(1))
		}
		q.addCand(st.turns[i].ID, src, score)
	}
}

// scoredTurns returns the k turns of the best offline score (relevance,
// context, cues and length prior, with the engine's tuning), best first,
// none scoring 0: default mode's turn search, so that the model chooses
// among the turns offline retrieval ranks highest rather than among those
// that only match the question's words. With a learned stage the
// StageCands best come first in its order. beside, when not nil, runs
// once before it returns, beside the scoring (offline.Input.Beside).
func (q *query) scoredTurns(k int, beside func()) []rank.Hit {
	if k <= 0 || len(q.st.turns) == 0 {
		if beside != nil {
			beside()
		}
		return nil
	}
	tu := offline.DefaultTuning()
	tu.MaxK = max(tu.MaxK, k)
	in := q.offlineInput(tu)
	in.Beside = beside
	s := offline.Score(in, &q.sc.off)
	ranked := rank.Top(s.Scores, s.ScoreIdx, k)
	if s.Order != nil {
		// The stage's order, then the rest of the k best by score.
		o := s.Order
		ranked = append(o[:min(k, len(o)):min(k, len(o))], ranked[min(k, len(o)):]...)
	}
	var hits []rank.Hit
	for _, i := range ranked {
		if s.Scores[i] > 0 {
			hits = append(hits, rank.Hit{Index: i, Score: s.Scores[i]})
		}
	}
	return hits
}

// offlineInput returns the scorer's input for the question under tu: the
// pruned path allowed on a large unfiltered space (sumMean), the learned
// stage where it applies (an embedder it was fitted for, a space not
// written in bursts), a probe from the context (offline.WithProbe). Caller
// holds st.mu.
func (q *query) offlineInput(tu offline.Tuning) *offline.Input {
	st := q.st
	shape := st.info.spk.Shape()
	tu = tu.Adapt(shape)
	dm := q.denseOf(tu.WindowWeight)
	in := &offline.Input{
		Tuning: tu, Units: len(st.turns), KTurn: q.ro.KTurn, Vector: q.qv, Dense: dm,
		EventUnits: st.evTurns, Chunk: st.limits.offlineChunk,
		Fast:     q.sumMean(dm) && !st.limits.noOfflineFast,
		Features: func(dense bool) *offline.Features { return q.featuresIn(q.sc, dm, dense) },
	}
	if tu.Adapted() {
		// A user–assistant chat (offline.Shape): the units' roles and
		// lengths, on the reference path.
		in.Fast = false
		in.Features = func(dense bool) *offline.Features {
			f := q.featuresIn(q.sc, dm, dense)
			n := len(f.Lex)
			f.Role = offline.RolesInto(nil, st.info.speaker[:n], st.info.sameSession[:n], shape.Terse)
			f.Words = st.info.words[:n]
			return f
		}
	}
	// The learned stage was fitted on the dev shapes: where the tuning
	// adapted to another, it stands down (it costs RealMem dev recall).
	if q.learned != nil && q.learned.AppliesTo(st.info.UnitsPerRun()) && !tu.Adapted() {
		in.Stage = q.learned
	}
	if q.ctx != nil {
		if p := offline.ProbeFrom(q.ctx); p != nil {
			in.Probe = func(f *offline.Features) { p(f, func(i int) string { return st.turns[i].ID }) }
		}
	}
	return in
}

// denseOf returns the question's dense feature under window weight w,
// reading the turn vectors first when it reads them: with w below 1, or for
// a question that must not see some turns (its hidden windows fall back to
// the turn's own cosine, see featuresIn). A failed read is the query's
// error. Caller holds st.mu.
func (q *query) denseOf(w float64) offline.DenseMix {
	st := q.st
	if q.qv != nil && (q.keepTurn != nil || w < 1 || st.winVec.Rows() != len(st.turns)) {
		if err := st.ensureTurnVectors(q.ctx); err != nil && q.err == nil {
			q.err = err
		}
	}
	return denseOf(st, w)
}

// featuresIn computes the features of every turn for a question, the
// cosines (when dense) as dm mixes them. The per-question slices live in
// sc (lex in sc.lex); the others are the space's own turnInfo slices,
// valid while the caller holds st.mu and never to be written.
func (q *query) featuresIn(sc *scratch, dm offline.DenseMix, dense bool) *offline.Features {
	st := q.st
	n := len(st.turns)
	runs := st.info.Runs
	runs.Run = runs.Run[:n]
	f := &offline.Features{
		SameSession: st.info.sameSession[:n],
		Question:    st.info.question[:n],
		Event:       st.info.event[:n],
		Visible:     st.info.visible[:n],
		Runs:        runs,
		Cues:        st.info.cues[:n],
	}
	if q.sc == sc {
		f.Lex = q.turnLexScores()
	} else {
		f.Lex = sc.lexScoresFew(st.turnLex, n, q.search)
	}
	// The greatest BM25 score, worked out while the scores were written.
	f.LexMax, f.LexMaxSet = sc.lexTop, true
	if q.sumMean(dm) {
		f.Mean, f.MeanSet = dm.MeanDot(q.qv), true
	}
	if q.keepTurn != nil {
		sc.visible = grow(sc.visible, n)
		f.Visible = sc.visible
		for i := range n {
			f.Visible[i] = q.keepTurn(i)
		}
	}
	if dense && q.qv != nil && dm.Ready(n, q.keepTurn != nil) {
		sc.dense = grow(sc.dense, n)
		sc.dense64 = grow(sc.dense64, n)
		f.Dense = sc.dense64
		var winVisible func(i int) bool
		if q.keepTurn != nil {
			// A window that holds a turn the question must not see is
			// not read.
			winVisible = func(i int) bool {
				for j := int(st.info.winStart[i]); j <= i; j++ {
					if !f.Visible[j] {
						return false
					}
				}
				return true
			}
		}
		dm.ScoresInto(q.qv, f.Dense, sc.dense, winVisible)
	}
	q.exposePassages(f)
	if speakers := questionSpeakers(st, q.info.Entities); len(speakers) > 0 {
		named := make([]bool, len(st.info.speakers))
		for id, sp := range st.info.speakers {
			named[id] = speakers[sp]
		}
		sc.speaker = offline.SpeakersInto(sc.speaker, st.info.speaker[:n], named)
		f.Speaker = sc.speaker
	}
	intent := temporal.AnalyzeQuestion(q.question)
	if intent.AsksTime() {
		if err := st.ensureAnnotations(q.ctx); err != nil {
			q.err = err
		}
		f.Dated = st.info.dated[:n]
	}
	if asksCount(q.question) || intent.Kind == temporal.IntentFrequency {
		f.Counted = st.info.number[:n]
	}
	return f
}

// sumMean reports whether the question's centred cosine uses the mean from
// the matrices' sums of rows (see limits.offlineFastRows). Caller holds
// st.mu.
func (q *query) sumMean(dm offline.DenseMix) bool {
	st := q.st
	n := len(st.turns)
	return q.keepTurn == nil && q.qv != nil && n >= st.limits.offlineFastRows && dm.Ready(n, false) && dm.Quantized()
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
