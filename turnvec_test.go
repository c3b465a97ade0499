package higmem

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// countingStore counts the vectors read of each kind, whichever way they
// are read (ListVectors, VectorsInto, VectorSetsInto).
type countingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	reads map[store.VectorKind]int
}

func (c *countingStore) count(kind store.VectorKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads == nil {
		c.reads = map[store.VectorKind]int{}
	}
	c.reads[kind]++
}

// turnReads returns how many reads of turn and event vectors were made.
func (c *countingStore) turnReads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[store.VectorTurn] + c.reads[store.VectorEvent]
}

func (c *countingStore) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	c.count(kind)
	return c.Store.ListVectors(ctx, sp, kind, embedder)
}

func (c *countingStore) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	c.count(kind)
	return c.Store.VectorsInto(ctx, sp, kind, embedder, dim, dst, row)
}

func (c *countingStore) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	for _, s := range sets {
		c.count(s.Kind)
	}
	return c.Store.VectorSetsInto(ctx, sp, sets)
}

// unloadVectors drops st's turn and event vectors, leaving it as a load
// that leaves them for later does.
func unloadVectors(st *spaceState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.turnVec, st.eventVec = vec.Matrix{}, vec.Matrix{}
	st.turnVecLoaded.Store(false)
	st.eventVecLoaded.Store(false)
}

// turnVecT0 and turnVecT1 are when the two batches of turnVecSpace are
// recorded; turnVecAsOf falls between them.
var (
	turnVecT0   = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	turnVecT1   = turnVecT0.Add(48 * time.Hour)
	turnVecAsOf = turnVecT0.Add(24 * time.Hour)
)

// turnVecQuestions are asked of turnVecSpace.
var turnVecQuestions = []string{"what about sailing on the lake?", "how is the bakery job going?", "the cat Miso", "when is the Kyoto trip?", "who trains for the marathon?"}

// turnVecTurns returns k turns of turnVecSpace from number from on.
func turnVecTurns(from, k int) []TurnInput {
	topics := []string{"sailing on the lake", "my sister's wedding in June", "the new job at the bakery", "training for a marathon",
		"adopting a cat named Miso", "a trip to Kyoto", "bread with rye flour", "the lake house roof"}
	var in []TurnInput
	for i := from; i < from+k; i++ {
		text := fmt.Sprintf("turn %d: more on %s and %s", i, topics[i*7%len(topics)], topics[i*3%len(topics)])
		if i%5 == 0 {
			text += "?"
		}
		in = append(in, TurnInput{ID: fmt.Sprint("t", i), SessionID: strconv.Itoa(i / 12), Speaker: []string{"Ann", "Bob"}[i%2],
			Text: text, Time: fmt.Sprintf("2023-05-%02dT10:%02d:00Z", 1+i/12, i%60)})
	}
	return in
}

// turnVecOpen opens a memory of mode on s; with an LLM mode it has the
// scripted model. lazy sets the size from which turn vectors are left
// for later to 0.
func turnVecOpen(t *testing.T, s store.Store, mode Mode, lazy bool) *Memory {
	t.Helper()
	o := Options{Store: s, Mode: mode, Embedder: hashing.New(0)}
	if mode != ModeOffline {
		o.MemoryModel = llmtest.NewScripted()
	}
	m, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if lazy {
		m.limits.eagerTurnVectors = 0
	}
	m.now = func() time.Time { return turnVecT1 }
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// turnVecSpace writes a space of 160 turns in two batches (recorded at
// turnVecT0 and turnVecT1) to s, in mode.
func turnVecSpace(t *testing.T, s store.Store, mode Mode, sp Space) {
	t.Helper()
	m := turnVecOpen(t, s, mode, false)
	m.now = func() time.Time { return turnVecT0 }
	if _, err := m.Add(t.Context(), sp, turnVecTurns(0, 100)); err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return turnVecT1 }
	if _, err := m.Add(t.Context(), sp, turnVecTurns(100, 60)); err != nil {
		t.Fatal(err)
	}
}

