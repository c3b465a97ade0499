package storevec

import (
	"cmp"
	"strings"

	"github.com/higmem/higmem/store"
)

// ByKind returns the vectors vs by kind and id, keeping for each kind of
// made those of dim values made by the embedder id made names (Changes
// also reports those under other variants of the embedder's id).
func ByKind(vs []store.Vector, dim int, made map[store.VectorKind]string) map[store.VectorKind]map[string][]float32 {
	out := make(map[store.VectorKind]map[string][]float32, len(made))
	for k := range made {
		out[k] = map[string][]float32{}
	}
	for _, v := range vs {
		if len(v.Values) == dim && made[v.Kind] != "" && v.Embedder == made[v.Kind] {
			out[v.Kind][v.ID] = v.Values
		}
	}
	return out
}

// CompareTurns orders turns as ListTurns does (Seq, then ID): the order
// of a matrix's rows.
func CompareTurns(a, b store.Turn) int {
	return cmp.Or(cmp.Compare(a.Seq, b.Seq), strings.Compare(a.ID, b.ID))
}

// CompareEvents orders events as ListEvents does.
func CompareEvents(a, b store.Event) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// CompareLinks orders links as ListLinks does.
func CompareLinks(a, b store.Link) int {
	return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Target, b.Target), strings.Compare(a.Relation, b.Relation))
}

// SameLink reports whether a and b have the same key.
func SameLink(a, b store.Link) bool {
	return a.Source == b.Source && a.Target == b.Target && a.Relation == b.Relation
}

// FirstMoved returns the first j with src[j] != j: the first row a splice
// (src[j] is row j's old position) moved.
func FirstMoved(src []int) int {
	for j, p := range src {
		if p != j {
			return j
		}
	}
	return len(src)
}
