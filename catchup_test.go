package higmem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

// stateView is what a loaded state holds that reads depend on, in a form
// that compares: the records, positions, per-turn facts, membership,
// links, and the indexes and matrices as their answers to probes (the
// exact BM25 score of every document for every word of the space, the
// exact estimates, bounds and mean cosine of the matrices for a few
// query vectors).
type stateView struct {
	Turns     []store.Turn
	Pos       map[string]int
	TimeRefs  [][]store.TimeRef
	Dated     []bool
	Same      []bool
	Question  []bool
	Number    []bool
	TurnEvent []int32
	Speaker   []int32
	Visible   []bool
	Speakers  []string
	SpeakerID map[string]int32
	Run       []int32
	RunStart  []int32
	RunAsks   []bool
	RunLinks  []uint8
	Cues      []uint8
	Words     []int32
	WinStart  []int32
	Events    []store.Event
	EvPos     map[string]int
	EvTurns   [][]int32
	EventsOf  map[string][]string
	Links     map[string][]store.Link
	EventSeq  int
	LastEvent string
	Records   []store.ProfileRecord
	Version   int64
	TurnLex   map[string][]float64
	EventLex  map[string][]float64
	LexLen    [2]int
	TurnVec   matrixView
	WinVec    matrixView
	EventVec  matrixView
}

// matrixView is a matrix as its rows and its answers to probes.
type matrixView struct {
	Dim       int
	Data      []float32
	Quantized bool
	Est, Err  [][]float64
	Mean      []float64
}

func viewMatrix(m *vec.Matrix, probes [][]float32, mean bool) matrixView {
	v := matrixView{Dim: m.Dim, Data: m.Data, Quantized: m.Quantized()}
	if !v.Quantized {
		return v
	}
	for _, q := range probes {
		if len(q) != m.Dim {
			continue
		}
		est, bound := make([]float64, m.Rows()), make([]float64, m.Rows())
		m.Estimate(q, est, bound)
		v.Est, v.Err = append(v.Est, est), append(v.Err, bound)
		if mean {
			// Only the turn matrix's mean is read (offline scoring); the
			// event matrix's is never computed.
			v.Mean = append(v.Mean, m.MeanDot(q))
		}
	}
	return v
}

