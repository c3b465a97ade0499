package harness

import (
	"context"
	"slices"
	"sync"

	"github.com/higmem/higmem/embed"
)

// memoEmbedder remembers the vector of every text it embedded, so that the
// systems of one run (which embed the same turns) pay for each text once.
// It is safe for concurrent use.
type memoEmbedder struct {
	inner embed.Embedder
	mu    sync.Mutex // guards vecs
	vecs  map[string][]float32
}

func newMemoEmbedder(inner embed.Embedder) *memoEmbedder {
	return &memoEmbedder{inner: inner, vecs: map[string][]float32{}}
}

// Dim returns the inner embedder's dimension.
func (m *memoEmbedder) Dim() int { return m.inner.Dim() }

// ID returns the inner embedder's id: the vectors are its own.
func (m *memoEmbedder) ID() string { return m.inner.ID() }

// Embed returns remembered vectors and embeds the rest in one batch.
func (m *memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	seen := map[string]bool{}
	m.mu.Lock()
	for i, s := range texts {
		if v, ok := m.vecs[s]; ok {
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
	vs, err := m.inner.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, s := range miss {
		m.vecs[s] = slices.Clone(vs[i])
	}
	for i, s := range texts {
		if out[i] == nil {
			out[i] = slices.Clone(m.vecs[s])
		}
	}
	return out, nil
}
