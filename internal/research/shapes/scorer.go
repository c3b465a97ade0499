package shapes

import (
	"fmt"
	"strings"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/vec"
)

// The engine's window (window.go): the turns before a turn in its
// session, nearest first, while they hold fewer than windowWords words,
// at most windowTurns.
const (
	windowWords = 30
	windowTurns = 4
)

// windowTexts returns the engine's window text of every unit.
func windowTexts(c *Conv) []string {
	out := make([]string, len(c.Units))
	for i := range c.Units {
		start, w := i, 0
		for start > 0 && i-start < windowTurns && w < windowWords && c.Units[start-1].Session == c.Units[i].Session {
			start--
			w += c.Units[start].Words
		}
		var b strings.Builder
		for j := start; j <= i; j++ {
			if j > start {
				b.WriteByte('\n')
			}
			b.WriteString(c.Units[j].Speaker + ": " + strings.TrimSpace(c.Units[j].Text))
		}
		out[i] = b.String()
	}
	return out
}

// WinCos returns the cosine of the question with every unit's window
// vector.
func WinCos(q *Question) []float64 {
	out := make([]float64, len(q.Conv.Units))
	for i, v := range q.Conv.WinVec {
		out[i] = float64(vec.Dot(q.Vector, v))
	}
	return out
}

// ShapeOf returns the conversation's shape as the engine computes it.
func ShapeOf(c *Conv) offline.Shape {
	var st offline.SpeakerStats
	for _, u := range c.Units {
		st.Add(c.speakerIndex(u.Speaker), int32(u.Words))
	}
	return st.Shape()
}

func (c *Conv) speakerIndex(sp string) int32 {
	if c.speakers == nil {
		c.speakers = map[string]int32{}
	}
	sp = strings.ToLower(sp)
	id, ok := c.speakers[sp]
	if !ok {
		id = int32(len(c.speakers))
		c.speakers[sp] = id
	}
	return id
}

// Variant says what a candidate scorer reads besides the tuning.
type Variant struct {
	// Passages gives the scorer each unit's best passage cosine.
	Passages bool
	// KeepStage keeps the learned stage where the tuning was adapted
	// (the engine drops it there).
	KeepStage bool
	// Shape, when set, replaces the conversation's own shape.
	Shape *offline.Shape
	// KeepTop is the rule of the turn always kept (KeepTopEngine, the
	// zero value: the engine's).
	KeepTop KeepTop
}

// KeepTop is how the replay keeps the turn issue 32 (2) always keeps.
type KeepTop int

const (
	// KeepTopEngine is the engine's rule (offline.Selection.Chosen:
	// Top, which weighs roles in user–assistant chats, takes the place
	// of the last unit chosen).
	KeepTopEngine KeepTop = iota
	// KeepTopNone keeps no turn: the selection is the first K of
	// Ranked, as the replay was before 672e342 (when the ua* weights
	// were fitted).
	KeepTopNone
	// KeepTopPlain keeps the most relevant unit (Search's first, when
	// its relevance is positive) without role weighting: the engine's
	// rule before 672e342.
	KeepTopPlain
)

// ParseKeepTop reads a -keep-top value: engine, none or plain.
func ParseKeepTop(s string) (KeepTop, error) {
	switch s {
	case "engine", "":
		return KeepTopEngine, nil
	case "none":
		return KeepTopNone, nil
	case "plain":
		return KeepTopPlain, nil
	}
	return 0, fmt.Errorf("keep-top %q: want engine, none or plain", s)
}

// FeaturesFor returns the question's features as the engine would score
// them under tu (adapted to the conversation's shape): the window and
// own cosines mixed by tu.WindowWeight, roles and words when adapted.
func FeaturesFor(q *Question, tu offline.Tuning, v Variant) (*offline.Features, offline.Tuning) {
	sh := ShapeOf(q.Conv)
	if v.Shape != nil {
		sh = *v.Shape
	}
	tu = tu.Adapt(sh)
	f := *q.Features
	own, win := q.own(), q.win()
	w := tu.WindowWeight
	f.Dense = make([]float64, len(own))
	for i := range own {
		switch {
		case w >= 1:
			f.Dense[i] = win[i]
		case w <= 0:
			f.Dense[i] = own[i]
		default:
			f.Dense[i] = (1-w)*own[i] + w*win[i]
		}
	}
	f.MeanSet = false
	f.Role, f.Words = nil, nil
	if tu.Adapted() {
		n := len(own)
		sp := make([]int32, n)
		for i, u := range q.Conv.Units {
			sp[i] = q.Conv.speakerIndex(u.Speaker)
			if f.Words == nil {
				f.Words = make([]int32, n)
			}
			f.Words[i] = int32(u.Words)
		}
		f.Role = offline.RolesInto(nil, sp, f.SameSession, sh.Terse)
	}
	if v.Passages && q.Conv.ChunkVec != nil {
		// The research variant "a turn scores as its best passage":
		// the dense feature raised to the best chunk's cosine (the
		// engine hands the same as Features.PassageDense, unweighed).
		pc := q.passage()
		d := make([]float64, len(f.Dense))
		for i, c := range f.Dense {
			d[i] = max(c, pc[i])
		}
		f.Dense = d
	}
	return &f, tu
}

func (q *Question) own() []float64 {
	if q.ownCos == nil {
		q.ownCos = Cos(q)
	}
	return q.ownCos
}

func (q *Question) win() []float64 {
	if q.winCos == nil {
		q.winCos = WinCos(q)
	}
	return q.winCos
}

func (q *Question) passage() []float64 {
	if q.chunkCos == nil {
		q.chunkCos = ChunkMax(q)
	}
	return q.chunkCos
}

// SelectVariant runs the offline scorer on the question under tu and v.
func SelectVariant(q *Question, tu offline.Tuning, stage *offline.Stage, v Variant) []int {
	f, tu := FeaturesFor(q, tu, v)
	if !v.KeepStage && tu.Adapted() {
		stage = nil
	}
	g := *q
	g.Features = f
	return selectWith(&g, tu, stage, v.KeepTop)
}
