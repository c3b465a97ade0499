package storetest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

var annotationTests = []test{
	{name: "PutList", fn: testAnnotationPutList},
	{name: "Replace", fn: testAnnotationReplace},
	{name: "MissingTurn", fn: testAnnotationMissingTurn},
	{name: "TimeRefs", fn: testTimeRefs},
	{name: "SpaceTimeRefs", fn: testSpaceTimeRefs},
}

// testTimeRefs checks the optional store.TimeRefsReader, when the store has
// it: each id gets the time refs ListAnnotations gives its turn (nil for a
// turn without an annotation, or without time refs, and for an unknown
// id), repeated ids each theirs, few ids and many, the space's own only.
func testTimeRefs(t *testing.T, e *env) {
	tr, ok := e.s.(store.TimeRefsReader)
	if !ok {
		t.Skip("store does not implement store.TimeRefsReader (optional)")
	}
	byID := timeRefsFixture(t, e)
	var many []string
	for i := 49; i >= 0; i-- {
		many = append(many, fmt.Sprintf("t%02d", i), "nope")
	}
	many = append(many, many[:30]...)
	cases := map[string][]string{
		"empty":    {},
		"some":     {"t07", "t02", "t01", "t04", "nope", "t00"},
		"repeated": {"t02", "t03", "t02"},
		"many":     many,
	}
	for name, ids := range cases {
		got, err := tr.ListTimeRefs(e.ctx, spaceA, ids)
		if err != nil {
			t.Fatalf("%s: ListTimeRefs: %v", name, err)
		}
		want := make([][]store.TimeRef, len(ids))
		for i, id := range ids {
			want[i] = byID[id]
		}
		if d := diff(want, got); d != "" {
			t.Errorf("ListTimeRefs(%q) (-want +got):\n%s", ids, d)
		}
		for _, refs := range got {
			e.checkTimes(store.Annotation{TimeRefs: refs})
		}
	}
	if got, err := tr.ListTimeRefs(e.ctx, spaceA, []string{"t02"}); err != nil || len(got) != 1 || len(got[0]) != 2 {
		t.Errorf("ListTimeRefs(t02) = %v, %v; want its two time refs", got, err)
	}
	if got, err := tr.ListTimeRefs(e.ctx, spaceB, []string{"t01", "t02"}); err != nil || len(got) != 2 || len(got[0]) != 1 || got[0][0].Text != "space B" || got[1] != nil {
		t.Errorf("ListTimeRefs(B, t01 t02) = %v, %v; want B's own time ref of t01, nil", got, err)
	}
	_, err := tr.ListTimeRefs(e.ctx, store.Space{}, []string{"t01"})
	e.wantErr("ListTimeRefs without a user", err, store.ErrInvalid)
}

// timeRefsFixture stores 50 turns of spaceA, most annotated, with none,
// one or two time refs, and one of spaceB, and returns spaceA's time refs
// by turn id as ListAnnotations gives them.
func timeRefsFixture(t *testing.T, e *env) map[string][]store.TimeRef {
	t.Helper()
	var turns []store.Turn
	for i := range 50 {
		turns = append(turns, mkTurn(spaceA, fmt.Sprintf("t%02d", i), int64(50-i)))
	}
	e.putTurns(turns...)
	e.putTurns(mkTurn(spaceB, "t01", 1))
	e.update(func(tx store.Tx) error {
		for i := range 50 {
			if i%5 == 4 {
				continue // no annotation
			}
			a := mkAnnotation(fmt.Sprintf("t%02d", i), "p")
			switch i % 5 {
			case 1:
				a.TimeRefs = nil
			case 2:
				a.TimeRefs = append(a.TimeRefs, store.TimeRef{Text: fmt.Sprintf("%d days ago", i),
					Start: base.AddDate(0, 0, -i), End: base.AddDate(0, 0, 1-i), Granularity: "day"})
			}
			a.TimeRefs = slices.Clone(a.TimeRefs)
			if len(a.TimeRefs) > 0 {
				a.TimeRefs[0].Text = fmt.Sprintf("yesterday %d", i)
			}
			if err := tx.PutAnnotation(e.ctx, spaceA, a); err != nil {
				return err
			}
		}
		b := mkAnnotation("t01", "p")
		b.TimeRefs[0].Text = "space B"
		return tx.PutAnnotation(e.ctx, spaceB, b)
	})
	all, err := e.s.ListAnnotations(e.ctx, spaceA, nil)
	if err != nil {
		t.Fatalf("ListAnnotations: %v", err)
	}
	byID := map[string][]store.TimeRef{}
	for _, a := range all {
		byID[a.TurnID] = a.TimeRefs
	}
	return byID
}

