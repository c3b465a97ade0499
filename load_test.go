package higmem

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// TestLazyAnnotations checks that a space opened without reading its
// annotations (as large spaces are) retrieves exactly what an eagerly
// loaded one does: times shown with evidence, and time cues in scoring.
func TestLazyAnnotations(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := Space{UserID: "lazy"}
	a, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	var in []TurnInput
	for i := range 60 {
		text := []string{"Yesterday I went to the lake with my sister.", "Last week we baked bread.", "How was the museum?",
			"I bought a guitar two days ago.", "We are going to Kyoto next month!"}[i%5]
		in = append(in, TurnInput{ID: fmt.Sprintf("t%d", i), SessionID: strconv.Itoa(i / 10), Speaker: []string{"Ava", "Ben"}[i%2],
			Text: text, Time: fmt.Sprintf("2023-05-%02dT10:00:00Z", 1+i/10)})
	}
	if _, err := a.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	questions := []string{"When did Ava go to the lake?", "What did Ben bake?", "When did they buy a guitar?", "Where are they going next month?"}
	if r, err := a.Retrieve(ctx, sp, questions[0], RetrieveOptions{}); err != nil || !strings.Contains(r.Context, " = ") {
		t.Fatalf("no resolved time in the evidence (%v), the test would check nothing", err)
	}
	for _, eager := range []int{defaultLimits().eagerAnnotations, 0} {
		b, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
		if err != nil {
			t.Fatal(err)
		}
		b.limits.eagerAnnotations = eager
		for _, q := range questions {
			want, err := a.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got.Evidence, want.Evidence, func(x, y Evidence) bool {
				return x.Turn.ID == y.Turn.ID && x.Score == y.Score && slices.Equal(x.Times, y.Times)
			}) || got.Context != want.Context {
				t.Fatalf("eager %d, %q:\ngot  %s\nwant %s", eager, q, got.Context, want.Context)
			}
		}
		bs, _ := b.state(ctx, sp)
		if eager == 0 && !bs.annLoaded.Load() {
			t.Error("a question about time did not load the annotations")
		}
		b.Close()
	}
	a.Close()
}

// timeRefsCount is a store that counts the reads of some turns'
// annotations, and of their time expressions (store.TimeRefsReader), which
// it has when tr is set.
type timeRefsCount struct {
	store.Store
	tr            store.TimeRefsReader
	annIDs, trIDs atomic.Int64
}

func (s *timeRefsCount) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	if ids != nil {
		s.annIDs.Add(1)
	}
	return s.Store.ListAnnotations(ctx, sp, ids)
}

type timeRefsReader struct{ *timeRefsCount }

func (s timeRefsReader) ListTimeRefs(ctx context.Context, sp store.Space, ids []string) ([][]store.TimeRef, error) {
	s.trIDs.Add(1)
	return s.tr.ListTimeRefs(ctx, sp, ids)
}

// addDatedTurns adds n turns to sp, texts in turn, ten a session, the
// sessions a day apart, spoken by Ava and Ben in turn.
func addDatedTurns(t *testing.T, m *Memory, sp Space, n int, texts ...string) {
	t.Helper()
	var in []TurnInput
	for i := range n {
		in = append(in, TurnInput{ID: fmt.Sprintf("t%d", i), SessionID: strconv.Itoa(i / 10), Speaker: []string{"Ava", "Ben"}[i%2],
			Text: texts[i%len(texts)], Time: fmt.Sprintf("2023-05-%02dT10:00:00Z", 1+i/10)})
	}
	if _, err := m.Add(context.Background(), sp, in); err != nil {
		t.Fatal(err)
	}
}

