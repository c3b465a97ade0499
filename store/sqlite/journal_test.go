package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/storetest"
)

// TestJournalTwoStores runs the suite's journal check through two Stores on
// one file, as two processes would share it: what one writes, the other's
// Changes report.
func TestJournalTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	var stores []store.Store
	for range 2 {
		s, err := Open(t.Context(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	storetest.Journal(t, stores...)
}

// TestJournalUnjournalledWrite writes the way a build without the journal
// did (schema version 2: the record without its version, the space's
// version bumped alone), for the suite's check.
func TestJournalUnjournalledWrite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "old.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.UnjournalledWrite(t, s, func(sp store.Space) {
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO turns (space_id, id, session_id, seq, speaker, text, occurred_raw)
			SELECT id, 'b', '', 2, 'A', 'b', '' FROM spaces WHERE user_id = ? AND agent_id = ?`, sp.UserID, sp.AgentID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `UPDATE space_clock SET version = version + 1;
			UPDATE spaces SET version = (SELECT version FROM space_clock) WHERE user_id = ? AND agent_id = ?`, sp.UserID, sp.AgentID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestJournalAfterMigration opens a file written at schema version 2 with
// records in it: Changes from its old versions report Reset (nothing
// before the migration was journalled), and from the first version after
// it, the writes since.
func TestJournalAfterMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	db := rawDB(t, path)
	if _, err := migrate(ctx, db, migrations[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO spaces (user_id, agent_id, version) VALUES ('u', '', 5);
		UPDATE space_clock SET version = 5;
		INSERT INTO turns (space_id, id, session_id, seq, speaker, text, occurred_raw) VALUES (1, 'a', '', 1, 'A', 'a', '')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := store.Space{UserID: "u"}
	for _, since := range []int64{0, 4} {
		if ch, err := s.Changes(ctx, sp, since, ""); err != nil || !ch.Reset || ch.Version != 5 {
			t.Errorf("Changes since %d of a migrated space = %+v, %v; want Reset at 5", since, ch, err)
		}
	}
	if ch, err := s.Changes(ctx, sp, 5, ""); err != nil || ch.Reset || !ch.Empty() {
		t.Errorf("Changes since the version at migration = %+v, %v; want nothing", ch, err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.DeleteTurn(ctx, sp, "a") }); err != nil {
		t.Fatal(err)
	}
	if ch, err := s.Changes(ctx, sp, 5, ""); err != nil || ch.Reset || len(ch.DeletedTurns) != 1 {
		t.Errorf("Changes since the version at migration, after a delete = %+v, %v; want turn a deleted", ch, err)
	}
}
