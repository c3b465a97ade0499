package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/storetest"
)

// mutant is memstore with one deliberate bug, to check that the suite
// notices it.
type mutant struct {
	*memstore.Store
	bug string
}

func (m mutant) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	if m.bug == "limit" {
		q.Limit = 0
	}
	return m.Store.ListTurns(ctx, sp, q)
}

func (m mutant) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	es, err := m.Store.ListEvents(ctx, sp)
	if m.bug == "event-order" && len(es) > 1 {
		es[0], es[1] = es[1], es[0]
	}
	return es, err
}

func (m mutant) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	if m.bug == "profile-entity" {
		entity = ""
	}
	return m.Store.ListProfileRecords(ctx, sp, entity)
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

// VectorsInto gives the mutant the optional store.VectorsIntoReader, built
// on ListVectors, so that the suite's check of it runs here too.
func (m mutant) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	if dim <= 0 {
		return 0, store.ErrInvalid
	}
	vs, err := m.ListVectors(ctx, sp, kind, embedder)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range vs {
		i := row(v.ID)
		if i < 0 || (i+1)*dim > len(dst) || len(v.Values) != dim && m.bug != "vectors-into-dim" {
			continue
		}
		n += copy(dst[i*dim:(i+1)*dim], v.Values) / dim
	}
	return n, nil
}

func (m mutant) Close() error {
	if m.bug == "close-noop" {
		return nil
	}
	return m.Store.Close()
}

// TestMutant runs the suite against the mutant named by STORETEST_MUTANT;
// TestSuiteCatchesBugs starts it in a child process.
func TestMutant(t *testing.T) {
	bug, ok := os.LookupEnv("STORETEST_MUTANT")
	if !ok {
		t.Skip("run by TestSuiteCatchesBugs")
	}
	storetest.Run(t, func(t *testing.T) store.Store {
		s := memstore.New()
		t.Cleanup(func() { _ = s.Close() })
		return mutant{Store: s, bug: bug}
	})
}

func TestSuiteCatchesBugs(t *testing.T) {
	if _, ok := os.LookupEnv("STORETEST_MUTANT"); ok {
		t.Skip("inside a mutant run")
	}
	cases := []struct{ bug, wantFail string }{
		{"", ""}, // control: the unmodified store passes
		{"limit", "Turns/Query/limit"},
		{"event-order", "Events/Order"},
		{"no-rollback", "Tx/ErrorRollsBack"},
		{"close-noop", "Close/ErrClosed"},
		{"vectors-into-dim", "Vectors/VectorsInto"},
		{"profile-entity", "Profiles/PutListReplace"},
	}
	for _, tc := range cases {
		t.Run("bug="+tc.bug, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutant$", "-test.v")
			cmd.Env = append(os.Environ(), "STORETEST_MUTANT="+tc.bug)
			out, err := cmd.CombinedOutput()
			if tc.bug == "" {
				if err != nil {
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
