package offline

import (
	"math"
	"slices"
	"testing"
)

// stats returns the speaker stats of units said by speakers with so many
// words each.
func stats(speakers []int32, words []int32) *SpeakerStats {
	var s SpeakerStats
	for i, sp := range speakers {
		s.Add(sp, words[i])
	}
	return &s
}

func TestShapeOfDevShapesDoesNotAdapt(t *testing.T) {
	// Two people taking turns with messages of similar length (LoCoMo),
	// and six speakers of whom two say a third (FriendsQA), whatever
	// their lengths: the tuning is the base one, unchanged.
	var sp, w []int32
	for i := range 200 {
		sp = append(sp, int32(i%2))
		w = append(w, int32(10+i%2*5+i%7))
	}
	if g := stats(sp, w).Shape().Assist(); g != 0 {
		t.Errorf("two people, similar lengths: Assist = %v, want 0", g)
	}
	sp, w = nil, nil
	for i := range 300 {
		sp = append(sp, int32(i%6))
		w = append(w, int32(3+i%6*20))
	}
	sh := stats(sp, w).Shape()
	if g := sh.Assist(); g != 0 {
		t.Errorf("six speakers: Assist = %v (shape %+v), want 0", g, sh)
	}
	tu := DefaultTuning()
	if got := tu.Adapt(sh); got != tu || got.Adapted() {
		t.Errorf("Adapt changed the tuning of a dev shape: %+v", got)
	}
}

func TestShapeOfUserAssistant(t *testing.T) {
	// A user of short messages (30 words), an assistant of long ones
	// (300): the shape is the assistant chat's, the terse side the user.
	var sp, w []int32
	for i := range 100 {
		sp = append(sp, int32(i%2))
		w = append(w, int32(30+i%2*270))
	}
	sh := stats(sp, w).Shape()
	if sh.Terse != 0 || sh.Assist() != 1 || math.Abs(sh.Ratio-math.Exp(math.Log(301)-math.Log(31))) > 1e-9 {
		t.Fatalf("shape %+v (Assist %v), want terse 0, Assist 1", sh, sh.Assist())
	}
	tu := DefaultTuning().Adapt(sh)
	a := DefaultAssistant()
	if !tu.Adapted() || tu.WindowWeight != a.WindowWeight || tu.TerseBump != a.TerseBump || tu.MinK != a.MinK {
		t.Errorf("adapted tuning %+v, want the assistant weights %+v", tu, a)
	}
	// Half way between the bounds, half way between the weights.
	half := Shape{TwoParty: 1, Ratio: (shapeRatioLo + shapeRatioHi) / 2, Terse: 0}
	if got, want := DefaultTuning().Adapt(half).TerseBump, (1+a.TerseBump)/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("half-way TerseBump %v, want %v", got, want)
	}
}

func TestRolesBumpTerseAndOpeningUnits(t *testing.T) {
	// Four units of one session and relevance 1 each except unit 3: the
	// terse side's units (0, 2) gain TerseBump, the opener (0) OpenBump too.
	tu := testTuning
	tu.TerseBump, tu.OpenBump = 2, 3
	tu.Prev, tu.PrevQuestion, tu.Next, tu.NextQuestion, tu.Far, tu.EventShare = 0, 0, 0, 0, 0, 0
	f := features(1, 1, 1, 1)
	base := tu.score(f, tu.relevance(f))
	f.Role = RolesInto(nil, []int32{0, 1, 0, 1}, f.SameSession, 0)
	got := tu.score(f, tu.relevance(f))
	want := []float64{base[0] * 6, base[1], base[2] * 2, base[3]}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("unit %d: score %v, want %v (roles %v)", i, got[i], want[i], f.Role)
		}
	}
}

func TestLexLenPowAndPassages(t *testing.T) {
	// Two units matching the question's words equally, of 10 and 1000
	// words: normalised for length, the short one ranks first; a passage
	// cosine above a unit's own raises its dense part.
	tu := testTuning
	tu.DenseWeight = 0
	f := features(2, 2)
	f.Words = []int32{10, 1000}
	if r := tu.relevance(f); r[0] != r[1] {
		t.Fatalf("without LexLenPow: %v, want equal", r)
	}
	tu.LexLenPow = 0.5
	if r := tu.relevance(f); !(r[0] > r[1]) || r[0] != 1 {
		t.Errorf("with LexLenPow: %v, want the short unit first at 1", r)
	}
}

func TestSessionShare(t *testing.T) {
	// Two sessions of three units; the best relevance of session 1 is
	// unit 1's: under SessionShare every unit of session 1 gains a share
	// of it, those of session 2 of their own session's best.
	tu := testTuning
	tu.Prev, tu.PrevQuestion, tu.Next, tu.NextQuestion, tu.Far, tu.EventShare = 0, 0, 0, 0, 0, 0
	f := features(0.2, 1, 0, 0.5, 0, 0)
	f.SameSession[3] = false
	rel := tu.relevance(f)
	base := tu.score(f, rel)
	tu.SessionShare = 0.5
	got := tu.score(f, rel)
	sb := []float64{rel[1], rel[1], rel[1], rel[3], rel[3], rel[3]}
	for i := range got {
		if want := base[i] + 0.5*sb[i]; math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("unit %d: score %v, want %v", i, got[i], want)
		}
	}
}