// readLazy reads the turn and event vectors of each state (m[i]'s st[i])
// and brings it to the store's version, until every one is there with its
// vectors. Reading them stores those the store lacks (as a load does, after
// an import on PostgreSQL) when the state is at the store's version, which
// moves that version past the other states: they then catch up with that
// write, so that the states compare.
func readLazy(t *testing.T, m []*Memory, st []*spaceState) {
	t.Helper()
	for range 5 {
		for i, s := range st {
			s.mu.RLock()
			err := s.ensureVectors(t.Context())
			s.mu.RUnlock()
			if err != nil {
				t.Fatal(err)
			}
			if err := m[i].refresh(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
		v, err := m[0].store.SpaceVersion(t.Context(), st[0].space)
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, s := range st {
			done = done && s.version.Load() == v && s.turnVecLoaded.Load() && s.eventVecLoaded.Load()
		}
		if done {
			return
		}
	}
	t.Fatal("the states did not settle with their vectors read")
}

// view returns the view of st, after reading every annotation and the turn
// and event vectors (so that a state read lazily and one read eagerly
// compare; see readLazy for the versions).
func view(t *testing.T, m *Memory, st *spaceState) stateView {
	t.Helper()
	st.mu.RLock()
	defer st.mu.RUnlock()
	if err := st.ensureAnnotations(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := st.ensureVectors(t.Context()); err != nil {
		t.Fatal(err)
	}
	v := stateView{Turns: st.turns, Pos: st.pos, TimeRefs: st.info.timeRefs, Dated: st.info.dated, Same: st.info.sameSession,
		Question: st.info.question, Number: st.info.number, TurnEvent: st.info.event, Speaker: st.info.speaker,
		Visible: st.info.visible, Speakers: st.info.speakers, SpeakerID: st.info.speakerID, Run: st.info.Run,
		RunStart: st.info.RunStart, RunAsks: st.info.RunAsks, RunLinks: st.info.RunLinks, Cues: st.info.cues, Words: st.info.words, WinStart: st.info.winStart, Events: st.events, EvPos: st.evPos, EvTurns: st.evTurns,
		EventSeq: st.eventSeq, LastEvent: st.lastEvent, Version: st.version.Load(), Records: st.records.List(),
		EventsOf: map[string][]string{}, Links: map[string][]store.Link{}}
	// The packed forms the offline scorer reads match the slices they
	// pack, however the state came about.
	ti := &st.info
	if len(ti.cues) != len(st.turns) || len(ti.RunLinks) != len(ti.RunStart) {
		t.Fatalf("%d cues and %d run links for %d turns and %d runs", len(ti.cues), len(ti.RunLinks), len(st.turns), len(ti.RunStart))
	}
	for i, c := range ti.cues {
		if want := offline.CuesOf(ti.question[i], ti.number[i], ti.dated[i]); c != want {
			t.Fatalf("turn %d: cues %b, want %b", i, c, want)
		}
	}
	for r, l := range ti.RunLinks {
		if want := offline.RunLinksOf(ti.sameSession, ti.RunStart, ti.RunAsks, r); l != want {
			t.Fatalf("run %d: links %b, want %b", r, l, want)
		}
	}
	for id, evs := range st.eventsOf {
		if len(evs) > 0 {
			v.EventsOf[id] = evs
		}
	}
	for id, ls := range st.links {
		if len(ls) > 0 {
			v.Links[id] = ls
		}
	}
	words := map[string]bool{}
	for _, tr := range st.turns {
		for _, w := range strings.Fields(strings.ToLower(rules.LexText(tr))) {
			words[w] = true
		}
	}
	for _, e := range st.events {
		for _, w := range strings.Fields(strings.ToLower(rules.EventText(e))) {
			words[w] = true
		}
	}
	v.TurnLex, v.EventLex = map[string][]float64{}, map[string][]float64{}
	for w := range words {
		dst := make([]float64, len(st.turns))
		st.turnLex.ScoreRefs(w, dst, nil)
		v.TurnLex[w] = dst
		dst = make([]float64, len(st.events))
		st.eventLex.ScoreRefs(w, dst, nil)
		v.EventLex[w] = dst
	}
	v.LexLen = [2]int{st.turnLex.Len(), st.eventLex.Len()}
	var probes [][]float32
	if emb := m.opts.Embedder; emb != nil {
		var err error
		if probes, err = m.embed(t.Context(), []string{"sailing on the lake", "the new job", "my sister's wedding"}); err != nil {
			t.Fatal(err)
		}
	}
	v.TurnVec = viewMatrix(&st.turnVec, probes, true)
	v.WinVec = viewMatrix(&st.winVec, probes, true)
	v.EventVec = viewMatrix(&st.eventVec, probes, false)
	return v
}

// catchUpStores opens three stores on one database, standing for three
// processes: a writer, a follower that catches up, and one for fresh
// loads.
func catchUpStores(t *testing.T, backend string) []store.Store {
	t.Helper()
	var out []store.Store
	switch backend {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "catchup.db")
		for range 3 {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			out = append(out, s)
		}
	case "postgres":
		dsn, schema := pgtest.Schema(t)
		for range 3 {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			out = append(out, s)
		}
	}
	return out
}

// TestCatchUpEqualsFreshLoadRandom has a writer make random changes to a
// space (adds of one turn or a batch, deletes, imports into the non-empty
// space from another space and of its own older export, which re-adds
// deleted turns and rewrites events, a DeleteSpace and the space written
// anew) while a follower on another store handle reads after each: its
// state, caught up from the journal, must equal a fresh load's in every
// field reads depend on, and so must its retrieval. The limits are small,
// so that the matrices are quantized, the annotations read lazily and the
// pruned offline path taken at these sizes. On SQLite, and on PostgreSQL
// when HIGMEM_TEST_POSTGRES is set. -catchup-seeds runs more seeds:
//
//	go test -run TestCatchUpEqualsFreshLoadRandom . -catchup-seeds=20
var catchUpSeeds = flag.Int("catchup-seeds", 1, "TestCatchUpEqualsFreshLoadRandom: random sequences per backend and mode")

func TestCatchUpEqualsFreshLoadRandom(t *testing.T) {
	t.Parallel() // the slowest test of the package: its runs share nothing
	backends := []string{"sqlite"}
	if pgtest.Enabled() {
		backends = append(backends, "postgres")
	}
	for _, backend := range backends {
		for _, mode := range []Mode{ModeOffline, ModeDefault} {
			t.Run(backend+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				steps := 30
				if testing.Short() {
					steps = 12
				}
				for seed := range max(*catchUpSeeds, 1) {
					randomCatchUps(t, backend, mode, steps, uint64(seed))
				}
			})
		}
	}
}

func randomCatchUps(t *testing.T, backend string, mode Mode, steps int, seed uint64) {
	ctx := t.Context()
	stores := catchUpStores(t, backend)
	open := func(s store.Store) *Memory {
		t.Helper()
		o := Options{Store: s, Mode: mode, Embedder: hashing.New(64)}
		if mode != ModeOffline {
			o.MemoryModel = llmtest.NewScripted()
		}
		m, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		m.limits = limits{quantizeRows: 24, eagerAnnotations: 40, offlineFastRows: 48}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}
	writer, follower := open(stores[0]), open(stores[1])
	sp, other := Space{UserID: "follow"}, Space{UserID: "elsewhere"}
	rng := rand.New(rand.NewPCG(5+seed, uint64(len(mode))))
	topics := []string{"sailing on the lake", "my sister's wedding in June", "the new job at the bakery", "training for a marathon",
		"adopting a cat named Miso", "a trip to Kyoto last week"}
	// What people tell of themselves, which default mode stores as
	// profile records (with the scripted model).
	statements := []string{"I live in Lisbon now.", "I moved to Berlin last month.", "I work as a nurse at the hospital.",
		"My new flat in York is tiny.", "I have a dog called Max.", "My favorite book is Dune."}
	n := 0
	turns := func(k int, ids bool) []TurnInput {
		var in []TurnInput
		session := fmt.Sprint("s", rng.IntN(6))
		for j := range k {
			n++
			ti := TurnInput{SessionID: session, Speaker: []string{"Ann", "Bob", "Cy"}[rng.IntN(3)],
				Text: fmt.Sprintf("turn %d: yesterday, more on %s? %d", n, topics[rng.IntN(len(topics))], rng.IntN(100)),
				Time: fmt.Sprintf("2023-05-%02dT10:%02d:00Z", 1+n/20, j%60)}
			if ids {
				ti.ID = fmt.Sprint("w", n)
			}
			if rng.IntN(4) == 0 {
				ti.Text = statements[rng.IntN(len(statements))]
			}
			in = append(in, ti)
		}
		return in
	}
	if _, err := writer.Add(ctx, other, turns(15, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Add(ctx, sp, turns(8, true)); err != nil {
		t.Fatal(err)
	}
	var exports [][]byte // of sp, older first
	questions := []string{"when was the wedding?", "what about sailing on the lake?", "how is the bakery job?", "the cat Miso", "Kyoto trip"}
	reads := func() {
		for _, q := range questions[:2] {
			if _, err := follower.Retrieve(ctx, sp, q, RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	reads()
	var what string
	var done []string
	for step := range steps {
		live, err := writer.List(ctx, sp, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before := follower.catchUps.Load()
		if step%2 == 0 {
			// The follower catches up without its turn and event
			// vectors, as a load that leaves them for later makes it
			// (the view reads them afterwards).
			unloadVectors(follower.spaceOf(sp))
		}
		reset := false
		switch r := rng.IntN(20); {
		case r < 5:
			what = "add one turn"
			_, err = writer.Add(ctx, sp, turns(1, rng.IntN(2) == 0))
		case r < 9:
			what = "add a batch"
			_, err = writer.Add(ctx, sp, turns(2+rng.IntN(12), rng.IntN(3) > 0))
		case r < 13 && len(live) > 3:
			what = "delete"
			for range 1 + rng.IntN(3) {
				i := rng.IntN(len(live))
				if err = writer.Delete(ctx, sp, live[i].ID); err != nil {
					break
				}
				live = slices.Delete(live, i, i+1)
			}
		case r < 15:
			what = "import from another space"
			var buf bytes.Buffer
			if err = writer.Export(ctx, other, &buf); err == nil {
				// Only some of its turns, and their records, with links
				// among them and to turns of the space.
				lines := someLines(buf.Bytes(), rng)
				lines = append(lines, someLinks(lines, live, rng)...)
				_, err = writer.Import(ctx, sp, bytes.NewReader(lines))
			}
		case r < 17 && len(exports) > 0:
			what = "import an older export of the space"
			_, err = writer.Import(ctx, sp, bytes.NewReader(exports[rng.IntN(len(exports))]))
		case r < 18 && step > steps/2:
			what = "delete the space and write it anew"
			reset = true
			if err = writer.DeleteSpace(ctx, sp); err == nil {
				_, err = writer.Add(ctx, sp, turns(3+rng.IntN(5), true))
			}
			exports = nil
		default:
			what = "add a batch in an old session"
			_, err = writer.Add(ctx, sp, turns(3, false))
		}
		if err != nil {
			t.Fatalf("step %d, %s: %v", step, what, err)
		}
		var buf bytes.Buffer
		if err := writer.Export(ctx, sp, &buf); err != nil {
			t.Fatal(err)
		}
		exports = append(exports, buf.Bytes())

		done = append(done, what)
		reads()
		if caught := follower.catchUps.Load() > before; caught == reset && what != "import refused" {
			t.Errorf("step %d, %s: caught up in place %v, want %v", step, what, caught, !reset)
		}
		fresh := open(stores[2])
		for _, q := range questions {
			got, err := follower.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want.Evidence, got.Evidence); d != "" || got.Context != want.Context || !slices.EqualFunc(got.Trace.Stages, want.Trace.Stages, func(a, b Stage) bool {
				return a.Name == b.Name && slices.Equal(a.IDs, b.IDs)
			}) {
				t.Fatalf("step %d, %s, %q: caught-up retrieval differs from a fresh load (-fresh +caught up):\n%s", step, what, q, d)
			}
		}
		gotSt, wantSt := follower.spaceOf(sp), fresh.spaceOf(sp)
		readLazy(t, []*Memory{fresh, follower}, []*spaceState{wantSt, gotSt})
		if d := cmp.Diff(view(t, fresh, wantSt), view(t, follower, gotSt)); d != "" {
			t.Fatalf("step %d, %s: caught-up state differs from a fresh load (-fresh +caught up):\n%s", step, what, d)
		}
		_ = fresh.Close()
	}
	t.Logf("seed %d: %d steps (%s), %d catch-ups in place", seed, steps, strings.Join(done, ", "), follower.catchUps.Load())
}

// someLines returns the header of an export and a random part of its
// other lines, keeping with each annotation, event and link the turns it
// names (and dropping events and links left without them).
func someLines(export []byte, rng *rand.Rand) []byte {
	lines := bytes.Split(bytes.TrimSpace(export), []byte("\n"))
	kept := map[string]bool{}
	var out [][]byte
	for i, l := range lines {
		if i == 0 {
			out = append(out, l)
			continue
		}
		var kind struct{ Kind string }
		_ = json.Unmarshal(l, &kind)
		if kind.Kind == "turn" {
			if rng.IntN(2) == 0 {
				var id struct {
					Turn struct{ ID string } `json:"turn"`
				}
				_ = json.Unmarshal(l, &id)
				kept[id.Turn.ID] = true
				out = append(out, l)
			}
			continue
		}
		if namesOnly(l, kept) {
			out = append(out, l)
		}
	}
	return append(bytes.Join(out, []byte("\n")), '\n')
}

// someLinks returns a few link lines (JSON lines of an export) from turns
// of the export lines to turns of the export or of live.
func someLinks(lines []byte, live []Turn, rng *rand.Rand) []byte {
	var ids []string
	for _, l := range bytes.Split(lines, []byte("\n")) {
		var rec struct {
			Kind string
			Turn *struct{ ID string }
		}
		if json.Unmarshal(l, &rec) == nil && rec.Kind == "turn" {
			ids = append(ids, rec.Turn.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var out []byte
	for range 1 + rng.IntN(3) {
		target := ids[rng.IntN(len(ids))]
		if len(live) > 0 && rng.IntN(2) == 0 {
			target = live[rng.IntN(len(live))].ID
		}
		l := store.Link{Source: ids[rng.IntN(len(ids))], Target: target, Relation: []string{"answer_to", "continues"}[rng.IntN(2)],
			Confidence: float64(rng.IntN(100)) / 100}
		b, _ := json.Marshal(map[string]any{"kind": "link", "link": l})
		out = append(append(out, b...), '\n')
	}
	return out
}

// namesOnly reports whether every turn id an export line names is in kept.
func namesOnly(l []byte, kept map[string]bool) bool {
	var rec struct {
		Annotation *struct {
			TurnID string `json:"turn_id"`
		} `json:"annotation"`
		Event *struct {
			TurnIDs []string `json:"turn_ids"`
			Facts   []struct {
				TurnID string `json:"turn_id"`
			} `json:"facts"`
		} `json:"event"`
		Link *struct{ Source, Target string } `json:"link"`
	}
	if json.Unmarshal(l, &rec) != nil {
		return false
	}
	var ids []string
	switch {
	case rec.Annotation != nil:
		ids = []string{rec.Annotation.TurnID}
	case rec.Event != nil:
		ids = rec.Event.TurnIDs
		for _, f := range rec.Event.Facts {
			if f.TurnID != "" {
				ids = append(ids, f.TurnID)
			}
		}
	case rec.Link != nil:
		ids = []string{rec.Link.Source, rec.Link.Target}
	}
	return len(ids) > 0 && !slices.ContainsFunc(ids, func(id string) bool { return !kept[id] })
}

// versionFails is a store whose SpaceVersion fails on its fail-th call
// (counted from 1).
type versionFails struct {
	store.Store
	calls, fail atomic.Int64
}

func (s *versionFails) SpaceVersion(ctx context.Context, sp store.Space) (int64, error) {
	if s.calls.Add(1) == s.fail.Load() {
		return 0, errors.New("version read failed")
	}
	return s.Store.SpaceVersion(ctx, sp)
}

// TestLoadWhoseCheckFailsIsNotTrusted checks that a load whose closing
// version read fails (so that whether it was one snapshot is not known)
// leaves the state to be loaded afresh, not caught up from the version it
// started at.
func TestLoadWhoseCheckFailsIsNotTrusted(t *testing.T) {
	ctx := t.Context()
	raw := memstore.New()
	w, err := Open(ctx, Options{Store: raw, Mode: ModeOffline})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sp := Space{UserID: "torn"}
	if _, err := w.Add(ctx, sp, []TurnInput{{ID: "a", Speaker: "Ann", Text: "I sail on the lake."}}); err != nil {
		t.Fatal(err)
	}
	vs := &versionFails{Store: raw}
	m, err := Open(ctx, Options{Store: vs, Mode: ModeOffline})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// The read's refresh: its first version read, the load, then the
	// check that fails.
	vs.calls.Store(0)
	vs.fail.Store(2)
	if _, err := m.Retrieve(ctx, sp, "which lake?", RetrieveOptions{}); err == nil {
		t.Fatalf("the failed version read was not reported (%d version reads)", vs.calls.Load())
	}
	st := m.spaceOf(sp)
	st.mu.RLock()
	torn, v := st.torn, st.version.Load()
	st.mu.RUnlock()
	if !torn || v != -1 {
		t.Fatalf("after the failed check: torn %v, version %d; want a state marked for a fresh load", torn, v)
	}
	// The next use loads afresh and sees everything.
	if _, err := w.Add(ctx, sp, []TurnInput{{ID: "b", Speaker: "Bob", Text: "Which lake?"}}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "which lake?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.mu.RLock()
	v, torn, n := st.version.Load(), st.torn, len(st.turns)
	st.mu.RUnlock()
	if v < 0 || torn || n != 2 {
		t.Fatalf("after the next read: version %d, torn %v, %d turns loaded (want 2; evidence %v)", v, torn, n, res.IDs())
	}
}
