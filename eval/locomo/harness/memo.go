package harness

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/higmem/higmem/embed"
)

// memoEmbedder remembers the vector of every text it embedded, so that the
// systems of one run (which embed the same turns and ask the same
// questions) pay for each text once. It is safe for concurrent use.
type memoEmbedder struct {
	inner embed.Embedder
	mu    sync.Mutex // guards vecs and qvecs
	vecs  map[string][]float32
	qvecs map[string][]float32 // questions, embedded with the model's EmbedQuery
}

// newMemoEmbedder wraps inner. The result is an embed.QueryEmbedder
// exactly when inner is one (e5-small-v2 embeds questions after
// "query: "), whose EmbedQuery is inner's, remembered apart from Embed's
// vectors: hiding it would embed every question as a passage.
func newMemoEmbedder(inner embed.Embedder) embed.Embedder {
	m := &memoEmbedder{inner: inner, vecs: map[string][]float32{}, qvecs: map[string][]float32{}}
	if qe, ok := inner.(embed.QueryEmbedder); ok {
		return embed.KeepQuery(m, inner, func(ctx context.Context, texts []string) ([][]float32, error) {
			return m.embed(ctx, texts, m.qvecs, qe.EmbedQuery)
		})
	}
	return m
}

// Dim returns the inner embedder's dimension.
func (m *memoEmbedder) Dim() int { return m.inner.Dim() }

// ID returns the inner embedder's id: the vectors are its own.
func (m *memoEmbedder) ID() string { return m.inner.ID() }

// Embed returns remembered vectors and embeds the rest in one batch.
func (m *memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.embed(ctx, texts, m.vecs, m.inner.Embed)
}

// embed returns the vectors of texts remembered in memo and embeds the
// rest with fn in one batch, remembering them.
func (m *memoEmbedder) embed(ctx context.Context, texts []string, memo map[string][]float32,
	fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	seen := map[string]bool{}
	m.mu.Lock()
	for i, s := range texts {
		if v, ok := memo[s]; ok {
			out[i] = slices.Clone(v)
		} else if !seen[s] {
			seen[s] = true
			miss = append(miss, s)
		}
	}
	m.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := fn(ctx, miss)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(miss) {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", m.inner.ID(), len(vs), len(miss))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, s := range miss {
		memo[s] = slices.Clone(vs[i])
	}
	for i, s := range texts {
		if out[i] == nil {
			out[i] = slices.Clone(memo[s])
		}
	}
	return out, nil
}
