package sqlite_test

import (
	"context"
	"slices"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// TestVectorsInto checks that vectors decoded straight into a matrix are
// those ListVectors returns, at the rows asked, skipping unknown ids and
// other dimensions.
func TestVectorsInto(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := store.Space{UserID: "u"}
	vs := []store.Vector{
		{Kind: store.VectorTurn, ID: "a", Embedder: "e", Values: []float32{1, 2}},
		{Kind: store.VectorTurn, ID: "b", Embedder: "e", Values: []float32{3, 4}},
		{Kind: store.VectorTurn, ID: "c", Embedder: "e", Values: []float32{5, 6, 7}}, // another dimension
		{Kind: store.VectorTurn, ID: "d", Embedder: "other", Values: []float32{8, 9}},
		{Kind: store.VectorEvent, ID: "a", Embedder: "e", Values: []float32{10, 11}},
		{Kind: store.VectorTurn, ID: "z", Embedder: "e", Values: []float32{12, 13}}, // no row
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		for _, id := range []string{"a", "b", "c", "d", "z"} {
			if _, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, SessionID: "s", Seq: int64(id[0]), Speaker: "x", Text: "t"}); err != nil {
				return err
			}
		}
		return tx.PutVectors(ctx, sp, vs)
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{"b": 0, "a": 1, "c": 2}
	dst := make([]float32, 3*2)
	n, err := s.VectorsInto(ctx, sp, store.VectorTurn, "e", 2, dst, func(id string) int {
		if i, ok := rows[id]; ok {
			return i
		}
		return -1
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || !slices.Equal(dst, []float32{3, 4, 1, 2, 0, 0}) {
		t.Fatalf("VectorsInto wrote %d rows: %v", n, dst)
	}
	if _, err := s.VectorsInto(ctx, sp, store.VectorTurn, "e", 0, dst, func(string) int { return 0 }); err == nil {
		t.Fatal("dimension 0 accepted")
	}
}
