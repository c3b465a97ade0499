package higmem

import (
	"math"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/rank"
)

// The learned second stage of offline retrieval.
//
// The context score (offline_score.go) ranks every turn; the stopping rule
// decides how many of the best to pass. For the embedders it was fitted
// for, a second stage then re-orders the stageCands best turns by a
// logistic regression over features of each candidate and its context, and
// the selection takes as many of the re-ordered candidates as the stopping
// rule passed. The regression was fitted on every conversation of the
// LoCoMo and FriendsQA dev files; BENCHMARKS.md (issue 15, "The learned
// stage in the engine") reports it out of sample, cross-validated by
// conversation, the way the harness (offline_stage_cv_test.go) fits and
// scores it.
//
// The stage is a calibration for one embedder's cosines: its weights do not
// carry over to another model (with all-MiniLM-L6-v2 it gains nothing, and
// the dense feature's weight differs by a factor of four), so an embedder
// without fitted weights keeps the context score's order. And it was
// fitted on conversations written one message per turn: in a space whose
// speakers send bursts (more than stageMaxTurnsPerRun turns per speaker
// run on average) its features take values it never saw, it lost recall on
// the burst stress set, and it stands down.

const (
	// stageCands is how many of the best turns by context score the stage
	// re-orders.
	stageCands = 20
	// stageMaxTurnsPerRun is the most turns per speaker run, on average
	// over a space, where the stage applies: the dev conversations it was
	// fitted on have 1.00–1.03, bursty chats 2 and more.
	stageMaxTurnsPerRun = 1.5
	// stageKeep is, on the pruned path (offlineFast), the share of the
	// best score a turn's bound must reach to be a candidate for the
	// stageCands best: the lower, the more bounds are scanned; where fewer
	// than stageCands turns reach it, the question is scored on the
	// reference path. It changes how fast, never what is selected.
	stageKeep = 0.25
	// stageDim is the number of features of a candidate (stageFeatures).
	stageDim = 18
)

// stageModel is the fitted regression for one embedder: a candidate's
// log-odds of being evidence are b + Σ w[k]·x[k] over its features x
// (stageFeatures, raw units: the standardisation of the fit is folded in).
type stageModel struct {
	// embedder is the prefix of the embedder IDs (embed.Embedder.ID) the
	// weights were fitted with.
	embedder string
	w        [stageDim]float64
	b        float64
}

// stageModels are the fitted stages, one per embedder.
var stageModels = []stageModel{
	// e5-small-v2 (higmem models fetch --model e5-small-v2), fitted on the
	// 1,157 + 2,383 questions of LoCoMo and FriendsQA dev, 20 candidates
	// each (TestOfflineCVStage logs the fit).
	{embedder: "minilm:e5-small-v2:", w: stageE5Weights, b: stageE5Intercept},
}

// stageFor returns the stage fitted for the embedder with ID id, nil when
// there is none.
func stageFor(id string) *stageModel {
	for i := range stageModels {
		if strings.HasPrefix(id, stageModels[i].embedder) {
			return &stageModels[i]
		}
	}
	return nil
}

// logOdds returns the model's log-odds for features x.
func (m *stageModel) logOdds(x *[stageDim]float64) float64 {
	z := m.b
	for k, w := range m.w {
		z += w * x[k]
	}
	return z
}

// stageInput is what the stage reads of one question's scoring, on either
// path (the reference scorer or offlineFast). Values need only be exact
// where the stage reads them: scores and cosines at the candidates, rel at
// the turns of their runs, runs at their runs and the two runs either side.
type stageInput struct {
	tu     offlineTuning
	f      *turnFeatures
	rel    []float64
	scores []float64
	// idx lists the turns whose scores are exact (nil: every turn).
	idx  []int
	runs *runBests
	// cos returns the exact cosine of a candidate; nil without a dense
	// part.
	cos   func(i int) float64
	scale relevanceScale
	// maxRel is the best relevance over the visible turns.
	maxRel float64
}