// sameRetrieval fails unless got and want retrieved the same evidence,
// context and stages.
func sameRetrieval(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if d := cmp.Diff(want.Evidence, got.Evidence); d != "" || got.Context != want.Context || !slices.EqualFunc(got.Trace.Stages, want.Trace.Stages, func(a, b Stage) bool {
		return a.Name == b.Name && slices.Equal(a.IDs, b.IDs)
	}) {
		t.Fatalf("%s: retrieval differs from an eager load (-eager +lazy):\n%s", what, d)
	}
	if len(want.Evidence) == 0 {
		t.Fatalf("%s: no evidence, the test would check nothing", what)
	}
}

// checkLazyVectors fails unless st's turn vectors are loaded and each row
// is the vector stored for its turn; with events, the same of the event
// vectors.
func checkLazyVectors(t *testing.T, what string, s store.Store, st *spaceState, embID string, events bool) {
	t.Helper()
	st.mu.RLock()
	defer st.mu.RUnlock()
	ids := func(n int, id func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	kinds := []struct {
		kind   store.VectorKind
		loaded bool
		mat    *vec.Matrix
		ids    []string
	}{{store.VectorTurn, st.turnVecLoaded.Load(), &st.turnVec, ids(len(st.turns), func(i int) string { return st.turns[i].ID })}}
	if events {
		kinds = append(kinds, struct {
			kind   store.VectorKind
			loaded bool
			mat    *vec.Matrix
			ids    []string
		}{store.VectorEvent, st.eventVecLoaded.Load(), &st.eventVec, ids(len(st.events), func(i int) string { return st.events[i].ID })})
	}
	for _, k := range kinds {
		if !k.loaded {
			t.Fatalf("%s: %s vectors not loaded", what, k.kind)
		}
		vs, err := s.ListVectors(t.Context(), st.space, k.kind, embID)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string][]float32{}
		for _, v := range vs {
			byID[v.ID] = v.Values
		}
		if k.mat.Rows() != len(k.ids) {
			t.Fatalf("%s: %d %s vectors for %d records", what, k.mat.Rows(), k.kind, len(k.ids))
		}
		for i, id := range k.ids {
			if !slices.Equal(k.mat.Row(i), byID[id]) {
				t.Fatalf("%s: %s row %d (%s) is not the stored vector", what, k.kind, i, id)
			}
		}
	}
}

