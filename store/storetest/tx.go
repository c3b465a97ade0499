package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/higmem/higmem/store"
)

var txTests = []test{
	{name: "ErrorRollsBack", fn: testTxErrorRollsBack},
	{name: "PanicRollsBack", fn: testTxPanicRollsBack},
	{name: "ReadOwnWrites", fn: testTxReadOwnWrites},
	{name: "OutsideReadsCommittedOnly", fn: testTxOutsideReads, needsParallelReads: true},
	{name: "UseAfterUpdate", fn: testTxUseAfterUpdate},
	{name: "CancelledContext", fn: testTxCancelled},
	{name: "CancelledDuringUpdate", fn: testTxCancelledDuring},
}

// writeEverything performs one of every write in spaceA and spaceB.
func (e *env) writeEverything(tx store.Tx) error {
	if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "new", 50)); err != nil {
		return err
	}
	if err := tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("new", "tx")); err != nil {
		return err
	}
	if err := tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("D1:1", "tx")); err != nil {
		return err
	}
	if err := tx.PutEvent(e.ctx, mkEvent(spaceA, "E1", base)); err != nil {
		return err
	}
	if err := tx.PutEvent(e.ctx, mkEvent(spaceA, "E9", base)); err != nil {
		return err
	}
	if err := tx.PutLink(e.ctx, spaceA, mkLink("new", "D1:1", "tx")); err != nil {
		return err
	}
	if err := tx.PutVectors(e.ctx, spaceA, []store.Vector{
		mkVector(store.VectorTurn, "new", "e1", 5),
		mkVector(store.VectorTurn, "D1:1", "e2", 5),
	}); err != nil {
		return err
	}
	if err := tx.AppendHistory(e.ctx, spaceA, store.Change{Kind: "event", ID: "E9", Action: "create", After: json.RawMessage(`{}`)}); err != nil {
		return err
	}
	if err := tx.PutProfileRecord(e.ctx, spaceA, mkProfile("P9", "Caroline", "new", "D1:1")); err != nil {
		return err
	}
	if err := tx.PutProfileRecord(e.ctx, spaceA, mkProfile("P8", "Mel", "D1:2")); err != nil {
		return err
	}
	if err := tx.DeleteTurn(e.ctx, spaceA, "D1:2"); err != nil {
		return err
	}
	if err := tx.DeleteEvent(e.ctx, spaceA, "E1"); err != nil {
		return err
	}
	return tx.DeleteSpace(e.ctx, spaceB)
}

