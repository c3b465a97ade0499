package higmem

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// TestDefaultSearchIsOfflineRanking checks that default mode's turn search
// is offline retrieval's ranking (scoredTurns: the best scores, context
// included), written out here in full.
func TestDefaultSearchIsOfflineRanking(t *testing.T) {
	ctx := context.Background()
	m, err := Open(ctx, Options{Mode: ModeDefault, Store: memstore.New(), Embedder: hashing.New(64), MemoryModel: llmtest.NewScripted(), AnswerModel: llmtest.NewScripted()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "search"}
	if _, err := m.Add(ctx, sp, windowInputs()); err != nil {
		t.Fatal(err)
	}
	for _, question := range []string{"What did Ana eat in Lisbon?", "Where does Ben want to take the train?", "Did they see the castle?"} {
		res, err := m.Retrieve(ctx, sp, question, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Trace.Stage("search")
		var want []string
		withQuery(m, sp, question, func(st *spaceState, q *query) {
			// Every score written out, ranked: the reference ranking.
			st.limits.noOfflineFast = true
			defer func() { st.limits.noOfflineFast = false }()
			scores := offline.Score(q.offlineInput(offline.DefaultTuning()), &q.sc.off).Scores
			idx := make([]int, 0, len(scores))
			for i, s := range scores {
				if s > 0 {
					idx = append(idx, i)
				}
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
			for _, i := range idx[:min(len(idx), m.opts.KTurn)] {
				want = append(want, st.turns[i].ID)
			}
		})
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%q: search stage %v, want %v", question, got, want)
		}
	}
}

// TestTurnInt8OnlyInPaperMode checks that only paper mode, whose hybrid
// search scans the turn vectors, keeps their int8 copy.
func TestTurnInt8OnlyInPaperMode(t *testing.T) {
	for _, mode := range []Mode{ModeOffline, ModeDefault, ModePaper} {
		m, err := Open(context.Background(), Options{Mode: mode, MemoryModel: llmtest.NewScripted()})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.limits.turnInt8, mode == ModePaper; got != want {
			t.Errorf("%s: turnInt8 %v, want %v", mode, got, want)
		}
		if got, want := m.limits.quantizeFor(store.VectorTurn) > 0, mode == ModePaper; got != want {
			t.Errorf("%s: turn vectors quantized %v, want %v", mode, got, want)
		}
		if m.limits.quantizeFor(store.VectorWindow) <= 0 || m.limits.quantizeFor(store.VectorEvent) <= 0 {
			t.Errorf("%s: window and event vectors must keep their int8 copy", mode)
		}
		m.Close()
	}
}
