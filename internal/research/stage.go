package research

import (
	"fmt"
	"go/format"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/rank"
)

// StageRows returns the learned stage's training rows of a question: the
// StageCands best units by the context score under tu, each with its
// features (offline.StageFeatures) and label (1 when the unit is
// evidence). It returns nothing when the stage has nothing to scale by.
func StageRows(tu offline.Tuning, q *Question) (x [][]float64, y []float64) {
	f := q.Features.Clone()
	offline.Complete(f)
	rel := tu.RelevanceInto(f, make([]float64, len(f.Lex)))
	var best []float64
	if tu.EventShare != 0 {
		ne := 0
		for _, e := range f.Event {
			ne = max(ne, int(e)+1)
		}
		best = make([]float64, ne)
	}
	var rb offline.RunBests
	scores := tu.ScoreInto(f, rel, make([]float64, len(rel)), best, &rb)
	ranked := rank.Top(scores, nil, offline.StageCands)
	feats := make([][offline.StageDim]float64, len(ranked))
	if !offline.StageFeatures(offline.FullStageInput(tu, f, rel, scores, &rb), ranked, feats) {
		return nil, nil
	}
	for j, i := range ranked {
		x = append(x, feats[j][:])
		lab := 0.0
		if slices.Contains(q.Gold, i) {
			lab = 1
		}
		y = append(y, lab)
	}
	return x, y
}

// FitStage fits the learned stage on every question (L2-regularised
// logistic regression, lambda 1, on standardised features), as the engine's
// weights were fitted.
func FitStage(tu offline.Tuning, qs []Question) (*Logit, error) {
	var xs [][]float64
	var ys []float64
	for i := range qs {
		x, y := StageRows(tu, &qs[i])
		xs, ys = append(xs, x...), append(ys, y...)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("no candidates to fit on")
	}
	return FitStandardised(xs, offline.StageDim, ys, 1)
}

// StageWeightsFile returns the Go source of internal/offline's
// stage_weights.go for the fitted model m, formatted.
func StageWeightsFile(m *Logit) ([]byte, error) {
	w, b := m.Raw()
	var s strings.Builder
	s.WriteString(`package offline

// The learned stage's weights for e5-small-v2 (stage.go), in raw units (the
// standardisation of the fit folded in), one per feature of StageFeatures.
// internal/research fits them on every question of LoCoMo and FriendsQA dev
// and writes this file:
//
//	go run ./internal/research/cmd/fitstage -locomo PATH -friendsqa PATH -model DIR -out internal/offline/stage_weights.go
var (
	stageE5Weights = [StageDim]float64{
`)
	for k, name := range offline.StageFeatureNames {
		fmt.Fprintf(&s, "\t\t%.9g, // %s\n", w[k], name)
	}
	fmt.Fprintf(&s, "\t}\n\tstageE5Intercept = %.9g\n)\n", b)
	return format.Source([]byte(s.String()))
}
