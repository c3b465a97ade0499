// Package rank holds the ranking primitives of retrieval: a top-k heap of
// (index, score) hits, the hybrid fusion of BM25 with dense similarity, and
// that fusion's pruned form over a quantized matrix, which returns exactly
// the full scan's hits.
//
// Everything here works on row indexes into the caller's own slices (turns
// or events of a space); the caller maps them back to ids.
package rank

import (
	"cmp"
	"slices"

	"github.com/higmem/higmem/internal/parallel"
)

// Hit is a ranked row: an index into the caller's rows and its score.
type Hit struct {
	Index int
	Score float64
}

// Sort orders hits by score descending, then index ascending.
func Sort(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
}

// Indexes returns the indexes of hits, in order.
func Indexes(hits []Hit) []int {
	out := make([]int, len(hits))
	for j, h := range hits {
		out[j] = h.Index
	}
	return out
}

// TopK keeps the k best positive scores offered, in the order of Sort
// (score descending, then index ascending).
type TopK struct {
	k int
	h []Hit // min-heap: the root ranks last
}

// NewTopK returns an empty TopK that keeps k hits.
func NewTopK(k int) *TopK { return &TopK{k: k, h: make([]Hit, 0, max(k, 0))} }

// worse reports whether a ranks after b.
func worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Index > b.Index
}

// Len returns the number of hits kept.
func (t *TopK) Len() int { return len(t.h) }

// Full reports whether k hits are kept.
func (t *TopK) Full() bool { return len(t.h) == t.k }

// Last returns the score of the hit that ranks last among those kept; the
// TopK must not be empty.
func (t *TopK) Last() float64 { return t.h[0].Score }

// Offer considers row i with score s; scores that are not positive are
// ignored.
func (t *TopK) Offer(i int, s float64) {
	if !(s > 0) || t.k <= 0 {
		return
	}
	c := Hit{i, s}
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		for j := len(t.h) - 1; j > 0; {
			p := (j - 1) / 2
			if !worse(t.h[j], t.h[p]) {
				break
			}
			t.h[j], t.h[p] = t.h[p], t.h[j]
			j = p
		}
		return
	}
	if !worse(t.h[0], c) {
		return
	}
	t.h[0] = c
	for j := 0; ; {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == j {
			break
		}
		t.h[j], t.h[w] = t.h[w], t.h[j]
		j = w
	}
}

// Sorted returns the kept hits, best first. The TopK must not be used
// afterwards.
func (t *TopK) Sorted() []Hit {
	out := t.h
	Sort(out)
	return out
}

// Top returns the indexes of the k best positive scores, best first, ties
// by index: the first k of every positive score sorted. When only is not
// nil it lists every index whose score may be positive, and only those are
// read.
func Top(scores []float64, only []int, k int) []int {
	if k <= 0 {
		return nil
	}
	top := NewTopK(k)
	if only != nil {
		for _, i := range only {
			top.Offer(i, scores[i])
		}
		return Indexes(top.Sorted())
	}
	for i, s := range scores {
		if s > 0 && (len(top.h) < k || s > top.h[0].Score) {
			top.Offer(i, s)
		}
	}
	return Indexes(top.Sorted())
}

// ParallelRange calls fn(part, lo, hi) for consecutive ranges covering
// [0, n), each at least minChunk long, one per P at most (parallel.Parts),
// run by parallel.For, and returns the number of parts (at most 4; part
// is 0 to parts-1).
func ParallelRange(n, minChunk int, fn func(part, lo, hi int)) int {
	parts := parallel.Parts(n, minChunk, 4)
	if parts == 1 {
		fn(0, 0, n)
		return 1
	}
	per := (n + parts - 1) / parts
	parallel.For(parts, func(p int) { fn(p, min(p*per, n), min((p+1)*per, n)) })
	return parts
}
