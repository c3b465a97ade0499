package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/higmem/higmem/store"
)

var versionTests = []test{
	{name: "BumpOncePerCommit", fn: testVersionBumps},
	{name: "Lock", fn: testLock},
	{name: "DeleteSpaceKeepsGrowing", fn: testVersionAfterDeleteSpace},
	{name: "ManyWritersOneSpace", fn: func(t *testing.T, e *env) { Writers(t, e.s) }},
}

// version reads the committed version of sp.
func (e *env) version(sp store.Space) int64 {
	e.Helper()
	v, err := e.s.SpaceVersion(e.ctx, sp)
	if err != nil {
		e.Fatalf("SpaceVersion(%s): %v", sp, err)
	}
	return v
}

// testVersionBumps checks that every committed Update writing a space
// gives it a larger version, once, and that rollbacks, no-ops and writes to
// other spaces leave it alone.
func testVersionBumps(t *testing.T, e *env) {
	if v := e.version(spaceA); v != 0 {
		t.Fatalf("version of an empty space = %d, want 0", v)
	}
	e.update(func(tx store.Tx) error {
		for i := range 3 {
			if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, fmt.Sprint("t", i), int64(i+1))); err != nil {
				return err
			}
		}
		return nil
	})
	v1 := e.version(spaceA)
	if v1 <= 0 {
		t.Fatalf("version after a write = %d, want > 0", v1)
	}
	e.update(func(tx store.Tx) error { return tx.PutEvent(e.ctx, mkEvent(spaceA, "e1", base)) })
	v2 := e.version(spaceA)
	if v2 <= v1 {
		t.Fatalf("version after a second write = %d, want > %d", v2, v1)
	}
	// A rollback changes nothing.
	err := e.s.Update(e.ctx, func(tx store.Tx) error {
		if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "gone", 9)); err != nil {
			return err
		}
		if _, err := tx.Lock(e.ctx, spaceA); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want errBoom", err)
	}
	if v := e.version(spaceA); v != v2 {
		t.Errorf("version after a rollback = %d, want %d", v, v2)
	}
	// Re-putting an identical turn writes nothing.
	e.update(func(tx store.Tx) error {
		_, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "t0", 1))
		return err
	})
	if v := e.version(spaceA); v != v2 {
		t.Errorf("version after a no-op PutTurn = %d, want %d", v, v2)
	}
	// Another space's write leaves this one alone, and gets a larger one.
	e.update(func(tx store.Tx) error {
		_, err := tx.PutTurn(e.ctx, mkTurn(spaceB, "b", 1))
		return err
	})
	if v := e.version(spaceA); v != v2 {
		t.Errorf("version of %s after a write to %s = %d, want %d", spaceA, spaceB, v, v2)
	}
	if v := e.version(spaceB); v <= v2 {
		t.Errorf("version of %s = %d, want > %d (one counter for the store)", spaceB, v, v2)
	}
}

// testLock checks what Lock reports and that its version is the one
// committed.
func testLock(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error {
		for _, seq := range []int64{3, 7, 5} {
			if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, fmt.Sprint("t", seq), seq)); err != nil {
				return err
			}
		}
		return nil
	})
	before := e.version(spaceA)
	var h1, h2 store.Head
	e.update(func(tx store.Tx) error {
		var err error
		if h1, err = tx.Lock(e.ctx, spaceA); err != nil {
			return err
		}
		if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "t8", h1.LastSeq+1)); err != nil {
			return err
		}
		h2, err = tx.Lock(e.ctx, spaceA)
		return err
	})
	if h1.Version != before || h1.LastSeq != 7 || h1.Next <= before {
		t.Errorf("Lock = %+v; want Version %d, LastSeq 7, Next > Version", h1, before)
	}
	if h2.Version != h1.Version || h2.Next != h1.Next || h2.LastSeq != 8 {
		t.Errorf("second Lock = %+v; want the first's versions (%+v) and LastSeq 8", h2, h1)
	}
	if v := e.version(spaceA); v != h1.Next {
		t.Errorf("committed version = %d, want Head.Next %d", v, h1.Next)
	}
	// Lock alone bumps the version; Lock of an empty space reports zeros.
	var h3 store.Head
	e.update(func(tx store.Tx) error {
		var err error
		h3, err = tx.Lock(e.ctx, spaceA)
		return err
	})
	if h3.Version != h1.Next || e.version(spaceA) != h3.Next || h3.Next <= h3.Version {
		t.Errorf("Lock without writes: %+v, committed %d", h3, e.version(spaceA))
	}
	e.update(func(tx store.Tx) error {
		h, err := tx.Lock(e.ctx, spaceB)
		if err == nil && (h.Version != 0 || h.LastSeq != 0 || h.Next <= h3.Next) {
			err = fmt.Errorf("lock of an empty space = %+v; want Version 0, LastSeq 0, Next > %d", h, h3.Next)
		}
		return err
	})
	if err := e.s.Update(e.ctx, func(tx store.Tx) error {
		_, err := tx.Lock(e.ctx, store.Space{})
		return err
	}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Lock of a space without a user = %v, want ErrInvalid", err)
	}
}