func testTxErrorRollsBack(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	e.populate(spaceB, "B")
	beforeA, beforeB := e.snap(e.s, spaceA), e.snap(e.s, spaceB)
	err := e.s.Update(e.ctx, func(tx store.Tx) error {
		if err := e.writeEverything(tx); err != nil {
			t.Errorf("writes before the error: %v", err)
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Update error = %v, want it to wrap the function's error", err)
	}
	if d := diff(beforeA, e.snap(e.s, spaceA)); d != "" {
		t.Errorf("rolled-back Update changed %s (-before +after):\n%s", spaceA, d)
	}
	if d := diff(beforeB, e.snap(e.s, spaceB)); d != "" {
		t.Errorf("rolled-back Update changed %s (-before +after):\n%s", spaceB, d)
	}
}

// boom is the value the panic test panics with.
type boom struct{ msg string }

func testTxPanicRollsBack(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	e.populate(spaceB, "B")
	beforeA, beforeB := e.snap(e.s, spaceA), e.snap(e.s, spaceB)
	want := &boom{"storetest: panic inside Update"}
	func() {
		defer func() {
			if got := recover(); got != want {
				t.Errorf("recovered %v, want the original panic value %v", got, want)
			}
		}()
		_ = e.s.Update(e.ctx, func(tx store.Tx) error {
			if err := e.writeEverything(tx); err != nil {
				t.Errorf("writes before the panic: %v", err)
			}
			panic(want)
		})
		t.Error("Update returned instead of re-panicking")
	}()
	if d := diff(beforeA, e.snap(e.s, spaceA)); d != "" {
		t.Errorf("panicked Update changed %s (-before +after):\n%s", spaceA, d)
	}
	if d := diff(beforeB, e.snap(e.s, spaceB)); d != "" {
		t.Errorf("panicked Update changed %s (-before +after):\n%s", spaceB, d)
	}
	// The store is still usable: the writer lock was released.
	e.update(func(tx store.Tx) error { return e.writeEverything(tx) })
	if _, err := e.s.GetTurn(e.ctx, spaceA, "new"); err != nil {
		t.Errorf("Update after a panic did not commit: %v", err)
	}
}

func testTxReadOwnWrites(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	e.populate(spaceB, "B")
	var inside snapshot
	e.update(func(tx store.Tx) error {
		if err := e.writeEverything(tx); err != nil {
			return err
		}
		if _, err := tx.GetTurn(e.ctx, spaceA, "new"); err != nil {
			t.Errorf("tx.GetTurn of a turn put in the tx: %v", err)
		}
		_, err := tx.GetTurn(e.ctx, spaceA, "D1:2")
		e.wantErr("tx.GetTurn of a turn deleted in the tx", err, store.ErrNotFound)
		evs, err := tx.ListEvents(e.ctx, spaceA)
		if err != nil || len(evs) != 1 || evs[0].ID != "E9" {
			t.Errorf("tx.ListEvents = %+v, %v: want only E9, put in the tx (E1 was deleted in it)", evs, err)
		}
		inside = e.snap(tx, spaceA)
		if b := e.snap(tx, spaceB); len(b.Turns)+len(b.Events)+len(b.History) != 0 {
			t.Errorf("space deleted in the tx still visible in it: %+v", b)
		}
		return nil
	})
	if d := diff([]string{"D1:1", "D1:3", "new"}, ids(inside.Turns)); d != "" {
		t.Errorf("turns seen inside the tx (-want +got):\n%s", d)
	}
	if want := (store.Stats{Turns: 3, Events: 1, Links: 1, LastSeq: 50}); inside.Stats != want {
		t.Errorf("tx.Stats = %+v, want %+v", inside.Stats, want)
	}
	if d := diff([]store.Space{spaceA}, inside.Spaces); d != "" {
		t.Errorf("tx.Spaces (-want +got):\n%s", d)
	}
	// P1 (populate) stays, P9 is new, P8 went with the turn it cites.
	var got []string
	for _, p := range inside.Profiles {
		got = append(got, p.ID)
	}
	if d := diff([]string{"P1", "P9"}, got); d != "" {
		t.Errorf("profile records seen inside the tx (-want +got):\n%s", d)
	}
	if len(inside.Annotations) != 3 || len(inside.History) != 2 || len(inside.Vectors["turn/e1"]) != 1 ||
		len(inside.Vectors["turn/e2"]) != 1 || len(inside.Vectors["event/e1"]) != 0 {
		t.Errorf("tx reads miss its own writes: %+v", inside)
	}
	// After the commit, the store shows what the tx showed.
	if d := diff(inside, e.snap(e.s, spaceA)); d != "" {
		t.Errorf("committed state differs from what the tx saw (-tx +store):\n%s", d)
	}
}

func testTxOutsideReads(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	before := e.snap(e.s, spaceA)
	e.update(func(tx store.Tx) error {
		if err := e.writeEverything(tx); err != nil {
			return err
		}
		if d := diff(before, e.snap(e.s, spaceA)); d != "" {
			t.Errorf("reads outside the tx see uncommitted writes (-committed +seen):\n%s", d)
		}
		return nil
	})
	if _, err := e.s.GetTurn(e.ctx, spaceA, "new"); err != nil {
		t.Errorf("GetTurn after commit: %v", err)
	}
}

func testTxUseAfterUpdate(t *testing.T, e *env) {
	for _, fail := range []bool{false, true} {
		var saved store.Tx
		err := e.s.Update(e.ctx, func(tx store.Tx) error {
			saved = tx
			if fail {
				return errBoom
			}
			return nil
		})
		if fail != (err != nil) {
			t.Fatalf("Update = %v", err)
		}
		_, err = saved.PutTurn(e.ctx, mkTurn(spaceA, "late", 1))
		e.wantErr("PutTurn on a finished tx", err, store.ErrClosed)
		e.wantErr("DeleteSpace on a finished tx", saved.DeleteSpace(e.ctx, spaceA), store.ErrClosed)
		_, err = saved.GetTurn(e.ctx, spaceA, "late")
		e.wantErr("GetTurn on a finished tx", err, store.ErrClosed)
		_, err = saved.Stats(e.ctx, spaceA)
		e.wantErr("Stats on a finished tx", err, store.ErrClosed)
	}
	_, err := e.s.GetTurn(e.ctx, spaceA, "late")
	e.wantErr("GetTurn of a turn put on a finished tx", err, store.ErrNotFound)
}

func testTxCancelled(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	err := e.s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.PutTurn(ctx, mkTurn(spaceA, "x", 1))
		return err
	})
	e.wantErr("Update with a cancelled context", err, context.Canceled)
	if ts := e.listTurns(e.s, spaceA, store.TurnQuery{}); len(ts) != 0 {
		t.Errorf("Update with a cancelled context wrote %d turns", len(ts))
	}
}

func testTxCancelledDuring(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	err := e.s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.PutTurn(ctx, mkTurn(spaceA, "x", 1)); err != nil {
			return err
		}
		cancel()
		return nil // the function succeeds, but the context is gone: no commit
	})
	e.wantErr("Update whose context was cancelled before commit", err, context.Canceled)
	if ts := e.listTurns(e.s, spaceA, store.TurnQuery{}); len(ts) != 0 {
		t.Errorf("Update whose context was cancelled wrote %d turns", len(ts))
	}
}