// testSpaceTimeRefs checks the optional store.SpaceTimeRefsReader, when the
// store has it: every turn of the space with time refs, once, with those
// ListAnnotations gives it; a turn without any at most with none; the
// space's own only.
func testSpaceTimeRefs(t *testing.T, e *env) {
	sr, ok := e.s.(store.SpaceTimeRefsReader)
	if !ok {
		t.Skip("store does not implement store.SpaceTimeRefsReader (optional)")
	}
	byID := timeRefsFixture(t, e)
	for _, sp := range []store.Space{spaceA, spaceB} {
		want := byID
		if sp == spaceB {
			want = map[string][]store.TimeRef{}
			all, err := e.s.ListAnnotations(e.ctx, sp, nil)
			if err != nil {
				t.Fatalf("ListAnnotations: %v", err)
			}
			for _, a := range all {
				want[a.TurnID] = a.TimeRefs
			}
		}
		got := map[string][]store.TimeRef{}
		err := sr.EachTimeRefs(e.ctx, sp, func(id string, refs []store.TimeRef) {
			if _, dup := got[id]; dup {
				t.Errorf("EachTimeRefs(%s): %s given twice", sp, id)
			}
			got[id] = refs
		})
		if err != nil {
			t.Fatalf("EachTimeRefs(%s): %v", sp, err)
		}
		for id, refs := range got {
			if len(refs) == 0 && len(want[id]) == 0 {
				delete(got, id)
			} else {
				e.checkTimes(store.Annotation{TimeRefs: refs})
			}
		}
		for id, refs := range want {
			if len(refs) == 0 {
				delete(want, id)
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: no time refs, the test would check nothing", sp)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("EachTimeRefs(%s) (-want +got):\n%s", sp, d)
		}
	}
	err := sr.EachTimeRefs(e.ctx, store.Space{}, func(string, []store.TimeRef) {})
	e.wantErr("EachTimeRefs without a user", err, store.ErrInvalid)
}

func testAnnotationPutList(t *testing.T, e *env) {
	// Turns with seq out of id order: the list follows Seq.
	e.putTurns(mkTurn(spaceA, "t1", 3), mkTurn(spaceA, "t2", 1), mkTurn(spaceA, "t3", 2), mkTurn(spaceA, "t4", 4))
	a1, a2, a3 := mkAnnotation("t1", "p"), mkAnnotation("t2", "p"), mkAnnotation("t3", "p")
	a3.Keywords, a3.TimeRefs = nil, nil
	in := a1
	in.UpdatedAt = a1.UpdatedAt.In(zone)
	in.TimeRefs = []store.TimeRef{a1.TimeRefs[0]}
	in.TimeRefs[0].Start = in.TimeRefs[0].Start.In(zone)
	e.update(func(tx store.Tx) error {
		for _, a := range []store.Annotation{in, a2, a3} {
			if err := tx.PutAnnotation(e.ctx, spaceA, a); err != nil {
				return err
			}
		}
		return nil
	})
	cases := []struct {
		name string
		ids  []string
		want []store.Annotation
	}{
		{"all", nil, []store.Annotation{a2, a3, a1}},
		{"some", []string{"t1", "t2"}, []store.Annotation{a2, a1}},
		{"missing and unannotated skipped", []string{"t4", "nope", "t3"}, []store.Annotation{a3}},
		{"repeated", []string{"t3", "t3"}, []store.Annotation{a3}},
		{"empty", []string{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.s.ListAnnotations(e.ctx, spaceA, tc.ids)
			if err != nil {
				t.Fatalf("ListAnnotations: %v", err)
			}
			if d := diff(tc.want, got); d != "" {
				t.Errorf("ListAnnotations(%q) (-want +got):\n%s", tc.ids, d)
			}
			e.checkTimes(got)
		})
	}
}

func testAnnotationReplace(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "t1", 1))
	e.update(func(tx store.Tx) error { return tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("t1", "old")) })
	repl := store.Annotation{TurnID: "t1", Context: "replaced", Producer: "new"}
	e.update(func(tx store.Tx) error { return tx.PutAnnotation(e.ctx, spaceA, repl) })
	got, err := e.s.ListAnnotations(e.ctx, spaceA, nil)
	if err != nil {
		t.Fatalf("ListAnnotations: %v", err)
	}
	if d := diff([]store.Annotation{repl}, got); d != "" {
		t.Errorf("after replace (-want +got):\n%s", d)
	}
}

