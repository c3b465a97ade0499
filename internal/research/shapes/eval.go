package shapes

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/vec"
)

// Score is evidence recall, precision and mean K over questions.
type Score struct {
	R, P, K float64
	N       int
	// Floor is the best recall of the plain top-k systems at the same K
	// (set by the fit).
	Floor float64
}

// Add adds one question's selection.
func (s *Score) Add(sel, gold []int) {
	hit := 0
	gs := map[int]bool{}
	for _, g := range gold {
		gs[g] = true
	}
	seen := map[int]bool{}
	for _, i := range sel {
		if gs[i] && !seen[i] && i >= 0 {
			hit++
		}
		seen[i] = true
	}
	if len(gs) > 0 {
		s.R += float64(hit) / float64(len(gs))
	}
	if len(sel) > 0 {
		s.P += float64(hit) / float64(len(sel))
	}
	s.K += float64(len(sel))
	s.N++
}

// Mean returns the means.
func (s Score) Mean() Score {
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	return Score{R: s.R / n, P: s.P / n, K: s.K / n, N: s.N, Floor: s.Floor}
}

func (s Score) String() string {
	m := s.Mean()
	if s.Floor > 0 {
		return fmt.Sprintf("R %.3f P %.3f K %.1f floor %.3f", m.R, m.P, m.K, s.Floor)
	}
	return fmt.Sprintf("R %.3f P %.3f K %.1f", m.R, m.P, m.K)
}

// Ranker scores every unit of a question (higher is better; NaN or -Inf
// for units never to select).
type Ranker func(q *Question) []float64

// TopK returns the k best units by score.
func TopK(s []float64, k int) []int {
	idx := make([]int, 0, len(s))
	for i, v := range s {
		if !math.IsNaN(v) && !math.IsInf(v, -1) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
	return idx[:min(k, len(idx))]
}

// Cos returns the cosine of the question with every unit's own turn vector.
func Cos(q *Question) []float64 {
	out := make([]float64, len(q.Conv.Units))
	for i, v := range q.Conv.TurnVec {
		out[i] = float64(vec.Dot(q.Vector, v))
	}
	return out
}

// ChunkMax returns, for every unit, its best passage cosine (its own
// cosine when it has no passages).
func ChunkMax(q *Question) []float64 {
	out := Cos(q)
	for i, cs := range q.Conv.ChunkVec {
		for _, v := range cs {
			out[i] = max(out[i], float64(vec.Dot(q.Vector, v)))
		}
	}
	return out
}

// Dense ranks by the turn vector's cosine (dense-topk).
func Dense(q *Question) []float64 { return Cos(q) }

// BM25 ranks by the engine's BM25 score (bm25-topk).
func BM25(q *Question) []float64 {
	out := make([]float64, len(q.Features.Lex))
	for i, v := range q.Features.Lex {
		out[i] = v
		if v <= 0 {
			out[i] = math.Inf(-1)
		}
	}
	return out
}

// NoShape is a shape the scorer does not adapt to: the base tuning.
var NoShape = offline.Shape{Terse: -1}

// Hybrid ranks by offline mode's relevance under the base tuning (BM25
// over its best + 0.5 × the window cosine, centred and scaled:
// hybrid-topk).
func Hybrid(q *Question) []float64 {
	tu := offline.DefaultTuning()
	f, _ := FeaturesFor(q, tu, Variant{Shape: &NoShape})
	return tu.RelevanceInto(f, make([]float64, len(f.Lex)))
}

// Select runs the offline scorer (internal/offline's Select) on the
// question's features with tuning tu, the learned stage when stage and it
// applies, and returns its selection.
func Select(q *Question, tu offline.Tuning, stage *offline.Stage) []int {
	return selectWith(q, tu, stage, KeepTopEngine)
}

func selectWith(q *Question, tu offline.Tuning, stage *offline.Stage, keep KeepTop) []int {
	f := q.Features
	events := 0
	for _, e := range f.Event {
		events = max(events, int(e)+1)
	}
	in := &offline.Input{Tuning: tu, Units: len(f.Lex), KTurn: 10, EventUnits: make([][]int32, events),
		Features: func(bool) *offline.Features { return f }}
	if stage != nil && stage.AppliesTo(f.Runs.UnitsPerRun()) {
		in.Stage = stage
	}
	var sc offline.Scratch
	sel := offline.Select(in, &sc)
	switch keep {
	case KeepTopNone:
		return append([]int(nil), sel.Ranked[:sel.K]...)
	case KeepTopPlain:
		sel.Top = -1
		if sel.K > 0 && len(sel.Search) > 0 && sel.Rel[sel.Search[0]] > 0 {
			sel.Top = sel.Search[0]
		}
	}
	chosen, _ := sel.Chosen() // as the engine: the selection always holds sel.Top
	return append([]int(nil), chosen...)
}

// Table prints, per set, each system's score.
type Row struct {
	Name  string
	Score Score
}

// Print writes rows.
func Print(w io.Writer, set string, rows []Row) {
	for _, r := range rows {
		fmt.Fprintf(w, "%-10s %-28s %s\n", set, r.Name, r.Score)
	}
}

// ModelID is e5-small-v2's embedder id (the learned stage's key).
var ModelID = "minilm:e5-small-v2"
