package research

import (
	"context"
	"fmt"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/eval/locomo/harness"
	"github.com/higmem/higmem/internal/offline"
)

// Question is one dev question with what offline retrieval scored for it.
type Question struct {
	// Set and Conv name the dev set and the conversation.
	Set, Conv string
	Text      string
	Category  int
	// Features are the engine's features of the question (its own copy).
	Features *offline.Features
	// Gold lists the units of the question's evidence (-1: not found).
	Gold []int
}

// Load ingests every conversation of samples into m (one space each, in
// offline mode) and returns its questions that have evidence, each with the
// features offline retrieval scores for it (captured by a probe).
func Load(ctx context.Context, m *higmem.Memory, set string, samples []locomo.Sample) ([]Question, error) {
	var out []Question
	for si := range samples {
		s := &samples[si]
		sp, err := ingest(ctx, m, s)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", set, s.ID, err)
		}
		for _, qa := range s.QA {
			if len(qa.Evidence) == 0 {
				continue
			}
			q := Question{Set: set, Conv: s.ID, Text: qa.Question, Category: qa.Category}
			var pos map[string]int
			probe := func(f *offline.Features, id func(int) string) {
				q.Features = f.Clone()
				pos = make(map[string]int, len(f.Lex))
				for i := range f.Lex {
					pos[id(i)] = i
				}
			}
			if _, err := m.Retrieve(offline.WithProbe(ctx, probe), sp, qa.Question, higmem.RetrieveOptions{}); err != nil {
				return nil, fmt.Errorf("%s %s %q: %w", set, s.ID, qa.Question, err)
			}
			if q.Features == nil {
				return nil, fmt.Errorf("%s %s %q: offline retrieval did not run", set, s.ID, qa.Question)
			}
			for _, id := range qa.Evidence {
				i, ok := pos[id]
				if !ok {
					i = -1
				}
				q.Gold = append(q.Gold, i)
			}
			out = append(out, q)
		}
	}
	return out, nil
}

// ingest adds a sample's sessions to its own space, as the LoCoMo harness
// does (image captions as attachments), and checks that no model was
// called.
func ingest(ctx context.Context, m *higmem.Memory, s *locomo.Sample) (higmem.Space, error) {
	sp := higmem.Space{UserID: s.ID}
	for _, sess := range s.Sessions {
		res, err := m.Add(ctx, sp, harness.SessionInputs(sess))
		if err != nil {
			return sp, err
		}
		if len(res.Calls) > 0 {
			return sp, fmt.Errorf("%d LLM calls while adding session %d", len(res.Calls), sess.N)
		}
	}
	return sp, nil
}
