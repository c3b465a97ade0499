package shapes

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
)

// TestPassagesAreTheEngines: the research loop's passages of a turn are
// the engine's (internal/passage.Split), trimmed, covering the text.
func TestPassagesAreTheEngines(t *testing.T) {
	if got := Passages(strings.Repeat("w ", passage.MinWords)); got != nil {
		t.Errorf("a turn of %d words: %d passages, want none", passage.MinWords, len(got))
	}
	text := strings.TrimSpace(strings.Repeat("Some words of a long reply here. ", 60))
	got := Passages(text)
	spans := passage.Split(text)
	if len(got) < 2 || len(got) != len(spans) {
		t.Fatalf("%d passages, want the engine's %d (at least 2)", len(got), len(spans))
	}
	words := 0
	for k, p := range got {
		if p != spans[k].Text(text) || p != strings.TrimSpace(p) {
			t.Errorf("passage %d is %q, want the engine's %q", k, p, spans[k].Text(text))
		}
		words += len(strings.Fields(p))
	}
	if words != len(strings.Fields(text)) {
		t.Errorf("the passages hold %d words, the text %d", words, len(strings.Fields(text)))
	}
}

func TestWindowTexts(t *testing.T) {
	// The engine's window: turns before in the session, nearest first,
	// while they hold fewer than 30 words, at most 4.
	c := &Conv{Units: []Unit{
		{Speaker: "A", Text: "hi", Words: 1, Session: 1},
		{Speaker: "B", Text: strings.TrimSpace(strings.Repeat("x ", 40)), Words: 40, Session: 1},
		{Speaker: "A", Text: "ok", Words: 1, Session: 1},
		{Speaker: "B", Text: "new", Words: 1, Session: 2},
	}}
	w := windowTexts(c)
	if w[0] != "A: hi" || w[2] != "B: "+c.Units[1].Text+"\nA: ok" || w[3] != "B: new" {
		t.Errorf("windows %q", w)
	}
}

func TestScore(t *testing.T) {
	var s Score
	s.Add([]int{1, 2, 3, 4}, []int{2, 9})
	s.Add([]int{5}, []int{-1})
	m := s.Mean()
	if math.Abs(m.R-0.25) > 1e-12 || math.Abs(m.P-0.125) > 1e-12 || m.K != 2.5 {
		t.Errorf("mean %+v, want R 0.25 P 0.125 K 2.5", m)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("Hey Mel! Good to see you. How are you?")
	if len(got) != 3 || got[1] != "Good to see you." {
		t.Errorf("%q", got)
	}
}

// TestPinnedGridIsTheFitsBefore: pinning the passage levers leaves the
// grid (and so the random starts) of the fit that gave the ua* weights,
// before they existed; an unknown name does not pin nothing.
func TestPinnedGridIsTheFitsBefore(t *testing.T) {
	var got []string
	for _, g := range gridWithout([]string{"PassageDense", "PassageLex"}) {
		got = append(got, g.name)
	}
	want := []string{"WindowWeight", "DenseWeight", "TerseBump", "OpenBump", "LexLenPow", "LengthPow", "Next",
		"EventShare", "KeepRatio", "MinK", "MaxK", "SessionShare"}
	if !slices.Equal(got, want) {
		t.Errorf("pinned grid %v, want %v", got, want)
	}
	if n := len(gridWithout(nil)); n != len(grid) {
		t.Errorf("nothing pinned: %d weights, want %d", n, len(grid))
	}
	defer func() {
		if recover() == nil {
			t.Error("pinning an unknown weight did not panic")
		}
	}()
	gridWithout([]string{"PassageDens"})
}

// TestKeepTop: the replay's rules of the turn always kept. In a
// user–assistant chat where the assistant's reply (5) is the most
// relevant and the user's turn (4) nearly as relevant, at K 1: the engine
// keeps the user's turn (roles weighed), plain the reply, none the first
// ranked.
func TestKeepTop(t *testing.T) {
	lex := []float64{0, 0, 0, 0, 0.8, 1, 0, 0, 0, 0}
	n := len(lex)
	f := &offline.Features{Lex: lex, Visible: make([]bool, n), SameSession: make([]bool, n), Question: make([]bool, n), Event: make([]int32, n)}
	sp := make([]int32, n)
	for i := range n {
		f.Visible[i], f.SameSession[i], f.Event[i], sp[i] = true, i > 0, -1, int32(i%2)
	}
	tu := offline.DefaultTuning()
	tu.Assist.MinK, tu.Assist.MaxK = 1, 1
	tu = tu.Adapt(offline.Shape{TwoParty: 1, Ratio: 5, Terse: 0})
	f.Role = offline.RolesInto(nil, sp, f.SameSession, 0)
	q := &Question{Features: f}
	in := &offline.Input{Tuning: tu, Units: n, KTurn: 10, Features: func(bool) *offline.Features { return f }}
	var sc offline.Scratch
	sel := offline.Select(in, &sc)
	if sel.K != 1 || sel.Search[0] != 5 || sel.Top != 4 {
		t.Fatalf("K %d search %v top %d: want K 1, the reply 5 most relevant, the user's 4 kept", sel.K, sel.Search, sel.Top)
	}
	chosen, _ := sel.Chosen()
	for _, c := range []struct {
		keep KeepTop
		want []int
	}{{KeepTopEngine, chosen}, {KeepTopNone, sel.Ranked[:1]}, {KeepTopPlain, []int{5}}} {
		if got := selectWith(q, tu, nil, c.keep); !slices.Equal(got, c.want) {
			t.Errorf("keep-top %d: %v, want %v", c.keep, got, c.want)
		}
	}
	for _, s := range []string{"engine", "none", "plain"} {
		if _, err := ParseKeepTop(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseKeepTop("roles"); err == nil {
		t.Error("ParseKeepTop(roles): no error")
	}
}

// TestSweep: one line per grid value and set, one mean per value, the
// best value; an unknown weight is an error.
func TestSweep(t *testing.T) {
	lex := []float64{0, 0, 0, 0, 0.8, 1, 0, 0, 0, 0}
	n := len(lex)
	c := &Conv{}
	f := &offline.Features{Lex: lex, Visible: make([]bool, n), SameSession: make([]bool, n), Question: make([]bool, n), Event: make([]int32, n)}
	for i := range n {
		f.Visible[i], f.SameSession[i], f.Event[i] = true, i > 0, -1
		u := Unit{Speaker: "user", Words: 5, Session: 1}
		if i%2 == 1 {
			u = Unit{Speaker: "assistant", Words: 80, Session: 1}
		}
		c.Units = append(c.Units, u)
		c.TurnVec, c.WinVec = append(c.TurnVec, []float32{0, 1}), append(c.WinVec, []float32{0, 1})
	}
	if ShapeOf(c).Assist() != 1 {
		t.Fatalf("shape %+v: want a user–assistant chat", ShapeOf(c))
	}
	q := &Question{Conv: c, Features: f, Gold: []int{4}, Vector: []float32{1, 0}}
	var b strings.Builder
	best, err := Sweep(&b, []string{"one"}, [][]*Question{{q}}, offline.DefaultTuning(), nil, Variant{}, "MinK")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4*2+1 || !strings.HasPrefix(lines[len(lines)-1], "sweep MinK best ") || !slices.Contains([]float64{3, 4, 5, 6}, best) {
		t.Errorf("best %g, output:\n%s", best, b.String())
	}
	if _, err := Sweep(&b, nil, nil, offline.DefaultTuning(), nil, Variant{}, "MinKay"); err == nil {
		t.Error("sweep of an unknown weight: no error")
	}
}
