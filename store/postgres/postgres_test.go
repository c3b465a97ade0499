package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store in a new schema of the test server.
func open(t testing.TB) *postgres.Store {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.RunOptions(t, func(t *testing.T) store.Store {
		dsn, schema := pgtest.Schema(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, JournalTombstones: 8})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{JournalTombstones: 8})
}

// mutant is the PostgreSQL store with one deliberate bug, to check that
// the suite notices bugs of this backend (as storetest's own self-test
// does for memstore).
type mutant struct {
	*postgres.Store
	bug string
}

// microseconds truncates tm as a timestamptz column would.
func microseconds(tm time.Time) time.Time { return tm.Truncate(time.Microsecond) }

func (m mutant) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	tr, err := m.Store.GetTurn(ctx, sp, id)
	if m.bug == "microseconds" {
		tr.OccurredAt, tr.RecordedAt = microseconds(tr.OccurredAt), microseconds(tr.RecordedAt)
	}
	return tr, err
}

func (m mutant) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	ts, err := m.Store.ListTurns(ctx, sp, q)
	if m.bug == "tie-order" && len(ts) > 1 {
		// Ties on Seq broken by descending id.
		slices.SortStableFunc(ts, func(a, b store.Turn) int {
			if a.Seq != b.Seq {
				return int(a.Seq - b.Seq)
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return ts, err
}

func (m mutant) Update(ctx context.Context, fn func(store.Tx) error) error {
	if m.bug != "no-rollback" {
		return m.Store.Update(ctx, fn)
	}
	var fnErr error
	err := m.Store.Update(ctx, func(tx store.Tx) error { fnErr = fn(tx); return nil })
	if fnErr != nil {
		return fnErr
	}
	return err
}

// TestMutant runs one group of the suite against the mutant named by
// PGTEST_MUTANT; TestSuiteCatchesBugs starts it in a child process.
func TestMutant(t *testing.T) {
	bug, ok := os.LookupEnv("PGTEST_MUTANT")
	if !ok {
		t.Skip("run by TestSuiteCatchesBugs")
	}
	storetest.Run(t, func(t *testing.T) store.Store { return mutant{Store: open(t), bug: bug} })
}

func TestSuiteCatchesBugs(t *testing.T) {
	if _, ok := os.LookupEnv("PGTEST_MUTANT"); ok {
		t.Skip("inside a mutant run")
	}
	pgtest.DSN(t)
	cases := []struct{ bug, group, wantFail string }{
		{"", "Turns", ""}, // control: the unmodified store passes
		{"microseconds", "Turns", "Turns/PutGet"},
		{"tie-order", "Turns", "Turns/OrderBySeq"},
		{"no-rollback", "Tx", "Tx/ErrorRollsBack"},
	}
	for _, tc := range cases {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutant$/^"+tc.group+"$", "-test.v")
			cmd.Env = append(os.Environ(), "PGTEST_MUTANT="+tc.bug)
			out, err := cmd.CombinedOutput()
			if tc.bug == "" {
				if err != nil || !strings.Contains(string(out), "--- PASS: TestMutant/"+tc.group) {
					t.Fatalf("suite fails on the unmodified store: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("suite passed a store with bug %q", tc.bug)
			}
			if want := "--- FAIL: TestMutant/" + tc.wantFail; !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// BenchmarkStore runs storetest.Bench on the test server (see
// BENCHMARKS.md for the figures and the command).
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return open(b) })
}

// The space version grows with every committed change of the space, and
// only then; a deleted and re-created space never reuses one.
func TestSpaceVersion(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	sp, other := store.Space{UserID: "alice"}, store.Space{UserID: "bob"}
	version := func(sp store.Space) int64 {
		t.Helper()
		v, err := s.SpaceVersion(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := version(sp); v != 0 {
		t.Fatalf("version of an unknown space = %d, want 0", v)
	}
	turn := store.Turn{Space: sp, ID: "t1", Seq: 1, Speaker: "a", Text: "hi"}
	put := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	put(func(tx store.Tx) error { _, err := tx.PutTurn(ctx, turn); return err })
	v1 := version(sp)
	if v1 <= 0 {
		t.Fatalf("version after a write = %d", v1)
	}
	put(func(tx store.Tx) error { _, err := tx.PutTurn(ctx, turn); return err }) // no-op re-put
	put(func(tx store.Tx) error { _, err := tx.ListTurns(ctx, sp, store.TurnQuery{}); return err })
	if err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutEvent(ctx, store.Event{Space: sp, ID: "e1"}); err != nil {
			return err
		}
		return errors.New("roll back")
	}); err == nil {
		t.Fatal("Update did not fail")
	}
	put(func(tx store.Tx) error { _, err := tx.PutTurn(ctx, store.Turn{Space: other, ID: "t1"}); return err })
	if v := version(sp); v != v1 {
		t.Errorf("version moved from %d to %d without a committed change of the space", v1, v)
	}
	steps := []func(tx store.Tx) error{
		func(tx store.Tx) error { return tx.PutEvent(ctx, store.Event{Space: sp, ID: "e1"}) },
		func(tx store.Tx) error { return tx.PutAnnotation(ctx, sp, store.Annotation{TurnID: "t1"}) },
		func(tx store.Tx) error {
			return tx.PutLink(ctx, sp, store.Link{Source: "t1", Target: "t1", Relation: "r"})
		},
		func(tx store.Tx) error {
			return tx.PutVectors(ctx, sp, []store.Vector{{Kind: store.VectorTurn, ID: "t1", Embedder: "e", Values: []float32{1}}})
		},
		func(tx store.Tx) error {
			return tx.AppendHistory(ctx, sp, store.Change{Kind: "turn", ID: "t1", Action: "create"})
		},
		func(tx store.Tx) error { return tx.DeleteEvent(ctx, sp, "e1") },
		func(tx store.Tx) error { return tx.DeleteTurn(ctx, sp, "t1") },
	}
	last := v1
	for i, step := range steps {
		put(step)
		if v := version(sp); v <= last {
			t.Errorf("step %d: version %d, want more than %d", i, v, last)
		} else {
			last = v
		}
	}
	put(func(tx store.Tx) error { return tx.DeleteSpace(ctx, sp) })
	if v := version(sp); v != 0 {
		t.Errorf("version of a deleted space = %d, want 0", v)
	}
	put(func(tx store.Tx) error { _, err := tx.PutTurn(ctx, turn); return err })
	if v := version(sp); v <= last {
		t.Errorf("re-created space has version %d, not above the old %d", v, last)
	}
}

// TestWritersTwoStores runs the suite's many-writers check through two
// Stores on one schema, as two processes would share it.
func TestWritersTwoStores(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	var stores []store.Store
	for range 2 {
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	storetest.Writers(t, stores...)
}

// openTwo opens two stores on one new schema, as two processes would.
func openTwo(t *testing.T) [2]*postgres.Store {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	var stores [2]*postgres.Store
	for i := range stores {
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	return stores
}

// TestWritesLockOneSpace: while one store (process) holds an Update on
// space A, another store's Update of space B commits, and its Update of
// space A waits until the first ends.
func TestWritesLockOneSpace(t *testing.T) {
	stores := openTwo(t)
	ctx := t.Context()
	a, b := store.Space{UserID: "a"}, store.Space{UserID: "b"}
	put := func(s *postgres.Store, sp store.Space, id string) error {
		return s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, Seq: 1, Speaker: "x", Text: id, RecordedAt: time.Unix(1, 0).UTC()})
			return err
		})
	}
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- stores[0].Update(ctx, func(tx store.Tx) error {
			if _, err := tx.Lock(ctx, a); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	if err := put(stores[1], b, "b1"); err != nil { // does not wait for A's writer
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- put(stores[1], a, "a1") }()
	// Wait until the writer of A waits for the lock (the server shows it
	// in pg_locks); it must not have committed.
	for {
		var waiting int
		if err := stores[0].Pool().QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-second:
			t.Fatalf("Update of space A committed while another held it: %v", err)
		default:
		}
		if waiting > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

// TestWatch: a store watching the database hears of every committed write
// of another store (another process) to a space, deletes of a space
// included, and of no rolled-back one.
func TestWatch(t *testing.T) {
	stores := openTwo(t)
	ctx, cancel := context.WithCancel(t.Context())
	heard := make(chan store.Space, 16)
	watching := make(chan error, 1)
	go func() { watching <- stores[0].Watch(ctx, func(sp store.Space) { heard <- sp }) }()
	// LISTEN is in place once a first write is heard: write until then.
	probe := store.Space{UserID: "probe"}
	w := stores[1]
	put := func(sp store.Space, id string, fail bool) error {
		return w.Update(ctx, func(tx store.Tx) error {
			if _, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, Seq: 1, Speaker: "x", Text: id, RecordedAt: time.Unix(1, 0).UTC()}); err != nil {
				return err
			}
			if fail {
				return errors.New("roll back")
			}
			return nil
		})
	}
	for i := 0; ; i++ {
		if err := put(probe, fmt.Sprintf("p%d", i), false); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		break
	}
	for len(heard) > 0 {
		<-heard
	}
	alice := store.Space{UserID: "alice", AgentID: "bot"}
	if err := put(store.Space{UserID: "bob"}, "b1", true); err == nil {
		t.Fatal("rolled-back Update succeeded")
	}
	if err := put(alice, "a1", false); err != nil {
		t.Fatal(err)
	}
	if err := w.Update(ctx, func(tx store.Tx) error { return tx.DeleteSpace(ctx, alice) }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []store.Space{alice, alice} {
		select {
		case got := <-heard:
			if got != want {
				t.Errorf("heard %v, want %v (the rolled-back write to bob must not be heard)", got, want)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a speed check
			t.Fatalf("no notification for %v", want)
		}
	}
	cancel()
	if err := <-watching; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch after cancel = %v", err)
	}
}

// TestVectorSetsInTx reads vector sets inside an Update: the transaction's
// own writes are read, and its reads check the space as its other reads do.
func TestVectorSetsInTx(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	sp := store.Space{UserID: "u"}
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutVectors(ctx, sp, []store.Vector{
			{Kind: store.VectorTurn, ID: "a", Embedder: "e", Values: []float32{1, 2}},
			{Kind: store.VectorWindow, ID: "a", Embedder: "w", Values: []float32{3, 4}},
		}); err != nil {
			return err
		}
		vs, ok := tx.(store.VectorSetsIntoReader)
		if !ok {
			t.Fatal("the transaction lacks VectorSetsInto")
		}
		row := func(string) int { return 0 }
		sets := []store.VectorSet{
			{Kind: store.VectorTurn, Embedder: "e", Dim: 2, Dst: make([]float32, 2), Row: row},
			{Kind: store.VectorWindow, Embedder: "w", Dim: 2, Dst: make([]float32, 2), Row: row},
		}
		if err := vs.VectorSetsInto(ctx, sp, sets); err != nil {
			return err
		}
		if sets[0].N != 1 || sets[1].N != 1 || !slices.Equal(sets[0].Dst, []float32{1, 2}) || !slices.Equal(sets[1].Dst, []float32{3, 4}) {
			t.Errorf("VectorSetsInto in the transaction: %+v", sets)
		}
		dst := make([]float32, 2)
		if n, err := tx.(store.VectorsIntoReader).VectorsInto(ctx, sp, store.VectorWindow, "w", 2, dst, row); err != nil || n != 1 || !slices.Equal(dst, []float32{3, 4}) {
			t.Errorf("VectorsInto in the transaction = %d, %v: %v", n, err, dst)
		}
		if err := vs.VectorSetsInto(ctx, store.Space{}, sets); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("VectorSetsInto without a user in the transaction: %v, want ErrInvalid", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
}