func testAnnotationMissingTurn(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceB, "t1", 1))
	err := e.s.Update(e.ctx, func(tx store.Tx) error {
		return tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("t1", "p"))
	})
	e.wantErr("PutAnnotation of a turn of another space", err, store.ErrNotFound)
	err = e.s.Update(e.ctx, func(tx store.Tx) error {
		return tx.PutAnnotation(e.ctx, spaceB, mkAnnotation("t2", "p"))
	})
	e.wantErr("PutAnnotation of a missing turn", err, store.ErrNotFound)
	// A turn put earlier in the same transaction can be annotated.
	e.update(func(tx store.Tx) error {
		if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "t9", 9)); err != nil {
			return err
		}
		return tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("t9", "p"))
	})
	for _, sp := range []store.Space{spaceA, spaceB} {
		got, err := e.s.ListAnnotations(e.ctx, sp, nil)
		if err != nil {
			t.Fatalf("ListAnnotations: %v", err)
		}
		want := 0
		if sp == spaceA {
			want = 1
		}
		if len(got) != want {
			t.Errorf("%s: %d annotations, want %d", sp, len(got), want)
		}
	}
}

var eventTests = []test{
	{name: "PutGetReplace", fn: testEventPutGet},
	{name: "Order", fn: testEventOrder},
	{name: "Delete", fn: testEventDelete},
}