// TestEvidenceTimesRead checks that a space that has not read its
// annotations reads the times of each question's evidence as time
// expressions alone when the store can (store.TimeRefsReader), through
// ListAnnotations when it cannot, and shows the same times either way as
// a space that read every annotation.
func TestEvidenceTimesRead(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := Space{UserID: "times"}
	a, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	addDatedTurns(t, a, sp, 60, "Yesterday I went to the lake with my sister.", "Last week we baked bread at the lake.", "How was the lake?",
		"I bought a guitar two days ago.", "We are going to the lake next month!")
	const q = "What did Ava say about the lake?"
	want, err := a.Retrieve(ctx, sp, q, RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(want.Evidence, func(e Evidence) bool { return len(e.Times) > 0 }) {
		t.Fatal("no evidence with times, the test would check nothing")
	}
	for _, can := range []bool{true, false} {
		c := &timeRefsCount{Store: st, tr: st}
		var s store.Store = c
		if can {
			s = timeRefsReader{c}
		}
		b, err := Open(ctx, Options{Store: s, Mode: ModeOffline, Embedder: hashing.New(0)})
		if err != nil {
			t.Fatal(err)
		}
		b.limits.eagerAnnotations = 0
		got, err := b.Retrieve(ctx, sp, q, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Evidence, want.Evidence, func(x, y Evidence) bool {
			return x.Turn.ID == y.Turn.ID && x.Score == y.Score && slices.Equal(x.Times, y.Times)
		}) || got.Context != want.Context {
			t.Errorf("TimeRefsReader %v:\ngot  %s\nwant %s", can, got.Context, want.Context)
		}
		if bs, _ := b.state(ctx, sp); bs.annLoaded.Load() {
			t.Fatalf("TimeRefsReader %v: the question loaded every annotation, the test would check nothing", can)
		}
		if can && (c.trIDs.Load() != 1 || c.annIDs.Load() != 0) {
			t.Errorf("store with ListTimeRefs: %d reads of time expressions, %d of annotations; want 1, 0", c.trIDs.Load(), c.annIDs.Load())
		}
		if !can && c.annIDs.Load() != 1 {
			t.Errorf("store without ListTimeRefs: %d reads of annotations; want 1", c.annIDs.Load())
		}
		// The same evidence again: its times come from the cache.
		if again, err := b.Retrieve(ctx, sp, q, RetrieveOptions{}); err != nil || again.Context != want.Context {
			t.Fatalf("TimeRefsReader %v: again: %v\ngot  %s\nwant %s", can, err, again.Context, want.Context)
		}
		if reads := c.trIDs.Load() + c.annIDs.Load(); reads != 1 {
			t.Errorf("TimeRefsReader %v: %d store reads of times for the same evidence twice; want 1", can, reads)
		}
		b.Close()
	}
}

// TestEvidenceTimesCacheFollowsStore checks that the times a space that
// has not read its annotations shows with the evidence follow the store:
// after another writer changes an evidence turn's annotation, and after
// the space loads again, they are the store's, not those cached before.
func TestEvidenceTimesCacheFollowsStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := Space{UserID: "times"}
	// A store without store.SpaceTimeRefsReader: a load would read the
	// time expressions of every turn from one.
	c := &timeRefsCount{Store: st, tr: st}
	m, err := Open(ctx, Options{Store: timeRefsReader{c}, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.limits.eagerAnnotations = 0
	addDatedTurns(t, m, sp, 40, "Yesterday I went to the lake with my sister.", "We swam in the lake.", "I bought a guitar two days ago.")
	m.invalidate(sp) // loaded again, without its annotations
	const q = "What did Ava say about the lake?"
	dated := func(r *Result) (string, []string) {
		for _, e := range r.Evidence {
			if len(e.Times) > 0 {
				return e.Turn.ID, e.Times
			}
		}
		return "", nil
	}
	r, err := m.Retrieve(ctx, sp, q, RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, times := dated(r)
	if id == "" {
		t.Fatal("no evidence with times, the test would check nothing")
	}
	if bs, _ := m.state(ctx, sp); bs.annLoaded.Load() {
		t.Fatal("the question loaded every annotation, the test would check nothing")
	}
	rewrite := func(text string) {
		t.Helper()
		anns, err := st.ListAnnotations(ctx, sp, []string{id})
		if err != nil || len(anns) != 1 || len(anns[0].TimeRefs) == 0 {
			t.Fatalf("annotation of %s: %v, %v", id, anns, err)
		}
		a := anns[0]
		a.TimeRefs = slices.Clone(a.TimeRefs)
		a.TimeRefs[0].Text = text
		if err := st.Update(ctx, func(tx store.Tx) error { return tx.PutAnnotation(ctx, sp, a) }); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when, text string) {
		t.Helper()
		r, err := m.Retrieve(ctx, sp, q, RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Evidence {
			if e.Turn.ID == id {
				if len(e.Times) == 0 || !strings.HasPrefix(e.Times[0], text+" = ") {
					t.Errorf("%s: times of %s = %q; want %q first (was %q)", when, id, e.Times, text+" = ...", times)
				}
				return
			}
		}
		t.Fatalf("%s: %s is no longer evidence", when, id)
	}
	rewrite("the day before")
	check("after another writer changed the annotation", "the day before")
	rewrite("some day")
	m.invalidate(sp)
	check("after a reload", "some day")
}

// TestLoadedVectorsFollowTurns checks that a loaded space's turn, window
// and event vectors are those stored for each turn and event, in their
// order, when the ids sort otherwise than the turns: read in one pass in
// the order written (store.VectorSetsIntoReader), in id order, set by set
// (VectorsInto) and listed, and through the fallback when a turn's stored
// vector has another dimension (it is made again) or the store holds a
// vector of no turn or event; each loaded eagerly, and with the turn and
// event vectors left for later and read afterwards.
func TestLoadedVectorsFollowTurns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := hashing.New(16)
	sp := Space{UserID: "order"}
	w, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	var in []TurnInput
	for i := range 30 {
		// z29 ... z0, with one digit or two: id order is neither Seq
		// order nor its reverse.
		in = append(in, TurnInput{ID: fmt.Sprint("z", 29-i), SessionID: strconv.Itoa(i / 7), Speaker: []string{"Ava", "Ben"}[i%2],
			Text: fmt.Sprintf("turn %d about the lake and bread %d", i, i*i%11)})
	}
	if _, err := w.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The store as it is (its vector sets read in one pass, in the order
	// written), then its vector sets read one by one in id order from
	// goroutines of their own, then without vector sets (VectorsInto),
	// then with ListVectors alone.
	stores := []struct {
		name string
		s    store.Store
	}{{"sets", st}, {"sets in id order", setsByID{st, st}}, {"into", vectorsInto{st, st}}, {"listed", struct{ store.Store }{st}}}
	check := func(name string) {
		t.Helper()
		for _, sc := range stores {
			for _, lazy := range []bool{false, true} {
				checkLoadedVectors(t, name, sc.name, sc.s, st, sp, emb, lazy)
			}
		}
	}
	check("stored")
	put := func(v store.Vector) {
		t.Helper()
		if err := st.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, []store.Vector{v}) }); err != nil {
			t.Fatal(err)
		}
	}
	put(store.Vector{Kind: store.VectorWindow, ID: "z7", Embedder: windowEmbedder(emb), Values: make([]float32, 8)})
	put(store.Vector{Kind: store.VectorTurn, ID: "z12", Embedder: emb.ID(), Values: make([]float32, 8)})
	check("another dimension")
	put(store.Vector{Kind: store.VectorTurn, ID: "gone", Embedder: emb.ID(), Values: make([]float32, 16)})
	check("a vector of no turn")
	put(store.Vector{Kind: store.VectorEvent, ID: "gone", Embedder: emb.ID(), Values: make([]float32, 16)})
	check("a vector of no event")
}

// checkLoadedVectors opens a memory on open and checks that its state's
// matrices hold the vectors stored in st, in the order of the turns and
// events; lazy leaves the turn and event vectors for later (they are then
// read before the check, and must not be read before).
func checkLoadedVectors(t *testing.T, name, storeName string, open store.Store, st *sqlite.Store, sp Space, emb embed.Embedder, lazy bool) {
	t.Helper()
	ctx := t.Context()
	m, err := Open(ctx, Options{Store: open, Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if lazy {
		m.limits.eagerTurnVectors = 0
		storeName += ", lazily"
	}
	s, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	if lazy {
		if s.turnVecLoaded.Load() || s.turnVec.Rows() != 0 || s.eventVecLoaded.Load() || s.eventVec.Rows() != 0 {
			t.Fatalf("%s: %s: turn or event vectors read as the space loaded", name, storeName)
		}
		s.mu.RLock()
		err := s.ensureVectors(ctx)
		s.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(s.events) == 0 {
		t.Fatalf("%s: %s: no events", name, storeName)
	}
	eventIDs := make([]string, len(s.events))
	for i, e := range s.events {
		eventIDs[i] = e.ID
	}
	turnIDs := make([]string, len(s.turns))
	for i, tu := range s.turns {
		turnIDs[i] = tu.ID
	}
	for _, c := range []struct {
		kind  store.VectorKind
		embID string
		mat   *vec.Matrix
		ids   []string
	}{{store.VectorTurn, emb.ID(), &s.turnVec, turnIDs}, {store.VectorWindow, windowEmbedder(emb), &s.winVec, turnIDs},
		{store.VectorEvent, emb.ID(), &s.eventVec, eventIDs}} {
		vs, err := st.ListVectors(ctx, sp, c.kind, c.embID)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string][]float32{}
		for _, v := range vs {
			byID[v.ID] = v.Values
		}
		if c.mat.Rows() != len(c.ids) {
			t.Fatalf("%s: %s: %s: %d rows for %d records", name, storeName, c.kind, c.mat.Rows(), len(c.ids))
		}
		for i, id := range c.ids {
			if !slices.Equal(c.mat.Row(i), byID[id]) {
				t.Fatalf("%s: %s: %s: row %d (%s) is not the stored vector", name, storeName, c.kind, i, id)
			}
		}
	}
	m.Close()
}

// vectorsInto is a store with VectorsInto but not VectorSetsInto.
type vectorsInto struct {
	store.Store
	store.VectorsIntoReader
}

// setsByID is a store whose VectorSetsInto reads each set with VectorsInto
// (in id order, not the order the vectors were written), all at once.
type setsByID struct {
	store.Store
	vi store.VectorsIntoReader
}

func (s setsByID) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	errs := make([]error, len(sets))
	var wg sync.WaitGroup
	for i := range sets {
		wg.Go(func() {
			sets[i].N, errs[i] = s.vi.VectorsInto(ctx, sp, sets[i].Kind, sets[i].Embedder, sets[i].Dim, sets[i].Dst, sets[i].Row)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// spaceTimesCount is a store with store.SpaceTimeRefsReader that counts
// the reads of every turn's time expressions, and those of some turns'
// annotations or time expressions.
type spaceTimesCount struct {
	*timeRefsCount
	sr   store.SpaceTimeRefsReader
	each atomic.Int64
}

func (s *spaceTimesCount) ListTimeRefs(ctx context.Context, sp store.Space, ids []string) ([][]store.TimeRef, error) {
	s.trIDs.Add(1)
	return s.tr.ListTimeRefs(ctx, sp, ids)
}

func (s *spaceTimesCount) EachTimeRefs(ctx context.Context, sp store.Space, fn func(id string, refs []store.TimeRef)) error {
	s.each.Add(1)
	return s.sr.EachTimeRefs(ctx, sp, fn)
}

// TestTimeRefsFromLoad checks that a large space whose store reads every
// turn's time expressions at once (store.SpaceTimeRefsReader) holds them
// from its load on: questions read no annotations or time expressions
// from the store, and show the times (and score the time cues) of a
// space that read every annotation; and that they follow the store as
// another writer adds dated turns and rewrites an annotation (caught up),
// and after a reload: every turn's time expressions are then the store's.
func TestTimeRefsFromLoad(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp := Space{UserID: "times"}
	texts := []string{"Yesterday I went to the lake with my sister.", "We swam in the lake.", "How was the lake?",
		"I bought a guitar two days ago.", "We are going to the lake next month!"}
	w, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	addDatedTurns(t, w, sp, 60, texts...)
	c := &spaceTimesCount{timeRefsCount: &timeRefsCount{Store: st, tr: st}, sr: st}
	m, err := Open(ctx, Options{Store: c, Mode: ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.limits.eagerAnnotations = 1
	questions := []string{"What did Ava say about the lake?", "When did Ava go to the lake?", "When did they buy a guitar?",
		"Where are they going next month?", "What did Ben say about the lake yesterday?"}
	// same checks that m answers as a memory that reads every annotation,
	// and that m's times are the store's, turn by turn.
	same := func(when string) {
		t.Helper()
		e, err := Open(ctx, Options{Store: st, Mode: ModeOffline, Embedder: hashing.New(0)})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		dated := false
		for _, q := range questions {
			want, err := e.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Retrieve(ctx, sp, q, RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got.Evidence, want.Evidence, func(x, y Evidence) bool {
				return x.Turn.ID == y.Turn.ID && x.Score == y.Score && slices.Equal(x.Times, y.Times)
			}) || got.Context != want.Context {
				t.Errorf("%s, %q:\ngot  %s\nwant %s", when, q, got.Context, want.Context)
			}
			dated = dated || slices.ContainsFunc(got.Evidence, func(e Evidence) bool { return len(e.Times) > 0 })
		}
		if !dated {
			t.Fatalf("%s: no evidence with times, the test would check nothing", when)
		}
		ms, err := m.state(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		ms.mu.RLock()
		defer ms.mu.RUnlock()
		if !ms.annLoaded.Load() {
			t.Fatalf("%s: the space does not hold its time expressions", when)
		}
		anns, err := st.ListAnnotations(ctx, sp, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]store.TimeRef, len(ms.turns))
		for _, a := range anns {
			want[ms.pos[a.TurnID]] = a.TimeRefs
		}
		for i, refs := range ms.info.timeRefs {
			if !slices.EqualFunc(refs, want[i], func(x, y store.TimeRef) bool {
				return x.Text == y.Text && x.Start.Equal(y.Start) && x.End.Equal(y.End) && x.Granularity == y.Granularity && x.Fuzzy == y.Fuzzy
			}) || ms.info.dated[i] != (len(want[i]) > 0) {
				t.Errorf("%s: time expressions of %s = %v (dated %v); the store's %v", when, ms.turns[i].ID, refs, ms.info.dated[i], want[i])
			}
		}
	}
	same("loaded")
	if n := c.each.Load(); n != 1 {
		t.Errorf("%d reads of every turn's time expressions; want 1", n)
	}
	if n := c.trIDs.Load() + c.annIDs.Load(); n != 0 {
		t.Errorf("%d store reads of some turns' times or annotations; want none", n)
	}
	// Another writer adds dated turns and rewrites an annotation: m
	// catches up, without loading again.
	var in []TurnInput
	for i := range 20 {
		in = append(in, TurnInput{ID: fmt.Sprintf("n%d", i), SessionID: "late", Speaker: []string{"Ava", "Ben"}[i%2],
			Text: texts[(i+2)%len(texts)], Time: "2023-06-20T10:00:00Z"})
	}
	if _, err := w.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	anns, err := st.ListAnnotations(ctx, sp, []string{"t0"})
	if err != nil || len(anns) != 1 || len(anns[0].TimeRefs) == 0 {
		t.Fatalf("annotation of t0: %v, %v", anns, err)
	}
	a := anns[0]
	a.TimeRefs = slices.Clone(a.TimeRefs)
	a.TimeRefs[0].Text = "the day before"
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.PutAnnotation(ctx, sp, a) }); err != nil {
		t.Fatal(err)
	}
	same("caught up")
	if n := c.each.Load(); n != 1 {
		t.Errorf("caught up: %d reads of every turn's time expressions; want 1 (no reload)", n)
	}
	m.invalidate(sp)
	same("loaded again")
	if n := c.trIDs.Load() + c.annIDs.Load(); n != 0 {
		t.Errorf("%d store reads of some turns' times or annotations; want none", n)
	}
}
