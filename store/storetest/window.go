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

// testPassageVectors checks the vectors of kind store.VectorPassage: one
// record per turn whose values are several vectors one after the other
// (so of any length), kept apart from the turn's other vectors, reported
// by Changes with the turn (the journal), replaced under another embedder,
// and deleted with the turn and with the space, leaving nothing behind.
func testPassageVectors(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	passages := func(id, emb string, n int, x float32) store.Vector {
		v := store.Vector{Kind: store.VectorPassage, ID: id, Embedder: emb}
		for i := range n {
			v.Values = append(v.Values, mkVector(store.VectorPassage, id, emb, x+float32(i)).Values...)
		}
		return v
	}
	list := func(kind store.VectorKind, em string) []store.Vector {
		t.Helper()
		vs, err := e.s.ListVectors(e.ctx, spaceA, kind, em)
		if err != nil {
			t.Fatalf("ListVectors(%s, %s): %v", kind, em, err)
		}
		return vs
	}
	v0, err := e.s.SpaceVersion(e.ctx, spaceA)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := passages("D1:1", "e1+p", 3, 10), passages("D1:2", "e1+p", 7, 20)
	e.update(func(tx store.Tx) error {
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{p1, p2, mkVector(store.VectorWindow, "D1:2", "e1", 6)})
	})
	if d := diff([]store.Vector{p1, p2}, list(store.VectorPassage, "e1+p")); d != "" {
		t.Errorf("passage vectors (-want +got):\n%s", d)
	}
	if vs := list(store.VectorPassage, "e1"); len(vs) != 0 {
		t.Errorf("passage vectors of embedder e1 (they are e1+p's): %+v", vs)
	}
	ch, err := e.s.Changes(e.ctx, spaceA, v0, "e1")
	if err != nil {
		t.Fatal(err)
	}
	var got []store.Vector
	for _, v := range ch.Vectors {
		if v.Kind == store.VectorPassage {
			got = append(got, v)
		}
	}
	if d := diff([]store.Vector{p1, p2}, got); d != "" {
		t.Errorf("Changes: passage vectors made by e1's variant (-want +got):\n%s", d)
	}
	// Another embedder's passages replace them.
	p1b := passages("D1:1", "e2+p", 2, 30)
	e.update(func(tx store.Tx) error { return tx.PutVectors(e.ctx, spaceA, []store.Vector{p1b}) })
	if d := diff([]store.Vector{p2}, list(store.VectorPassage, "e1+p")); d != "" {
		t.Errorf("passage vectors of e1+p after D1:1's were made by e2+p (-want +got):\n%s", d)
	}

	e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, "D1:2") })
	if vs := list(store.VectorPassage, "e1+p"); len(vs) != 0 {
		t.Errorf("passage vectors after deleting their turn D1:2: %+v", vs)
	}
	if d := diff([]store.Vector{p1b}, list(store.VectorPassage, "e2+p")); d != "" {
		t.Errorf("passage vectors of another turn after deleting D1:2 (-want +got):\n%s", d)
	}
	e.update(func(tx store.Tx) error { return tx.DeleteSpace(e.ctx, spaceA) })
	if vs := list(store.VectorPassage, "e2+p"); len(vs) != 0 {
		t.Errorf("passage vectors after DeleteSpace: %+v", vs)
	}
}
