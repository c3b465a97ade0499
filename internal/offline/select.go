package offline

import (
	"slices"

	"github.com/higmem/higmem/internal/parallel"
	"github.com/higmem/higmem/internal/rank"
)

// Input is one question's inputs to the scorer. Every slice and matrix it
// reaches belongs to the caller, who keeps them unchanged during Score.
type Input struct {
	// Tuning is the scorer's weights and stopping rule.
	Tuning Tuning
	// Units is the number of units (rows) of the space.
	Units int
	// KTurn is how many of the most relevant units the caller reads (its
	// search stage): the pruned path computes their relevance exactly.
	KTurn int
	// Features computes the question's features (with Dense when dense is
	// set; the pruned path estimates the cosines itself). It is called
	// once per path taken, on the pruned path while the estimates run on
	// another goroutine.
	Features func(dense bool) *Features
	// Vector is the question's embedding and Dense the matrices of the
	// dense feature (both unused without Fast).
	Vector []float32
	Dense  DenseMix
	// EventUnits lists each event's units, for the exact event bests of
	// the pruned path.
	EventUnits [][]int32
	// Fast lets the pruned path (fast.go) run: the caller sets it for a
	// question that sees every unit, on a space large enough for it to
	// pay, whose Dense is quantized and whose Features carry the mean
	// cosine from the matrices' sums of rows (MeanSet).
	Fast bool
	// Chunk is the fewest units (or runs) each core takes in a pass of the
	// pruned path; 0 is 16384.
	Chunk int
	// Stage is the learned stage to run, nil for none (see
	// Stage.AppliesTo).
	Stage *Stage
	// Probe, when set, is called on the reference path with the features
	// scored (valid during the call only); Score then never takes the
	// pruned path. It serves measurements (internal/research).
	Probe func(*Features)
	// Beside, when set, is other work of the caller's question (default
	// mode's event search) that Score runs once, on another goroutine
	// where one is free, and returns after: beside the pruned path's
	// serial part (the exact scores in the order of their bounds), which
	// leaves a core idle, so that the passes over every unit before it
	// have both; beside the whole reference path where the pruned one is
	// not taken.
	Beside func()
}

// Scores is what Score computes for a question.
type Scores struct {
	// Rel and Scores are the units' relevance and context score, exact at
	// the units RelIdx and ScoreIdx list (nil lists: every unit). They
	// live in the scratch passed to Score.
	Rel, Scores      []float64
	RelIdx, ScoreIdx []int
	// Order is the learned stage's order of the StageCands best units,
	// best first; nil when no stage ran or it had nothing to scale by.
	Order []int
	// Pruned reports whether the pruned path decided.
	Pruned bool
	// prior is each unit's relevance times its role's factor (Top), nil
	// where the tuning reads no roles (then it is Rel).
	prior []float64
}

// Score computes the relevance and context score of a question's units:
// on the pruned path when in.Fast and it can decide (the KTurn most
// relevant and the MaxK best exact), else on every unit. With a stage, the
// stage's tuning (more candidates exact) is scored and the stage orders
// them.
func Score(in *Input, sc *Scratch) Scores {
	tu := in.Tuning
	var out Scores
	var then func(*StageInput)
	if in.Stage != nil {
		tu = tu.forStage()
		then = func(si *StageInput) { out.Order = in.Stage.rerank(si) }
	}
	beside := in.Beside
	if in.Fast && in.Probe == nil && !tu.adapted {
		var ok bool
		if out.Rel, out.Scores, out.RelIdx, out.ScoreIdx, ok = fast(in, tu, sc, then, &beside); ok {
			out.Pruned = true
			return out
		}
	}
	if beside == nil {
		out.reference(in, tu, sc, then)
		return out
	}
	parallel.For(2, func(part int) {
		if part == 0 {
			out.reference(in, tu, sc, then)
		} else {
			beside()
		}
	})
	return out
}

// reference computes out's relevance and scores of every unit (Score's
// reference path).
func (out *Scores) reference(in *Input, tu Tuning, sc *Scratch, then func(*StageInput)) {
	f := in.Features(true)
	if in.Probe != nil {
		in.Probe(f)
	}
	n := len(f.Lex)
	sc.rel = grow(sc.rel, n)
	out.Rel = tu.RelevanceInto(f, sc.rel)
	if tu.adapted && f.Role != nil {
		// The turn that matters most on its own is weighed with its
		// role, as its score is (Top).
		roleOf := tu.roleFactors()
		sc.prior = grow(sc.prior, n)
		for i, r := range out.Rel {
			sc.prior[i] = r * roleOf[f.Role[i]&3]
		}
		out.prior = sc.prior
	}
	sc.scores = grow(sc.scores, n)
	var best []float64
	if tu.EventShare != 0 {
		sc.best = grow(sc.best, len(in.EventUnits))
		best = sc.best
	}
	out.Scores = tu.ScoreInto(f, out.Rel, sc.scores, best, &sc.runs)
	if then != nil {
		then(FullStageInput(tu, f, out.Rel, out.Scores, &sc.runs))
	}
}

// Selection is offline retrieval's choice for a question.
type Selection struct {
	Scores
	// Search lists the KTurn most relevant units, best first.
	Search []int
	// Ranked lists the units in the selection's order, the learned
	// stage's when it ran (Order), else by score; the first K are
	// selected.
	Ranked []int
	K      int
	// Top is the unit the selection always holds (Chosen), -1 when none:
	// the most relevant unit (Search's first) when its relevance is
	// positive; in a conversation whose shape weighs roles (a
	// user–assistant chat, Tuning.Adapt), the unit of the best relevance
	// times its role's factor (the user's turns, and the user's turn that
	// opens a session, count as the score counts them). Context shares
	// (neighbours, event, session) never bury it; the role prior may
	// place another unit first.
	Top int
}

// Select scores a question (Score) and selects its units: the MaxK best by
// score, cut by the stopping rule (Cut), and, when the learned stage ran,
// that many in its order.
func Select(in *Input, sc *Scratch) Selection {
	s := Selection{Scores: Score(in, sc)}
	s.Search = rank.Top(s.Rel, s.RelIdx, in.KTurn)
	s.Ranked = rank.Top(s.Scores.Scores, s.ScoreIdx, in.Tuning.MaxK)
	s.K = in.Tuning.Cut(s.Ranked, s.Scores.Scores)
	if s.Order != nil {
		s.Ranked = s.Order
	}
	s.Top = -1
	if s.K > 0 {
		if s.prior != nil {
			best := 0.0
			for i, x := range s.prior {
				if x > best {
					s.Top, best = i, x
				}
			}
		} else if len(s.Search) > 0 && s.Rel[s.Search[0]] > 0 {
			s.Top = s.Search[0]
		}
	}
	return s
}

// Chosen returns the selected units: the first K of Ranked, except that
// when Top is not among them it takes the place of the last (K is
// unchanged: a long burst of the other speaker around one message, whose
// context scores take every place, cannot leave that message out).
// replaced is the unit Top replaced, -1 when none. chosen is Ranked's
// own storage when nothing is replaced.
func (s *Selection) Chosen() (chosen []int, replaced int) {
	chosen = s.Ranked[:s.K]
	if s.Top < 0 || slices.Contains(chosen, s.Top) {
		return chosen, -1
	}
	replaced = chosen[len(chosen)-1]
	return append(slices.Clone(chosen[:len(chosen)-1]), s.Top), replaced
}
