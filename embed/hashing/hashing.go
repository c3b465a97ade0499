// Package hashing is a deterministic embedder that needs no model: each word
// and word pair of the text is hashed into a signed bucket of a fixed-size
// vector (the "hashing trick"), which is then L2-normalised.
//
// Texts that share words get similar vectors, so it is a fair stand-in for a
// real embedding model in tests and benchmarks, and it costs microseconds.
// It is not a substitute for a semantic model in production.
package hashing

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"

	"github.com/higmem/higmem/internal/vec"
)

// DefaultDim is the vector size used when New is given 0.
const DefaultDim = 256

// Embedder is a deterministic hashing embedder. The zero value is not
// usable; call New.
type Embedder struct {
	dim int
}

// New returns a hashing embedder producing vectors of dim dimensions
// (DefaultDim when dim <= 0).
func New(dim int) *Embedder {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Embedder{dim: dim}
}

// Dim returns the vector size.
func (e *Embedder) Dim() int { return e.dim }

// ID names the embedder and its size.
func (e *Embedder) ID() string { return fmt.Sprintf("hashing:%d", e.dim) }

// Embed returns one unit vector per text. An empty text gives a zero vector.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hashing: embed: %w", err)
			}
		}
		out[i] = e.embedOne(t)
	}
	return out, nil
}

func (e *Embedder) embedOne(text string) []float32 {
	v := make([]float32, e.dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	add := func(s string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(s))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(e.dim)] += sign * w
	}
	for i, w := range words {
		add(w, 1)
		if len(w) > 4 {
			add(w[:4]+"*", 0.5) // a crude stem so "running" meets "runs"
		}
		if i > 0 {
			add(words[i-1]+" "+w, 0.5)
		}
	}
	return vec.Normalize(v)
}
