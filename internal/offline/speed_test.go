package offline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchFeaturesRuns returns features of n turns shaped like the bench's
// synthetic spaces, with a relevance for each: sessions of 20 turns, the
// speakers taking turns (with a burst now and then when bursts is set),
// events of four turns, a speaker cue on about half the turns.
func benchFeaturesRuns(n int, bursts bool) (*Features, []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	f := randomFeatures(r, n, n/4)
	f.Dated, f.Counted = nil, nil
	speaker, words := make([]int32, n), make([]int32, n)
	for i := range n {
		f.Event[i] = int32(i / 4)
		f.Visible[i] = true
		f.SameSession[i] = i%20 != 0
		speaker[i] = int32(i % 2)
		if r.IntN(8) == 0 && bursts {
			speaker[i] = 1 - speaker[i] // a burst now and then
		}
		words[i] = int32(3 + r.IntN(20))
	}
	withRunWords(f, speaker, words)
	Complete(f) // the cues
	rel := make([]float64, n)
	for i := range rel {
		rel[i] = r.Float64() * 1.5
	}
	return f, rel
}

// BenchmarkScoreRange times the context score formula over 100k turns on
// one core, as the full path runs it and the pruned path's bound pass runs
// it on each part.
func BenchmarkScoreRange(b *testing.B) {
	for _, bursts := range []bool{true, false} {
		name := "bursts"
		if !bursts {
			name = "single"
		}
		b.Run(name, func(b *testing.B) {
			n := 100000
			f, rel := benchFeaturesRuns(n, bursts)
			tu := DefaultTuning()
			best := make([]float64, n/4+1)
			eventBest(f, rel, best)
			var rb RunBests
			rb.Fill(f, rel)
			out := make([]float64, n)
			for b.Loop() {
				tu.ScoreRange(f, rel, out, best, &rb, 0, n)
			}
		})
	}
	// The pruned path's bound pass where every run is one turn, with
	// AVX-512 and AVX2 where the CPU has them, with AVX2 alone and in Go.
	simd, simd512 := useBoundsAVX2, useBoundsAVX512
	defer func() { useBoundsAVX2, useBoundsAVX512 = simd, simd512 }()
	for _, name := range []string{"single-bounds", "single-bounds-avx2", "single-bounds-go"} {
		b.Run(name, func(b *testing.B) {
			useBoundsAVX2 = simd && name != "single-bounds-go"
			useBoundsAVX512 = simd512 && name == "single-bounds"
			n := 100000
			f, rel := benchFeaturesRuns(n, false)
			tu := DefaultTuning()
			best := make([]float64, n/4+1)
			eventBest(f, rel, best)
			out := make([]float64, n)
			for b.Loop() {
				tu.scoreBoundsSingle(f, rel, out, best, 0, n)
			}
		})
	}
}

// TestScoreRangeSingle checks that ScoreRange where every run is one turn
// (scoreRangeSingle) scores bit for bit as its general loop: the same
// features with one more, empty, run at the end take the general loop.
func TestScoreRangeSingle(t *testing.T) {
	n := 5000
	f, rel := benchFeaturesRuns(n, false)
	if len(f.RunStart) != n {
		t.Fatalf("%d runs of %d turns", len(f.RunStart), n)
	}
	r := rand.New(rand.NewPCG(5, 6))
	f.Visible = slices.Clone(f.Visible)
	f.Dated, f.Counted = make([]bool, n), make([]bool, n)
	for i := range n {
		f.Visible[i] = r.IntN(10) != 0
		f.Dated[i], f.Counted[i] = r.IntN(5) == 0, r.IntN(7) == 0
		if !f.Visible[i] {
			rel[i] = 0
		}
	}
	f.Cues = nil
	Complete(f)
	best := make([]float64, n/4+1)
	eventBest(f, rel, best)
	var rb RunBests
	rb.Fill(f, rel)
	tu := DefaultTuning()
	tu.RunShare = 0.8
	single := make([]float64, n)
	argS := tu.ScoreRange(f, rel, single, best, &rb, 0, n)

	g := *f
	g.RunStart = append(slices.Clone(f.RunStart), int32(n))
	g.RunLinks = append(slices.Clone(f.RunLinks), 0)
	g.RunWords = append(slices.Clone(f.RunWords), 0)
	rg := RunBests{best: append(slices.Clone(rb.best), 0), second: append(slices.Clone(rb.second), 0), arg: append(slices.Clone(rb.arg), -1)}
	general := make([]float64, n)
	argG := tu.ScoreRange(&g, rel, general, best, &rg, 0, n)
	for i := range n {
		if math.Float64bits(single[i]) != math.Float64bits(general[i]) {
			t.Fatalf("turn %d: %v, general loop %v", i, single[i], general[i])
		}
	}
	if argS != argG {
		t.Errorf("best turn %d, general loop %d", argS, argG)
	}
	// And a part of the range, as the pruned path scores one turn.
	for _, i := range []int{0, 1, 2, n / 2, n - 2, n - 1} {
		out := make([]float64, n)
		tu.ScoreRange(f, rel, out, best, &rb, i, i+1)
		if math.Float64bits(out[i]) != math.Float64bits(general[i]) {
			t.Errorf("turn %d alone: %v, want %v", i, out[i], general[i])
		}
	}
}

