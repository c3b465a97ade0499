package shapes

import "github.com/higmem/higmem/embed"

// AsID returns e under another ID (the engine's key for the learned
// stage), a QueryEmbedder exactly when e is one: the research loop embeds
// with e5-small-v2 in int8 (cosine 0.999 with float32's vectors, 1.8× as
// fast) and lets the engine take it for float32's. The vectors e caches
// stay keyed by its own ID.
func AsID(e embed.Embedder, id string) embed.Embedder {
	return embed.KeepQuery(renamed{e, id}, e, nil)
}

// renamed is an embedder under another ID.
type renamed struct {
	embed.Embedder
	id string
}

func (r renamed) ID() string { return r.id }
