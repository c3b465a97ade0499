package higmem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// spaceState is the in-memory working set of one space: every turn, its
// annotation, every event, the links, a dense matrix per layer (rows aligned
// with turns and events) and a BM25 index per layer. It is loaded lazily
// from the store on first use and kept in step with every commit.
type spaceState struct {
	space  store.Space
	limits limits

	// writeMu serialises writers (Add, Delete, Import) of this space, so
	// that construction sees a consistent memory and assigns Seq in order.
	writeMu sync.Mutex

	// mu guards every field below.
	mu     sync.RWMutex
	loaded bool
	turns  []store.Turn // ordered by Seq
	pos    map[string]int
	// info holds per-turn facts, indexed like turns.
	info   turnInfo
	events []store.Event // ordered by creation
	evPos  map[string]int
	// evTurns[i] holds the positions in turns of events[i]'s members.
	evTurns  [][]int32
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

	// Annotations are read on first need (see ensureAnnotations): annMu
	// serialises that read, annLoaded is set once info.timeRefs holds
	// every stored annotation. reader is the store they come from.
	annMu     sync.Mutex
	annLoaded atomic.Bool
	reader    store.Reader

	// scratch holds *scratch buffers for queries (see getScratch). It is
	// a pointer so that the runtime's list of pools does not keep the
	// whole state alive after the space is dropped.
	scratch *sync.Pool
}

// turnInfo holds what retrieval reads of every turn on every question,
// computed once when the turn is added (or its annotation or events change)
// rather than per question: each slice is indexed like spaceState.turns.
// Retrieval may hand these slices out read-only while it holds st.mu.
type turnInfo struct {
	// timeRefs are the resolved time expressions of the turn's annotation
	// (the only part of annotations retrieval reads), complete once
	// spaceState.annLoaded is set.
	timeRefs [][]store.TimeRef
	// dated is len(timeRefs[i]) > 0.
	dated []bool
	// sameSession is true when turn i is in the session of turn i-1.
	sameSession []bool
	// question is true when the turn's text asks something (has a "?").
	question []bool
	// number is true when the turn mentions a number (hasNumber).
	number []bool
	// event is the index in events of the turn's first event, -1 if none.
	event []int
	// speaker indexes speakers.
	speaker []int32
	// visible is all true: the visibility of an unfiltered question.
	visible []bool
	// speakers are the distinct lower-cased speakers, speakerID their
	// indexes.
	speakers  []string
	speakerID map[string]int32
}

// newTurnInfo returns an empty turnInfo with room for n turns.
func newTurnInfo(n int) turnInfo {
	return turnInfo{
		timeRefs:    make([][]store.TimeRef, 0, n),
		dated:       make([]bool, 0, n),
		sameSession: make([]bool, 0, n),
		question:    make([]bool, 0, n),
		number:      make([]bool, 0, n),
		event:       make([]int, 0, n),
		speaker:     make([]int32, 0, n),
		visible:     make([]bool, 0, n),
		speakerID:   map[string]int32{},
	}
}

// add appends the facts of turn t.
func (ti *turnInfo) add(t store.Turn, prev *store.Turn) {
	sp := strings.ToLower(t.Speaker)
	id, ok := ti.speakerID[sp]
	if !ok {
		id = int32(len(ti.speakers))
		ti.speakers = append(ti.speakers, sp)
		ti.speakerID[sp] = id
	}
	ti.timeRefs = append(ti.timeRefs, nil)
	ti.dated = append(ti.dated, false)
	ti.sameSession = append(ti.sameSession, prev != nil && prev.SessionID == t.SessionID)
	ti.question = append(ti.question, strings.Contains(t.Text, "?"))
	ti.number = append(ti.number, hasNumber(content(t)))
	ti.event = append(ti.event, -1)
	ti.speaker = append(ti.speaker, id)
	ti.visible = append(ti.visible, true)
}

// setTimeRefs records the time expressions of turn i's annotation.
func (ti *turnInfo) setTimeRefs(i int, refs []store.TimeRef) {
	ti.timeRefs[i] = refs
	ti.dated[i] = len(refs) > 0
}

