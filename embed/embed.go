// Package embed defines the interface higmem uses to turn text into vectors.
//
// An Embedder maps a batch of texts to one vector each. Implementations live
// in subpackages: embed/hashing (deterministic, no model, for tests and
// benchmarks), embed/minilm (all-MiniLM-L6-v2 in pure Go) and embed/openai
// (any OpenAI-compatible /v1/embeddings endpoint).
//
// Vectors returned by an Embedder should be L2-normalised so that the dot
// product equals cosine similarity; higmem normalises again defensively.
package embed

import (
	"context"
	"errors"
)

// ErrNoModel is returned by constructors when the model files an embedder
// needs are not present (for example before `higmem models fetch`).
var ErrNoModel = errors.New("embed: model files not found")

// Embedder turns texts into fixed-size vectors.
//
// Embed must return exactly len(texts) vectors of length Dim(), in input
// order, and must be safe for concurrent use. ID names the model and its
// settings (for example "minilm:all-MiniLM-L6-v2:256"): vectors produced by
// embedders with different IDs are never mixed in one index.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dim() int
	ID() string
}

// QueryEmbedder is an Embedder whose model embeds a question differently
// from the texts it is matched against, as the e5 models do with their
// "query: " and "passage: " prefixes. higmem embeds everything it stores
// with Embed and the questions it is asked with EmbedQuery, whose vectors
// must be comparable with Embed's (same length, same ID).
type QueryEmbedder interface {
	Embedder
	EmbedQuery(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedQuestions embeds questions with e: with its EmbedQuery when e is a
// QueryEmbedder, else with its Embed (a model that embeds both alike).
func EmbedQuestions(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	if qe, ok := e.(QueryEmbedder); ok {
		return qe.EmbedQuery(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// KeepQuery returns w, a wrapper of inner (one that caches, counts, times
// or announces its Embed calls), as an Embedder that is a QueryEmbedder
// exactly when inner is one, so that wrapping an embedder never hides the
// model's query embedding (e5's "query: " prompt) from the engine, nor
// claims one the model does not have. Its EmbedQuery is query, or inner's
// own EmbedQuery when query is nil; Embed, Dim and ID are w's. w itself
// should not implement EmbedQuery: wrap it with KeepQuery instead.
func KeepQuery(w, inner Embedder, query func(ctx context.Context, texts []string) ([][]float32, error)) Embedder {
	qe, ok := inner.(QueryEmbedder)
	if !ok {
		return w
	}
	if query == nil {
		query = qe.EmbedQuery
	}
	return queryKept{Embedder: w, query: query}
}

// queryKept is a wrapper given its inner embedder's query embedding.
type queryKept struct {
	Embedder
	query func(ctx context.Context, texts []string) ([][]float32, error)
}

func (q queryKept) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return q.query(ctx, texts)
}
