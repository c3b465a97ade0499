package higmem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store/memstore"
)

// TestAskWithLLMUnreachable builds memory with a model, then asks with the
// endpoint down: Ask returns the evidence the offline rules choose, with a
// note saying why there is no answer, instead of failing; the answer is
// not asked for once retrieval found the model down.
func TestAskWithLLMUnreachable(t *testing.T) {
	turns, _ := example(t)
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			st := memstore.New()
			built := open(t, higmem.Options{Store: st, Mode: mode, MemoryModel: llmtest.NewScripted(), Embedder: hashing.New(64)})
			if _, err := built.Add(ctx, sp, turns); err != nil {
				t.Fatal(err)
			}
			var calls, answers atomic.Int64
			down := llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
				calls.Add(1)
				if req.Operation == "answer" {
					answers.Add(1)
				}
				return llm.Response{}, fmt.Errorf("openai: POST http://127.0.0.1:1/v1/chat/completions: connection refused: %w", llm.ErrUnavailable)
			})
			m := open(t, higmem.Options{Store: st, Mode: mode, MemoryModel: down, Embedder: hashing.New(64)})
			q := "What did " + turns[0].Speaker + " say about " + strings.Fields(turns[0].Text)[len(strings.Fields(turns[0].Text))-1] + "?"
			ans, err := m.Ask(ctx, sp, q, higmem.RetrieveOptions{})
			if err != nil {
				t.Fatalf("Ask with the LLM down: %v", err)
			}
			if len(ans.Evidence) == 0 {
				t.Error("no evidence")
			}
			if ans.Text != "" || !strings.Contains(ans.Note, "unreachable") || !strings.Contains(ans.Note, "connection refused") {
				t.Errorf("answer %q, note %q; want no answer and a note naming the failure", ans.Text, ans.Note)
			}
			if !strings.Contains(strings.Join(ans.Trace.Notes, "\n"), "offline rules") {
				t.Errorf("trace notes %q; want the fallback noted", ans.Trace.Notes)
			}
			if calls.Load() < 1 || answers.Load() != 0 {
				t.Errorf("%d calls to the down model, %d for the answer; want the answer not asked once retrieval found the model down", calls.Load(), answers.Load())
			}
			res, err := m.Retrieve(ctx, sp, q, higmem.RetrieveOptions{})
			if err != nil || len(res.Evidence) == 0 {
				t.Errorf("Retrieve with the LLM down: %d turns, %v", len(res.Evidence), err)
			}

			// A cancelled context is not an unreachable model: it fails.
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := m.Ask(cctx, sp, q, higmem.RetrieveOptions{}); err == nil {
				t.Error("Ask with a cancelled context succeeded")
			}
			// Other model errors still fail.
			bad := open(t, higmem.Options{Store: st, Mode: mode, Embedder: hashing.New(64), MemoryModel: llm.ModelFunc(func(context.Context, llm.Request) (llm.Response, error) {
				return llm.Response{}, fmt.Errorf("bad key: %w", llm.ErrRequest)
			})})
			if _, err := bad.Ask(ctx, sp, q, higmem.RetrieveOptions{}); !errors.Is(err, llm.ErrRequest) {
				t.Errorf("Ask with a rejected request: %v; want llm.ErrRequest", err)
			}
		})
	}
}

// TestQuestionWithoutWords checks that a question with nothing to search
// for ("???") is refused with a clear message instead of returning
// arbitrary turns.
func TestQuestionWithoutWords(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	m := open(t, higmem.Options{Embedder: hashing.New(64)})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"???", "?!", "...", "-- ?", "🐶?"} {
		_, err := m.Ask(ctx, sp, q, higmem.RetrieveOptions{})
		if !errors.Is(err, higmem.ErrInvalidInput) || !strings.Contains(err.Error(), "has no words to search for") {
			t.Errorf("Ask(%q) = %v; want ErrInvalidInput saying it has no words", q, err)
		}
	}
	for _, q := range []string{"why?", "2023?", "誰?"} {
		if _, err := m.Ask(ctx, sp, q, higmem.RetrieveOptions{}); err != nil {
			t.Errorf("Ask(%q): %v", q, err)
		}
	}
}
