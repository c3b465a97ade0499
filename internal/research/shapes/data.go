package shapes

import (
	"context"
	"fmt"
	"strings"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/eval/locomo/harness"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passage"
	"github.com/higmem/higmem/internal/rules"
)

// Unit is one turn of a conversation as the research loop sees it.
type Unit struct {
	ID, Speaker, Text string
	Session           int // session number
	Words             int
	// User is true for the turns of the conversation's first speaker
	// (speaker_a: the user in a user–assistant chat).
	User bool
	// Chunks are the texts of the turn's passages as the engine cuts them
	// (Passages: internal/passage.Split of the turn's text) when it is
	// longer than passage.MinWords words, else nil.
	Chunks []string
}

// Conv is one conversation, its units in the engine's order.
type Conv struct {
	Set, ID string
	Units   []Unit
	// TurnVec[i] is the vector of unit i (the engine's turn text);
	// ChunkVec[i] those of its chunks.
	TurnVec, WinVec [][]float32
	ChunkVec        [][][]float32

	speakers map[string]int32
}

// Question is one dev question: what the engine scored for it, and what
// the research loop adds.
type Question struct {
	Conv     *Conv
	Text     string
	Category int
	Type     string
	// QuerySession is the session the question is asked in (realmem's
	// query_session; 0 when the file has none: after the last session).
	QuerySession int
	Features     *offline.Features
	Gold         []int
	Vector       []float32
	// Engine is the engine's final evidence (unit indexes) and EngineK
	// its size: offline mode as shipped, token budget included.
	Engine []int

	ownCos, winCos, chunkCos []float64
	rankings                 [][]int
}

// Passages returns the texts of the engine's passages of a turn's text
// (internal/passage.Split, as the engine's passagesOf cuts the turn's
// text), nil when the turn is not long.
func Passages(text string) []string {
	spans := passage.Split(text)
	if spans == nil {
		return nil
	}
	out := make([]string, len(spans))
	for k, sp := range spans {
		out[k] = sp.Text(text)
	}
	return out
}

// TurnText is the engine's text of a turn's vector (turnEmbedText).
func TurnText(speaker, time, content string) string {
	return rules.EmbedForm(speaker, time, strings.TrimSpace(content))
}

// Load ingests every conversation of samples into m (a fresh space each,
// offline mode, as the LoCoMo harness does), asks every question with
// evidence (under ro: RetrieveOptions{} for the engine's defaults), and
// returns the questions with the engine's features and evidence; the turn
// and chunk vectors are embedded with emb.
func Load(ctx context.Context, m *higmem.Memory, emb embed.Embedder, set string, samples []locomo.Sample, qsess map[string]int, chunks bool, ro higmem.RetrieveOptions) ([]*Question, error) {
	var out []*Question
	for si := range samples {
		s := &samples[si]
		sp := higmem.Space{UserID: set + "/" + s.ID}
		c := &Conv{Set: set, ID: s.ID}
		var turnTexts, chunkTexts []string
		for _, sess := range s.Sessions {
			for _, tr := range sess.Turns {
				u := Unit{ID: tr.DiaID, Speaker: tr.Speaker, Text: tr.Content(), Session: sess.N,
					Words: len(strings.Fields(tr.Content())), User: tr.Speaker == s.SpeakerA}
				if chunks {
					u.Chunks = Passages(tr.Text)
				}
				c.Units = append(c.Units, u)
				turnTexts = append(turnTexts, TurnText(tr.Speaker, sess.DateTime, u.Text))
				for _, ch := range u.Chunks {
					chunkTexts = append(chunkTexts, TurnText(tr.Speaker, sess.DateTime, ch))
				}
			}
			if _, err := m.Add(ctx, sp, harness.SessionInputs(sess)); err != nil {
				return nil, fmt.Errorf("%s %s: %w", set, s.ID, err)
			}
		}
		var err error
		if c.TurnVec, err = emb.Embed(ctx, turnTexts); err != nil {
			return nil, err
		}
		if c.WinVec, err = emb.Embed(ctx, windowTexts(c)); err != nil {
			return nil, err
		}
		cv, err := emb.Embed(ctx, chunkTexts)
		if err != nil {
			return nil, err
		}
		c.ChunkVec = make([][][]float32, len(c.Units))
		for i, u := range c.Units {
			c.ChunkVec[i], cv = cv[:len(u.Chunks)], cv[len(u.Chunks):]
		}
		for _, qa := range s.QA {
			if len(qa.Evidence) == 0 {
				continue
			}
			q := &Question{Conv: c, Text: qa.Question, Category: qa.Category, Type: qa.Type, QuerySession: qsess[s.ID+"\x00"+qa.Question]}
			var pos map[string]int
			probe := func(f *offline.Features, id func(int) string) {
				q.Features = f.Clone()
				pos = make(map[string]int, len(f.Lex))
				for i := range f.Lex {
					pos[id(i)] = i
				}
			}
			res, err := m.Retrieve(offline.WithProbe(ctx, probe), sp, qa.Question, ro)
			if err != nil {
				return nil, fmt.Errorf("%s %s %q: %w", set, s.ID, qa.Question, err)
			}
			if q.Features == nil {
				return nil, fmt.Errorf("%s %s %q: offline retrieval did not run", set, s.ID, qa.Question)
			}
			for i, u := range c.Units {
				if pos[u.ID] != i {
					return nil, fmt.Errorf("%s %s: unit %d is %s in the engine", set, s.ID, i, u.ID)
				}
			}
			for _, id := range qa.Evidence {
				i, ok := pos[id]
				if !ok {
					i = -1
				}
				q.Gold = append(q.Gold, i)
			}
			for _, e := range res.Evidence {
				if i, ok := pos[e.Turn.ID]; ok {
					q.Engine = append(q.Engine, i)
				}
			}
			v, err := embed.EmbedQuestions(ctx, emb, []string{qa.Question})
			if err != nil {
				return nil, err
			}
			q.Vector = v[0]
			out = append(out, q)
		}
		if err := m.DeleteSpace(ctx, sp); err != nil {
			_ = err // memory only: the space just stays
		}
	}
	return out, nil
}
