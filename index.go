package higmem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// spaceState is the in-memory working set of one space: every turn, its
// annotation, every event, the links, a dense matrix per layer (rows aligned
// with turns and events) and a BM25 index per layer. It is loaded lazily
// from the store on first use and kept in step with every commit.
type spaceState struct {
	space store.Space

	// writeMu serialises writers (Add, Delete, Import) of this space, so
	// that construction sees a consistent memory and assigns Seq in order.
	writeMu sync.Mutex

	// mu guards every field below.
	mu       sync.RWMutex
	loaded   bool
	turns    []store.Turn // ordered by Seq
	pos      map[string]int
	ann      map[string]store.Annotation
	events   []store.Event // ordered by creation
	evPos    map[string]int
	eventsOf map[string][]string     // turn id -> event ids
	links    map[string][]store.Link // turn id (source or target) -> links
	turnVec  vec.Matrix              // row i embeds turns[i]; empty without an embedder
	eventVec vec.Matrix              // row i embeds events[i]
	turnLex  *bm25.Index
	eventLex *bm25.Index
	// eventSeq is the highest n of the event ids "e<n>".
	eventSeq int
	// lastEvent is the most recently updated event (paper-mode affiliation
	// context and default-mode continuity).
	lastEvent string
}

// state returns the loaded state of a space, loading it on first use.
func (m *Memory) state(ctx context.Context, sp store.Space) (*spaceState, error) {
	m.mu.Lock()
	st, ok := m.spaces[sp]
	if !ok {
		st = &spaceState{space: sp}
		m.spaces[sp] = st
	}
	m.mu.Unlock()

	st.mu.RLock()
	loaded := st.loaded
	st.mu.RUnlock()
	if loaded {
		return st, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded {
		return st, nil
	}
	if err := m.load(ctx, st); err != nil {
		return nil, err
	}
	st.loaded = true
	return st, nil
}

// invalidate drops the cached state of a space; the next use reloads it.
func (m *Memory) invalidate(sp store.Space) {
	m.mu.Lock()
	st := m.spaces[sp]
	m.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	st.loaded = false
	st.mu.Unlock()
}

// load reads a space from the store. Vectors made by another embedder (or
// missing) are recomputed and stored, never mixed. Caller holds st.mu.
func (m *Memory) load(ctx context.Context, st *spaceState) error {
	sp := st.space
	turns, err := m.store.ListTurns(ctx, sp, store.TurnQuery{})
	if err != nil {
		return fmt.Errorf("higmem: load %s: %w", sp, err)
	}
	anns, err := m.store.ListAnnotations(ctx, sp, nil)
	if err != nil {
		return fmt.Errorf("higmem: load %s: %w", sp, err)
	}
	events, err := m.store.ListEvents(ctx, sp)
	if err != nil {
		return fmt.Errorf("higmem: load %s: %w", sp, err)
	}
	links, err := m.store.ListLinks(ctx, sp, nil)
	if err != nil {
		return fmt.Errorf("higmem: load %s: %w", sp, err)
	}
	st.turns = nil
	st.pos = make(map[string]int, len(turns))
	st.ann = make(map[string]store.Annotation, len(anns))
	st.events = nil
	st.evPos = make(map[string]int, len(events))
	st.eventsOf = make(map[string][]string)
	st.links = make(map[string][]store.Link)
	st.turnLex = bm25.New(bm25.Options{})
	st.eventLex = bm25.New(bm25.Options{})
	st.turnVec = vec.Matrix{}
	st.eventVec = vec.Matrix{}
	st.lastEvent = ""
	st.eventSeq = 0
	for _, a := range anns {
		st.ann[a.TurnID] = a
	}
	var tv, ev [][]float32
	if m.opts.Embedder != nil {
		tv, err = m.loadVectors(ctx, sp, store.VectorTurn, turns, nil)
		if err != nil {
			return err
		}
		ev, err = m.loadVectors(ctx, sp, store.VectorEvent, nil, events)
		if err != nil {
			return err
		}
	}
	st.addTurns(turns, tv)
	var latest store.Event
	for i, e := range events {
		var v []float32
		if ev != nil {
			v = ev[i]
		}
		st.putEvent(e, v)
		if e.UpdatedAt.After(latest.UpdatedAt) || latest.ID == "" {
			latest = e
		}
	}
	st.lastEvent = latest.ID
	for _, l := range links {
		st.addLink(l)
	}
	return nil
}

// loadVectors returns one vector per turn (or event), in order, embedding
// and storing those that are missing or were made by another embedder.
func (m *Memory) loadVectors(ctx context.Context, sp store.Space, kind store.VectorKind, turns []store.Turn, events []store.Event) ([][]float32, error) {
	emb := m.opts.Embedder
	stored, err := m.store.ListVectors(ctx, sp, kind, emb.ID())
	if err != nil {
		return nil, fmt.Errorf("higmem: load vectors of %s: %w", sp, err)
	}
	byID := make(map[string][]float32, len(stored))
	for _, v := range stored {
		if len(v.Values) == emb.Dim() {
			byID[v.ID] = v.Values
		}
	}
	n := len(turns) + len(events)
	out := make([][]float32, n)
	var missing []int
	var texts []string
	for i := range n {
		var id, text string
		if kind == store.VectorTurn {
			id, text = turns[i].ID, turnEmbedText(turns[i])
		} else {
			id, text = events[i].ID, eventText(events[i])
		}
		if v, ok := byID[id]; ok {
			out[i] = v
			continue
		}
		missing = append(missing, i)
		texts = append(texts, text)
	}
	if len(missing) == 0 {
		return out, nil
	}
	m.opts.Logger.Info("re-embedding vectors made by another embedder or missing",
		"space", sp.String(), "kind", kind, "count", len(missing), "embedder", emb.ID())
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	recs := make([]store.Vector, len(missing))
	for j, i := range missing {
		out[i] = vs[j]
		id := ""
		if kind == store.VectorTurn {
			id = turns[i].ID
		} else {
			id = events[i].ID
		}
		recs[j] = store.Vector{Kind: kind, ID: id, Embedder: emb.ID(), Values: vs[j]}
	}
	err = m.store.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, recs) })
	if err != nil {
		return nil, fmt.Errorf("higmem: store re-embedded vectors: %w", err)
	}
	return out, nil
}

