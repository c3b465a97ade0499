package embed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/higmem/higmem/embed"
)

// queryModel embeds a question differently from a passage, as e5 does.
type queryModel struct{}

func (queryModel) Dim() int   { return 1 }
func (queryModel) ID() string { return "query-model" }
func (queryModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{1}}, len(texts)), nil
}
func (queryModel) EmbedQuery(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{-1}}, len(texts)), nil
}

// plainModel embeds questions and passages alike.
type plainModel struct{}

func (plainModel) Dim() int   { return 1 }
func (plainModel) ID() string { return "plain-model" }
func (plainModel) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{2}}, len(texts)), nil
}

// wrapper is what a caching or counting embedder looks like: the
// interface embedded, Embed overridden.
type wrapper struct {
	embed.Embedder
	n int
}

func (w *wrapper) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	w.n++
	return w.Embedder.Embed(ctx, texts)
}

// question returns e's vector of a question, passage its vector of a
// stored text.
func question(t *testing.T, e embed.Embedder) float32 {
	t.Helper()
	return first(t)(embed.EmbedQuestions(context.Background(), e, []string{"q"}))
}

func passage(t *testing.T, e embed.Embedder) float32 {
	t.Helper()
	return first(t)(e.Embed(context.Background(), []string{"p"}))
}

func first(t *testing.T) func([][]float32, error) float32 {
	return func(vs [][]float32, err error) float32 {
		t.Helper()
		if err != nil || len(vs) != 1 || len(vs[0]) != 1 {
			t.Fatalf("%v %v", vs, err)
		}
		return vs[0][0]
	}
}

// TestKeepQuery: a wrapper given KeepQuery embeds questions with its inner
// model's EmbedQuery, is a QueryEmbedder only when the model is one, and
// keeps its own Embed.
func TestKeepQuery(t *testing.T) {
	w := &wrapper{Embedder: queryModel{}}
	if _, ok := embed.Embedder(w).(embed.QueryEmbedder); ok {
		t.Fatal("test setup: the bare wrapper should hide EmbedQuery")
	}
	if got := question(t, w); got != 1 {
		t.Fatalf("test setup: the bare wrapper embeds a question as %v", got)
	}
	w.n = 0
	kept := embed.KeepQuery(w, queryModel{}, nil)
	if _, ok := kept.(embed.QueryEmbedder); !ok {
		t.Fatal("KeepQuery hides the model's EmbedQuery")
	}
	if got := question(t, kept); got != -1 {
		t.Errorf("question vector %v, want the model's query vector -1", got)
	}
	if got := passage(t, kept); got != 1 || w.n != 1 {
		t.Errorf("Embed %v (wrapper called %d times), want the wrapper's 1 once", got, w.n)
	}
	if kept.ID() != "query-model" || kept.Dim() != 1 {
		t.Errorf("ID %q Dim %d", kept.ID(), kept.Dim())
	}
	// A given query function replaces the model's.
	own := embed.KeepQuery(w, queryModel{}, func(context.Context, []string) ([][]float32, error) {
		return [][]float32{{-3}}, nil
	})
	if got := question(t, own); got != -3 {
		t.Errorf("question vector %v, want the given function's -3", got)
	}
	// A model without a query embedding is not given one.
	pw := &wrapper{Embedder: plainModel{}}
	plain := embed.KeepQuery(pw, plainModel{}, nil)
	if _, ok := plain.(embed.QueryEmbedder); ok {
		t.Error("KeepQuery claims a query embedding the model does not have")
	}
	if got := question(t, plain); got != 2 {
		t.Errorf("question vector %v, want Embed's 2", got)
	}
}
