// Package storevec lays out the vectors a store holds as matrices whose rows
// follow the engine's turns or events: decoded straight into a matrix in the
// store's order and moved into place (Rows, Permute), read by position
// (Into), or matched by id from a list (Stored).
package storevec

import (
	"context"
	"sync/atomic"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Rows is a matrix of n rows of dim values filled in the store's own
// order: ids[k] is the id of the vector the store put in row k. Once the
// positions of the records are known, InOrder moves each row to the
// position of its id.
type Rows struct {
	n, dim int
	data   []float32
	ids    []string
	next   atomic.Int64 // rows handed out (or asked for past n)
}

// NewRows returns room for n rows of dim values.
func NewRows(n, dim int) *Rows {
	return &Rows{n: n, dim: dim, data: make([]float32, n*dim), ids: make([]string, n)}
}

// Row gives the next row to the vector with id (-1 when all n are taken).
// It is safe for concurrent use (see store.VectorSetsIntoReader).
func (r *Rows) Row(id string) int {
	k := r.next.Add(1) - 1
	if k >= int64(r.n) {
		return -1
	}
	r.ids[k] = id
	return int(k)
}

// ReadFrom has the store decode the vectors of kind made by embedder embID
// into r (store.VectorsIntoReader) and returns how many it wrote.
func (r *Rows) ReadFrom(ctx context.Context, vi store.VectorsIntoReader, sp store.Space, kind store.VectorKind, embID string) (int, error) {
	return vi.VectorsInto(ctx, sp, kind, embID, r.dim, r.data, r.Row)
}

// Set returns the store.VectorSet that fills r with the vectors of kind
// made by embedder embID.
func (r *Rows) Set(kind store.VectorKind, embID string) store.VectorSet {
	return store.VectorSet{Kind: kind, Embedder: embID, Dim: r.dim, Dst: r.data, Row: r.Row}
}

// InOrder returns the matrix whose row i is the vector of the record at
// position i (pos maps ids to positions, of n records), moving the rows in
// place (Permute), quantized from quantizeRows rows. got is how many
// rows the store wrote. ok is false when that is not every record, once
// each (the caller then lists the vectors and calls Stored).
func (r *Rows) InOrder(got int, pos map[string]int, n, quantizeRows int) (m vec.Matrix, ok bool) {
	if got != r.n || r.next.Load() < int64(r.n) || n != r.n {
		return vec.Matrix{}, false
	}
	// src[i] is the row of record i's vector.
	src := make([]int32, n)
	for i := range src {
		src[i] = -1
	}
	for k, id := range r.ids {
		i, found := pos[id]
		if !found || src[i] >= 0 {
			return vec.Matrix{}, false
		}
		src[i] = int32(k)
	}
	Permute(r.data, r.dim, src)
	m = vec.Matrix{Dim: r.dim, Data: r.data}
	m.QuantizeFrom(quantizeRows)
	return m, true
}

// Permute reorders the rows of dim values of data in place so that
// row i holds what row src[i] held; src is a permutation of the rows.
// Every row is copied once, along the cycles of the permutation, with one
// row of scratch.
func Permute(data []float32, dim int, src []int32) {
	if dim <= 0 {
		return
	}
	row := func(i int) []float32 { return data[i*dim : (i+1)*dim : (i+1)*dim] }
	done := make([]bool, len(src))
	var tmp []float32
	for start := range src {
		if done[start] || int(src[start]) == start {
			done[start] = true
			continue
		}
		if tmp == nil {
			tmp = make([]float32, dim)
		}
		// Row start is overwritten first: keep it, then pull each row of
		// the cycle into the one before it.
		copy(tmp, row(start))
		i := start
		for {
			done[i] = true
			j := int(src[i])
			if j == start {
				copy(row(i), tmp)
				break
			}
			copy(row(i), row(j))
			i = j
		}
	}
}

// Into reads the n stored vectors of one kind into a matrix whose rows
// follow pos (id -> row), quantized from quantizeRows rows; ok is false when
// one is missing or of another dimension.
func Into(ctx context.Context, vi store.VectorsIntoReader, sp store.Space, kind store.VectorKind, embID string, dim, n int, pos map[string]int, quantizeRows int) (m vec.Matrix, ok bool, err error) {
	data := make([]float32, n*dim)
	seen := make([]bool, n)
	got, err := vi.VectorsInto(ctx, sp, kind, embID, dim, data, func(id string) int {
		if i, ok := pos[id]; ok && !seen[i] {
			seen[i] = true
			return i
		}
		return -1
	})
	if err != nil || got != n {
		return vec.Matrix{}, false, err
	}
	m = vec.Matrix{Dim: dim, Data: data}
	m.QuantizeFrom(quantizeRows)
	return m, true, nil
}

// Stored returns the matrix whose row i is the stored vector with id
// id(i), quantized from quantizeRows rows; ok is false when one of the n is
// missing or of another dimension.
func Stored(stored []store.Vector, n, dim, quantizeRows int, id func(i int) string) (m vec.Matrix, ok bool) {
	byID := make(map[string][]float32, len(stored))
	for _, v := range stored {
		if len(v.Values) == dim {
			byID[v.ID] = v.Values
		}
	}
	m = vec.Matrix{Dim: dim, Data: make([]float32, 0, n*dim)}
	for i := range n {
		v, found := byID[id(i)]
		if !found {
			return vec.Matrix{}, false
		}
		m.Append(v)
	}
	m.QuantizeFrom(quantizeRows)
	return m, true
}

// FromRows returns the matrix of the given rows.
func FromRows(rows [][]float32, dim int) vec.Matrix {
	m := vec.Matrix{Dim: dim, Data: make([]float32, 0, len(rows)*dim)}
	for _, r := range rows {
		m.Append(r)
	}
	return m
}
