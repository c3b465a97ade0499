// Package storetest is the conformance suite every store.Store
// implementation must pass.
//
// A backend's tests call Run with a function that opens a fresh, empty
// store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := memstore.New()
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The open function is called once per subtest and must register its own
// cleanup. The suite closes some stores itself, so a cleanup must ignore
// store.ErrClosed.
//
// Besides what the doc comments of package store say, the suite pins down
// these choices so that every backend behaves alike:
//
//   - Returned time fields are in UTC with no monotonic clock reading; a zero
//     time comes back zero. Times must lie in the years 0 to 9999 (what JSON
//     and sortable text can hold); others fail with store.ErrInvalid.
//   - Empty slices and maps may come back as nil (and nil ones as empty).
//   - A nil id list means "no restriction" (TurnQuery.IDs, ListAnnotations,
//     ListLinks); a non-nil empty list selects nothing.
//   - Turns with equal Seq are ordered by ID. TurnQuery.AfterSeq 0 filters
//     nothing, so the zero query also lists turns with Seq <= 0.
//   - Stats.Links counts invalidated links too.
//   - PutTurn fills a zero RecordedAt with the current time.
//   - Empty ids fail with store.ErrInvalid on writes (turn, annotation turn
//     id, event, link source or target, vector kind or id), and so does a
//     NaN link confidence; reads of an empty id report store.ErrNotFound. Every method given a space without a user
//     fails with store.ErrInvalid.
//   - PutVectors validates the whole batch first: an invalid vector stores
//     none of the batch.
//   - A Tx used after its Update returned fails with store.ErrClosed, and so
//     does a second Close.
//   - DeleteSpace of an empty space is not an error.
//   - Profile records are listed by (Entity, ID), entities compared
//     exactly; a record must cite stored turns of its space (else
//     store.ErrNotFound), and DeleteTurn removes every record citing the
//     turn.
//
// Optional capabilities (store.VectorsIntoReader, store.TimeRefsReader, store.EmbedderLister) are
// checked on the stores that implement them; on the others their tests are
// skipped.
package storetest

import (
	"context"
	"testing"

	"github.com/higmem/higmem/store"
)

// Options adapts the suite to a backend's documented limits.
type Options struct {
	// SerialReads says that reads outside a transaction wait while an Update
	// runs (for example a database with one shared connection). The suite
	// then never reads the store itself from inside an Update function,
	// which would deadlock, and skips the test that needs it.
	SerialReads bool
	// JournalTombstones is the bound of tombstones per space the store
	// was opened with (see store's "The journal"), kept small so that the
	// suite can pass it; 0 skips the test of the journal floor.
	JournalTombstones int
}

// Run runs the whole conformance suite against the stores made by open.
// open must return a new, empty store each time it is called.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	RunOptions(t, open, Options{})
}

// RunOptions is Run with options for backends with documented limits.
func RunOptions(t *testing.T, open func(t *testing.T) store.Store, opts Options) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"Turns", turnTests},
		{"Annotations", annotationTests},
		{"Events", eventTests},
		{"Links", linkTests},
		{"Vectors", vectorTests},
		{"History", historyTests},
		{"Profiles", profileTests},
		{"Spaces", spaceTests},
		{"Stats", statsTests},
		{"Scope", scopeTests},
		{"Tx", txTests},
		{"Validation", validationTests},
		{"Times", timeTests},
		{"Close", closeTests},
		{"Concurrency", concurrencyTests},
		{"Versions", versionTests},
		{"Journal", journalTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					if tc.needsParallelReads && opts.SerialReads {
						t.Skip("backend serialises reads with Update (Options.SerialReads)")
					}
					s := open(t)
					if s == nil {
						t.Fatal("open returned a nil store")
					}
					tc.fn(t, &env{T: t, s: s, ctx: t.Context(), opts: opts})
				})
			}
		})
	}
}

// test is one subtest of the suite.
type test struct {
	name string
	fn   func(t *testing.T, e *env)
	// needsParallelReads marks a test that reads the store (not the Tx)
	// while an Update is running.
	needsParallelReads bool
}

// env bundles what every subtest needs.
type env struct {
	*testing.T
	s    store.Store
	ctx  context.Context
	opts Options
}