// TestScoreBoundsSingle checks the pruned path's score bounds where every
// run is one turn (scoreBoundsSingle) against the scores themselves
// (scoreRangeSingle, which ScoreRange runs there) on the same relevance:
// never below them, at most a few parts in 10¹² above (the margin), and the
// best bound's turn the first among equals, for every combination of
// cues, events and length prior, over whole ranges and parts of them
// (ends within two of the edges included). It fails when the bound drops
// a factor or a neighbour, or rounds below a score.
func TestScoreBoundsSingle(t *testing.T) {
	simd, simd512 := useBoundsAVX2, useBoundsAVX512
	defer func() { useBoundsAVX2, useBoundsAVX512 = simd, simd512 }()
	for _, mode := range [][2]bool{{false, false}, {simd, false}, {simd, simd512}} {
		useBoundsAVX2, useBoundsAVX512 = mode[0], mode[1]
		testScoreBoundsSingle(t)
	}
}

func testScoreBoundsSingle(t *testing.T) {
	n := 3000
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 64 {
		f, rel, tu, best := boundsTrial(t, r, trial, n)
		want := make([]float64, n)
		tu.scoreRangeSingle(f, rel, want, best, nil, 0, n)
		for _, rg := range [][2]int{{0, n}, {0, 1}, {0, 2}, {0, 3}, {0, 5}, {1, 4}, {2, 7}, {n - 3, n}, {n - 1, n}, {1, n - 1}, {2, n - 2}, {100, 1700}, {1700, n}} {
			lo, hi := rg[0], rg[1]
			got := make([]float64, n)
			arg := tu.scoreBoundsSingle(f, rel, got, best, lo, hi)
			wantArg, top := lo, 0.0
			for i := lo; i < hi; i++ {
				if !(got[i] >= want[i]) || got[i] > want[i]*(1+1e-11) {
					t.Fatalf("AVX2 %v, AVX-512 %v, trial %d, range %v: turn %d bound %v, score %v", useBoundsAVX2, useBoundsAVX512, trial, rg, i, got[i], want[i])
				}
				if got[i] > top {
					wantArg, top = i, got[i]
				}
			}
			if arg != wantArg {
				t.Fatalf("AVX2 %v, AVX-512 %v, trial %d, range %v: best bound at %d, want %d", useBoundsAVX2, useBoundsAVX512, trial, rg, arg, wantArg)
			}
		}
	}
}

