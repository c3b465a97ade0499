package offline

import (
	"math"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/rank"
)

// The learned second stage of offline retrieval.
//
// The context score (score.go) ranks every unit; the stopping rule
// decides how many of the best to pass. For the embedders it was fitted
// for, a second stage then re-orders the StageCands best turns by a
// logistic regression over features of each candidate and its context, and
// the selection takes as many of the re-ordered candidates as the stopping
// rule passed. The regression was fitted on every conversation of the
// LoCoMo and FriendsQA dev files; BENCHMARKS.md (issue 15, "The learned
// stage in the engine") reports it out of sample, cross-validated by
// conversation, the way internal/research (cmd/fitstage) fits and
// scores it.
//
// The stage is a calibration for one embedder's cosines: its weights do not
// carry over to another model (with all-MiniLM-L6-v2 it gains nothing, and
// the dense feature's weight differs by a factor of four), so an embedder
// without fitted weights keeps the context score's order. And it was
// fitted on conversations written one message per turn: in a space whose
// speakers send bursts (more than StageMaxUnitsPerRun turns per speaker
// run on average) its features take values it never saw, it lost recall on
// the burst stress set, and it stands down.

const (
	// StageCands is how many of the best turns by context score the stage
	// re-orders.
	StageCands = 20
	// StageMaxUnitsPerRun is the most turns per speaker run, on average
	// over a space, where the stage applies: the dev conversations it was
	// fitted on have 1.00–1.03, bursty chats 2 and more.
	StageMaxUnitsPerRun = 1.5
	// stageKeep is, on the pruned path (Fast), the share of the
	// best score a turn's bound must reach to be a candidate for the
	// StageCands best: the lower, the more bounds are scanned; where fewer
	// than StageCands turns reach it, the question is scored on the
	// reference path. It changes how fast, never what is selected.
	stageKeep = 0.25
	// StageDim is the number of features of a candidate (StageFeatures).
	StageDim = 18
)

// StageFeatureNames names the features of StageFeatures, in order.
var StageFeatureNames = [StageDim]string{"sr", "r2", "den", "p1", "n1", "far", "p1·pq", "n1·nq", "spk", "qq", "dat", "cnt", "lw", "sr²", "same", "inv", "top10", "log1p(rank)"}

// Stage is the fitted regression for one embedder: a candidate's
// log-odds of being evidence are b + Σ w[k]·x[k] over its features x
// (StageFeatures, raw units: the standardisation of the fit is folded in).
type Stage struct {
	// embedder is the prefix of the embedder IDs (embed.Embedder.ID) the
	// weights were fitted with.
	embedder string
	w        [StageDim]float64
	b        float64
}

// stageModels are the fitted stages, one per embedder.
var stageModels = []Stage{
	// e5-small-v2 (higmem models fetch --model e5-small-v2), fitted on the
	// 1,157 + 2,383 questions of LoCoMo and FriendsQA dev, 20 candidates
	// each (go run ./internal/research/cmd/fitstage, stage_weights.go).
	{embedder: "minilm:e5-small-v2:", w: stageE5Weights, b: stageE5Intercept},
}

// StageFor returns the stage fitted for the embedder with ID id, nil when
// there is none.
func StageFor(id string) *Stage {
	for i := range stageModels {
		if strings.HasPrefix(id, stageModels[i].embedder) {
			return &stageModels[i]
		}
	}
	return nil
}

// LogOdds returns the model's log-odds for features x.
func (m *Stage) LogOdds(x *[StageDim]float64) float64 {
	z := m.b
	for k, w := range m.w {
		z += w * x[k]
	}
	return z
}

// StageInput is what the stage reads of one question's scoring, on either
// path (the reference scorer or offlineFast). Values need only be exact
// where the stage reads them: scores and cosines at the candidates, rel at
// the turns of their runs, runs at their runs and the two runs either side.
type StageInput struct {
	tu     Tuning
	f      *Features
	rel    []float64
	scores []float64
	// idx lists the turns whose scores are exact (nil: every turn).
	idx  []int
	runs *RunBests
	// cos returns the exact cosine of a candidate; nil without a dense
	// part.
	cos   func(i int) float64
	scale Scale
	// maxRel is the best relevance over the visible turns.
	maxRel float64
}

