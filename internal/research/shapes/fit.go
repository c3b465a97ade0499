package shapes

import (
	"fmt"
	"io"

	"github.com/higmem/higmem/internal/offline"
)

// Evaluate scores every question under tu and v and returns the score and
// each question's selection.
func Evaluate(qs []*Question, tu offline.Tuning, stage *offline.Stage, v Variant) (Score, [][]int) {
	var s Score
	sels := make([][]int, len(qs))
	for i, q := range qs {
		sels[i] = SelectVariant(q, tu, stage, v)
		s.Add(sels[i], q.Gold)
	}
	return s, sels
}

// AtSameK scores a ranker cut, per question, to the size of sels.
func AtSameK(qs []*Question, r Ranker, sels [][]int) Score {
	var s Score
	for i, q := range qs {
		s.Add(TopK(r(q), len(sels[i])), q.Gold)
	}
	return s
}

// objective is what the fit maximises: mean recall, less 0.05 per unit of
// mean K above MaxMeanK.
func objective(s Score) float64 {
	m := s.Mean()
	return m.R - 0.05*max(0, m.K-MaxMeanK)
}

// MaxMeanK is the mean K the fit keeps to (issue 32: K ≤ 8).
const MaxMeanK = 7.5

// grid lists the values the fit tries for each user–assistant weight.
var grid = []struct {
	name string
	vals []float64
	set  func(a *offline.Assistant, x float64)
}{
	{"WindowWeight", []float64{0, 0.25, 0.5, 1}, func(a *offline.Assistant, x float64) { a.WindowWeight = x }},
	{"DenseWeight", []float64{0.25, 0.5, 1, 2, 4}, func(a *offline.Assistant, x float64) { a.DenseWeight = x }},
	{"TerseBump", []float64{1, 1.5, 2, 3, 4}, func(a *offline.Assistant, x float64) { a.TerseBump = x }},
	{"OpenBump", []float64{1, 1.25, 1.5, 2, 3}, func(a *offline.Assistant, x float64) { a.OpenBump = x }},
	{"LexLenPow", []float64{0, 0.25, 0.5, 0.75, 1}, func(a *offline.Assistant, x float64) { a.LexLenPow = x }},
	{"LengthPow", []float64{-0.3, -0.15, 0, 0.15}, func(a *offline.Assistant, x float64) { a.LengthPow = x }},
	{"Next", []float64{0, 0.1, 0.25, 0.5}, func(a *offline.Assistant, x float64) { a.Next = x }},
	{"EventShare", []float64{0, 0.3, 0.6}, func(a *offline.Assistant, x float64) { a.EventShare = x }},
	{"KeepRatio", []float64{0.4, 0.55, 0.7, 0.85}, func(a *offline.Assistant, x float64) { a.KeepRatio = x }},
	{"MinK", []float64{3, 4, 5, 6}, func(a *offline.Assistant, x float64) { a.MinK = int(x) }},
	{"MaxK", []float64{6, 7, 8, 9}, func(a *offline.Assistant, x float64) { a.MaxK = int(x) }},
}

// Fit fits the user–assistant weights on qs by coordinate ascent from
// tu.Assist (rounds passes over the grid) and returns the best tuning.
func Fit(w io.Writer, qs []*Question, tu offline.Tuning, stage *offline.Stage, v Variant, rounds int) offline.Tuning {
	best := tu
	bs, _ := Evaluate(qs, best, stage, v)
	bo := objective(bs)
	for round := range rounds {
		improved := false
		for _, g := range grid {
			for _, x := range g.vals {
				cand := best
				g.set(&cand.Assist, x)
				s, _ := Evaluate(qs, cand, stage, v)
				if o := objective(s); o > bo+1e-9 {
					best, bs, bo, improved = cand, s, o, true
				}
			}
		}
		fmt.Fprintf(w, "fit round %d: %s  %+v\n", round+1, bs, best.Assist)
		if !improved {
			break
		}
	}
	return best
}