// testVersionAfterDeleteSpace checks that a re-created space never gets a
// version it had before, so a cache of the old space cannot pass for
// current.
func testVersionAfterDeleteSpace(t *testing.T, e *env) {
	e.update(func(tx store.Tx) error { _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "a", 1)); return err })
	old := e.version(spaceA)
	e.update(func(tx store.Tx) error { return tx.DeleteSpace(e.ctx, spaceA) })
	if v := e.version(spaceA); v != 0 {
		t.Errorf("version of a deleted space = %d, want 0", v)
	}
	e.update(func(tx store.Tx) error { _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "a", 1)); return err })
	if v := e.version(spaceA); v <= old {
		t.Errorf("version of the re-created space = %d, want > %d", v, old)
	}
}

// Writers runs many goroutines writing one space through the given stores
// (one store, or several opened on the same database, which then stand for
// several processes) the way the engine writes: Lock, append turns after
// Head.LastSeq, and add each turn to the event "e1" read inside the
// transaction. It then checks that Seq is unique and dense, that e1 holds
// every turn exactly once (no lost update), and that every committed
// version was handed out once.
func Writers(t *testing.T, stores ...store.Store) {
	t.Helper()
	ctx := t.Context()
	sp := store.Space{UserID: "writers"}
	const goroutines, each = 8, 6
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions []int64
		errs     []error
	)
	for g := range goroutines {
		s := stores[g%len(stores)]
		wg.Go(func() {
			for i := range each {
				var h store.Head
				err := s.Update(ctx, func(tx store.Tx) error {
					var err error
					if h, err = tx.Lock(ctx, sp); err != nil {
						return err
					}
					id := fmt.Sprintf("g%d-%d", g, i)
					if _, err := tx.PutTurn(ctx, mkTurn(sp, id, h.LastSeq+1)); err != nil {
						return err
					}
					e := store.Event{Space: sp, ID: "e1", Title: "all"}
					evs, err := tx.ListEvents(ctx, sp)
					if err != nil {
						return err
					}
					if i := slices.IndexFunc(evs, func(x store.Event) bool { return x.ID == "e1" }); i >= 0 {
						e = evs[i]
					}
					e.TurnIDs = append(e.TurnIDs, id)
					e.Version++
					return tx.PutEvent(ctx, e)
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					versions = append(versions, h.Next)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	check := func(s store.Store) {
		ts, err := s.ListTurns(ctx, sp, store.TurnQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != goroutines*each {
			t.Fatalf("%d turns, want %d", len(ts), goroutines*each)
		}
		for i, tr := range ts {
			if tr.Seq != int64(i+1) {
				t.Fatalf("turn %d (%s) has Seq %d: Seq not unique and dense", i, tr.ID, tr.Seq)
			}
		}
		evs, err := s.ListEvents(ctx, sp)
		if err != nil || len(evs) != 1 {
			t.Fatalf("ListEvents = %d events, %v; want 1", len(evs), err)
		}
		members := slices.Sorted(slices.Values(evs[0].TurnIDs))
		if len(slices.Compact(members)) != len(ts) || len(evs[0].TurnIDs) != len(ts) {
			t.Fatalf("e1 lists %d turn ids (%d distinct) for %d turns: an update was lost", len(evs[0].TurnIDs), len(slices.Compact(members)), len(ts))
		}
		v, err := s.SpaceVersion(ctx, sp)
		if err != nil || v != slices.Max(versions) {
			t.Errorf("SpaceVersion = %d, %v; want the last committed Head.Next %d", v, err, slices.Max(versions))
		}
	}
	for _, s := range stores {
		check(s)
	}
	slices.Sort(versions)
	if len(slices.Compact(versions)) != goroutines*each {
		t.Errorf("Head.Next handed out twice: %v", versions)
	}
}
