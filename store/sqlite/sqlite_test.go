package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
	"github.com/higmem/higmem/store/storetest"
)

// openFile opens a store in a new file under t.TempDir.
func openFile(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "higmem.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformanceFile(t *testing.T) {
	storetest.RunOptions(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "higmem.db"), sqlite.Options{JournalTombstones: 8})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{JournalTombstones: 8})
}

func TestConformanceMemory(t *testing.T) {
	storetest.RunOptions(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlite.Memory, sqlite.Options{JournalTombstones: 8})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{SerialReads: true, JournalTombstones: 8})
}

func TestPersistence(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "higmem.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	sp := store.Space{UserID: "alice", AgentID: "bot"}
	at := time.Date(2023, 5, 8, 13, 56, 0, 123456789, time.UTC)
	turn := store.Turn{Space: sp, ID: "D1:1", SessionID: "S1", Seq: 1, Speaker: "Alice", Text: "I adopted a cat.",
		Attachments: []store.Attachment{{Kind: "image", Caption: "a cat"}}, OccurredAt: at, OccurredRaw: "8 May 2023",
		RecordedAt: at, Metadata: map[string]string{"k": "v"}}
	ann := store.Annotation{TurnID: "D1:1", Keywords: []string{"cat"}, Producer: "offline",
		TimeRefs: []store.TimeRef{{Text: "today", Start: at, End: at.Add(24 * time.Hour)}}}
	ev := store.Event{Space: sp, ID: "E1", Title: "Cat", TurnIDs: []string{"D1:1"}, Facts: []store.Fact{{Text: "has a cat", TurnID: "D1:1"}},
		Version: 1, CreatedAt: at}
	link := store.Link{Source: "D1:1", Target: "D1:1", Relation: "self", Confidence: 0.5, CreatedAt: at}
	vec := store.Vector{Kind: store.VectorTurn, ID: "D1:1", Embedder: "hash-64", Values: []float32{0.25, -1, 3}}
	change := store.Change{Kind: "event", ID: "E1", Action: "create", Actor: "offline", After: json.RawMessage(`{"title":"Cat"}`), At: at}
	err = s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.PutTurn(ctx, turn); err != nil {
			return err
		}
		return errors.Join(tx.PutAnnotation(ctx, sp, ann), tx.PutEvent(ctx, ev), tx.PutLink(ctx, sp, link),
			tx.PutVectors(ctx, sp, []store.Vector{vec}), tx.AppendHistory(ctx, sp, change))
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	check := func(what string, want, got any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s after reopen: %v", what, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s after reopen (-want +got):\n%s", what, d)
		}
	}
	gotTurn, err := s.GetTurn(ctx, sp, "D1:1")
	check("turn", turn, gotTurn, err)
	anns, err := s.ListAnnotations(ctx, sp, nil)
	check("annotations", []store.Annotation{ann}, anns, err)
	evs, err := s.ListEvents(ctx, sp)
	check("events", []store.Event{ev}, evs, err)
	links, err := s.ListLinks(ctx, sp, nil)
	check("links", []store.Link{link}, links, err)
	vecs, err := s.ListVectors(ctx, sp, store.VectorTurn, "hash-64")
	check("vectors", []store.Vector{vec}, vecs, err)
	hist, err := s.History(ctx, sp, "", "")
	change.Seq = 1
	check("history", []store.Change{change}, hist, err)
	spaces, err := s.Spaces(ctx)
	check("spaces", []store.Space{sp}, spaces, err)
	// The identity check also works against what was read back from disk.
	err = s.Update(ctx, func(tx store.Tx) error {
		created, err := tx.PutTurn(ctx, turn)
		if created {
			t.Error("re-put after reopen: created = true")
		}
		return err
	})
	if err != nil {
		t.Errorf("re-put after reopen: %v", err)
	}
}