// stageFeatures writes the features of the candidates ranked (best score
// first) into x, one row each, and reports false when the question gives
// the stage nothing to scale by (no positive score or relevance). The
// features, in order, with what they say in a conversation:
//
//	 0 sr: the candidate's context score over the best candidate's;
//	 1 r2: its own relevance plus RunShare × the best relevance of the
//	   other messages of its speaker run, over the best relevance;
//	 2 den: its cosine, 0 at the question's mean cosine and 1 at the best;
//	 3 p1, 4 n1: the best relevance of the run just before and just after
//	   (in the session), over the best relevance;
//	 5 far: the same for the two runs two away, summed;
//	 6 p1 again when that run asks a question (a reply keeps the credit of
//	   the question it answers), 7 n1 again when that run asks;
//	 8 the question names its speaker, 9 it asks something itself, 10 it
//	   mentions a time (on questions asking when), 11 a number (on "how
//	   many");
//	12 the log of 1 + the words of its speaker run;
//	13 sr²;
//	14 it is in the best candidate's session, 15 1/(1 + its distance in
//	   turns to it) there;
//	16 the share of the 10 best candidates in its session;
//	17 log(1 + its rank).
func stageFeatures(in *stageInput, ranked []int, x [][stageDim]float64) bool {
	if len(ranked) == 0 {
		return false
	}
	f := in.f
	top := in.scores[ranked[0]]
	if !(top > 0) || !(in.maxRel > 0) {
		return false
	}
	meanD, spanD := 0.0, 0.0
	if in.cos != nil && !math.IsInf(in.scale.mean, 1) {
		meanD, spanD = in.scale.mean, in.scale.maxD-in.scale.mean
	}
	rb := in.runs
	sess := func(i int) int32 { return f.runSession[f.run[i]] }
	t0 := ranked[0]
	var top10 [10]int32
	n10 := min(10, len(ranked))
	for j, i := range ranked[:n10] {
		top10[j] = sess(i)
	}
	for j, i := range ranked {
		r := int(f.run[i])
		l := f.runLinks[r]
		var p1, n1, far float64
		if l&linkPrev != 0 {
			p1 = rb.best[r-1]
			if l&linkPrev2 != 0 {
				far += rb.best[r-2]
			}
		}
		if l&linkNext != 0 {
			n1 = rb.best[r+1]
			if l&linkNext2 != 0 {
				far += rb.best[r+2]
			}
		}
		mate := rb.best[r]
		if int(rb.arg[r]) == i {
			mate = rb.second[r]
		}
		den := 0.0
		if spanD > 0 {
			den = (in.cos(i) - meanD) / spanD
		}
		words := 0.0
		if f.runWords != nil {
			words = float64(f.runWords[r])
		}
		var same, inv float64
		s := sess(i)
		if s == sess(t0) {
			same, inv = 1, 1/float64(1+max(i-t0, t0-i))
		}
		share := 0
		for _, t := range top10[:n10] {
			share += b2i(t == s)
		}
		sr := in.scores[i] / top
		c := f.cues[i]
		x[j] = [stageDim]float64{
			sr,
			(in.rel[i] + in.tu.RunShare*mate) / in.maxRel,
			den,
			p1 / in.maxRel,
			n1 / in.maxRel,
			far / in.maxRel,
			p1 / in.maxRel * float64(l/linkPrevAsks&1),
			n1 / in.maxRel * float64(l/linkNextAsks&1),
			float64(b2i(f.speaker != nil && f.speaker[i])),
			float64(c & cueQuestion),
			float64(b2i(f.dated != nil && f.dated[i])),
			float64(b2i(f.counted != nil && f.counted[i])),
			math.Log1p(words),
			sr * sr,
			same,
			inv,
			float64(share) / 10,
			math.Log1p(float64(j)),
		}
	}
	return true
}

// forStage returns tu as the stage scores with it: the stageCands best
// scores exact, and on the pruned path every turn whose bound reaches
// stageKeep of the best a candidate for them. The stopping rule stays
// tu's.
func (tu offlineTuning) forStage() offlineTuning {
	tu.MaxK, tu.KeepRatio = max(tu.MaxK, stageCands), min(tu.KeepRatio, stageKeep)
	return tu
}

// learnedStage returns, when the question's learned stage applies (there
// is one for the embedder, and the space is not written in bursts), tu as
// the stage scores with it (forStage) and the hook for offlineScores that
// runs the stage and writes its order to *order; else tu and nil.
func (q *query) learnedStage(tu offlineTuning, order *[]int) (offlineTuning, func(*stageInput)) {
	if q.learned == nil || q.st.info.turnsPerRun() > stageMaxTurnsPerRun {
		return tu, nil
	}
	return tu.forStage(), func(in *stageInput) { *order = q.learned.rerank(in) }
}

// rerank returns the stageCands best turns of a question by context score
// in the model's order, best first; nil when the stage has nothing to
// scale by (stageFeatures).
func (m *stageModel) rerank(in *stageInput) []int {
	ranked := rank.Top(in.scores, in.idx, stageCands)
	x := make([][stageDim]float64, len(ranked))
	if !stageFeatures(in, ranked, x) {
		return nil
	}
	m.order(ranked, x, make([]float64, len(ranked)))
	return ranked
}

// stageOrder re-orders ranked (the candidates, best score first) by the
// model's log-odds, best first, ties in ranked's order; x holds their
// features (stageFeatures) and z is scratch for the log-odds.
func (m *stageModel) order(ranked []int, x [][stageDim]float64, z []float64) {
	for j := range ranked {
		z[j] = m.logOdds(&x[j])
	}
	idx := make([]int, len(ranked))
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case z[a] > z[b]:
			return -1
		case z[a] < z[b]:
			return 1
		}
		return 0
	})
	out := make([]int, len(ranked))
	for j, k := range idx {
		out[j] = ranked[k]
	}
	copy(ranked, out)
}

// turnsPerRun returns the mean number of turns per speaker run of the
// space (1 when empty).
func (ti *turnInfo) turnsPerRun() float64 {
	if len(ti.runStart) == 0 {
		return 1
	}
	return float64(len(ti.run)) / float64(len(ti.runStart))
}