// embed embeds texts with the configured embedder, normalising the result.
func (m *Memory) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if m.opts.Embedder == nil || len(texts) == 0 {
		return nil, nil
	}
	vs, err := m.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("higmem: embed with %s: %w", m.opts.Embedder.ID(), err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("higmem: embedder %s returned %d vectors for %d texts", m.opts.Embedder.ID(), len(vs), len(texts))
	}
	for _, v := range vs {
		vec.Normalize(v)
	}
	return vs, nil
}

// addTurns appends stored turns (with their vectors, if any). Caller holds
// st.mu for writing.
func (st *spaceState) addTurns(turns []store.Turn, vs [][]float32) {
	for i, t := range turns {
		st.pos[t.ID] = len(st.turns)
		st.turns = append(st.turns, t)
		st.turnLex.Add(t.ID, turnLexText(t))
		if vs != nil {
			if st.turnVec.Dim == 0 {
				st.turnVec.Dim = len(vs[i])
			}
			st.turnVec.Append(vs[i])
		}
	}
}

// putEvent inserts or replaces an event (and its vector). Caller holds
// st.mu for writing.
func (st *spaceState) putEvent(e store.Event, v []float32) {
	i, ok := st.evPos[e.ID]
	if ok {
		for _, id := range st.events[i].TurnIDs {
			st.eventsOf[id] = slices.DeleteFunc(st.eventsOf[id], func(x string) bool { return x == e.ID })
		}
		st.events[i] = e
		if v != nil {
			st.eventVec.Set(i, v)
		}
	} else {
		i = len(st.events)
		st.evPos[e.ID] = i
		st.events = append(st.events, e)
		if v != nil {
			if st.eventVec.Dim == 0 {
				st.eventVec.Dim = len(v)
			}
			st.eventVec.Append(v)
		}
	}
	for _, id := range e.TurnIDs {
		st.eventsOf[id] = append(st.eventsOf[id], e.ID)
	}
	st.eventSeq = max(st.eventSeq, eventNumber(e.ID))
	st.eventLex.Add(e.ID, eventText(e))
}

// addLink indexes a link under both of its ends. Caller holds st.mu.
func (st *spaceState) addLink(l store.Link) {
	has := func(ls []store.Link) bool {
		return slices.ContainsFunc(ls, func(x store.Link) bool {
			return x.Source == l.Source && x.Target == l.Target && x.Relation == l.Relation
		})
	}
	if !has(st.links[l.Source]) {
		st.links[l.Source] = append(st.links[l.Source], l)
	}
	if l.Target != l.Source && !has(st.links[l.Target]) {
		st.links[l.Target] = append(st.links[l.Target], l)
	}
}

// turn returns the turn with the given id. Caller holds st.mu.
func (st *spaceState) turn(id string) (store.Turn, bool) {
	i, ok := st.pos[id]
	if !ok {
		return store.Turn{}, false
	}
	return st.turns[i], true
}