// scratch is per-question working memory sized to the space, reused through
// spaceState.scratch so that a question allocates nothing in proportion to
// the space. lex is kept all zero between uses (only touched entries are
// written, and cleared again).
type scratch struct {
	lex     []float64
	touched []int
	// turnLex is set when lex holds the turn BM25 scores of the query.
	turnLex bool
	dense   []float32
	// Offline scoring (see selectOffline).
	dense64, rel, scores, best []float64
	visible, speaker           []bool
	// Pruned scans (see hybridSearch and offlineFast): estimates of the
	// cosines with their error bounds, upper bounds of relevance, scores
	// and event bests, and exact cosines computed so far (known, kept all
	// false between questions, and cand, the rows set).
	est, bound, relHi, scoreHi, bestHi, exact []float64
	known                                     []bool
	cand, cands                               []int
	// fastRel, fastScores and fastBest hold exact values offlineFast
	// computed (elsewhere stale).
	fastRel, fastScores, fastBest []float64
}

// parallelRange calls fn(part, lo, hi) for consecutive ranges covering
// [0, n), on up to GOMAXPROCS goroutines when n is at least 2*minChunk, and
// returns the number of parts (at most 4; part is 0 to parts-1).
func parallelRange(n, minChunk int, fn func(part, lo, hi int)) int {
	parts := max(1, min(runtime.GOMAXPROCS(0), 4, n/max(minChunk, 1)))
	if parts == 1 {
		fn(0, 0, n)
		return 1
	}
	per := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { fn(p, min(p*per, n), min((p+1)*per, n)) })
	}
	fn(0, 0, min(per, n))
	wg.Wait()
	return parts
}

// getScratch returns a scratch; give it back with putScratch.
func (st *spaceState) getScratch() *scratch {
	if st.scratch == nil {
		return &scratch{}
	}
	if sc, ok := st.scratch.Get().(*scratch); ok {
		return sc
	}
	return &scratch{}
}

// putScratch clears the lexical scores of sc and returns it to the pool.
func (st *spaceState) putScratch(sc *scratch) {
	sc.clearLex()
	if st.scratch != nil {
		st.scratch.Put(sc)
	}
}

func (sc *scratch) clearLex() {
	for _, i := range sc.touched {
		sc.lex[i] = 0
	}
	sc.touched = sc.touched[:0]
	sc.turnLex = false
}

// grow returns s with length n, reallocating when its capacity is short;
// the contents are unspecified.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// lexScores scores the n documents of ix (refs 0..n-1) for query into
// sc.lex and returns the scores and the refs that matched. The previous
// scores in sc are cleared first.
func (sc *scratch) lexScores(ix *bm25.Index, n int, query string) ([]float64, []int) {
	sc.clearLex()
	if cap(sc.lex) < n {
		sc.lex = make([]float64, n, n+n/4)
	}
	sc.lex = sc.lex[:n]
	sc.touched = ix.ScoreRefs(query, sc.lex, sc.touched[:0])
	return sc.lex, sc.touched
}

// turnLexScores returns the BM25 scores of every turn for the query's
// search text, computing them once per query. Caller holds st.mu.
func (q *query) turnLexScores() ([]float64, []int) {
	sc := q.sc
	if !sc.turnLex || len(sc.lex) != len(q.st.turns) {
		sc.lexScores(q.st.turnLex, len(q.st.turns), q.search)
		sc.turnLex = true
	}
	return sc.lex, sc.touched
}