func testEventPutGet(t *testing.T, e *env) {
	want := mkEvent(spaceA, "E1", base)
	in := want
	in.Start, in.CreatedAt = want.Start.In(zone), time.Now()
	want.CreatedAt = in.CreatedAt
	e.update(func(tx store.Tx) error { return tx.PutEvent(e.ctx, in) })
	got, err := e.event(spaceA, "E1")
	if err != nil {
		t.Fatalf("event: %v", err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("event (-want +got):\n%s", d)
	}
	e.checkTimes(got)

	repl := store.Event{Space: spaceA, ID: "E1", Title: "new", TurnIDs: []string{"x"}, Version: 4}
	e.update(func(tx store.Tx) error { return tx.PutEvent(e.ctx, repl) })
	got, err = e.event(spaceA, "E1")
	if err != nil {
		t.Fatalf("event: %v", err)
	}
	if d := diff(repl, got); d != "" {
		t.Errorf("event after replace (-want +got):\n%s", d)
	}
	evs, err := e.s.ListEvents(e.ctx, spaceA)
	if err != nil || len(evs) != 1 {
		t.Errorf("ListEvents after replace = %d events, %v; want 1", len(evs), err)
	}
	for _, id := range []string{"E2", ""} {
		_, err = e.event(spaceA, id)
		e.wantErr("event("+id+")", err, store.ErrNotFound)
	}
}

func testEventOrder(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error {
		for _, ev := range []store.Event{
			mkEvent(spaceA, "b", base.Add(time.Hour)),
			mkEvent(spaceA, "c", base),
			mkEvent(spaceA, "a", base.Add(time.Hour)),
			mkEvent(spaceA, "z", time.Time{}),
			mkEvent(spaceA, "d", base.Add(-time.Nanosecond)),
		} {
			if err := tx.PutEvent(e.ctx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	evs, err := e.s.ListEvents(e.ctx, spaceA)
	if err != nil {
		t.Fatalf("ListEvents: %v", err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.ID)
	}
	// Zero CreatedAt sorts first; ties on CreatedAt go by ID.
	if d := diff([]string{"z", "d", "c", "a", "b"}, got); d != "" {
		t.Errorf("ListEvents order (-want +got):\n%s", d)
	}
	e.checkTimes(evs)
}

func testEventDelete(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error {
		for _, id := range []string{"E1", "E2"} {
			if err := tx.PutEvent(e.ctx, mkEvent(spaceA, id, base)); err != nil {
				return err
			}
		}
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{
			mkVector(store.VectorEvent, "E1", "e1", 1),
			mkVector(store.VectorEvent, "E2", "e1", 2),
			mkVector(store.VectorTurn, "E1", "e1", 3), // a turn vector with the event's id
		})
	})
	e.update(func(tx store.Tx) error { return tx.DeleteEvent(e.ctx, spaceA, "E1") })
	_, err := e.event(spaceA, "E1")
	e.wantErr("event after delete", err, store.ErrNotFound)
	evs, err := e.s.ListEvents(e.ctx, spaceA)
	if err != nil || len(evs) != 1 || evs[0].ID != "E2" {
		t.Errorf("ListEvents after delete = %+v, %v; want E2 only", evs, err)
	}
	vs, err := e.s.ListVectors(e.ctx, spaceA, store.VectorEvent, "e1")
	if err != nil || len(vs) != 1 || vs[0].ID != "E2" {
		t.Errorf("event vectors after delete = %+v, %v; want E2 only", vs, err)
	}
	vs, err = e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil || len(vs) != 1 {
		t.Errorf("turn vectors after DeleteEvent = %+v, %v; want the one turn vector kept", vs, err)
	}
	err = e.s.Update(e.ctx, func(tx store.Tx) error { return tx.DeleteEvent(e.ctx, spaceA, "E1") })
	e.wantErr("second DeleteEvent", err, store.ErrNotFound)
}

var linkTests = []test{
	{name: "PutListReplace", fn: testLinks},
}

func testLinks(t *testing.T, e *env) {
	l1 := mkLink("b", "a", "answer_to")
	l2 := mkLink("a", "c", "continues")
	l3 := mkLink("a", "c", "answer_to")
	l4 := mkLink("d", "e", "continues")
	l4.InvalidatedAt = base.Add(time.Hour).In(zone)
	e.update(func(tx store.Tx) error {
		for _, l := range []store.Link{l1, l2, l3, l4} {
			if err := tx.PutLink(e.ctx, spaceA, l); err != nil {
				return err
			}
		}
		return nil
	})
	cases := []struct {
		name string
		ids  []string
		want []store.Link
	}{
		{"all", nil, []store.Link{l3, l2, l1, l4}},
		{"source or target", []string{"a"}, []store.Link{l3, l2, l1}},
		{"target only", []string{"e"}, []store.Link{l4}},
		{"both ends listed once", []string{"a", "c", "b"}, []store.Link{l3, l2, l1}},
		{"missing", []string{"zz"}, nil},
		{"empty", []string{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.s.ListLinks(e.ctx, spaceA, tc.ids)
			if err != nil {
				t.Fatalf("ListLinks: %v", err)
			}
			if d := diff(tc.want, got); d != "" {
				t.Errorf("ListLinks(%q) (-want +got):\n%s", tc.ids, d)
			}
			e.checkTimes(got)
		})
	}

	// Same (Source, Target, Relation) replaces.
	repl := l2
	repl.Confidence = 0.1
	repl.InvalidatedAt = base.Add(2 * time.Hour)
	e.update(func(tx store.Tx) error { return tx.PutLink(e.ctx, spaceA, repl) })
	got, err := e.s.ListLinks(e.ctx, spaceA, []string{"c"})
	if err != nil {
		t.Fatalf("ListLinks: %v", err)
	}
	if d := diff([]store.Link{l3, repl}, got); d != "" {
		t.Errorf("after replace (-want +got):\n%s", d)
	}
	st, err := e.s.Stats(e.ctx, spaceA)
	if err != nil || st.Links != 4 {
		t.Errorf("Stats.Links = %d, %v; want 4 (invalidated links count)", st.Links, err)
	}
}

var vectorTests = []test{
	{name: "PutList", fn: testVectorPutList},
	{name: "EmbedderReplaced", fn: testVectorEmbedder},
	{name: "BatchAtomic", fn: testVectorBatchAtomic},
	{name: "VectorsInto", fn: testVectorsInto},
	{name: "VectorSetsInto", fn: testVectorSetsInto},
	{name: "Embedders", fn: testEmbedders},
	{name: "Window", fn: testWindowVectors},
	{name: "Passage", fn: testPassageVectors},
}

// testEmbedders checks the optional store.EmbedderLister, when the store
// has it: on the store and on its transactions (which see their own
// writes), each embedder once, sorted, per kind and per space.
func testEmbedders(t *testing.T, e *env) {
	el, ok := e.s.(store.EmbedderLister)
	if !ok {
		t.Skip("store does not implement store.EmbedderLister (optional)")
	}
	vs := []store.Vector{
		mkVector(store.VectorTurn, "a", "zeta", 1), mkVector(store.VectorTurn, "b", "zeta", 2),
		mkVector(store.VectorTurn, "c", "alpha", 3), mkVector(store.VectorEvent, "a", "mid", 4),
	}
	e.update(func(tx store.Tx) error {
		if err := tx.PutVectors(e.ctx, spaceA, vs); err != nil {
			return err
		}
		return tx.PutVectors(e.ctx, spaceB, []store.Vector{mkVector(store.VectorTurn, "a", "other", 5)})
	})
	check := func(what string, r store.EmbedderLister, sp store.Space, kind store.VectorKind, want []string) {
		t.Helper()
		got, err := r.Embedders(e.ctx, sp, kind)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if d := diff(want, got); d != "" && len(want)+len(got) > 0 {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	check("Embedders(A, turn)", el, spaceA, store.VectorTurn, []string{"alpha", "zeta"})
	check("Embedders(A, event)", el, spaceA, store.VectorEvent, []string{"mid"})
	check("Embedders(B, turn)", el, spaceB, store.VectorTurn, []string{"other"})
	check("Embedders(B, event)", el, spaceB, store.VectorEvent, nil)
	e.update(func(tx store.Tx) error {
		tl, ok := tx.(store.EmbedderLister)
		if !ok {
			t.Fatal("the store implements store.EmbedderLister but its Tx does not")
		}
		if err := tx.PutVectors(e.ctx, spaceA, []store.Vector{mkVector(store.VectorTurn, "d", "beta", 6)}); err != nil {
			return err
		}
		check("tx.Embedders(A, turn) after a put in the tx", tl, spaceA, store.VectorTurn, []string{"alpha", "beta", "zeta"})
		return nil
	})
	_, err := el.Embedders(e.ctx, store.Space{}, store.VectorTurn)
	e.wantErr("Embedders without a user", err, store.ErrInvalid)
}

// testVectorsInto checks the optional store.VectorsIntoReader, when the
// store has it: vectors decoded straight into a matrix are those
// ListVectors returns, at the rows asked, skipping unknown ids, other
// dimensions, other embedders, kinds and spaces.
func testVectorsInto(t *testing.T, e *env) {
	vi, ok := e.s.(store.VectorsIntoReader)
	if !ok {
		t.Skip("store does not implement store.VectorsIntoReader (optional)")
	}
	vs := []store.Vector{
		{Kind: store.VectorTurn, ID: "a", Embedder: "e", Values: []float32{1, 2}},
		{Kind: store.VectorTurn, ID: "b", Embedder: "e", Values: []float32{3, 4}},
		{Kind: store.VectorTurn, ID: "c", Embedder: "e", Values: []float32{5, 6, 7}}, // another dimension
		{Kind: store.VectorTurn, ID: "d", Embedder: "other", Values: []float32{8, 9}},
		{Kind: store.VectorEvent, ID: "a", Embedder: "e", Values: []float32{10, 11}},
		{Kind: store.VectorTurn, ID: "z", Embedder: "e", Values: []float32{12, 13}}, // no row
	}
	e.update(func(tx store.Tx) error {
		if err := tx.PutVectors(e.ctx, spaceA, vs); err != nil {
			return err
		}
		return tx.PutVectors(e.ctx, spaceB, []store.Vector{{Kind: store.VectorTurn, ID: "a", Embedder: "e", Values: []float32{-1, -2}}})
	})
	rows := map[string]int{"b": 0, "a": 1, "c": 2, "d": 2}
	dst := make([]float32, 3*2)
	n, err := vi.VectorsInto(e.ctx, spaceA, store.VectorTurn, "e", 2, dst, func(id string) int {
		if i, ok := rows[id]; ok {
			return i
		}
		return -1
	})
	if err != nil {
		t.Fatalf("VectorsInto: %v", err)
	}
	if n != 2 || !slices.Equal(dst, []float32{3, 4, 1, 2, 0, 0}) {
		t.Errorf("VectorsInto wrote %d rows: %v; want 2: [3 4 1 2 0 0]", n, dst)
	}
	n, err = vi.VectorsInto(e.ctx, spaceA, store.VectorEvent, "e", 2, dst[:2], func(string) int { return 0 })
	if err != nil || n != 1 || !slices.Equal(dst[:2], []float32{10, 11}) {
		t.Errorf("VectorsInto of event vectors = %d, %v: %v; want 1: [10 11]", n, err, dst[:2])
	}
	_, err = vi.VectorsInto(e.ctx, store.Space{}, store.VectorTurn, "e", 2, dst, func(string) int { return 0 })
	e.wantErr("VectorsInto without a user", err, store.ErrInvalid)
	_, err = vi.VectorsInto(e.ctx, spaceA, store.VectorTurn, "e", 0, dst, func(string) int { return 0 })
	e.wantErr("VectorsInto of dimension 0", err, store.ErrInvalid)
}

// testVectorSetsInto checks the optional store.VectorSetsIntoReader, when
// the store has it: every set gets what VectorsInto gives it (rows, count),
// with matrices of every size (a store may read differently when the sets
// hold most of its vectors), and bad sets fail with ErrInvalid.
func testVectorSetsInto(t *testing.T, e *env) {
	vs, ok := e.s.(store.VectorSetsIntoReader)
	if !ok {
		t.Skip("store does not implement store.VectorSetsIntoReader (optional)")
	}
	vi, ok := e.s.(store.VectorsIntoReader)
	if !ok {
		t.Fatal("store implements store.VectorSetsIntoReader but not store.VectorsIntoReader")
	}
	var in []store.Vector
	for i := range 40 {
		id := fmt.Sprintf("t%02d", (i*7)%40)
		in = append(in,
			store.Vector{Kind: store.VectorTurn, ID: id, Embedder: "e", Values: []float32{float32(i), 1}},
			store.Vector{Kind: store.VectorWindow, ID: id, Embedder: "w", Values: []float32{float32(i), 2}})
		if i%3 == 0 {
			in = append(in, store.Vector{Kind: store.VectorEvent, ID: fmt.Sprint("e", i), Embedder: "e", Values: []float32{float32(i), 3}})
		}
	}
	in = append(in,
		store.Vector{Kind: store.VectorTurn, ID: "x", Embedder: "e", Values: []float32{5, 6, 7}}, // another dimension
		store.Vector{Kind: store.VectorTurn, ID: "y", Embedder: "other", Values: []float32{8, 9}},
		store.Vector{Kind: store.VectorWindow, ID: "t00", Embedder: "e", Values: []float32{10, 11}}) // window kind, turn embedder
	e.update(func(tx store.Tx) error {
		if err := tx.PutVectors(e.ctx, spaceA, in); err != nil {
			return err
		}
		return tx.PutVectors(e.ctx, spaceB, []store.Vector{{Kind: store.VectorTurn, ID: "t01", Embedder: "e", Values: []float32{-1, -2}}})
	})
	type want struct {
		kind store.VectorKind
		emb  string
	}
	kinds := []want{{store.VectorTurn, "e"}, {store.VectorWindow, "w"}, {store.VectorEvent, "e"}, {store.VectorWindow, "e"}, {store.VectorTurn, "none"}}
	// rowOf gives each id a row of its own (ids past the matrix are
	// skipped), the same in both reads.
	order := map[string]int{}
	for _, v := range in {
		if _, ok := order[v.ID]; !ok {
			order[v.ID] = len(order)
		}
	}
	rowOf := func(id string, rows int) int {
		if i, ok := order[id]; ok {
			return i
		}
		return -1
	}
	for _, rows := range []int{1, 8, 40, 200} {
		sets := make([]store.VectorSet, len(kinds))
		var mu sync.Mutex
		seen := map[string]bool{}
		for i, k := range kinds {
			sets[i] = store.VectorSet{Kind: k.kind, Embedder: k.emb, Dim: 2, Dst: make([]float32, 2*rows), Row: func(id string) int {
				mu.Lock()
				defer mu.Unlock()
				key := string(k.kind) + "/" + id
				if seen[key] {
					t.Errorf("rows %d: Row(%q) called twice for %s vectors", rows, id, k.kind)
				}
				seen[key] = true
				return rowOf(id, rows)
			}}
		}
		if err := vs.VectorSetsInto(e.ctx, spaceA, sets); err != nil {
			t.Fatalf("VectorSetsInto: %v", err)
		}
		for i, k := range kinds {
			dst := make([]float32, 2*rows)
			n, err := vi.VectorsInto(e.ctx, spaceA, k.kind, k.emb, 2, dst, func(id string) int { return rowOf(id, rows) })
			if err != nil {
				t.Fatalf("VectorsInto: %v", err)
			}
			if sets[i].N != n || !slices.Equal(sets[i].Dst, dst) {
				t.Errorf("rows %d: VectorSetsInto of %s vectors of %q wrote %d rows %v; VectorsInto wrote %d: %v", rows, k.kind, k.emb, sets[i].N, sets[i].Dst, n, dst)
			}
		}
	}
	none := func(string) int { return 0 }
	err := vs.VectorSetsInto(e.ctx, spaceA, []store.VectorSet{{Kind: store.VectorTurn, Embedder: "e", Dim: 2, Row: none}, {Kind: store.VectorTurn, Embedder: "e", Dim: 2, Row: none}})
	e.wantErr("VectorSetsInto with a set twice", err, store.ErrInvalid)
	err = vs.VectorSetsInto(e.ctx, spaceA, []store.VectorSet{{Kind: store.VectorTurn, Embedder: "e", Dim: 0, Row: none}})
	e.wantErr("VectorSetsInto of dimension 0", err, store.ErrInvalid)
	err = vs.VectorSetsInto(e.ctx, store.Space{}, []store.VectorSet{{Kind: store.VectorTurn, Embedder: "e", Dim: 2, Row: none}})
	e.wantErr("VectorSetsInto without a user", err, store.ErrInvalid)
	if err := vs.VectorSetsInto(e.ctx, spaceA, nil); err != nil {
		t.Errorf("VectorSetsInto of no sets: %v", err)
	}
}

func testVectorPutList(t *testing.T, e *env) {
	vals := []float32{0, -0.5, 1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1)), 3.1415927}
	in := []store.Vector{
		{Kind: store.VectorTurn, ID: "c", Embedder: "e1", Values: vals},
		mkVector(store.VectorTurn, "a", "e1", 1),
		mkVector(store.VectorEvent, "b", "e1", 2),
		mkVector(store.VectorTurn, "b", "e1", 3),
		{Kind: store.VectorTurn, ID: "empty", Embedder: "e1"},
	}
	e.update(func(tx store.Tx) error { return tx.PutVectors(e.ctx, spaceA, in) })
	got, err := e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil {
		t.Fatalf("ListVectors: %v", err)
	}
	want := []store.Vector{in[1], in[3], in[0], in[4]}
	if d := diff(want, got); d != "" {
		t.Errorf("ListVectors(turn) (-want +got):\n%s", d)
	}
	got, err = e.s.ListVectors(e.ctx, spaceA, store.VectorEvent, "e1")
	if err != nil {
		t.Fatalf("ListVectors: %v", err)
	}
	if d := diff([]store.Vector{in[2]}, got); d != "" {
		t.Errorf("ListVectors(event) (-want +got):\n%s", d)
	}
	// Changing the input after the put, or the output, leaves the store alone.
	in[1].Values[0] = 42
	got[0].Values[0] = 43
	got, err = e.s.ListVectors(e.ctx, spaceA, store.VectorEvent, "e1")
	if err != nil || got[0].Values[0] != 2 {
		t.Errorf("store shares vector memory with callers: %+v, %v", got, err)
	}
	got, err = e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil || got[0].ID != "a" || got[0].Values[0] != 1 {
		t.Errorf("store shares vector memory with callers: %+v, %v", got, err)
	}
	// Same (kind, id) and embedder: replaced.
	repl := mkVector(store.VectorTurn, "a", "e1", 7)
	e.update(func(tx store.Tx) error { return tx.PutVectors(e.ctx, spaceA, []store.Vector{repl}) })
	got, err = e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil || len(got) != 4 {
		t.Fatalf("ListVectors after replace: %d vectors, %v; want 4", len(got), err)
	}
	if d := diff(repl, got[0]); d != "" {
		t.Errorf("replaced vector (-want +got):\n%s", d)
	}
	// Nil and empty batches are fine.
	e.update(func(tx store.Tx) error {
		if err := tx.PutVectors(e.ctx, spaceA, nil); err != nil {
			return err
		}
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{})
	})
}

func testVectorEmbedder(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error {
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{
			mkVector(store.VectorTurn, "a", "e1", 1),
			mkVector(store.VectorTurn, "b", "e1", 2),
		})
	})
	// Re-embedding "a" with another embedder replaces its vector.
	a2 := store.Vector{Kind: store.VectorTurn, ID: "a", Embedder: "e2", Values: []float32{9, 9, 9}}
	e.update(func(tx store.Tx) error { return tx.PutVectors(e.ctx, spaceA, []store.Vector{a2}) })
	old, err := e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil {
		t.Fatalf("ListVectors(e1): %v", err)
	}
	if d := diff([]store.Vector{mkVector(store.VectorTurn, "b", "e1", 2)}, old); d != "" {
		t.Errorf("old embedder's vectors (-want +got):\n%s", d)
	}
	cur, err := e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e2")
	if err != nil {
		t.Fatalf("ListVectors(e2): %v", err)
	}
	if d := diff([]store.Vector{a2}, cur); d != "" {
		t.Errorf("new embedder's vectors (-want +got):\n%s", d)
	}
	none, err := e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e3")
	if err != nil || len(none) != 0 {
		t.Errorf("ListVectors(unknown embedder) = %+v, %v; want none", none, err)
	}
}

