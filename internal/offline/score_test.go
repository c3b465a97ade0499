package offline

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// testTuning is a fixed tuning, so that scorer tests do not move when the
// tuned constants do.
var testTuning = Tuning{
	DenseWeight: 1, Prev: 0.25, PrevQuestion: 0.7, Next: 0.35, NextQuestion: 0.5, Far: 0.3,
	EventShare: 0.2, SpeakerBump: 2, TimeBump: 3, CountBump: 5, KeepRatio: 0.5, MinK: 2, MaxK: 5,
}

// features returns turn features for n turns of one session, all visible,
// with no events and no cues.
func features(lex ...float64) *Features {
	n := len(lex)
	f := &Features{Lex: lex, Visible: make([]bool, n), SameSession: make([]bool, n), Question: make([]bool, n), Event: make([]int32, n)}
	for i := range n {
		f.Visible[i] = true
		f.SameSession[i] = i > 0
		f.Event[i] = -1
	}
	return f
}

// relevance returns each turn's own relevance: normalised BM25 plus the
// weighted cosine (negative cosines count as 0). Invisible turns get 0.
func (tu Tuning) relevance(f *Features) []float64 {
	return tu.RelevanceInto(f, make([]float64, len(f.Lex)))
}

// score returns each turn's context score (ScoreRange), in a slice of its
// own.
func (tu Tuning) score(f *Features, rel []float64) []float64 {
	n := len(rel)
	var best []float64
	if tu.EventShare != 0 && f.Event != nil {
		ne := 0
		for _, e := range f.Event {
			ne = max(ne, int(e)+1)
		}
		best = make([]float64, ne)
	}
	return tu.ScoreInto(f, rel, make([]float64, n), best, &RunBests{})
}

