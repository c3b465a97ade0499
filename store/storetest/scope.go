package storetest

import (
	"strings"
	"testing"

	"github.com/higmem/higmem/store"
)

var spaceTests = []test{
	{name: "List", fn: testSpaces},
}

func testSpaces(t *testing.T, e *env) {
	got, err := e.s.Spaces(e.ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("Spaces of an empty store = %v, %v; want none", got, err)
	}
	u := store.Space{UserID: "u"}
	ua := store.Space{UserID: "u", AgentID: "a"}
	upper := store.Space{UserID: "U", AgentID: "z"}
	onlyEvent := store.Space{UserID: "v", AgentID: "ev"}
	derivedOnly := store.Space{UserID: "w"}
	e.putTurns(mkTurn(ua, "1", 1), mkTurn(u, "1", 1), mkTurn(upper, "1", 1))
	e.update(func(tx store.Tx) error {
		if err := tx.PutEvent(e.ctx, mkEvent(onlyEvent, "E", base)); err != nil {
			return err
		}
		// Links, vectors and history alone do not make a space show.
		if err := tx.PutLink(e.ctx, derivedOnly, mkLink("a", "b", "r")); err != nil {
			return err
		}
		if err := tx.PutVectors(e.ctx, derivedOnly, []store.Vector{mkVector(store.VectorTurn, "a", "e1", 1)}); err != nil {
			return err
		}
		return tx.AppendHistory(e.ctx, derivedOnly, store.Change{Kind: "turn", ID: "a", Action: "delete"})
	})
	got, err = e.s.Spaces(e.ctx)
	if err != nil {
		t.Fatalf("Spaces: %v", err)
	}
	// Ordered by (UserID, AgentID), byte-wise.
	want := []store.Space{upper, u, ua, onlyEvent}
	if d := diff(want, got); d != "" {
		t.Errorf("Spaces (-want +got):\n%s", d)
	}
	// A space whose turns are all deleted no longer shows.
	e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, u, "1") })
	got, err = e.s.Spaces(e.ctx)
	if err != nil {
		t.Fatalf("Spaces: %v", err)
	}
	if d := diff([]store.Space{upper, ua, onlyEvent}, got); d != "" {
		t.Errorf("Spaces after deleting a space's only turn (-want +got):\n%s", d)
	}
}

var statsTests = []test{
	{name: "Counts", fn: testStats},
}

func testStats(t *testing.T, e *env) {
	st, err := e.s.Stats(e.ctx, spaceA)
	if err != nil || st != (store.Stats{}) {
		t.Fatalf("Stats of an empty space = %+v, %v; want zero", st, err)
	}
	// LastSeq is the largest Seq, not the last one put.
	e.putTurns(mkTurn(spaceA, "a", 5), mkTurn(spaceA, "b", 12), mkTurn(spaceA, "c", 7))
	e.update(func(tx store.Tx) error {
		for _, id := range []string{"E1", "E2"} {
			if err := tx.PutEvent(e.ctx, mkEvent(spaceA, id, base)); err != nil {
				return err
			}
		}
		return tx.PutLink(e.ctx, spaceA, mkLink("a", "b", "r"))
	})
	st, err = e.s.Stats(e.ctx, spaceA)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if want := (store.Stats{Turns: 3, Events: 2, Links: 1, LastSeq: 12}); st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
}

var scopeTests = []test{
	{name: "Isolation", fn: testScopeIsolation},
	{name: "DeleteSpace", fn: testScopeDeleteSpace},
}

// checkPopulated checks that sp holds exactly what populate(sp, tag) wrote.
func (e *env) checkPopulated(sp store.Space, tag string) {
	e.Helper()
	s := e.snap(e.s, sp)
	if len(s.Turns) != 3 || len(s.Annotations) != 3 || len(s.Events) != 1 || len(s.Links) != 2 ||
		len(s.Vectors["turn/e1"]) != 2 || len(s.Vectors["event/e1"]) != 1 || len(s.Vectors) != 2 || len(s.History) != 1 {
		e.Errorf("%s: wrong record counts: %d turns, %d annotations, %d events, %d links, vectors %v, %d changes",
			sp, len(s.Turns), len(s.Annotations), len(s.Events), len(s.Links), s.Vectors, len(s.History))
	}
	if want := (store.Stats{Turns: 3, Events: 1, Links: 2, LastSeq: 3}); s.Stats != want {
		e.Errorf("%s: Stats = %+v, want %+v", sp, s.Stats, want)
	}
	for _, tr := range s.Turns {
		if tr.Space != sp || !strings.HasPrefix(tr.Text, tag+" ") {
			e.Errorf("%s: turn %s of space %s says %q: leaked from another space", sp, tr.ID, tr.Space, tr.Text)
		}
	}
	for _, a := range s.Annotations {
		if a.Producer != tag {
			e.Errorf("%s: annotation of %s by %q: leaked from another space", sp, a.TurnID, a.Producer)
		}
	}
	for _, ev := range s.Events {
		if ev.Space != sp || ev.Title != tag+" event" {
			e.Errorf("%s: event %q of space %s: leaked from another space", sp, ev.Title, ev.Space)
		}
	}
	if len(s.Links) == 2 && s.Links[1].Relation != tag {
		e.Errorf("%s: link %+v: leaked from another space", sp, s.Links[1])
	}
	if len(s.Profiles) != 1 || s.Profiles[0].Value != tag {
		e.Errorf("%s: profile records %+v: want the one of %q", sp, s.Profiles, tag)
	}
	for _, c := range s.History {
		if c.Actor != tag {
			e.Errorf("%s: change by %q: leaked from another space", sp, c.Actor)
		}
	}
	tr, err := e.s.GetTurn(e.ctx, sp, "D1:1")
	if err != nil || tr.Text != tag+" says D1:1" {
		e.Errorf("%s: GetTurn = %q, %v", sp, tr.Text, err)
	}
	ev, err := e.event(sp, "E1")
	if err != nil || ev.Title != tag+" event" {
		e.Errorf("%s: event = %q, %v", sp, ev.Title, err)
	}
	anns, err := e.s.ListAnnotations(e.ctx, sp, []string{"D1:1"})
	if err != nil || len(anns) != 1 || anns[0].Producer != tag {
		e.Errorf("%s: ListAnnotations(D1:1) = %+v, %v", sp, anns, err)
	}
	links, err := e.s.ListLinks(e.ctx, sp, []string{"D1:3"})
	if err != nil || len(links) != 1 || links[0].Relation != tag {
		e.Errorf("%s: ListLinks(D1:3) = %+v, %v", sp, links, err)
	}
	hist, err := e.s.History(e.ctx, sp, "event", "E1")
	if err != nil || len(hist) != 1 || hist[0].Actor != tag {
		e.Errorf("%s: History(event, E1) = %+v, %v", sp, hist, err)
	}
}

