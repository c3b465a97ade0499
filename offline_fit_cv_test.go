package higmem

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A fitted combination of the scorer's features: every weight of the
// offline scorer (and the candidate features) fitted together by
// coordinate ascent on the training folds of both files at once, the
// objective being the mean recall over the files at avg K ≤ 8 on each,
// and scored on the held-out fold (issue 15, round 2).

// cvFitParams are the weights fitted, each with the values coordinate
// ascent may move it to.
func cvFitParams() []cvParam {
	return []cvParam{
		{"dense", []float64{0.2, 0.3, 0.4, 0.5, 0.7}, func(ct *cvTune, v float64) { ct.tu.DenseWeight = v }},
		{"window", []float64{0, 0.5, 0.7, 1}, func(ct *cvTune, v float64) { ct.Window = v }},
		// b: the BM25 length normalisation of the turn index (-1 none).
		{"b", []float64{0.75, 0.5, 0.3, -1}, func(ct *cvTune, v float64) { ct.X.LexB = v }},
		{"prev", []float64{0.1, 0.25, 0.4}, func(ct *cvTune, v float64) { ct.tu.Prev = v }},
		{"prevQ", []float64{0.5, 0.7, 0.9}, func(ct *cvTune, v float64) { ct.tu.PrevQuestion = v }},
		{"next", []float64{0.2, 0.35, 0.5}, func(ct *cvTune, v float64) { ct.tu.Next = v }},
		{"nextQ", []float64{0.3, 0.5, 0.7}, func(ct *cvTune, v float64) { ct.tu.NextQuestion = v }},
		{"far", []float64{0.15, 0.3, 0.45}, func(ct *cvTune, v float64) { ct.tu.Far = v }},
		{"event", []float64{0.2, 0.4, 0.6}, func(ct *cvTune, v float64) { ct.tu.EventShare = v }},
		// The run share is not fitted: the two files cannot tell 0.5 from
		// 0.8 (almost all their runs are one message), and the burst
		// stress, never tuned on, needs 0.8 (BENCHMARKS.md, issue 15).
		{"speaker", []float64{1, 1.15, 1.3}, func(ct *cvTune, v float64) { ct.tu.SpeakerBump = v }},
		{"time", []float64{1, 1.25, 1.5}, func(ct *cvTune, v float64) { ct.tu.TimeBump = v }},
		{"count", []float64{1, 1.2, 1.4}, func(ct *cvTune, v float64) { ct.tu.CountBump = v }},
		// The length prior on the words of the turn's speaker run, and the
		// factor of turns that ask.
		{"length", []float64{0, 0.05, 0.1, 0.15, 0.2}, func(ct *cvTune, v float64) { ct.tu.LengthPow = v }},
		{"question", []float64{0.85, 1}, func(ct *cvTune, v float64) { ct.tu.QuestionBump = v }},
		{"keep", []float64{0.45, 0.5, 0.55, 0.6, 0.65}, func(ct *cvTune, v float64) { ct.tu.KeepRatio = v }},
		{"slope", []float64{0, 0.02, 0.05}, func(ct *cvTune, v float64) { ct.KeepSlope = v }},
		{"minK", []float64{5, 6, 7}, func(ct *cvTune, v float64) { ct.tu.MinK = int(v) }},
		{"maxK", []float64{8, 9, 10, 12}, func(ct *cvTune, v float64) { ct.tu.MaxK = int(v) }},
	}
}

// fitObjective scores a tune on the questions train accepts: the mean
// recall over the tuned sets, or -1 when avg K exceeds maxK on one.
func fitObjective(sets []*cvSet, tuned []bool, ct cvTune, maxK float64, train func(si, conv int) bool) (float64, string) {
	obj, nt := 0.0, 0
	var desc []string
	for si, set := range sets {
		if !tuned[si] {
			continue
		}
		// Two workers, each with its own sum.
		var parts [2]cvScore
		var wg sync.WaitGroup
		for w := range parts {
			wg.Go(func() {
				for qi := w; qi < len(set.qs); qi += len(parts) {
					q := &set.qs[qi]
					if train(si, indexOfConv(set, q.conv)) {
						parts[w].add(q, ct.sel(q))
					}
				}
			})
		}
		wg.Wait()
		var s cvScore
		for _, p := range parts {
			s.plus(p)
		}
		if s.n == 0 {
			continue
		}
		desc = append(desc, fmt.Sprintf("%s %.3f (K %.2f)", set.name, s.R(), s.K()))
		if s.K() > maxK {
			return -1, strings.Join(desc, ", ")
		}
		obj += s.R()
		nt++
	}
	return obj / float64(max(nt, 1)), strings.Join(desc, ", ")
}