// rankPositive returns the indexes of the turns with a positive score, best
// first (ties by index). Retrieval needs only the top of this order
// (rank.Top); the full order serves the tuning sweeps and the tests.
func rankPositive(scores []float64) []int {
	var idx []int
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestOfflineRelevance(t *testing.T) {
	tests := []struct {
		name    string
		lex     []float64
		dense   []float64
		visible []bool
		want    []float64
	}{
		{"BM25 over its maximum", []float64{2, 1, 0}, nil, nil, []float64{1, 0.5, 0}},
		{"no match at all", []float64{0, 0, 0}, nil, nil, []float64{0, 0, 0}},
		// mean cosine 0.5, best 0.9: (d-0.5)/0.4, negatives clipped.
		{"dense centred and scaled", []float64{2, 1, 0}, []float64{0.9, 0.5, 0.1}, nil, []float64{2, 0.5, 0}},
		{"dense alone", []float64{0, 0, 0}, []float64{0.3, 0.7, 0.5}, nil, []float64{0, 1, 0}},
		// The invisible turn counts neither in the BM25 maximum nor in
		// the cosine mean.
		{"invisible turns ignored", []float64{4, 1, 2}, []float64{0.9, 0.2, 0.6}, []bool{false, true, true}, []float64{0, 0.5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := features(tt.lex...)
			f.Dense = tt.dense
			if tt.visible != nil {
				f.Visible = tt.visible
			}
			if got := testTuning.relevance(f); !near(got, tt.want) {
				t.Errorf("relevance = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfflineScore(t *testing.T) {
	tu := testTuning
	tu.EventShare, tu.SpeakerBump, tu.TimeBump, tu.CountBump = 0, 1, 1, 1
	tests := []struct {
		name  string
		rel   []float64
		setup func(f *Features)
		tu    Tuning
		want  []float64
	}{
		{
			name: "statement lends to both sides and two away",
			rel:  []float64{0, 0, 1, 0, 0},
			tu:   tu,
			// turn 1 gets Next (the turn after it is a statement), turn 3
			// gets Prev, turns 0 and 4 get Far.
			want: []float64{0.3, 0.35, 1, 0.25, 0.3},
		},
		{
			name:  "a question lends more to the turn that answers it",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *Features) { f.Question[2] = true },
			tu:    tu,
			want:  []float64{0.3, 0.5, 1, 0.7, 0.3},
		},
		{
			name:  "nothing crosses a session boundary",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *Features) { f.SameSession[3] = false },
			tu:    tu,
			want:  []float64{0.3, 0.35, 1, 0, 0},
		},
		{
			name:  "invisible turns score 0 but lend nothing either way",
			rel:   []float64{0, 0, 1, 0, 0},
			setup: func(f *Features) { f.Visible[3] = false },
			tu:    tu,
			want:  []float64{0.3, 0.35, 1, 0, 0.3},
		},
		{
			name: "event share of the best member",
			rel:  []float64{1, 0, 0, 0.5},
			setup: func(f *Features) {
				f.Event = []int32{0, 0, 1, 1}
			},
			tu:   Tuning{EventShare: 0.2, SpeakerBump: 1, TimeBump: 1, CountBump: 1},
			want: []float64{1.2, 0.2, 0.1, 0.6},
		},
		{
			name: "cues multiply",
			rel:  []float64{1, 1, 1, 1},
			setup: func(f *Features) {
				f.Speaker = []bool{true, false, true, false}
				f.Dated = []bool{false, true, true, false}
				f.Counted = []bool{false, false, true, false}
			},
			tu:   Tuning{SpeakerBump: 2, TimeBump: 3, CountBump: 5},
			want: []float64{2, 3, 30, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := features(make([]float64, len(tt.rel))...)
			if tt.setup != nil {
				tt.setup(f)
			}
			if got := tt.tu.score(f, tt.rel); !near(got, tt.want) {
				t.Errorf("score = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOfflineRankAndCut(t *testing.T) {
	scores := []float64{3, 0, 10, 8, 9, 2, 1, 8}
	ranked := rankPositive(scores)
	if want := []int{2, 4, 3, 7, 0, 5, 6}; !slices.Equal(ranked, want) {
		t.Fatalf("rank = %v, want %v (zero scores out, ties by index)", ranked, want)
	}
	tests := []struct {
		name       string
		minK, maxK int
		ratio      float64
		ranked     []int
		want       int
	}{
		{"stops where scores fall below half the best", 2, 10, 0.5, ranked, 4},
		{"keeps at least MinK", 6, 10, 0.5, ranked, 6},
		{"keeps at most MaxK", 1, 3, 0.1, ranked, 3},
		{"fewer candidates than MinK", 5, 10, 0.5, ranked[:2], 2},
		{"nothing to keep", 2, 10, 0.5, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := Tuning{MinK: tt.minK, MaxK: tt.maxK, KeepRatio: tt.ratio}
			if got := tu.Cut(tt.ranked, scores); got != tt.want {
				t.Errorf("Cut = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestDefaultOfflineTuning checks that the engine's tuning is the constant
// block and is usable.
func TestDefaultOfflineTuning(t *testing.T) {
	tu := DefaultTuning()
	if tu.DenseWeight != offDenseWeight || tu.PrevQuestion != offPrevQuestion || tu.KeepRatio != offKeepRatio || tu.MaxK != offMaxK {
		t.Errorf("DefaultTuning = %+v does not match the constants", tu)
	}
	if tu.MinK < 1 || tu.MinK > tu.MaxK || tu.KeepRatio <= 0 || tu.KeepRatio >= 1 {
		t.Errorf("unusable Cut: %+v", tu)
	}
}

// refRelevance is the relevance computation before issue 9.
func refRelevance(tu Tuning, f *Features) []float64 {
	n := len(f.Lex)
	maxLex := 0.0
	for i, v := range f.Lex {
		if f.Visible[i] {
			maxLex = max(maxLex, v)
		}
	}
	rel := make([]float64, n)
	for i := range n {
		if f.Visible[i] && maxLex > 0 {
			rel[i] = f.Lex[i] / maxLex
		}
	}
	if f.Dense == nil {
		return rel
	}
	mean, maxD, cnt := 0.0, math.Inf(-1), 0
	for i, d := range f.Dense {
		if f.Visible[i] {
			mean += d
			maxD = max(maxD, d)
			cnt++
		}
	}
	if cnt == 0 {
		return rel
	}
	mean /= float64(cnt)
	for i, d := range f.Dense {
		if f.Visible[i] && maxD > mean {
			rel[i] += tu.DenseWeight * max(d-mean, 0) / (maxD - mean)
		}
	}
	return rel
}

// refScore is the context score computation before issue 9.
func refScore(tu Tuning, f *Features, rel []float64) []float64 {
	n := len(rel)
	within := func(i, d int) bool {
		j := i + d
		if j < 0 || j >= n {
			return false
		}
		for k := min(i, j) + 1; k <= max(i, j); k++ {
			if !f.SameSession[k] {
				return false
			}
		}
		return true
	}
	at := func(i, d int) float64 {
		if !within(i, d) {
			return 0
		}
		return rel[i+d]
	}
	var best map[int32]float64
	if tu.EventShare != 0 && f.Event != nil {
		best = map[int32]float64{}
		for i, e := range f.Event {
			if e >= 0 {
				best[e] = max(best[e], rel[i])
			}
		}
	}
	out := make([]float64, n)
	for i := range n {
		if !f.Visible[i] {
			continue
		}
		prev, next := tu.Prev, tu.Next
		if i > 0 && f.Question[i-1] {
			prev = tu.PrevQuestion
		}
		if i+1 < n && f.Question[i+1] {
			next = tu.NextQuestion
		}
		s := rel[i] + prev*at(i, -1) + next*at(i, 1) + tu.Far*(at(i, -2)+at(i, 2))
		if best != nil && f.Event[i] >= 0 {
			s += tu.EventShare * best[f.Event[i]]
		}
		if f.Speaker != nil && f.Speaker[i] {
			s *= tu.SpeakerBump
		}
		if f.Dated != nil && f.Dated[i] {
			s *= tu.TimeBump
		}
		if f.Counted != nil && f.Counted[i] {
			s *= tu.CountBump
		}
		if f.Question[i] && tu.QuestionBump != 0 {
			s *= tu.QuestionBump
		}
		out[i] = s
	}
	return out
}

// randomFeatures returns features of n turns with ties, zeros, invisible
// turns, questions, sessions, events and cues.
func randomFeatures(r *rand.Rand, n, events int) *Features {
	f := &Features{
		Lex: make([]float64, n), Dense: make([]float64, n), Visible: make([]bool, n),
		SameSession: make([]bool, n), Question: make([]bool, n), Event: make([]int32, n),
		Speaker: make([]bool, n), Dated: make([]bool, n), Counted: make([]bool, n),
	}
	for i := range n {
		if r.IntN(3) == 0 {
			f.Lex[i] = float64(r.IntN(4)) / 2 // ties
		}
		f.Dense[i] = r.Float64()*1.4 - 0.4
		f.Visible[i] = r.IntN(10) != 0
		f.SameSession[i] = i > 0 && r.IntN(6) != 0
		f.Question[i] = r.IntN(4) == 0
		f.Event[i] = int32(r.IntN(events+1) - 1)
		f.Speaker[i] = r.IntN(2) == 0
		f.Dated[i] = r.IntN(5) == 0
		f.Counted[i] = r.IntN(7) == 0
	}
	return f
}

func TestRelevanceAndScoreMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tu := DefaultTuning()
	for trial := range 200 {
		f := randomFeatures(r, 1+r.IntN(300), 1+r.IntN(20))
		switch trial % 4 {
		case 1:
			f.Dense = nil
		case 2:
			f.Speaker, f.Dated, f.Counted = nil, nil, nil
		case 3:
			f.Event = nil
		}
		want := refRelevance(tu, f)
		got := tu.relevance(f)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: relevance differs", trial)
		}
		if !slices.Equal(tu.score(f, got), refScore(tu, f, want)) {
			t.Fatalf("trial %d: score differs", trial)
		}
	}
}

// TestRelevanceBound checks that the bound pass's relevance bound
// (relevanceBound, by multiplications) is at least Relevance, for the
// same cosine and for every smaller cosine under a scale whose best cosine
// is at least the bound's, on random and edge values.
func TestRelevanceBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200000 {
		tu := DefaultTuning()
		if trial%3 == 0 {
			tu.DenseWeight = r.Float64() * 3
		}
		s := Scale{Mean: r.Float64()*0.6 - 0.2}
		if trial%5 != 0 {
			s.MaxLex = r.Float64() * 20
		}
		s.MaxD = s.Mean + r.Float64()*0.8 + 1e-9
		lex := 0.0
		if r.IntN(3) != 0 {
			lex = r.Float64() * s.MaxLex
		}
		if trial%7 == 0 {
			lex = s.MaxLex
		}
		d := r.Float64()*2 - 1
		switch trial % 11 {
		case 0:
			d = s.Mean
		case 1:
			d = s.MaxD
		case 2:
			d = math.Nextafter(s.Mean, 2)
		}
		b := relBound(tu, s)
		hi := b.of(lex, d)
		if want := tu.Relevance(lex, d, s); hi < want {
			t.Fatalf("trial %d: bound %v below relevance %v (lex %v, d %v, scale %+v)", trial, hi, want, lex, d, s)
		}
		exact := s
		exact.MaxD += r.Float64() * 0.1
		if want := tu.Relevance(lex, d-r.Float64()*0.1, exact); hi < want {
			t.Fatalf("trial %d: bound %v below relevance %v under a larger best cosine", trial, hi, want)
		}
	}
}