// event returns the event with the given id. Caller holds st.mu.
func (st *spaceState) event(id string) (store.Event, bool) {
	i, ok := st.evPos[id]
	if !ok {
		return store.Event{}, false
	}
	return st.events[i], true
}

// scored is a search hit: an index into turns or events and a score.
type scored struct {
	idx   int
	score float64
}

// hybridDenseWeight weighs cosine similarity against BM25 in hybrid
// search, where a hit scores BM25/max(BM25) + hybridDenseWeight*cosine.
// This normalised sum was measured against reciprocal-rank fusion (k=60)
// on the LoCoMo dev conversations (TestOfflineLoCoMoSweep, fusion table):
// turn recall at 8 is 0.642 with the sum and 0.522 with RRF, which lets
// MiniLM's weaker ranking (0.401 alone) drag BM25's (0.602) down.
const hybridDenseWeight = 1.0

// hybrid fuses lexical and dense scores by a normalised sum and returns the
// best k. lex maps a row to its BM25 score (rows without a match are
// absent); dense holds every row's cosine, or is nil. keep filters rows (nil
// keeps all).
func hybrid(n int, lex map[int]float64, dense []float32, k int, keep func(int) bool) []scored {
	maxLex := 0.0
	for i, s := range lex {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, s)
		}
	}
	var out []scored
	for i := range n {
		if keep != nil && !keep(i) {
			continue
		}
		s := 0.0
		if maxLex > 0 {
			s = lex[i] / maxLex
		}
		if dense != nil {
			s += hybridDenseWeight * max(float64(dense[i]), 0)
		}
		if s > 0 {
			out = append(out, scored{i, s})
		}
	}
	sortScored(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// sortScored orders hits by score descending, then index ascending.
func sortScored(s []scored) {
	slices.SortFunc(s, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
}

// searchTurns ranks turns for a query: BM25 fused with dense similarity
// (when qv is non-nil) by hybrid. keep filters turn indexes (nil keeps
// all). Caller holds st.mu.
func (st *spaceState) searchTurns(query string, qv []float32, k int, keep func(int) bool) []scored {
	if k <= 0 || len(st.turns) == 0 {
		return nil
	}
	var dense []float32
	if qv != nil && st.turnVec.Rows() == len(st.turns) {
		dense = st.turnVec.Scores(qv)
	}
	lex := map[int]float64{}
	for id, s := range st.turnLex.Scores(query) {
		if i, ok := st.pos[id]; ok {
			lex[i] = s
		}
	}
	return hybrid(len(st.turns), lex, dense, k, keep)
}

// searchEvents ranks events for a query like searchTurns. Caller holds
// st.mu.
func (st *spaceState) searchEvents(query string, qv []float32, k int, keep func(int) bool) []scored {
	if k <= 0 || len(st.events) == 0 {
		return nil
	}
	var dense []float32
	if qv != nil && st.eventVec.Rows() == len(st.events) {
		dense = st.eventVec.Scores(qv)
	}
	lex := map[int]float64{}
	for id, s := range st.eventLex.Scores(query) {
		if i, ok := st.evPos[id]; ok {
			lex[i] = s
		}
	}
	return hybrid(len(st.events), lex, dense, k, keep)
}

// content is the turn text with any image caption, as the reference formats
// it: "[Image: caption] text".
func content(t store.Turn) string {
	var b strings.Builder
	for _, a := range t.Attachments {
		if a.Caption == "" {
			continue
		}
		kind := "Image"
		if a.Kind != "" && a.Kind != "image" {
			kind = strings.ToUpper(a.Kind[:1]) + a.Kind[1:]
		}
		fmt.Fprintf(&b, "[%s: %s] ", kind, a.Caption)
	}
	b.WriteString(t.Text)
	return strings.TrimSpace(b.String())
}

// turnEmbedText is what a turn's vector embeds (the reference's form).
func turnEmbedText(t store.Turn) string {
	return "Speaker: " + t.Speaker + ". Time: " + t.OccurredRaw + ". Content: " + content(t)
}

// turnLexText is what the BM25 index holds for a turn.
func turnLexText(t store.Turn) string {
	return t.Speaker + " " + content(t)
}

// eventText is what an event's vector and BM25 entry hold: keywords, tags,
// title and summary (the reference's metadata mode plus the summary).
func eventText(e store.Event) string {
	parts := []string{strings.Join(e.Keywords, " "), strings.Join(e.Tags, " "), e.Title}
	if e.Summary != "" && e.Summary != e.Title {
		parts = append(parts, e.Summary)
	}
	return strings.Join(parts, " ")
}