// StageFeatures writes the features of the candidates ranked (best score
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
func StageFeatures(in *StageInput, ranked []int, x [][StageDim]float64) bool {
	if len(ranked) == 0 {
		return false
	}
	f := in.f
	top := in.scores[ranked[0]]
	if !(top > 0) || !(in.maxRel > 0) {
		return false
	}
	meanD, spanD := 0.0, 0.0
	if in.cos != nil && !math.IsInf(in.scale.Mean, 1) {
		meanD, spanD = in.scale.Mean, in.scale.MaxD-in.scale.Mean
	}
	rb := in.runs
	sess := func(i int) int32 { return f.RunSession[f.Run[i]] }
	t0 := ranked[0]
	var top10 [10]int32
	n10 := min(10, len(ranked))
	for j, i := range ranked[:n10] {
		top10[j] = sess(i)
	}
	for j, i := range ranked {
		r := int(f.Run[i])
		l := f.RunLinks[r]
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
		if f.RunWords != nil {
			words = float64(f.RunWords[r])
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
		c := f.Cues[i]
		x[j] = [StageDim]float64{
			sr,
			(in.rel[i] + in.tu.RunShare*mate) / in.maxRel,
			den,
			p1 / in.maxRel,
			n1 / in.maxRel,
			far / in.maxRel,
			p1 / in.maxRel * float64(l/linkPrevAsks&1),
			n1 / in.maxRel * float64(l/linkNextAsks&1),
			float64(b2i(f.Speaker != nil && f.Speaker[i])),
			float64(c & cueQuestion),
			float64(b2i(f.Dated != nil && f.Dated[i])),
			float64(b2i(f.Counted != nil && f.Counted[i])),
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

// forStage returns tu as the stage scores with it: the StageCands best
// scores exact, and on the pruned path every turn whose bound reaches
// stageKeep of the best a candidate for them. The stopping rule stays
// tu's.
func (tu Tuning) forStage() Tuning {
	tu.MaxK, tu.KeepRatio = max(tu.MaxK, StageCands), min(tu.KeepRatio, stageKeep)
	return tu
}

// rerank returns the StageCands best turns of a question by context score
// in the model's order, best first; nil when the stage has nothing to
// scale by (StageFeatures).
func (m *Stage) rerank(in *StageInput) []int {
	ranked := rank.Top(in.scores, in.idx, StageCands)
	x := make([][StageDim]float64, len(ranked))
	if !StageFeatures(in, ranked, x) {
		return nil
	}
	m.order(ranked, x, make([]float64, len(ranked)))
	return ranked
}

// stageOrder re-orders ranked (the candidates, best score first) by the
// model's log-odds, best first, ties in ranked's order; x holds their
// features (StageFeatures) and z is scratch for the log-odds.
func (m *Stage) order(ranked []int, x [][StageDim]float64, z []float64) {
	for j := range ranked {
		z[j] = m.LogOdds(&x[j])
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

// AppliesTo reports whether the stage applies to a space whose speaker runs
// hold unitsPerRun units on average (Runs.UnitsPerRun): it stands down
// where speakers send bursts.
func (m *Stage) AppliesTo(unitsPerRun float64) bool {
	return unitsPerRun <= StageMaxUnitsPerRun
}

// Weights returns the model's weights, in raw units, and its intercept.
func (m *Stage) Weights() (w [StageDim]float64, b float64) { return m.w, m.b }

// FullStageInput returns what the learned stage reads of a question scored
// by the reference path: every unit's relevance and score, the runs' bests
// filled from them.
func FullStageInput(tu Tuning, f *Features, rel, scores []float64, runs *RunBests) *StageInput {
	in := &StageInput{tu: tu, f: f, rel: rel, scores: scores, runs: runs, scale: ScaleOf(f)}
	for i, r := range rel {
		if f.Visible[i] {
			in.maxRel = max(in.maxRel, r)
		}
	}
	if f.Dense != nil {
		in.cos = func(i int) float64 { return f.Dense[i] }
	}
	return in
}
