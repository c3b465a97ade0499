package shapes

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

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

// objective is what the fit maximises over sets: their mean recall (each
// set counts the same), less 0.05 per unit of mean K above MaxMeanK in
// each set, less the recall by which a set falls below its best plain
// top-k at the same K (the floor of issue 32; sets of the Floor's
// questions).
func objective(ss []Score) float64 {
	o := 0.0
	for _, s := range ss {
		m := s.Mean()
		o += m.R - 0.05*max(0, m.K-MaxMeanK) - max(0, s.Floor-m.R)
	}
	return o / float64(max(len(ss), 1))
}

// MaxMeanK is the mean K per set the fit keeps to (issue 32: K ≤ 8).
const MaxMeanK = 7.8

// evaluateSets scores every set under tu and v, with each set's floor:
// the best recall of the plain top-k systems cut, per question, to the
// size of the selection.
func evaluateSets(sets [][]*Question, tu offline.Tuning, stage *offline.Stage, v Variant) []Score {
	out := make([]Score, len(sets))
	for i, qs := range sets {
		var sels [][]int
		out[i], sels = Evaluate(qs, tu, stage, v)
		out[i].Floor = floor(qs, sels)
	}
	return out
}

// floor returns the best mean recall of the plain top-k systems cut to
// the sizes of sels (their rankings computed once per question).
func floor(qs []*Question, sels [][]int) float64 {
	best := 0.0
	for sys := range topkSystems {
		var s Score
		for i, q := range qs {
			s.Add(q.ranking(sys)[:min(len(sels[i]), len(q.ranking(sys)))], q.Gold)
		}
		best = max(best, s.Mean().R)
	}
	return best
}

// topkSystems are the plain top-k systems of the floor.
var topkSystems = []Ranker{Dense, BM25, Hybrid}

// ranking returns the question's 20 best units under top-k system sys
// (an index into topkSystems), computed once.
func (q *Question) ranking(sys int) []int {
	if q.rankings == nil {
		q.rankings = make([][]int, len(topkSystems))
	}
	if q.rankings[sys] == nil {
		q.rankings[sys] = TopK(topkSystems[sys](q), 20)
	}
	return q.rankings[sys]
}

// gridWeight is one weight of the grid: its name (the field of
// offline.Assistant), the values tried, and how to set it.
type gridWeight struct {
	name string
	vals []float64
	set  func(a *offline.Assistant, x float64)
}

// grid lists the values the fit tries for each user–assistant weight.
var grid = []gridWeight{
	{"WindowWeight", []float64{0, 0.25, 0.5, 0.75, 1}, func(a *offline.Assistant, x float64) { a.WindowWeight = x }},
	{"DenseWeight", []float64{0.25, 0.5, 1, 2, 4}, func(a *offline.Assistant, x float64) { a.DenseWeight = x }},
	{"TerseBump", []float64{1, 1.5, 2, 3, 4}, func(a *offline.Assistant, x float64) { a.TerseBump = x }},
	{"OpenBump", []float64{1, 1.25, 1.5, 2, 3}, func(a *offline.Assistant, x float64) { a.OpenBump = x }},
	{"LexLenPow", []float64{0, 0.25, 0.5, 0.75, 1}, func(a *offline.Assistant, x float64) { a.LexLenPow = x }},
	{"LengthPow", []float64{-0.3, -0.15, 0, 0.15}, func(a *offline.Assistant, x float64) { a.LengthPow = x }},
	{"Next", []float64{0, 0.1, 0.25, 0.5}, func(a *offline.Assistant, x float64) { a.Next = x }},
	{"EventShare", []float64{0, 0.3, 0.6}, func(a *offline.Assistant, x float64) { a.EventShare = x }},
	{"KeepRatio", []float64{0.4, 0.55, 0.7, 0.85}, func(a *offline.Assistant, x float64) { a.KeepRatio = x }},
	{"MinK", []float64{3, 4, 5, 6}, func(a *offline.Assistant, x float64) { a.MinK = int(x) }},
	{"MaxK", []float64{6, 7, 8}, func(a *offline.Assistant, x float64) { a.MaxK = int(x) }}, // issue 32: K ≤ 8
	{"SessionShare", []float64{0, 0.1, 0.25, 0.5, 1}, func(a *offline.Assistant, x float64) { a.SessionShare = x }},
	{"PassageDense", []float64{0, 0.25, 0.5, 0.75, 1}, func(a *offline.Assistant, x float64) { a.PassageDense = x }},
	{"PassageLex", []float64{0, 0.25, 0.5, 0.75, 1}, func(a *offline.Assistant, x float64) { a.PassageLex = x }},
}

// gridWithout returns the grid less the weights named in pin (an unknown
// name panics: a typo must not pin nothing).
func gridWithout(pin []string) []gridWeight {
	out := slices.Clone(grid)
	for _, name := range pin {
		i := slices.IndexFunc(out, func(g gridWeight) bool { return g.name == name })
		if i < 0 {
			panic(fmt.Sprintf("shapes: no weight %q in the grid", name))
		}
		out = slices.Delete(out, i, i+1)
	}
	return out
}

// GridNames lists the names of the grid's weights, in the fit's order.
func GridNames() []string {
	out := make([]string, len(grid))
	for i, g := range grid {
		out[i] = g.name
	}
	return out
}

