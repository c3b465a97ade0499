package harness

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
)

// recordingQueryModel embeds a question differently from a passage, as
// e5-small-v2 does ("query: " against "passage: "), and records which
// texts it was given by each method.
type recordingQueryModel struct {
	h       embed.Embedder
	mu      sync.Mutex
	embeds  map[string]bool
	queries map[string]bool
}

func newRecordingQueryModel() *recordingQueryModel {
	return &recordingQueryModel{h: hashing.New(64), embeds: map[string]bool{}, queries: map[string]bool{}}
}

func (r *recordingQueryModel) Dim() int   { return 64 }
func (r *recordingQueryModel) ID() string { return "recording-query-model" }

func (r *recordingQueryModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	for _, s := range texts {
		r.embeds[s] = true
	}
	r.mu.Unlock()
	return r.h.Embed(ctx, texts)
}

func (r *recordingQueryModel) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	for _, s := range texts {
		r.queries[s] = true
	}
	r.mu.Unlock()
	q := make([]string, len(texts))
	for i, s := range texts {
		q[i] = "query: " + s
	}
	return r.h.Embed(ctx, q)
}

// TestMemoEmbedderKeepsQueryEmbedding: the run's memo embedder gives a
// question the model's query vector (and remembers it apart from
// passages), and claims no query embedding for a model without one.
func TestMemoEmbedderKeepsQueryEmbedding(t *testing.T) {
	ctx := context.Background()
	model := newRecordingQueryModel()
	memo := newMemoEmbedder(model)
	want, _ := model.EmbedQuery(ctx, []string{"when did she move?"})
	for range 2 { // the second is remembered
		got, err := embed.EmbedQuestions(ctx, memo, []string{"when did she move?"})
		if err != nil || len(got) != 1 || !slices.Equal(got[0], want[0]) {
			t.Fatalf("question vector through the memo embedder is not the model's query vector (err %v)", err)
		}
	}
	passage, _ := model.Embed(ctx, []string{"when did she move?"})
	got, err := memo.Embed(ctx, []string{"when did she move?"})
	if err != nil || !slices.Equal(got[0], passage[0]) {
		t.Fatalf("a stored text's vector through the memo embedder is not the model's Embed vector (err %v)", err)
	}
	if _, ok := embed.Embedder(newMemoEmbedder(hashing.New(8))).(embed.QueryEmbedder); ok {
		t.Error("the memo embedder claims a query embedding its model does not have")
	}
}

// TestEvalEmbedsQuestionsAsQueries: in an eval run, every system that
// embeds a question (the engine's offline mode and hybrid search, and the
// dense baseline) embeds it with the model's EmbedQuery, never as a
// passage: with e5-small-v2 the question gets "query: ".
func TestEvalEmbedsQuestionsAsQueries(t *testing.T) {
	model := newRecordingQueryModel()
	_, err := Run(context.Background(), Config{
		Data: miniData, Out: t.TempDir(),
		Systems: []string{"offline", "hybrid-topk", "dense-topk"},
		Env:     Env{Embedder: model, K: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	samples, err := locomo.Load(miniData)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range samples {
		for _, q := range s.QA {
			n++
			if !model.queries[q.Question] {
				t.Errorf("%q was never embedded with EmbedQuery", q.Question)
			}
			if model.embeds[q.Question] {
				t.Errorf("%q was embedded as a passage", q.Question)
			}
		}
	}
	if n == 0 {
		t.Fatal("no questions in the test data")
	}
}
