package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/store"
)

// rawDB opens path with the driver directly, without the store's schema.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func version(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		t.Fatalf("reading schema_version: %v", err)
	}
	return v
}

// TestOpenMigratesOlder builds a file at every older schema version (0 is a
// file that some other package already uses) and checks that Open brings
// it to the current one, keeping what was there.
func TestOpenMigratesOlder(t *testing.T) {
	ctx := context.Background()
	for v := range len(migrations) {
		path := filepath.Join(t.TempDir(), "old.db")
		db := rawDB(t, path)
		if _, err := db.Exec(`CREATE TABLE othercache_entries (k TEXT PRIMARY KEY); INSERT INTO othercache_entries VALUES ('kept')`); err != nil {
			t.Fatal(err)
		}
		if v > 0 {
			if _, err := migrate(ctx, db, migrations[:v]); err != nil {
				t.Fatalf("building version %d: %v", v, err)
			}
		}
		db.Close()

		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("Open of a version %d file: %v", v, err)
		}
		if got := version(t, s.DB()); got != len(migrations) {
			t.Errorf("after Open of a version %d file: schema version %d, want %d", v, got, len(migrations))
		}
		var k string
		if err := s.DB().QueryRow(`SELECT k FROM othercache_entries`).Scan(&k); err != nil || k != "kept" {
			t.Errorf("other package's table after migration: %q, %v", k, err)
		}
		sp := store.Space{UserID: "u"}
		err = s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: "1", Seq: 1})
			return err
		})
		if err != nil {
			t.Errorf("Update on a migrated file: %v", err)
		}
		s.Close()
	}
}

func TestOpenRefusesNewer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newer := len(migrations) + 1
	if _, err := s.DB().Exec(`INSERT INTO schema_version (version, applied_at) VALUES (?, 'later')`, newer); err != nil {
		t.Fatal(err)
	}
	s.Close()

	_, err = Open(ctx, path, Options{})
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open of a newer file: %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{fmt.Sprintf("version %d", newer), fmt.Sprintf("up to %d", len(migrations))} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := version(t, rawDB(t, path)); got != newer {
		t.Errorf("refused file now at version %d, want it untouched at %d", got, newer)
	}
}

// TestMigrateSteps runs migrate over a made-up list, to check stepping
// from one version to the next with data kept, and that a failing step
// leaves the file at the version it had.
func TestMigrateSteps(t *testing.T) {
	ctx := context.Background()
	db := rawDB(t, filepath.Join(t.TempDir(), "steps.db"))
	steps := []string{
		`CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('one')`,
		`ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'two'; CREATE INDEX t_b ON t (b)`,
		`this is not SQL`,
	}
	if from, err := migrate(ctx, db, steps[:1]); err != nil || from != 0 {
		t.Fatalf("migrate to 1 = %d, %v", from, err)
	}
	if from, err := migrate(ctx, db, steps[:2]); err != nil || from != 1 {
		t.Fatalf("migrate to 2 = %d, %v", from, err)
	}
	var a, b string
	if err := db.QueryRow(`SELECT a, b FROM t`).Scan(&a, &b); err != nil || a != "one" || b != "two" {
		t.Errorf("row after migration: %q %q %v", a, b, err)
	}
	if from, err := migrate(ctx, db, steps[:2]); err != nil || from != 2 {
		t.Errorf("migrate when up to date = %d, %v", from, err)
	}
	if _, err := migrate(ctx, db, steps); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("failing migration: %v, want an error naming version 3", err)
	}
	if got := version(t, db); got != 2 {
		t.Errorf("after a failed migration: version %d, want 2", got)
	}
	if _, err := migrate(ctx, db, steps[:1]); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("migrate with fewer steps than applied: %v, want ErrSchemaTooNew", err)
	}
}
