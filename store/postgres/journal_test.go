package postgres_test

import (
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/storetest"
)

// TestJournalTwoStores runs the suite's journal check through two Stores on
// one schema, as two processes would share it.
func TestJournalTwoStores(t *testing.T) {
	stores := openTwo(t)
	storetest.Journal(t, stores[0], stores[1])
}

// TestJournalUnjournalledWrite writes the way a build without the journal
// did (schema version 1: the record without its version, the space's
// version bumped alone): Changes from before it must report Reset, and a
// write that keeps the journal again starts a floor that caches at or after
// it pass.
func TestJournalUnjournalledWrite(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	sp := store.Space{UserID: "u"}
	put := func(id string, seq int64) {
		t.Helper()
		if err := s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, Seq: seq, Speaker: "A", Text: id})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	version := func() int64 {
		t.Helper()
		v, err := s.SpaceVersion(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	changes := func(since int64) store.Changes {
		t.Helper()
		ch, err := s.Changes(ctx, sp, since, "")
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	put("a", 1)
	v1 := version()
	// The old build's write: what store/postgres at schema 1 ran.
	if _, err := s.Pool().Exec(ctx, `INSERT INTO turns (space_id, id, session_id, seq, speaker, text, occurred_raw)
		SELECT id, 'b', '', 2, 'A', 'b', '' FROM spaces WHERE user_id = 'u'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE spaces SET version = nextval('space_version') WHERE user_id = 'u'`); err != nil {
		t.Fatal(err)
	}
	v2 := version()
	for _, since := range []int64{v1, v2} {
		if ch := changes(since); !ch.Reset || ch.Version != v2 {
			t.Errorf("Changes since %d after a write without the journal = %+v; want Reset at %d", since, ch, v2)
		}
	}
	put("c", 3)
	v3 := version()
	if ch := changes(v1); !ch.Reset {
		t.Errorf("Changes since %d (before the old write) = %+v; want Reset", v1, ch)
	}
	if ch := changes(v3); ch.Reset || !ch.Empty() || ch.Version != v3 {
		t.Errorf("Changes since %d = %+v; want nothing", v3, ch)
	}
	put("d", 4)
	if ch := changes(v3); ch.Reset || len(ch.Turns) != 1 || ch.Turns[0].ID != "d" {
		t.Errorf("Changes since %d = %+v; want turn d", v3, ch)
	}
}