func TestPragmas(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), sqlite.Options{BusyTimeout: 1234 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	cases := []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
		{"busy_timeout", "1234"},
	}
	for _, c := range cases {
		var got string
		if err := s.DB().QueryRowContext(t.Context(), "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{"", filepath.Join(dir, "a.db?mode=ro"), "file:x.db", filepath.Join(dir, "missing", "x.db")} {
		if s, err := sqlite.Open(t.Context(), path, sqlite.Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", path)
		}
	}
	// A file that is not a database is refused, and left alone.
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database, just some text that is long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(t.Context(), junk, sqlite.Options{}); err == nil {
		s.Close()
		t.Error("Open of a text file succeeded")
	}
}

// TestSharedDB checks that another package can keep its own table in the
// file through DB, alongside the store, from several goroutines.
func TestSharedDB(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	db := s.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS testcache_entries (k TEXT PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatalf("creating own table: %v", err)
	}
	const n = 20
	sp := store.Space{UserID: "u"}
	var wg sync.WaitGroup
	errc := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			_, err := db.ExecContext(ctx, `INSERT INTO testcache_entries (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), "v")
			errc <- err
		})
		wg.Go(func() {
			errc <- s.Update(ctx, func(tx store.Tx) error {
				_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: fmt.Sprint("t", i), Seq: int64(i + 1)})
				return err
			})
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	var rows int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM testcache_entries`).Scan(&rows); err != nil || rows != n {
		t.Errorf("own table after reopen: %d rows, %v; want %d", rows, err, n)
	}
	st, err := s.Stats(ctx, sp)
	if err != nil || st.Turns != n {
		t.Errorf("Stats after reopen = %+v, %v; want %d turns", st, err, n)
	}
}

// TestTwoStoresOneFile opens the same file twice, as two processes would,
// and writes through both at once: SQLite's lock and the busy timeout
// serialise them.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "two.db")
	var stores [2]*sqlite.Store
	for i := range stores {
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer s.Close()
		stores[i] = s
	}
	sp := store.Space{UserID: "u"}
	const each = 15
	var wg sync.WaitGroup
	errc := make(chan error, 2*each)
	for i, s := range stores {
		wg.Go(func() {
			for j := range each {
				errc <- s.Update(ctx, func(tx store.Tx) error {
					st, err := tx.Stats(ctx, sp)
					if err != nil {
						return err
					}
					_, err = tx.PutTurn(ctx, store.Turn{Space: sp, ID: fmt.Sprint(i, "-", j), Seq: st.LastSeq + 1})
					return err
				})
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Error(err)
		}
	}
	ts, err := stores[0].ListTurns(ctx, sp, store.TurnQuery{})
	if err != nil || len(ts) != 2*each {
		t.Fatalf("ListTurns: %d turns, %v; want %d", len(ts), err, 2*each)
	}
	for i, tr := range ts {
		if tr.Seq != int64(i+1) {
			t.Fatalf("turn %d has Seq %d: the two stores' transactions interleaved", i, tr.Seq)
		}
	}
}

func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "higmem-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	sp := store.Space{UserID: "alice", AgentID: "assistant"}
	err = s.Update(ctx, func(tx store.Tx) error {
		for i, text := range []string{"I adopted a cat.", "Her name is Miso."} {
			t := store.Turn{Space: sp, ID: fmt.Sprintf("D1:%d", i+1), Seq: int64(i + 1), Speaker: "Alice", Text: text}
			if _, err := tx.PutTurn(ctx, t); err != nil {
				return err // nothing of this Update is stored
			}
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	turns, err := s.ListTurns(ctx, sp, store.TurnQuery{AfterSeq: 1})
	for _, t := range turns {
		fmt.Println(t.ID, t.Text)
	}
	fmt.Println(err)
	// Output:
	// D1:2 Her name is Miso.
	// <nil>
}

// TestWritersTwoStores runs the suite's many-writers check through two
// Stores on one file, as two processes would share it.
func TestWritersTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "writers.db")
	var stores []store.Store
	for range 2 {
		s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	storetest.Writers(t, stores...)
}