// state returns the loaded state of a space, loading it on first use.
func (m *Memory) state(ctx context.Context, sp store.Space) (*spaceState, error) {
	m.mu.Lock()
	st, ok := m.spaces[sp]
	if !ok {
		st = &spaceState{space: sp, scratch: new(sync.Pool), reader: m.store, limits: m.limits}
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
//
// The store's reads are independent, so they run at once (a file store
// serves them on separate connections), and the BM25 indexes are built as
// soon as their texts arrive, while the other reads are still running.
func (m *Memory) load(ctx context.Context, st *spaceState) error {
	sp := st.space
	var (
		turns        []store.Turn
		events       []store.Event
		links        []store.Link
		tvecs, evecs []store.Vector
		turnLex      = bm25.New(bm25.Options{})
		eventLex     = bm25.New(bm25.Options{})
		pos          map[string]int
		info         turnInfo
		tmat, emat   vec.Matrix
		tok, eok     bool // tmat (emat) holds every vector
		evPos        map[string]int
		evTurns      [][]int32
		eventsOf     map[string][]string
		linkMap      map[string][]store.Link
		eventSeq     int
		lastEvent    string
	)
	emb := m.opts.Embedder
	var wg sync.WaitGroup
	errs := make([]error, 4)
	// turnsReady is closed once turns is set (or failed), posReady once pos
	// and info are built from them.
	turnsReady, posReady := make(chan struct{}), make(chan struct{})
	wg.Go(func() {
		turns, errs[0] = m.store.ListTurns(ctx, sp, store.TurnQuery{})
		close(turnsReady)
		if errs[0] != nil {
			close(posReady)
			return
		}
		wg.Go(func() {
			defer close(posReady)
			pos = make(map[string]int, len(turns))
			info = newTurnInfo(len(turns))
			for i, t := range turns {
				var prev *store.Turn
				if i > 0 {
					prev = &turns[i-1]
				}
				info.add(t, prev)
				pos[t.ID] = i
			}
		})
		docs := make([]bm25.Doc, len(turns))
		for i, t := range turns {
			docs[i] = bm25.Doc{ID: t.ID, Ref: i, Text: turnLexText(t)}
		}
		turnLex.AddBatch(docs)
	})
	if emb != nil {
		// After the turns: reading them first lets their BM25 index (the
		// longest step) start early, while the other core reads these.
		wg.Go(func() {
			if tvecs, errs[2] = m.store.ListVectors(ctx, sp, store.VectorTurn, emb.ID()); errs[2] != nil {
				return
			}
			<-turnsReady
			if errs[0] != nil {
				return
			}
			tmat, tok = storedMatrix(tvecs, len(turns), emb.Dim(), st.limits.quantizeRows, func(i int) string { return turns[i].ID })
		})
	}
	wg.Go(func() {
		if events, errs[3] = m.store.ListEvents(ctx, sp); errs[3] != nil {
			return
		}
		docs := make([]bm25.Doc, len(events))
		for i, e := range events {
			docs[i] = bm25.Doc{ID: e.ID, Ref: i, Text: eventText(e)}
		}
		eventLex.AddBatch(docs)
		if links, errs[3] = m.store.ListLinks(ctx, sp, nil); errs[3] != nil {
			return
		}
		if vi, ok := m.store.(vectorsInto); ok && emb != nil {
			epos := make(map[string]int, len(events))
			for i, e := range events {
				epos[e.ID] = i
			}
			if emat, eok, errs[3] = intoMatrix(ctx, vi, sp, store.VectorEvent, emb, len(events), epos, st.limits.quantizeRows); errs[3] != nil {
				return
			}
		}
		if emb != nil && !eok {
			if evecs, errs[3] = m.store.ListVectors(ctx, sp, store.VectorEvent, emb.ID()); errs[3] != nil {
				return
			}
			emat, eok = storedMatrix(evecs, len(events), emb.Dim(), st.limits.quantizeRows, func(i int) string { return events[i].ID })
		}
		// Event membership, as putEvent would build it event by event.
		<-posReady
		if errs[0] != nil {
			return
		}
		evPos = make(map[string]int, len(events))
		evTurns = make([][]int32, len(events))
		eventsOf = make(map[string][]string, len(turns))
		var latest *store.Event
		for i, e := range events {
			if j, dup := evPos[e.ID]; dup {
				errs[3] = fmt.Errorf("event %q listed twice (%d, %d)", e.ID, j, i)
				return
			}
			evPos[e.ID] = i
			members := make([]int32, 0, len(e.TurnIDs))
			for _, id := range e.TurnIDs {
				eventsOf[id] = append(eventsOf[id], e.ID)
				if p, ok := pos[id]; ok {
					members = append(members, int32(p))
					if info.event[p] < 0 {
						info.event[p] = i
					}
				}
			}
			evTurns[i] = members
			eventSeq = max(eventSeq, eventNumber(e.ID))
			if latest == nil || e.UpdatedAt.After(latest.UpdatedAt) {
				latest = &events[i]
			}
		}
		if latest != nil {
			lastEvent = latest.ID
		}
		linkMap = make(map[string][]store.Link)
		for _, l := range links {
			addLink(linkMap, l)
		}
	})
	// A small space reads its annotations now (cheaper than reading those
	// of the evidence on every question); a large one on first need (see
	// ensureAnnotations).
	var anns []store.Annotation
	eager := false
	wg.Go(func() {
		<-turnsReady
		if errs[0] == nil && len(turns) < st.limits.eagerAnnotations {
			eager = true
			anns, errs[1] = m.store.ListAnnotations(ctx, sp, nil)
		}
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("higmem: load %s: %w", sp, err)
	}
	st.turns, st.pos, st.info = turns, pos, info
	st.events, st.evPos, st.evTurns, st.eventsOf = events, evPos, evTurns, eventsOf
	st.links = linkMap
	st.turnLex, st.eventLex = turnLex, eventLex
	st.eventSeq, st.lastEvent = eventSeq, lastEvent
	for _, a := range anns {
		if i, ok := st.pos[a.TurnID]; ok {
			st.info.setTimeRefs(i, a.TimeRefs)
		}
	}
	st.annLoaded.Store(eager)
	st.turnVec, st.eventVec = vec.Matrix{}, vec.Matrix{}
	if emb != nil {
		// Vectors missing, or made by another embedder, are embedded again
		// and stored.
		if !tok {
			tv, err := m.matchVectors(ctx, sp, store.VectorTurn, tvecs, turns, nil)
			if err != nil {
				return err
			}
			tmat = rowsMatrix(tv, emb.Dim())
		}
		if !eok {
			ev, err := m.matchVectors(ctx, sp, store.VectorEvent, evecs, nil, events)
			if err != nil {
				return err
			}
			emat = rowsMatrix(ev, emb.Dim())
		}
		st.turnVec, st.eventVec = tmat, emat
	}
	st.turnVec.QuantizeFrom(st.limits.quantizeRows)
	st.eventVec.QuantizeFrom(st.limits.quantizeRows)
	return nil
}

// vectorsInto is implemented by stores that decode vectors straight into a
// matrix (store/sqlite does), which saves a copy of every vector. Events
// use it; turn vectors are read while the turns are (their rows are not
// known yet) and copied.
type vectorsInto interface {
	VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error)
}

// intoMatrix reads the n stored vectors of one kind into a matrix whose rows
// follow pos (id -> row), quantized from quantizeRows rows; ok is false when
// one is missing or of another dimension.
func intoMatrix(ctx context.Context, vi vectorsInto, sp store.Space, kind store.VectorKind, emb embed.Embedder, n int, pos map[string]int, quantizeRows int) (m vec.Matrix, ok bool, err error) {
	dim := emb.Dim()
	data := make([]float32, n*dim)
	seen := make([]bool, n)
	got, err := vi.VectorsInto(ctx, sp, kind, emb.ID(), dim, data, func(id string) int {
		if i, ok := pos[id]; ok && !seen[i] {
			seen[i] = true
			return i
		}
		return -1
	})
	if err != nil || got != n {
		return vec.Matrix{}, false, err
	}
	m = vec.Matrix{Dim: dim, Data: data}
	m.QuantizeFrom(quantizeRows)
	return m, true, nil
}

// storedMatrix returns the matrix whose row i is the stored vector with id
// id(i), quantized from quantizeRows rows; ok is false when one of the n is
// missing or of another dimension.
func storedMatrix(stored []store.Vector, n, dim, quantizeRows int, id func(i int) string) (m vec.Matrix, ok bool) {
	byID := make(map[string][]float32, len(stored))
	for _, v := range stored {
		if len(v.Values) == dim {
			byID[v.ID] = v.Values
		}
	}
	m = vec.Matrix{Dim: dim, Data: make([]float32, 0, n*dim)}
	for i := range n {
		v, found := byID[id(i)]
		if !found {
			return vec.Matrix{}, false
		}
		m.Append(v)
	}
	m.QuantizeFrom(quantizeRows)
	return m, true
}

// rowsMatrix returns the matrix of the given rows.
func rowsMatrix(rows [][]float32, dim int) vec.Matrix {
	m := vec.Matrix{Dim: dim, Data: make([]float32, 0, len(rows)*dim)}
	for _, r := range rows {
		m.Append(r)
	}
	return m
}

// ensureAnnotations reads the time expressions of every stored annotation
// into info, once per load. Retrieval reads annotations only for them, and
// only for questions about time, so a space opens without reading its
// annotations when it is large (the times shown with evidence are read for
// those turns alone, see evidenceTimes). Caller holds st.mu, for reading or writing;
// every reader of info.timeRefs or info.dated calls this first.
func (st *spaceState) ensureAnnotations(ctx context.Context) error {
	if st.annLoaded.Load() {
		return nil
	}
	st.annMu.Lock()
	defer st.annMu.Unlock()
	if st.annLoaded.Load() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	anns, err := st.reader.ListAnnotations(ctx, st.space, nil)
	if err != nil {
		return fmt.Errorf("higmem: load annotations of %s: %w", st.space, err)
	}
	for _, a := range anns {
		if i, ok := st.pos[a.TurnID]; ok {
			st.info.setTimeRefs(i, a.TimeRefs)
		}
	}
	st.annLoaded.Store(true)
	return nil
}

// evidenceTimes returns the time expressions of the annotations of the
// given turns (indexes into turns): from info once annotations are loaded,
// else read from the store for these turns only. Caller holds st.mu.
func (st *spaceState) evidenceTimes(ctx context.Context, idx []int) ([][]store.TimeRef, error) {
	out := make([][]store.TimeRef, len(idx))
	if st.annLoaded.Load() {
		for j, i := range idx {
			out[j] = st.info.timeRefs[i]
		}
		return out, nil
	}
	if len(idx) == 0 {
		return out, nil
	}
	ids := make([]string, len(idx))
	for j, i := range idx {
		ids[j] = st.turns[i].ID
	}
	anns, err := st.reader.ListAnnotations(ctx, st.space, ids)
	if err != nil {
		return nil, fmt.Errorf("higmem: read annotations: %w", err)
	}
	refs := make(map[string][]store.TimeRef, len(anns))
	for _, a := range anns {
		refs[a.TurnID] = a.TimeRefs
	}
	for j, id := range ids {
		out[j] = refs[id]
	}
	return out, nil
}

// matchVectors returns one vector per turn (or event), in order, from the
// stored ones, embedding and storing those that are missing or were made by
// another embedder.
func (m *Memory) matchVectors(ctx context.Context, sp store.Space, kind store.VectorKind, stored []store.Vector, turns []store.Turn, events []store.Event) ([][]float32, error) {
	emb := m.opts.Embedder
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
		var id string
		if kind == store.VectorTurn {
			id = turns[i].ID
		} else {
			id = events[i].ID
		}
		if v, ok := byID[id]; ok {
			out[i] = v
			continue
		}
		missing = append(missing, i)
		if kind == store.VectorTurn {
			texts = append(texts, turnEmbedText(turns[i]))
		} else {
			texts = append(texts, eventText(events[i]))
		}
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

// addTurns appends stored turns (with their vectors, if any) and indexes
// them. Caller holds st.mu for writing.
func (st *spaceState) addTurns(turns []store.Turn, vs [][]float32) {
	docs := make([]bm25.Doc, len(turns))
	for i, t := range turns {
		docs[i] = bm25.Doc{ID: t.ID, Ref: len(st.turns) + i, Text: turnLexText(t)}
	}
	st.turnLex.AddBatch(docs)
	st.appendTurns(turns, vs)
}

// appendTurns appends turns and their vectors without indexing their text.
// Caller holds st.mu for writing.
func (st *spaceState) appendTurns(turns []store.Turn, vs [][]float32) {
	for i, t := range turns {
		var prev *store.Turn
		if n := len(st.turns); n > 0 {
			prev = &st.turns[n-1]
		}
		st.info.add(t, prev)
		st.pos[t.ID] = len(st.turns)
		st.turns = append(st.turns, t)
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
	var old []string
	if ok {
		old = st.events[i].TurnIDs
		for _, id := range old {
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
		st.evTurns = append(st.evTurns, nil)
		if v != nil {
			if st.eventVec.Dim == 0 {
				st.eventVec.Dim = len(v)
			}
			st.eventVec.Append(v)
		}
	}
	members := st.evTurns[i][:0]
	for _, id := range e.TurnIDs {
		st.eventsOf[id] = append(st.eventsOf[id], e.ID)
		if p, ok := st.pos[id]; ok {
			members = append(members, int32(p))
		}
	}
	st.evTurns[i] = members
	for _, id := range old {
		st.refreshEvent(id)
	}
	for _, id := range e.TurnIDs {
		st.refreshEvent(id)
	}
	st.eventSeq = max(st.eventSeq, eventNumber(e.ID))
	st.eventLex.AddRef(e.ID, i, eventText(e))
}

// refreshEvent recomputes the first event of a turn. Caller holds st.mu
// for writing.
func (st *spaceState) refreshEvent(turnID string) {
	i, ok := st.pos[turnID]
	if !ok {
		return
	}
	st.info.event[i] = -1
	if evs := st.eventsOf[turnID]; len(evs) > 0 {
		if e, ok := st.evPos[evs[0]]; ok {
			st.info.event[i] = e
		}
	}
}

// addLink indexes a link under both of its ends. Caller holds st.mu.
func (st *spaceState) addLink(l store.Link) { addLink(st.links, l) }

// addLink indexes a link under both of its ends in links.
func addLink(links map[string][]store.Link, l store.Link) {
	has := func(ls []store.Link) bool {
		return slices.ContainsFunc(ls, func(x store.Link) bool {
			return x.Source == l.Source && x.Target == l.Target && x.Relation == l.Relation
		})
	}
	if !has(links[l.Source]) {
		links[l.Source] = append(links[l.Source], l)
	}
	if l.Target != l.Source && !has(links[l.Target]) {
		links[l.Target] = append(links[l.Target], l)
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
	scores := make([]float64, n)
	touched := make([]int, 0, len(lex))
	for i, s := range lex {
		if i >= 0 && i < n {
			scores[i] = s
			touched = append(touched, i)
		}
	}
	return hybridTop(n, scores, touched, dense, k, keep)
}

// hybridTop is hybrid with the BM25 scores in a slice: lex[i] is row i's
// score, non-zero only for the rows listed in touched.
func hybridTop(n int, lex []float64, touched []int, dense []float32, k int, keep func(int) bool) []scored {
	maxLex := 0.0
	for _, i := range touched {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, lex[i])
		}
	}
	score := func(i int) float64 {
		s := 0.0
		if maxLex > 0 {
			s = lex[i] / maxLex
		}
		if dense != nil {
			s += hybridDenseWeight * max(float64(dense[i]), 0)
		}
		return s
	}
	top := newTopK(k)
	if dense == nil {
		// Only rows with a BM25 score can score above 0.
		for _, i := range touched {
			if keep == nil || keep(i) {
				top.offer(i, score(i))
			}
		}
	} else {
		for i := range n {
			if keep == nil || keep(i) {
				top.offer(i, score(i))
			}
		}
	}
	return top.sorted()
}

// topK keeps the k best positive scores offered, in the order of
// sortScored (score descending, then index ascending).
type topK struct {
	k int
	h []scored // min-heap: the root ranks last
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]scored, 0, max(k, 0))} }

// worse reports whether a ranks after b.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.idx > b.idx
}

