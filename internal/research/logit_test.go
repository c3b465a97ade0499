package research

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/higmem/higmem/internal/offline"
)

// TestFitLogistic checks the stage's logistic regression on problems whose
// answer is known: a one-feature problem whose maximum likelihood has a
// closed form, and data drawn from a known logistic model.
func TestFitLogistic(t *testing.T) {
	// x = +1: 30 positives, 10 negatives; x = −1: 10 positives, 40
	// negatives. Unpenalised, the fit reproduces both rates:
	// b + w = logit(0.75) = ln 3, b − w = logit(0.2) = −ln 4.
	var x, y []float64
	add := func(v float64, pos, neg int) {
		for range pos {
			x, y = append(x, v), append(y, 1)
		}
		for range neg {
			x, y = append(x, v), append(y, 0)
		}
	}
	add(1, 30, 10)
	add(-1, 10, 40)
	w, b, _, err := FitLogistic(x, 1, y, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ww, wb := (math.Log(3)+math.Log(4))/2, (math.Log(3)-math.Log(4))/2; math.Abs(w[0]-ww) > 1e-9 || math.Abs(b-wb) > 1e-9 {
		t.Errorf("one feature: w %.6f b %.6f, want %.6f %.6f", w[0], b, ww, wb)
	}
	// The penalty shrinks w, not the intercept: with a huge lambda w is
	// about 0 and b the overall rate's logit (40 of 90).
	w, b, _, err = FitLogistic(x, 1, y, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w[0]) > 1e-6 || math.Abs(b-math.Log(40.0/50)) > 1e-6 {
		t.Errorf("lambda 1e9: w %.6f b %.6f, want 0 and %.6f", w[0], b, math.Log(40.0/50))
	}
	// Separable data without a penalty has no maximum: the fit must fail.
	if _, _, _, err := FitLogistic([]float64{-1, -2, 1, 2}, 1, []float64{0, 0, 1, 1}, 0); err == nil {
		t.Error("separable data, lambda 0: no error")
	}

	// 20,000 rows drawn from σ(−0.3 + 1.5 x0 − 2 x1 + 0.5 x2 + 0 x3),
	// the features on different scales; fitted through the
	// standardisation, the raw weights come back within 0.1.
	rng := rand.New(rand.NewPCG(1, 2))
	want, wantB := []float64{1.5, -2, 0.5, 0}, -0.3
	scale := []float64{1, 0.5, 3, 2}
	var xs [][]float64
	y = nil
	for range 20000 {
		row := make([]float64, 4)
		z := wantB
		for k := range row {
			row[k] = scale[k]*rng.NormFloat64() + 1
			z += want[k] * row[k]
		}
		lab := 0.0
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			lab = 1
		}
		xs, y = append(xs, row), append(y, lab)
	}
	m, err := FitStandardised(xs, 4, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	raw := 0.0
	for k := range want {
		if got := m.W[k] / m.SD[k]; math.Abs(got-want[k]) > 0.1 {
			t.Errorf("weight %d: %.3f, want %.3f", k, got, want[k])
		}
		raw += m.W[k] * m.Mu[k] / m.SD[k]
	}
	if got := m.B - raw; math.Abs(got-wantB) > 0.1 {
		t.Errorf("intercept %.3f, want %.3f", got, wantB)
	}
	if m.Iters > 20 {
		t.Errorf("%d Newton steps", m.Iters)
	}
	// The labels flipped, the weights flip.
	for i := range y {
		y[i] = 1 - y[i]
	}
	if f, err := FitStandardised(xs, 4, y, 1); err != nil || math.Abs(f.W[1]+m.W[1]) > 1e-6 {
		t.Errorf("flipped labels: weight 1 %.3f, want %.3f (%v)", f.W[1], -m.W[1], err)
	}
}

// TestStageWeightsFile checks that the file fitstage writes for the
// weights the engine ships is the shipped file, byte for byte: a fit that
// reproduces them reproduces the file.
func TestStageWeightsFile(t *testing.T) {
	sm := offline.StageFor("minilm:e5-small-v2:")
	w, b := sm.Weights()
	m := &Logit{W: w[:], B: b, Mu: make([]float64, len(w)), SD: make([]float64, len(w))}
	for k := range m.SD {
		m.SD[k] = 1
	}
	got, err := StageWeightsFile(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../offline/stage_weights.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("fitstage writes\n%s\nthe shipped file is\n%s", got, want)
	}
}
