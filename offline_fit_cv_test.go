package higmem

import (
	"fmt"
	"strings"
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
		{"run", []float64{0.5, 0.8, 1}, func(ct *cvTune, v float64) { ct.tu.RunShare = v }},
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
		var s cvScore
		for ci, c := range set.convs {
			if !train(si, ci) {
				continue
			}
			for qi := range set.qs {
				q := &set.qs[qi]
				if q.conv == c {
					s.add(q, ct.sel(q))
				}
			}
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
	t.Logf("held out, each fold scored with the weights fitted on the others\n\n%s", crossValidateFitted(sets, grid, res, folds))
	t.Logf("each fold's fit on every question (in sample for 5/6)\n\n%s", fixedTable(sets, grid, res))
}

// crossValidateFitted reports held-out scores where configuration f was
// fitted without fold f.
func crossValidateFitted(sets []*cvSet, grid []cvConfig, res cvResults, folds int) string {
	// One result table per fold, with only that fold's configuration.
	var b strings.Builder
	held := make([][]cvScore, len(sets))
	perConv := make([][]float64, len(sets))
	cats := make([]map[int]*cvScore, len(sets))
	for si := range sets {
		cats[si] = map[int]*cvScore{}
	}
	for fold := range folds {
		fmt.Fprintf(&b, "| %d |", fold)
		for si, set := range sets {
			s := res.sum(sets, fold, si, func(c int) bool { return c%folds == fold })
			held[si] = append(held[si], s)
			fmt.Fprintf(&b, " %s %.3f / %.3f (%.2f) |", set.name, s.R(), s.P(), s.K())
			for c := range set.convs {
				if c%folds == fold {
					perConv[si] = append(perConv[si], res.sum(sets, fold, si, func(x int) bool { return x == c }).R())
				}
			}
			for qi := range set.qs {
				q := &set.qs[qi]
				if indexOfConv(set, q.conv)%folds == fold {
					if cats[si][q.category] == nil {
						cats[si][q.category] = &cvScore{}
					}
					cats[si][q.category].plus(res[fold][si][qi])
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| set | held-out R (mean ± sd over folds) | P | K | all held-out R / P (K) | per conversation R |\n|---|---:|---:|---:|---:|---:|\n")
	for si, set := range sets {
		var rs, ps, ks []float64
		var all cvScore
		for _, s := range held[si] {
			rs, ps, ks = append(rs, s.R()), append(ps, s.P()), append(ks, s.K())
			all.plus(s)
		}
		mr, sr := meanSD(rs)
		mp, sp := meanSD(ps)
		mk, _ := meanSD(ks)
		mc, sc := meanSD(perConv[si])
		fmt.Fprintf(&b, "| %s | %.3f ± %.3f | %.3f ± %.3f | %.2f | %.3f / %.3f (%.2f) | %.3f ± %.3f |\n",
			set.name, mr, sr, mp, sp, mk, all.R(), all.P(), all.K(), mc, sc)
	}
	b.WriteString("\n| set | category | n | R | P | K |\n|---|---|---:|---:|---:|---:|\n")
	for si, set := range sets {
		for c := range 10 {
			if s := cats[si][c]; s != nil {
				fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.3f | %.2f |\n", set.name, set.names[c], int(s.n), s.R(), s.P(), s.K())
			}
		}
	}
	return b.String()
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