func testScopeIsolation(t *testing.T, e *env) {
	all := []struct {
		sp  store.Space
		tag string
	}{{spaceA, "A"}, {spaceB, "B"}, {spaceC, "C"}, {spaceD, "D"}}
	for _, x := range all {
		e.populate(x.sp, x.tag)
	}
	for _, x := range all {
		e.checkPopulated(x.sp, x.tag)
	}
	// A turn id taken in one space is free in another.
	e.putTurns(mkTurn(spaceA, "shared", 10))
	other := mkTurn(spaceB, "shared", 10)
	other.Text = "B's own text"
	e.putTurns(other)

	beforeA := e.snap(e.s, spaceA)
	// Every write in B must leave A alone.
	e.update(func(tx store.Tx) error {
		if err := tx.DeleteTurn(e.ctx, spaceB, "D1:2"); err != nil {
			return err
		}
		if err := tx.DeleteEvent(e.ctx, spaceB, "E1"); err != nil {
			return err
		}
		if err := tx.PutAnnotation(e.ctx, spaceB, mkAnnotation("D1:1", "B2")); err != nil {
			return err
		}
		if err := tx.PutEvent(e.ctx, mkEvent(spaceB, "E2", base)); err != nil {
			return err
		}
		if err := tx.PutLink(e.ctx, spaceB, mkLink("D1:1", "D1:3", "new")); err != nil {
			return err
		}
		if err := tx.PutVectors(e.ctx, spaceB, []store.Vector{mkVector(store.VectorTurn, "D1:1", "e2", 5)}); err != nil {
			return err
		}
		if err := tx.PutProfileRecord(e.ctx, spaceB, mkProfile("P1", "Mel", "D1:1")); err != nil {
			return err
		}
		if err := tx.PutProfileRecord(e.ctx, spaceB, mkProfile("P2", "Mel", "D1:3")); err != nil {
			return err
		}
		return tx.AppendHistory(e.ctx, spaceB, store.Change{Kind: "event", ID: "E1", Action: "delete"})
	})
	if d := diff(beforeA, e.snap(e.s, spaceA)); d != "" {
		t.Errorf("writes in %s changed %s (-before +after):\n%s", spaceB, spaceA, d)
	}
	// Deleting a record that only exists in another space is ErrNotFound.
	e.update(func(tx store.Tx) error {
		e.wantErr("DeleteTurn of another space's turn", tx.DeleteTurn(e.ctx, spaceC, "shared"), store.ErrNotFound)
		e.wantErr("DeleteEvent of another space's event", tx.DeleteEvent(e.ctx, spaceB, "E1"), store.ErrNotFound)
		e.wantErr("DeleteProfileRecord of another space's record", tx.DeleteProfileRecord(e.ctx, spaceC, "P2"), store.ErrNotFound)
		return nil
	})
}

func testScopeDeleteSpace(t *testing.T, e *env) {
	for _, sp := range []store.Space{spaceA, spaceB, spaceC, spaceD} {
		e.populate(sp, sp.UserID)
	}
	e.update(func(tx store.Tx) error { return tx.DeleteSpace(e.ctx, spaceC) })
	empty := e.snap(e.s, spaceC)
	if len(empty.Turns)+len(empty.Annotations)+len(empty.Events)+len(empty.Links)+len(empty.Vectors)+len(empty.History)+len(empty.Profiles) != 0 ||
		empty.Stats != (store.Stats{}) {
		t.Errorf("deleted space still holds records: %+v", empty)
	}
	for _, sp := range []store.Space{spaceA, spaceB, spaceD} {
		e.checkPopulated(sp, sp.UserID)
	}
	got, err := e.s.Spaces(e.ctx)
	if err != nil {
		t.Fatalf("Spaces: %v", err)
	}
	if d := diff([]store.Space{spaceD, spaceA, spaceB}, got); d != "" {
		t.Errorf("Spaces after DeleteSpace (-want +got):\n%s", d)
	}
	// Deleting an empty or unknown space is fine, and the space can be
	// used again afterwards.
	e.update(func(tx store.Tx) error {
		if err := tx.DeleteSpace(e.ctx, spaceC); err != nil {
			return err
		}
		return tx.DeleteSpace(e.ctx, store.Space{UserID: "nobody"})
	})
	e.populate(spaceC, "C2")
	e.checkPopulated(spaceC, "C2")
}