// boundsTrial returns the features, relevance, tuning and event bests of
// trial (0 to 63) of testScoreBoundsSingle: every combination of cues,
// events and length prior, on n turns that are each one run.
func boundsTrial(t testing.TB, r *rand.Rand, trial, n int) (*Features, []float64, Tuning, []float64) {
	f, rel := benchFeaturesRuns(n, false)
	f.Visible = slices.Clone(f.Visible)
	f.Speaker, f.Dated, f.Counted = make([]bool, n), make([]bool, n), make([]bool, n)
	f.Question = slices.Clone(f.Question)
	for i := range n {
		f.Visible[i] = r.IntN(10) != 0
		f.Speaker[i], f.Dated[i], f.Counted[i] = r.IntN(2) == 0, r.IntN(5) == 0, r.IntN(7) == 0
		f.Question[i] = r.IntN(4) == 0
		f.SameSession[i] = i > 0 && r.IntN(6) != 0
		if r.IntN(9) == 0 {
			f.Event[i] = -1 // no event: no share
		}
		switch r.IntN(4) {
		case 0:
			rel[i] = 0
		case 1:
			rel[i] = float64(r.IntN(4)) / 2 // ties
		}
	}
	if trial&1 != 0 {
		f.Speaker = nil
	}
	if trial&2 != 0 {
		f.Dated = nil
	}
	if trial&4 != 0 {
		f.Counted = nil
	}
	// Runs of one turn again, with the new sessions and questions.
	speaker, words := make([]int32, n), make([]int32, n)
	for i := range n {
		speaker[i], words[i] = int32(i%2), int32(r.IntN(700)) // beyond the length table too
	}
	withRunWords(f, speaker, words)
	f.Cues = nil
	Complete(f)
	if len(f.RunStart) != n {
		t.Fatalf("%d runs of %d turns", len(f.RunStart), n)
	}
	tu := DefaultTuning()
	tu.QuestionBump = []float64{0.85, 0, 1.2}[trial%3]
	if trial%3 != 0 {
		// Every factor pair of two values, so that a kernel reading
		// the wrong bit (or the wrong pair) picks another factor: the
		// default Next and NextQuestion are equal.
		tu.NextQuestion, tu.Far = 0.7, 0.35
	}
	if trial&8 != 0 {
		tu.LengthPow = 0
	}
	var best []float64
	if trial&16 == 0 {
		best = make([]float64, (n-1)/4+1) // the last event's best last (the kernel clamps to it)
		eventBest(f, rel, best)
	} else {
		tu.EventShare = 0
	}
	if trial&32 != 0 {
		f.RunWords = nil
	}
	return f, rel, tu, best
}

// TestSinglesMatchesUnits checks the first bound pass where every run is
// one turn (singles, with AVX-512 and AVX2 where the CPU has them, and
// singlesGo) against its general loop (units): the same relevance bounds
// and event bests bit for bit and the same rows listed, in order, on parts
// of every length mod 8, with events and without, bounds reaching maxLo or
// not, each event owned or not (listed in over, in order), events at
// random or mostly in runs of consecutive units.
func TestSinglesMatchesUnits(t *testing.T) {
	simd, simd512 := useBoundsAVX2, useBoundsAVX512
	defer func() { useBoundsAVX2, useBoundsAVX512 = simd, simd512 }()
	r := rand.New(rand.NewPCG(11, 12))
	n, ne := 1000, 90
	for trial := range 40 {
		est, bound, lex := make([]float64, n), make([]float64, n), make([]float64, n)
		events := make([]int32, n)
		for i := range n {
			est[i], bound[i] = r.Float64()*1.2-0.4, r.Float64()*0.05
			if r.IntN(3) == 0 {
				lex[i] = r.Float64() * 9
			}
			events[i] = int32(r.IntN(ne+8) - 8) // some -1 and below
			if trial%2 == 1 && r.IntN(30) != 0 {
				// Mostly runs of consecutive units (AVX-512's
				// segmented max), some spread.
				events[i] = int32(min(i/12+r.IntN(2)*(i%5/4), ne-1))
			}
			if events[i] < 0 {
				events[i] = -1
			}
		}
		tu := DefaultTuning()
		s := Scale{MaxLex: 9, Mean: 0.1 * float64(trial%3), MaxD: 0.7}
		if trial%5 == 0 {
			s.MaxLex = 0
		}
		maxLo := []float64{0.5, 0.75, 2}[trial%3]
		for range 30 {
			// Bounds at maxLo itself (listed) and at the mean.
			i := r.IntN(n)
			est[i], bound[i] = []float64{maxLo, s.Mean}[i%2], 0
		}
		a := r.IntN(20)
		b := a + trial*20 + r.IntN(8)
		b = min(b, n)
		// The events owned: all, none, or a range.
		eLo, eHi := int32(0), int32(ne)
		switch trial % 4 {
		case 1:
			eHi = 0
		case 2, 3:
			eLo = int32(r.IntN(ne))
			eHi = eLo + int32(r.IntN(ne+1-int(eLo)))
		}
		part := func(withEvents bool) boundPart {
			bp := boundPart{hi: upperSum(est, bound), lex: lex, relHi: make([]float64, n), maxLo: maxLo, rb: relBound(tu, s), top: []int{-7}}
			if withEvents {
				bp.events, bp.eb, bp.eLo, bp.eHi, bp.over = events, make([]float64, ne), eLo, eHi, []int{-3}
			}
			return bp
		}
		for _, withEvents := range []bool{true, false} {
			want := part(withEvents)
			want.units(a, b, false)
			for _, mode := range [][2]bool{{false, false}, {simd, false}, {simd, simd512}} {
				useBoundsAVX2, useBoundsAVX512 = mode[0], mode[1]
				got := part(withEvents)
				got.singles(a, b)
				for i := range n {
					if math.Float64bits(got.relHi[i]) != math.Float64bits(want.relHi[i]) {
						t.Fatalf("AVX2, AVX-512 %v, trial %d [%d, %d): unit %d bound %v, units %v", mode, trial, a, b, i, got.relHi[i], want.relHi[i])
					}
				}
				if !slices.Equal(got.top, want.top) {
					t.Fatalf("AVX2, AVX-512 %v, trial %d [%d, %d): rows %v, units %v", mode, trial, a, b, got.top, want.top)
				}
				if !slices.Equal(got.over, want.over) {
					t.Fatalf("AVX2, AVX-512 %v, trial %d [%d, %d), events [%d, %d) owned: listed %v, units %v", mode, trial, a, b, eLo, eHi, got.over, want.over)
				}
				for e := range got.eb {
					if math.Float64bits(got.eb[e]) != math.Float64bits(want.eb[e]) {
						t.Fatalf("AVX2, AVX-512 %v, trial %d [%d, %d): event %d best %v, units %v", mode, trial, a, b, e, got.eb[e], want.eb[e])
					}
				}
			}
		}
	}
}