// TestTopWeighsRoles: the unit a selection always holds (Selection.Top) is
// the most relevant one, except where the shape weighs roles: there the
// user's turn that nearly matches as well as the assistant's reply is it
// (relevance times the role factor, as its score counts it), so that the
// assistant's reply does not take the place of a user turn the scorer
// chose. The base tuning (no roles) keeps the most relevant unit.
func TestTopWeighsRoles(t *testing.T) {
	// Ten units of one session, user (0) and assistant (1) in turn; the
	// assistant's unit 5 matches best, the user's unit 4 next.
	lex := []float64{0, 0, 0, 0, 0.8, 1, 0, 0, 0, 0}
	sp := make([]int32, len(lex))
	for i := range sp {
		sp[i] = int32(i % 2)
	}
	sel := func(tu Tuning) Selection {
		f := features(lex...)
		if tu.Adapted() {
			f.Role = RolesInto(nil, sp, f.SameSession, 0)
		}
		in := &Input{Tuning: tu, Units: len(lex), KTurn: 10, Features: func(bool) *Features { return f }}
		var sc Scratch
		return Select(in, &sc)
	}
	base := sel(DefaultTuning())
	if base.Top != 5 || base.Search[0] != 5 {
		t.Errorf("base tuning: Top %d (search %v), want the most relevant unit 5", base.Top, base.Search)
	}
	ua := sel(DefaultTuning().Adapt(Shape{TwoParty: 1, Ratio: 5, Terse: 0}))
	if ua.Search[0] != 5 || ua.Top != 4 {
		t.Errorf("user–assistant: Top %d (search %v), want the user's unit 4", ua.Top, ua.Search)
	}
	lex = make([]float64, len(lex))
	if z := sel(DefaultTuning()); z.Top != -1 {
		t.Errorf("nothing matches: Top %d, want -1", z.Top)
	}
	if z := sel(DefaultTuning().Adapt(Shape{TwoParty: 1, Ratio: 5, Terse: 0})); z.Top != -1 {
		t.Errorf("user–assistant, nothing matches: Top %d, want -1", z.Top)
	}
}

// TestChosenKeepsTop: Top takes the last place when the first K miss it,
// K unchanged, Ranked untouched; nothing moves when they hold it.
func TestChosenKeepsTop(t *testing.T) {
	s := Selection{Ranked: []int{7, 3, 9, 1}, K: 3, Top: 1}
	got, replaced := s.Chosen()
	if !slices.Equal(got, []int{7, 3, 1}) || replaced != 9 || !slices.Equal(s.Ranked, []int{7, 3, 9, 1}) {
		t.Errorf("Chosen %v replaced %d (ranked %v), want [7 3 1] replaced 9", got, replaced, s.Ranked)
	}
	for _, top := range []int{3, -1} {
		s.Top = top
		if got, replaced := s.Chosen(); !slices.Equal(got, []int{7, 3, 9}) || replaced != -1 {
			t.Errorf("Top %d: Chosen %v replaced %d, want [7 3 9] and -1", top, got, replaced)
		}
	}
}

// TestPassageMix: PassageDense and PassageLex mix a long unit's best
// passage scores into its own; units without passages (0) and the base
// tuning (shares 0) are unchanged.
func TestPassageMix(t *testing.T) {
	tu := testTuning
	f := features(2, 1, 0)
	f.Dense = []float64{0.2, 0.5, 0.4}
	f.PassageLex = []float64{0, 3, 0}
	f.PassageDense = []float64{0, 0.9, 0}
	base := tu.relevance(f)
	if g := tu.adjusted(f); g != f {
		t.Fatalf("shares 0: features copied")
	}
	tu.PassageDense, tu.PassageLex = 0.5, 0.25
	g := tu.adjusted(f)
	if g.Dense[0] != 0.2 || g.Dense[2] != 0.4 || math.Abs(g.Dense[1]-0.7) > 1e-12 {
		t.Errorf("dense %v, want [0.2 0.7 0.4]", g.Dense)
	}
	if g.Lex[0] != 2 || g.Lex[2] != 0 || math.Abs(g.Lex[1]-1.5) > 1e-12 {
		t.Errorf("lex %v, want [2 1.5 0]", g.Lex)
	}
	if f.Dense[1] != 0.5 || f.Lex[1] != 1 {
		t.Errorf("the caller's features changed: %v %v", f.Dense, f.Lex)
	}
	if r := tu.relevance(f); r[1] <= base[1] {
		t.Errorf("unit 1's relevance %v, want above %v (its passage matches better)", r[1], base[1])
	}
	// The base tuning adapts to nothing on a dev shape: no share.
	if b := DefaultTuning(); b.PassageDense != 0 || b.PassageLex != 0 {
		t.Errorf("base tuning mixes passages: %v %v", b.PassageDense, b.PassageLex)
	}
}