// TestTurnVectorsLazyOpen checks that a large offline space opens, and
// answers unfiltered questions, without reading its turn vectors (read in
// one pass with the others, set by set, or listed), retrieving what an
// eager load does; and that an as-of or filtered question, whose hidden
// windows fall back to the turn's own cosine, reads them first and
// retrieves what an eager load does too.
func TestTurnVectorsLazyOpen(t *testing.T) {
	ctx := t.Context()
	base, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	sp := Space{UserID: "lazy-turns"}
	turnVecSpace(t, base, ModeOffline, sp)
	eager := turnVecOpen(t, base, ModeOffline, false)
	c := &countingStore{Store: base}
	stores := []struct {
		name string
		s    store.Store
	}{{"sets", c}, {"into", vectorsInto{c, c}}, {"listed", struct{ store.Store }{c}}}
	for _, sc := range stores {
		before := c.turnReads()
		lazy := turnVecOpen(t, sc.s, ModeOffline, true)
		for _, q := range turnVecQuestions {
			want, err := eager.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := lazy.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameRetrieval(t, sc.name+": "+q, got, want)
		}
		st, err := lazy.state(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.turnReads() - before; n != 0 || st.turnVecLoaded.Load() || st.turnVec.Rows() != 0 || st.eventVecLoaded.Load() || st.eventVec.Rows() != 0 {
			t.Fatalf("%s: %d reads of turn or event vectors (loaded %v, %v) by an open and unfiltered offline questions", sc.name, n, st.turnVecLoaded.Load(), st.eventVecLoaded.Load())
		}
		if eagerSt, _ := eager.state(ctx, sp); !eagerSt.turnVecLoaded.Load() || eagerSt.turnVec.Rows() != len(eagerSt.turns) || !eagerSt.eventVecLoaded.Load() || eagerSt.eventVec.Rows() != len(eagerSt.events) {
			t.Fatalf("a small space did not read its turn and event vectors as it loaded")
		}
		opts := []struct {
			name string
			ro   RetrieveOptions
		}{{"as of", RetrieveOptions{AsOf: turnVecAsOf}}, {"filtered", RetrieveOptions{Filter: func(tu Turn) bool { return tu.Speaker == "Ann" }}}}
		for i, o := range opts {
			if i == 1 {
				// Each kind of question loads the vectors on its own.
				lazy = turnVecOpen(t, sc.s, ModeOffline, true)
			}
			for _, q := range turnVecQuestions {
				want, err := eager.Retrieve(ctx, sp, q, o.ro)
				if err != nil {
					t.Fatal(err)
				}
				got, err := lazy.Retrieve(ctx, sp, q, o.ro)
				if err != nil {
					t.Fatal(err)
				}
				sameRetrieval(t, sc.name+": "+o.name+": "+q, got, want)
			}
			st, err := lazy.state(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			checkLazyVectors(t, sc.name+": "+o.name, base, st, lazy.opts.Embedder.ID(), false)
		}
	}
}

// TestTurnVectorsLazyAdd checks that turns added to a space opened
// without its turn vectors (segmented against the stored turns' vectors,
// read first) make the same events and retrieval as on an eager load, and
// that the state's turn vectors then follow the turns.
func TestTurnVectorsLazyAdd(t *testing.T) {
	ctx := t.Context()
	sp := Space{UserID: "lazy-add"}
	var mems [2]*Memory
	var stores [2]*sqlite.Store
	for i, lazy := range []bool{false, true} {
		s, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		turnVecSpace(t, s, ModeOffline, sp)
		m := turnVecOpen(t, s, ModeOffline, lazy)
		if _, err := m.Retrieve(ctx, sp, turnVecQuestions[0], RetrieveOptions{}); err != nil {
			t.Fatal(err)
		}
		if st, _ := m.state(ctx, sp); st.turnVecLoaded.Load() == lazy {
			t.Fatalf("lazy %v: turn vectors loaded %v", lazy, st.turnVecLoaded.Load())
		}
		if _, err := m.Add(ctx, sp, turnVecTurns(160, 30)); err != nil {
			t.Fatal(err)
		}
		mems[i], stores[i] = m, s
	}
	var events [2][]store.Event
	for i, s := range stores {
		var err error
		if events[i], err = s.ListEvents(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(events[0], events[1]); d != "" {
		t.Fatalf("events differ (-eager +lazy):\n%s", d)
	}
	for _, q := range turnVecQuestions {
		want, err := mems[0].Retrieve(ctx, sp, q, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := mems[1].Retrieve(ctx, sp, q, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sameRetrieval(t, "after Add: "+q, got, want)
	}
	st, err := mems[1].state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	checkLazyVectors(t, "after Add", stores[1], st, mems[1].opts.Embedder.ID(), true)
}

// TestTurnVectorsLazyCatchUp checks a space opened without its turn
// vectors that catches up with another writer's adds and deletes: before
// reading them (they are then read for the turns it holds) and after
// (they then follow the changes); either way it retrieves what a fresh
// eager load does.
func TestTurnVectorsLazyCatchUp(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	var stores []store.Store
	for range 3 {
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	sp := Space{UserID: "lazy-follow"}
	turnVecSpace(t, stores[0], ModeOffline, sp)
	writer := turnVecOpen(t, stores[0], ModeOffline, false)
	for round, loadFirst := range []bool{false, true} {
		follower := turnVecOpen(t, stores[1], ModeOffline, true)
		if _, err := follower.Retrieve(ctx, sp, turnVecQuestions[0], RetrieveOptions{}); err != nil {
			t.Fatal(err)
		}
		if loadFirst {
			if _, err := follower.Retrieve(ctx, sp, turnVecQuestions[0], RetrieveOptions{AsOf: turnVecAsOf}); err != nil {
				t.Fatal(err)
			}
		}
		caught := follower.catchUps.Load()
		if _, err := writer.Add(ctx, sp, turnVecTurns(200+40*round, 12)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{fmt.Sprint("t", 3+round), fmt.Sprint("t", 150+round)} {
			if err := writer.Delete(ctx, sp, id); err != nil {
				t.Fatal(err)
			}
		}
		fresh := turnVecOpen(t, stores[2], ModeOffline, false)
		for _, ro := range []RetrieveOptions{{}, {AsOf: turnVecAsOf}} {
			for _, q := range turnVecQuestions {
				want, err := fresh.Retrieve(ctx, sp, q, ro)
				if err != nil {
					t.Fatal(err)
				}
				got, err := follower.Retrieve(ctx, sp, q, ro)
				if err != nil {
					t.Fatal(err)
				}
				sameRetrieval(t, fmt.Sprintf("loaded first %v, as of %v: %s", loadFirst, !ro.AsOf.IsZero(), q), got, want)
			}
		}
		if follower.catchUps.Load() == caught {
			t.Fatalf("loaded first %v: the follower did not catch up in place", loadFirst)
		}
		st, err := follower.state(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		if loadFirst {
			// Event vectors are read by event search alone.
			st.mu.RLock()
			err := st.ensureEventVectors(ctx)
			st.mu.RUnlock()
			if err != nil {
				t.Fatal(err)
			}
		}
		checkLazyVectors(t, fmt.Sprintf("loaded first %v", loadFirst), stores[0], st, writer.opts.Embedder.ID(), loadFirst)
	}
}

// TestTurnVectorsLLMModes checks that a memory of an LLM mode reads its
// turn vectors as it loads whatever the space's size, and that its
// retrieval (hybrid turn search in paper mode, member scores and as-of
// offline scores in default mode) reads them first when a state lacks
// them, and retrieves what it does with them.
func TestTurnVectorsLLMModes(t *testing.T) {
	ctx := t.Context()
	for _, mode := range []Mode{ModeDefault, ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			s, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sp := Space{UserID: "lazy-llm"}
			turnVecSpace(t, s, mode, sp)
			eager, lazy := turnVecOpen(t, s, mode, false), turnVecOpen(t, s, mode, true)
			st, err := lazy.state(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			if !st.turnVecLoaded.Load() {
				t.Fatal("an LLM mode left the turn vectors for later")
			}
			read := false
			for _, ro := range []RetrieveOptions{{}, {AsOf: turnVecAsOf}} {
				for _, q := range turnVecQuestions {
					// The state as a load that leaves them for later makes
					// it.
					unloadVectors(st)
					want, err := eager.Retrieve(ctx, sp, q, ro)
					if err != nil {
						t.Fatal(err)
					}
					got, err := lazy.Retrieve(ctx, sp, q, ro)
					if err != nil {
						t.Fatal(err)
					}
					sameRetrieval(t, fmt.Sprintf("as of %v: %s", !ro.AsOf.IsZero(), q), got, want)
					// Paper mode's hybrid search reads them on every
					// question; default mode where its member scores do.
					read = read || st.turnVecLoaded.Load()
					if mode == ModePaper && !st.turnVecLoaded.Load() {
						t.Fatalf("%q: retrieval did not read the turn vectors", q)
					}
					if !st.eventVecLoaded.Load() {
						t.Fatalf("%q: event search did not read the event vectors", q)
					}
				}
			}
			if !read {
				t.Fatal("no question read the turn vectors, the test would check nothing")
			}
		})
	}
}