// BenchmarkSingles times the first bound pass over 100k one-turn runs with
// events (the pruned path's relevance bounds), on one core.
func BenchmarkSingles(b *testing.B) {
	n := 100000
	r := rand.New(rand.NewPCG(13, 14))
	est, bound, lex := make([]float64, n), make([]float64, n), make([]float64, n)
	events := make([]int32, n)
	for i := range n {
		est[i], bound[i] = r.Float64()*1.2-0.4, r.Float64()*0.05
		if r.IntN(10) == 0 {
			lex[i] = r.Float64() * 9
		}
		events[i] = int32(i / 4)
	}
	bp := boundPart{hi: upperSum(est, bound), lex: lex, relHi: make([]float64, n), events: events, eb: make([]float64, n/4), eHi: int32(n / 4),
		maxLo: 0.75, rb: relBound(DefaultTuning(), Scale{MaxLex: 9, Mean: 0.1, MaxD: 0.7})}
	simd, simd512 := useBoundsAVX2, useBoundsAVX512
	defer func() { useBoundsAVX2, useBoundsAVX512 = simd, simd512 }()
	for _, mode := range [][2]bool{{false, false}, {simd, false}, {simd, simd512}} {
		useBoundsAVX2, useBoundsAVX512 = mode[0], mode[1]
		b.Run(fmt.Sprintf("avx2=%v/avx512=%v", useBoundsAVX2, useBoundsAVX512), func(b *testing.B) {
			for b.Loop() {
				bp.top = bp.top[:0]
				bp.singles(0, n)
			}
		})
	}
}