func testVectorBatchAtomic(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error {
		err := tx.PutVectors(e.ctx, spaceA, []store.Vector{
			mkVector(store.VectorTurn, "a", "e1", 1),
			{Kind: store.VectorTurn, ID: "", Embedder: "e1"},
		})
		e.wantErr("PutVectors with an empty id", err, store.ErrInvalid)
		err = tx.PutVectors(e.ctx, spaceA, []store.Vector{
			mkVector(store.VectorTurn, "b", "e1", 1),
			{Kind: "", ID: "x", Embedder: "e1"},
		})
		e.wantErr("PutVectors with an empty kind", err, store.ErrInvalid)
		return nil // commit: the failed batches must have left nothing
	})
	got, err := e.s.ListVectors(e.ctx, spaceA, store.VectorTurn, "e1")
	if err != nil || len(got) != 0 {
		t.Errorf("after invalid batches: %+v, %v; want no vectors", got, err)
	}
}

var historyTests = []test{
	{name: "AppendList", fn: testHistory},
	{name: "Redact", fn: testRedactHistory},
}

// testRedactHistory checks that RedactHistory replaces the bodies of the
// named entries only, in the named space only, keeps everything else of
// them, and that a later append still gets the next Seq.
func testRedactHistory(t *testing.T, e *env) {
	secret := json.RawMessage(`{"summary":"hunter2"}`)
	e.update(func(tx store.Tx) error {
		for _, sp := range []store.Space{spaceA, spaceB} {
			for _, c := range []store.Change{
				{Kind: "event", ID: "E1", Action: "create", Actor: "m", After: secret},
				{Kind: "event", ID: "E1", Action: "update", Actor: "m", Before: secret, After: secret},
				{Kind: "annotation", ID: "D1:1", Action: "create", Actor: "offline", After: json.RawMessage(`{"k":1}`)},
			} {
				if err := tx.AppendHistory(e.ctx, sp, c); err != nil {
					return err
				}
			}
		}
		return nil
	})
	before, err := e.s.History(e.ctx, spaceA, "", "")
	if err != nil || len(before) != 3 {
		t.Fatalf("History = %d entries, %v; want 3", len(before), err)
	}
	note := json.RawMessage(`{"redacted":true}`)
	e.update(func(tx store.Tx) error {
		if err := tx.RedactHistory(e.ctx, spaceA, []int64{before[0].Seq, before[1].Seq, 9999}, note); err != nil {
			return err
		}
		// A space that holds nothing: not an error.
		return tx.RedactHistory(e.ctx, store.Space{UserID: "nobody"}, []int64{1}, nil)
	})
	after, err := e.s.History(e.ctx, spaceA, "", "")
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	want := slices.Clone(before)
	want[0].After = note
	want[1].Before, want[1].After = note, note
	if d := diff(want, after); d != "" {
		t.Errorf("after RedactHistory (-want +got):\n%s", d)
	}
	other, err := e.s.History(e.ctx, spaceB, "", "")
	if err != nil || len(other) != 3 || string(other[0].After) != string(secret) {
		t.Errorf("space B after redacting A: %+v, %v; want untouched", other, err)
	}
	e.update(func(tx store.Tx) error {
		return tx.RedactHistory(e.ctx, spaceA, []int64{before[2].Seq}, nil)
	})
	after, _ = e.s.History(e.ctx, spaceA, "annotation", "D1:1")
	if len(after) != 1 || after[0].Before != nil || after[0].After != nil || after[0].Action != "create" {
		t.Errorf("redacted with a nil note: %+v; want the entry kept with no bodies", after)
	}
	e.update(func(tx store.Tx) error {
		return tx.AppendHistory(e.ctx, spaceA, store.Change{Kind: "turn", ID: "D1:1", Action: "delete"})
	})
	after, _ = e.s.History(e.ctx, spaceA, "", "")
	if n := len(after); n != 4 || after[n-1].Seq <= before[2].Seq {
		t.Errorf("append after redaction: %+v; want a 4th entry with a higher Seq", after)
	}
}