// fit runs coordinate ascent from start: each pass tries every value of
// every parameter in turn and keeps a change that raises the objective.
func fit(t *testing.T, sets []*cvSet, tuned []bool, start cvTune, ps []cvParam, maxK float64, train func(si, conv int) bool) (cvTune, string) {
	cur := start
	best, desc := fitObjective(sets, tuned, cur, maxK, train)
	var chosen []string
	for pass := range 3 {
		moved := false
		for _, p := range ps {
			for _, v := range p.values {
				ct := cur
				p.set(&ct, v)
				if o, d := fitObjective(sets, tuned, ct, maxK, train); o > best+1e-4 {
					best, desc, cur, moved = o, d, ct, true
					chosen = append(chosen, fmt.Sprintf("%s=%g", p.name, v))
				}
			}
		}
		t.Logf("pass %d: %.4f (%s) after %v", pass, best, desc, chosen)
		if !moved {
			break
		}
	}
	return cur, strings.Join(chosen, " ")
}

// TestOfflineCVFit fits the scorer's weights by coordinate ascent within
// each fold and reports the held-out results. Skipped unless
// HIGMEM_OFFLINE_CV=1; HIGMEM_CV_FIT_EXTRA=1 adds the candidate features.
func TestOfflineCVFit(t *testing.T) {
	sets := loadCVSets(t, true)
	tuned := make([]bool, len(sets))
	for i, set := range sets {
		tuned[i] = !strings.HasSuffix(set.name, "-burst")
	}
	// From the engine's defaults; the windows and the BM25 scores are the
	// CV's own (Win, LexB), so that 0 and other b stay reachable.
	start := cvTune{tu: defaultOfflineTuning(), Win: "engine", Window: offWindowWeight, X: cvExtra{LexB: cvEngineB()}}
	ps := cvFitParams()
	const folds = 6
	var grid []cvConfig
	for fold := range folds {
		ct, chosen := fit(t, sets, tuned, start, ps, 8, func(_, c int) bool { return c%folds != fold })
		grid = append(grid, cvConfig{fmt.Sprintf("fold %d: %s", fold, chosen), ct})
	}
	// Each fold's fit scored on every question; crossValidate then picks,
	// for fold f, the configuration fitted without it: choose is replaced
	// by the fold's own fit (res rows are in fold order).
	res := scoreGrid(sets, grid)
	t.Logf("held out, each fold scored with the weights fitted on the others\n\n%s", heldOut(sets, grid, res, folds, 8, func(fold int) int { return fold }))
	t.Logf("each fold's fit on every question (in sample for 5/6)\n\n%s", fixedTable(sets, grid, res))

	// The engine's defaults: the same fit on every conversation of both
	// files; and across files, fitted on one file, scored on the other.
	all, chosen := fit(t, sets, tuned, start, ps, 8, func(int, int) bool { return true })
	t.Logf("fitted on every conversation: %s\n%+v window %g b %g slope %g", chosen, all.tu, all.Window, all.X.LexB, all.KeepSlope)
	across := []cvConfig{{"engine defaults", cvTune{tu: defaultOfflineTuning(), Win: "engine", Window: offWindowWeight, X: cvExtra{LexB: cvEngineB()}}},
		{"fitted on every conversation", all}}
	for ti, set := range sets {
		if !tuned[ti] {
			continue
		}
		only := make([]bool, len(sets))
		only[ti] = true
		ct, chosen := fit(t, sets, only, start, ps, 8, func(int, int) bool { return true })
		across = append(across, cvConfig{"fitted on " + set.name + " alone: " + chosen, ct})
	}
	t.Logf("fitted on all, and across files\n\n%s", fixedTable(sets, across, scoreGrid(sets, across)))
}

func indexOfConv(set *cvSet, c *cvConv) int {
	for i, x := range set.convs {
		if x == c {
			return i
		}
	}
	return -1
}

// cvEngineB is the engine's BM25 b (turnBM25B) as cvLexBs names it.
func cvEngineB() float64 {
	switch {
	case turnBM25B == 0:
		return 0.75
	case turnBM25B < 0:
		return -1
	}
	return turnBM25B
}