// TestListAtLeastAndMaxAbove checks listAtLeast and MaxAbove (AVX2 where
// the CPU has it, and Go) against their plain loops on every length up to
// 40, with values at the floor, NaN, -0 and +Inf among them.
func TestListAtLeastAndMaxAbove(t *testing.T) {
	simd := useBoundsAVX2
	defer func() { useBoundsAVX2 = simd }()
	r := rand.New(rand.NewPCG(15, 16))
	special := []float64{0.5, math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), -1}
	for trial := range 400 {
		xs := make([]float64, trial%41)
		for i := range xs {
			xs[i] = r.Float64()
			if r.IntN(4) == 0 {
				xs[i] = special[r.IntN(len(special))]
			}
		}
		if trial%7 == 0 {
			for i := range xs {
				xs[i] = -xs[i] // none above 0
			}
		}
		floor, lo := 0.5, r.IntN(100)
		var want []int
		m := 0.0
		for i, x := range xs {
			if x >= floor {
				want = append(want, lo+i)
			}
			if x > m {
				m = x
			}
		}
		for _, useBoundsAVX2 = range []bool{false, simd} {
			if got := listAtLeast(xs, floor, lo, []int{-3}); !slices.Equal(got, append([]int{-3}, want...)) {
				t.Fatalf("AVX2 %v, %v: listed %v, want %v", useBoundsAVX2, xs, got, want)
			}
			if got := MaxAbove(xs); math.Float64bits(got) != math.Float64bits(m) {
				t.Fatalf("AVX2 %v, %v: max %v, want %v", useBoundsAVX2, xs, got, m)
			}
		}
	}
}

// TestSinglesNoEventBests checks singles where the events are set but no
// event has a best (every unit without one): the Go loop's values, no
// panic.
func TestSinglesNoEventBests(t *testing.T) {
	n := 64
	est, bound, lex := make([]float64, n), make([]float64, n), make([]float64, n)
	events := slices.Repeat([]int32{-1}, n)
	for i := range n {
		est[i], bound[i], lex[i] = float64(i)/float64(n), 0.01, float64(i%3)
	}
	rb := relBound(DefaultTuning(), Scale{MaxLex: 2, Mean: 0.2, MaxD: 1})
	want := boundPart{hi: upperSum(est, bound), lex: lex, relHi: make([]float64, n), events: events, eb: []float64{}, maxLo: 0.9, rb: rb}
	want.units(0, n, false)
	got := boundPart{hi: upperSum(est, bound), lex: lex, relHi: make([]float64, n), events: events, eb: []float64{}, maxLo: 0.9, rb: rb}
	got.singles(0, n)
	if !slices.Equal(got.relHi, want.relHi) || !slices.Equal(got.top, want.top) {
		t.Fatalf("bounds %v rows %v, units %v %v", got.relHi, got.top, want.relHi, want.top)
	}
}

// upperSum returns est[i]+bound[i] for each i, the cosines' upper bounds
// of a boundPart.
func upperSum(est, bound []float64) []float64 {
	hi := make([]float64, len(est))
	for i, e := range est {
		hi[i] = e + bound[i]
	}
	return hi
}