func testHistory(t *testing.T, e *env) {
	at := base.In(zone)
	in := []store.Change{
		{Kind: "event", ID: "E1", Action: "create", Actor: "m/v1", After: json.RawMessage(`{"title":"x"}`), At: at},
		{Kind: "annotation", ID: "D1:1", Action: "create", Actor: "offline"},
		{Kind: "event", ID: "E1", Action: "update", Actor: "user", Before: json.RawMessage(`{"title":"x"}`), After: json.RawMessage(`{"title":"y"}`)},
		{Kind: "event", ID: "E2", Action: "delete", Before: json.RawMessage(`{}`)},
	}
	before := time.Now().Add(-time.Second)
	e.update(func(tx store.Tx) error {
		for _, c := range in[:2] {
			if err := tx.AppendHistory(e.ctx, spaceA, c); err != nil {
				return err
			}
		}
		return nil
	})
	e.update(func(tx store.Tx) error {
		for _, c := range in[2:] {
			c.Seq = 1000 // ignored: the store assigns Seq
			if err := tx.AppendHistory(e.ctx, spaceA, c); err != nil {
				return err
			}
		}
		return nil
	})
	after := time.Now().Add(time.Second)
	all, err := e.s.History(e.ctx, spaceA, "", "")
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if len(all) != len(in) {
		t.Fatalf("History: %d changes, want %d", len(all), len(in))
	}
	e.checkTimes(all)
	for i, c := range all {
		if i > 0 && c.Seq <= all[i-1].Seq {
			t.Errorf("History Seq not increasing: %d after %d", c.Seq, all[i-1].Seq)
		}
		if i == 0 {
			if !c.At.Equal(at) {
				t.Errorf("given At = %v, want %v", c.At, at)
			}
		} else if c.At.Before(before) || c.At.After(after) {
			t.Errorf("zero At filled with %v, want the append time", c.At)
		}
		want := in[i]
		want.Seq, want.At = c.Seq, c.At
		if d := diff(want, c); d != "" {
			t.Errorf("change %d (-want +got):\n%s", i, d)
		}
	}
	cases := []struct {
		kind, id string
		want     []int // indexes into all
	}{
		{"event", "", []int{0, 2, 3}},
		{"", "D1:1", []int{1}},
		{"event", "E1", []int{0, 2}},
		{"annotation", "E1", nil},
		{"link", "", nil},
	}
	for _, tc := range cases {
		got, err := e.s.History(e.ctx, spaceA, tc.kind, tc.id)
		if err != nil {
			t.Fatalf("History(%q, %q): %v", tc.kind, tc.id, err)
		}
		var want []store.Change
		for _, i := range tc.want {
			want = append(want, all[i])
		}
		if d := diff(want, got); d != "" {
			t.Errorf("History(%q, %q) (-want +got):\n%s", tc.kind, tc.id, d)
		}
	}
}