// offer considers row i with score s; scores that are not positive are
// ignored.
func (t *topK) offer(i int, s float64) {
	if !(s > 0) || t.k <= 0 {
		return
	}
	c := scored{i, s}
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		for j := len(t.h) - 1; j > 0; {
			p := (j - 1) / 2
			if !worse(t.h[j], t.h[p]) {
				break
			}
			t.h[j], t.h[p] = t.h[p], t.h[j]
			j = p
		}
		return
	}
	if !worse(t.h[0], c) {
		return
	}
	t.h[0] = c
	for j := 0; ; {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == j {
			break
		}
		t.h[j], t.h[w] = t.h[w], t.h[j]
		j = w
	}
}

// sorted returns the kept rows, best first.
func (t *topK) sorted() []scored {
	out := t.h
	sortScored(out)
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

// searchTurnsIn ranks turns for a query: BM25 fused with dense similarity
// (when qv is non-nil) by hybrid. keep filters turn indexes (nil keeps
// all). It uses the query's scratch, whose lexical scores it leaves set
// (see query.turnLexScores). Caller holds st.mu.
func (st *spaceState) searchTurnsIn(sc *scratch, query string, qv []float32, k int, keep func(int) bool) []scored {
	n := len(st.turns)
	if k <= 0 || n == 0 {
		return nil
	}
	lex, touched := sc.lexScores(st.turnLex, n, query)
	sc.turnLex = true
	if qv == nil || st.turnVec.Rows() != n {
		return hybridTop(n, lex, touched, nil, k, keep)
	}
	return sc.hybridSearch(&st.turnVec, lex, touched, qv, k, keep)
}

// searchEvents ranks events for a query like searchTurnsIn. Caller holds
// st.mu.
func (st *spaceState) searchEvents(query string, qv []float32, k int, keep func(int) bool) []scored {
	n := len(st.events)
	if k <= 0 || n == 0 {
		return nil
	}
	sc := st.getScratch()
	defer st.putScratch(sc)
	lex, touched := sc.lexScores(st.eventLex, n, query)
	if qv == nil || st.eventVec.Rows() != n {
		return hybridTop(n, lex, touched, nil, k, keep)
	}
	return sc.hybridSearch(&st.eventVec, lex, touched, qv, k, keep)
}

// hybridSearch is hybridTop with the dense scores of mat for qv. On a
// quantized matrix it scans estimates instead: a row can be among the best
// k only when its score's upper bound reaches the k-th best lower bound, so
// only those rows get an exact cosine. The result is exactly hybridTop's.
func (sc *scratch) hybridSearch(mat *vec.Matrix, lex []float64, touched []int, qv []float32, k int, keep func(int) bool) []scored {
	n := mat.Rows()
	if k <= 0 {
		return nil
	}
	if !mat.Quantized() {
		sc.dense = grow(sc.dense, n)
		mat.ScoresInto(sc.dense, qv)
		return hybridTop(n, lex, touched, sc.dense, k, keep)
	}
	sc.est, sc.bound = grow(sc.est, n), grow(sc.bound, n)
	est, bound := sc.est, sc.bound
	mat.Estimate(qv, est, bound)
	maxLex := 0.0
	for _, i := range touched {
		if keep == nil || keep(i) {
			maxLex = max(maxLex, lex[i])
		}
	}
	// The arithmetic of hybridTop, for upper and lower bounds of the
	// cosine (it grows with the cosine); the k-th best lower bound is the
	// floor a row's upper bound must reach.
	sc.scoreHi = grow(sc.scoreHi, n)
	hi := sc.scoreHi
	var parts [4]*topK
	np := parallelRange(n, 32768, func(p, lo, hi_ int) {
		lows := newTopK(k)
		for i := lo; i < hi_; i++ {
			if keep != nil && !keep(i) {
				hi[i] = -1
				continue
			}
			l := 0.0
			if x := lex[i]; x != 0 && maxLex > 0 {
				l = x / maxLex
			}
			h := l
			if u := est[i] + bound[i]; u > 0 {
				h += hybridDenseWeight * u
			}
			if d := est[i] - bound[i]; d > 0 {
				l += hybridDenseWeight * d
			}
			hi[i] = h
			if l > 0 && (len(lows.h) < k || l > lows.h[0].score) {
				lows.offer(i, l)
			}
		}
		parts[p] = lows
	})
	lows := parts[0]
	for _, p := range parts[1:np] {
		for _, c := range p.h {
			lows.offer(c.idx, c.score)
		}
	}
	floor := 0.0
	if len(lows.h) == k {
		floor = lows.h[0].score
	}
	top := newTopK(k)
	for i, h := range hi {
		if h >= floor && h > 0 {
			s := 0.0
			if maxLex > 0 {
				s = lex[i] / maxLex
			}
			top.offer(i, s+hybridDenseWeight*max(float64(vec.Dot(qv, mat.Row(i))), 0))
		}
	}
	return top.sorted()
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