// TestRelevanceBoundsEventBests checks the event bests of the first bound
// pass, and with AVX-512 its lists of the units reaching each part's
// preAt (the first tier of topRelevance, relAtLeast), on several parts (each owning a range of events, the units of other
// events merged after): every event's best relevance bound, bit for bit,
// cleared from stale values, where most events are a few consecutive
// units, some are spread over the space or never used and some units have
// none; one-turn runs (singles, with AVX-512 and AVX2 where the CPU has
// them, and in Go) and longer runs (units).
func TestRelevanceBoundsEventBests(t *testing.T) {
	simd, simd512 := useBoundsAVX2, useBoundsAVX512
	defer func() { useBoundsAVX2, useBoundsAVX512 = simd, simd512 }()
	r := rand.New(rand.NewPCG(21, 22))
	tu := DefaultTuning()
	listed, prelisted := 0, 0
	for trial := range 12 {
		n := 2000 + r.IntN(900)
		ne := n/3 + 5
		f := &Features{Lex: make([]float64, n), Event: make([]int32, n), Question: make([]bool, n), SameSession: make([]bool, n)}
		hi := make([]float64, n)
		for i := range n {
			hi[i] = r.Float64()*1.2 - 0.4
			if r.IntN(3) == 0 {
				f.Lex[i] = r.Float64() * 9
			}
			switch k := r.IntN(40); {
			case k == 0:
				f.Event[i] = -1
			case k == 1:
				f.Event[i] = int32(r.IntN(ne)) // spread
			default:
				f.Event[i] = int32(min(i/3+r.IntN(2), ne-1))
			}
		}
		if trial%3 == 2 {
			// Runs of one to three turns.
			f.Run, f.RunAsks = make([]int32, n), make([]bool, 0, n)
			for i := 0; i < n; {
				f.RunStart, f.RunAsks = append(f.RunStart, int32(i)), append(f.RunAsks, false)
				for j := i + 1 + r.IntN(3); i < min(j, n); i++ {
					f.Run[i] = int32(len(f.RunStart) - 1)
				}
			}
		}
		Complete(f)
		s := Scale{MaxLex: 9, Mean: 0.1, MaxD: 0.7}
		want := make([]float64, ne)
		rb := relBound(tu, s)
		for i, e := range f.Event {
			if e >= 0 {
				want[e] = max(want[e], rb.of(f.Lex[i], hi[i]))
			}
		}
		for _, mode := range [][2]bool{{false, false}, {simd, false}, {simd, simd512}} {
			useBoundsAVX2, useBoundsAVX512 = mode[0], mode[1]
			sc := new(Scratch)
			fs := &fastScan{in: &Input{Chunk: 300 + 100*(trial%4)}, tu: tu, sc: sc, f: f, n: n, hi: hi, maxLo: 0.5, bestHi: slices.Repeat([]float64{7}, ne)}
			relTier = []int{256, 16, 1 << 20}[trial%3]
			_, parts := fs.relevanceBounds(s)
			relTier = 256
			for e := range want {
				if math.Float64bits(fs.bestHi[e]) != math.Float64bits(want[e]) {
					t.Fatalf("AVX2, AVX-512 %v, trial %d (%d parts): event %d best %v, want %v", mode, trial, parts, e, fs.bestHi[e], want[e])
				}
			}
			// The lists of the units at or above each part's preAt
			// (one-turn runs, AVX-512, sampled tiers), at or below the
			// split of topRelevance's samples, and relAtLeast's lists.
			if mode[1] && len(f.RunStart) == n && trial%3 != 2 {
				per := (n + parts - 1) / parts
				relTier = []int{256, 16}[trial%3]
				split := splitOf(fs.relHi, math.Inf(-1), relTier)
				relTier = 256
				for p := range parts {
					lo, hi := p*per, min((p+1)*per, n)
					if !sc.relPreOK[p] || !(sc.relPreAt[p] <= split) {
						t.Fatalf("trial %d part %d: listed %v, from %v, split %v", trial, p, sc.relPreOK[p], sc.relPreAt[p], split)
					}
					if want := listAtLeast(fs.relHi[lo:hi], sc.relPreAt[p], lo, nil); !slices.Equal(sc.relPre[p], want) {
						t.Fatalf("trial %d part %d: %d listed at least %v, want %d", trial, p, len(sc.relPre[p]), sc.relPreAt[p], len(want))
					}
				}
				prelisted++
			}
			for _, floor := range []float64{0, 0.3, fs.relHi[r.IntN(n)], sc.relPreAt[0], sc.relPreAt[0] * 1.01, math.Inf(1), math.NaN()} {
				got := fs.relAtLeast(floor, []int{-1})
				want := fs.atLeast(fs.relHi, floor, []int{-1})
				if !slices.Equal(got, want) {
					t.Fatalf("AVX2, AVX-512 %v, trial %d: %d listed at least %v, want %d", mode, trial, len(got), floor, len(want))
				}
			}
			for _, over := range sc.over[:parts] {
				listed += len(over)
			}
		}
	}
	if listed == 0 {
		t.Error("no unit of an event another part owns")
	}
	if useBoundsAVX512 && prelisted == 0 {
		t.Error("no lists of the bound pass checked")
	}
}

// BenchmarkScoreBoundsSingle times the second bound pass over 100k
// one-turn runs (scoreBoundsSingle with every cue, events and the length
// prior, no run past the length table), on one core, with the kernels the
// CPU has.
func BenchmarkScoreBoundsSingle(b *testing.B) {
	n := 100000
	f, rel, tu, best := boundsTrial(b, rand.New(rand.NewPCG(15, 16)), 0, n)
	for i := range f.RunWords {
		f.RunWords[i] %= lengthTableSize
	}
	out := make([]float64, n)
	for b.Loop() {
		tu.scoreBoundsSingle(f, rel, out, best, 0, n)
	}
}
