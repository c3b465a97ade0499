package higmem

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

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
