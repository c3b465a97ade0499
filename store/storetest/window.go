package storetest

import (
	"testing"

	"github.com/higmem/higmem/store"
)

// testWindowVectors checks the vectors of kind store.VectorWindow: kept
// apart from the turn vectors of the same ids, and deleted with their turn
// (DeleteTurn removes a vector of each of store.TurnVectorKinds), while
// another kind's vector with the turn's id stays.
func testWindowVectors(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	e.update(func(tx store.Tx) error {
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{
			mkVector(store.VectorWindow, "D1:1", "e1", 5),
			mkVector(store.VectorWindow, "D1:2", "e1", 6),
			mkVector(store.VectorWindow, "D1:3", "e2", 7),
			mkVector(store.VectorEvent, "D1:2", "e1", 8),
		})
	})
	list := func(kind store.VectorKind, em string) []store.Vector {
		t.Helper()
		vs, err := e.s.ListVectors(e.ctx, spaceA, kind, em)
		if err != nil {
			t.Fatalf("ListVectors(%s, %s): %v", kind, em, err)
		}
		return vs
	}
	want := []store.Vector{mkVector(store.VectorWindow, "D1:1", "e1", 5), mkVector(store.VectorWindow, "D1:2", "e1", 6)}
	if d := diff(want, list(store.VectorWindow, "e1")); d != "" {
		t.Errorf("window vectors (-want +got):\n%s", d)
	}
	turnBefore, eventBefore := list(store.VectorTurn, "e1"), list(store.VectorEvent, "e1")
	if len(turnBefore) != 2 || len(eventBefore) != 2 {
		t.Fatalf("before the delete: %d turn and %d event vectors, want 2 and 2", len(turnBefore), len(eventBefore))
	}

	e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, "D1:2") })
	if d := diff(want[:1], list(store.VectorWindow, "e1")); d != "" {
		t.Errorf("window vectors after deleting D1:2 (-want +got):\n%s", d)
	}
	if d := diff([]store.Vector{mkVector(store.VectorWindow, "D1:3", "e2", 7)}, list(store.VectorWindow, "e2")); d != "" {
		t.Errorf("window vectors of another turn after deleting D1:2 (-want +got):\n%s", d)
	}
	if d := diff(turnBefore[:1], list(store.VectorTurn, "e1")); d != "" {
		t.Errorf("turn vectors after deleting D1:2 (-want +got):\n%s", d)
	}
	if d := diff(eventBefore, list(store.VectorEvent, "e1")); d != "" {
		t.Errorf("the event vector with the turn's id after deleting D1:2 (-want +got):\n%s", d)
	}
	if el, ok := e.s.(store.EmbedderLister); ok {
		ems, err := el.Embedders(e.ctx, spaceA, store.VectorWindow)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff([]string{"e1", "e2"}, ems); d != "" {
			t.Errorf("Embedders(window) (-want +got):\n%s", d)
		}
	}

	e.update(func(tx store.Tx) error { return tx.DeleteSpace(e.ctx, spaceA) })
	if vs := list(store.VectorWindow, "e1"); len(vs) != 0 {
		t.Errorf("window vectors after DeleteSpace: %+v", vs)
	}
}