// Sweep evaluates, from tu, each grid value of the weight name (the
// others fixed) on every set and writes, per value, each set's score and
// objective (names[i] naming sets[i]) and the mean objective the fit
// maximises; it returns the value of the best mean (the first on ties).
func Sweep(w io.Writer, names []string, sets [][]*Question, tu offline.Tuning, stage *offline.Stage, v Variant, name string) (float64, error) {
	i := slices.IndexFunc(grid, func(g gridWeight) bool { return g.name == name })
	if i < 0 {
		return 0, fmt.Errorf("sweep: no weight %q (one of %v)", name, GridNames())
	}
	g := grid[i]
	best, bo := math.NaN(), math.Inf(-1)
	for _, x := range g.vals {
		cand := tu
		g.set(&cand.Assist, x)
		ss := evaluateSets(sets, cand, stage, v)
		for j, s := range ss {
			fmt.Fprintf(w, "sweep %s %-5g %-10s objective %.4f  %s\n", name, x, names[j], objective(ss[j:j+1]), s)
		}
		o := objective(ss)
		fmt.Fprintf(w, "sweep %s %-5g %-10s objective %.4f\n", name, x, "mean", o)
		if o > bo+1e-9 {
			best, bo = x, o
		}
	}
	fmt.Fprintf(w, "sweep %s best %g (mean objective %.4f)\n", name, best, bo)
	return best, nil
}

// Neutral returns the user–assistant weights that change nothing but K:
// the base tuning's, no bumps, no length normalisation, and at most 8
// units (issue 32 asks K ≤ 8 of every shape). The fit starts there,
// so that it reproduces the shipped constants rather than start from them.
func Neutral() offline.Assistant {
	b := offline.DefaultTuning()
	return offline.Assistant{WindowWeight: b.WindowWeight, LengthPow: b.LengthPow, DenseWeight: b.DenseWeight,
		Next: b.Next, EventShare: b.EventShare, KeepRatio: b.KeepRatio, MinK: b.MinK, MaxK: min(b.MaxK, 8),
		TerseBump: 1, OpenBump: 1}
}

// Fit fits the user–assistant weights on sets by coordinate ascent (at
// most rounds passes over the grid) from Neutral and from Restarts random
// grid points (a fixed seed), and returns tu with the best. The weights
// named in pin stay at Neutral's value (out of the grid, random starts
// included: pinning the last ones, PassageDense and PassageLex, gives the
// grid and the random starts of the fit before they existed).
func Fit(w io.Writer, sets [][]*Question, tu offline.Tuning, stage *offline.Stage, v Variant, rounds int, pin ...string) offline.Tuning {
	gr := gridWithout(pin)
	r := rand.New(rand.NewPCG(32, 32))
	var best offline.Tuning
	bo := math.Inf(-1)
	for start := range Restarts + 1 {
		t := tu
		t.Assist = Neutral()
		if start > 0 {
			for _, g := range gr {
				g.set(&t.Assist, g.vals[r.IntN(len(g.vals))])
			}
		}
		t, o := ascend(w, sets, t, stage, v, rounds, gr)
		fmt.Fprintf(w, "start %d: objective %.4f\n", start, o)
		if o > bo+1e-9 {
			best, bo = t, o
		}
	}
	return best
}

// Restarts is how many random starts Fit tries besides Neutral.
const Restarts = 5

// ascend runs coordinate ascent from tu.
func ascend(w io.Writer, sets [][]*Question, tu offline.Tuning, stage *offline.Stage, v Variant, rounds int, gr []gridWeight) (offline.Tuning, float64) {
	best := tu
	bs := evaluateSets(sets, best, stage, v)
	bo := objective(bs)
	for round := range rounds {
		improved := false
		for _, g := range gr {
			for _, x := range g.vals {
				cand := best
				g.set(&cand.Assist, x)
				s := evaluateSets(sets, cand, stage, v)
				if o := objective(s); o > bo+1e-9 {
					best, bs, bo, improved = cand, s, o, true
				}
			}
		}
		fmt.Fprintf(w, "  round %d: objective %.4f", round+1, bo)
		for _, s := range bs {
			fmt.Fprintf(w, " [%s]", s)
		}
		fmt.Fprintf(w, "  %+v\n", best.Assist)
		if !improved {
			break
		}
	}
	return best, bo
}

// Ablation sets one user–assistant weight back to the base tuning's
// (no effect).
type Ablation struct {
	Name string
	Set  func(a *offline.Assistant)
}

// Ablations lists each lever of the user–assistant weights, undone.
func Ablations() []Ablation {
	base := offline.DefaultTuning()
	return []Ablation{
		{"own cosine (window weight 1)", func(a *offline.Assistant) { a.WindowWeight = base.WindowWeight }},
		{"terse bump", func(a *offline.Assistant) { a.TerseBump = 1 }},
		{"open bump", func(a *offline.Assistant) { a.OpenBump = 1 }},
		{"terse and open bumps", func(a *offline.Assistant) { a.TerseBump, a.OpenBump = 1, 1 }},
		{"lexical length norm", func(a *offline.Assistant) { a.LexLenPow = 0 }},
		{"dense weight", func(a *offline.Assistant) { a.DenseWeight = base.DenseWeight }},
		{"length prior", func(a *offline.Assistant) { a.LengthPow = base.LengthPow }},
		{"session share", func(a *offline.Assistant) { a.SessionShare = 0 }},
		{"passage mix", func(a *offline.Assistant) { a.PassageDense, a.PassageLex = 0, 0 }},
		{"stopping rule", func(a *offline.Assistant) { a.MinK, a.MaxK, a.KeepRatio = base.MinK, base.MaxK, base.KeepRatio }},
	}
}
