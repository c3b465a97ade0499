package postgres_test

import (
	"context"
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
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
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
