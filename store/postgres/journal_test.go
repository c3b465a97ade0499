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
// version bumped alone), for the suite's check.
func TestJournalUnjournalledWrite(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	storetest.UnjournalledWrite(t, s, func(sp store.Space) {
		if _, err := s.Pool().Exec(ctx, `INSERT INTO turns (space_id, id, session_id, seq, speaker, text, occurred_raw)
			SELECT id, 'b', '', 2, 'A', 'b', '' FROM spaces WHERE user_id = $1 AND agent_id = $2`, sp.UserID, sp.AgentID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Pool().Exec(ctx, `UPDATE spaces SET version = nextval('space_version') WHERE user_id = $1 AND agent_id = $2`, sp.UserID, sp.AgentID); err != nil {
			t.Fatal(err)
		}
	})
}
