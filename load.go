package higmem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/storevec"
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
	return m.loadFrom(ctx, st, m.store, nil)
}

// loadFrom reads a space through r. With a transaction (tx, which is r),
// the reads run one after the other, as a Tx is used from one goroutine,
// and re-embedded vectors are written through it.
//
// The turn and event vectors of a large space of an offline-mode memory
// are not read (see lazyTurnVectors): offline retrieval reads the window
// vectors alone, so such a space opens without reading or holding them, and
// whatever needs them reads them first (ensureTurnVectors,
// ensureEventVectors).
func (m *Memory) loadFrom(ctx context.Context, st *spaceState, r store.Reader, tx store.Tx) error {
	l := &loading{m: m, st: st, ctx: ctx, emb: m.opts.Embedder, r: r, tx: tx,
		turnLex: bm25.New(bm25.Options{B: offline.TurnBM25B}), eventLex: bm25.New(bm25.Options{}),
		turnsReady: make(chan struct{}), posReady: make(chan struct{}), evReady: make(chan struct{}),
		lexDone: make(chan struct{}), eventsDone: make(chan struct{})}
	if tx != nil {
		l.readTurns()
		if l.emb != nil {
			l.readTurnVectors() // never lazily through a transaction
			l.readWindowVectors()
		}
		l.readEvents()
		l.readAnnotations()
	} else {
		l.wg.Go(l.readTurns)
		if l.emb != nil {
			// After the turns: reading them first lets their BM25 index (the
			// longest step) start early, while the other core reads these.
			if vs, ok := l.r.(store.VectorSetsIntoReader); ok {
				l.sets = true
				l.wg.Go(func() { l.readVectorSets(vs) })
			} else {
				l.wg.Go(l.readTurnVectors)
				l.wg.Go(l.readWindowVectors)
			}
		}
		l.wg.Go(l.readEvents)
		l.wg.Go(l.readAnnotations)
	}
	l.wg.Wait()
	if err := errors.Join(l.errs[:]...); err != nil {
		return wrapf(err, "load %s", st.space)
	}
	return l.install()
}

// loading is one load of a space: the concurrent reads, what each
// produced, and its error (errs[i] is written by read i alone).
type loading struct {
	m   *Memory
	st  *spaceState
	ctx context.Context
	emb embed.Embedder
	r   store.Reader // where the space is read from
	tx  store.Tx     // set when r is a transaction
	wg  sync.WaitGroup
	// errs holds the error of readTurns, readAnnotations, readTurnVectors,
	// readEvents and readWindowVectors, in that order.
	errs [5]error
	// turnsReady is closed once turns is set (or failed), posReady once pos
	// and info are built from them, evReady once events and evPos are (or
	// failed: evOK is false). lexDone is closed once readTurns has indexed
	// the turns' text (or failed), eventsDone once readEvents returned.
	turnsReady, posReady, evReady chan struct{}
	lexDone, eventsDone           chan struct{}
	evOK                          bool
	// sets is set when readVectorSets reads every kind of vector (in one
	// pass, see store.VectorSetsIntoReader): readEvents then leaves the
	// event vectors to it.
	sets bool
	// lazy is set when the turn and event vectors are left for later
	// (see leftForLater, which sets it once).
	lazy     bool
	lazyOnce sync.Once

	turns             []store.Turn
	pos               map[string]int
	info              turnInfo
	turnLex, eventLex *bm25.Index
	anns              []store.Annotation
	eager             bool // anns holds every annotation
	tvecs, evecs      []store.Vector
	wvecs             []store.Vector
	tmat, emat, wmat  vec.Matrix
	tok, eok, wok     bool // tmat (emat, wmat) holds every vector
	events            []store.Event
	links             []store.Link
	evPos             map[string]int
	evTurns           [][]int32
	eventsOf          map[string][]string
	linkMap           map[string][]store.Link
	eventSeq          int
	lastEvent         string
	records           *profilerec.Set
	// stats holds the store's counts of turns and events, for the vector
	// matrices to be sized before the turns and events are read
	// (storedStats).
	countOnce sync.Once
	stats     store.Stats
	countErr  error
}

// readTurns reads the turns, then indexes their text while another
// goroutine builds their positions and facts.
func (l *loading) readTurns() {
	defer close(l.lexDone)
	l.turns, l.errs[0] = l.r.ListTurns(l.ctx, l.st.space, store.TurnQuery{})
	close(l.turnsReady)
	if l.errs[0] != nil {
		close(l.posReady)
		return
	}
	turns := l.turns
	l.wg.Go(func() {
		defer close(l.posReady)
		l.pos = make(map[string]int, len(turns))
		l.info = newTurnInfo(len(turns))
		for i, t := range turns {
			var prev *store.Turn
			if i > 0 {
				prev = &turns[i-1]
			}
			l.info.add(t, prev)
			l.pos[t.ID] = i
		}
	})
	docs := make([]bm25.Doc, len(turns))
	for i, t := range turns {
		docs[i] = bm25.Doc{ID: t.ID, Ref: i, Text: rules.LexText(t)}
	}
	l.turnLex.AddBatch(docs)
}

// readAnnotations reads every annotation of a small space now (cheaper than
// reading those of the evidence on every question). Of a large one it
// reads the time expressions alone (the only part of annotations
// retrieval reads) when the store can (store.SpaceTimeRefsReader), else
// nothing: they are then read on first need (see ensureAnnotations), and
// the times of each question's evidence for those turns alone (see
// evidenceTimes).
func (l *loading) readAnnotations() {
	if sr, ok := l.r.(store.SpaceTimeRefsReader); ok {
		if n, err := l.storedTurns(); err == nil && n >= l.st.limits.eagerAnnotations {
			// Once the turns' text is indexed and the events read: the
			// vector reads, the longest (in the bench's space), then run
			// alone and leave the other core to this read.
			<-l.lexDone
			<-l.eventsDone
			l.readTimeRefs(sr)
			return
		}
	}
	<-l.turnsReady
	if l.errs[0] == nil && len(l.turns) < l.st.limits.eagerAnnotations {
		l.eager = true
		l.anns, l.errs[1] = l.r.ListAnnotations(l.ctx, l.st.space, nil)
	}
}

// readTimeRefs reads the time expressions of every annotation of the space
// through sr and puts them in info once it is built: each text and
// granularity held once (not as substrings of each row's whole text), the
// expressions of many turns in one array rather than one allocation per
// turn, and turns with the same single expression (in one session,
// "yesterday" resolves alike) sharing one slice, which nothing writes in
// place (setTimeRefs replaces it). The bench's 100k-turn space, 54,459
// turns dated: about 3 MiB more heap.
func (l *loading) readTimeRefs(sr store.SpaceTimeRefsReader) {
	const chunk = 4096
	var (
		ids    []string
		refs   [][]store.TimeRef
		arena  []store.TimeRef
		single = map[store.TimeRef][]store.TimeRef{}
		strs   = map[string]string{}
		intern = func(s string) string {
			if t, ok := strs[s]; ok {
				return t
			}
			s = strings.Clone(s)
			strs[s] = s
			return s
		}
	)
	err := sr.EachTimeRefs(l.ctx, l.st.space, func(id string, rs []store.TimeRef) {
		if len(rs) == 0 {
			return
		}
		if len(rs) == 1 {
			if same, ok := single[rs[0]]; ok {
				ids = append(ids, id)
				refs = append(refs, same)
				return
			}
		}
		if cap(arena)-len(arena) < len(rs) {
			arena = make([]store.TimeRef, 0, max(chunk, len(rs)))
		}
		at := len(arena)
		for _, r := range rs {
			r.Text, r.Granularity = intern(r.Text), intern(r.Granularity)
			arena = append(arena, r)
		}
		ids = append(ids, id)
		refs = append(refs, arena[at:len(arena):len(arena)])
		if len(rs) == 1 {
			single[rs[0]] = refs[len(refs)-1]
		}
	})
	if err != nil {
		l.errs[1] = err
		return
	}
	<-l.posReady
	if l.errs[0] != nil {
		return
	}
	for k, id := range ids {
		if i, ok := l.pos[id]; ok {
			l.info.setTimeRefs(i, refs[k])
		}
	}
	l.eager = true
}

// lazyTurnVectors reports whether this load leaves the turn and event
// vectors to be read on first need (ensureTurnVectors, ensureEventVectors):
// only in an offline-mode memory (the other modes read them on every
// question), from the store itself (never through a transaction, whose
// state builds a batch at once), and for a space of at least
// limits.eagerTurnVectors turns by the store's count (below it they cost
// little to read now). When the count cannot be read, they are read now.
func (l *loading) lazyTurnVectors() bool {
	if l.tx != nil || l.m.opts.Mode != ModeOffline {
		return false
	}
	n, err := l.storedTurns()
	return err == nil && n >= l.st.limits.eagerTurnVectors
}

// leftForLater returns lazyTurnVectors, worked out once per load (the
// goroutines that read the vectors ask it).
func (l *loading) leftForLater() bool {
	l.lazyOnce.Do(func() { l.lazy = l.lazyTurnVectors() })
	return l.lazy
}

// readTurnVectors reads the turn vectors of the memory's embedder into a
// matrix whose rows follow the turns: straight into it when the store can
// (see turnRowsMatrix). It reads none when the load leaves them for later
// (lazyTurnVectors).
func (l *loading) readTurnVectors() {
	if l.leftForLater() {
		return
	}
	if vi, ok := l.r.(store.VectorsIntoReader); ok {
		if l.tmat, l.tok, l.errs[2] = l.turnRowsMatrix(vi, store.VectorTurn, l.emb.ID()); l.errs[2] != nil || l.tok || l.errs[0] != nil {
			return
		}
	}
	l.tvecs, l.tmat, l.tok, l.errs[2] = l.listedMatrix(store.VectorTurn, l.emb.ID())
}

// turnRowsMatrix reads the vectors of kind stored under embedder id embID
// into a matrix whose rows follow the turns. The store decodes them
// straight into the matrix, in its own order, while the turns are still
// being read (the matrix is sized from the store's count of turns); once
// the turn positions are known, the rows are moved into the turns' order
// (storevec.Permute), without a second matrix. ok is false when a turn has no
// vector of the embedder's dimension, or the count was not that of the
// turns read (the caller then lists them, see listedMatrix).
func (l *loading) turnRowsMatrix(vi store.VectorsIntoReader, kind store.VectorKind, embID string) (m vec.Matrix, ok bool, err error) {
	n, err := l.storedTurns()
	if err != nil {
		return vec.Matrix{}, false, err
	}
	rows := storevec.NewRows(n, l.emb.Dim())
	got, err := rows.ReadFrom(l.ctx, vi, l.st.space, kind, embID)
	if err != nil {
		return vec.Matrix{}, false, err
	}
	<-l.posReady
	if l.errs[0] != nil {
		return vec.Matrix{}, false, nil
	}
	m, ok = rows.InOrder(got, l.pos, len(l.turns), l.st.limits.quantizeFor(kind))
	return m, ok, nil
}

// storedTurns returns the store's count of the space's turns, asked once
// per load.
func (l *loading) storedTurns() (int, error) {
	s, err := l.storedStats()
	return s.Turns, err
}

// storedStats returns the store's counts for the space, asked once per
// load.
func (l *loading) storedStats() (store.Stats, error) {
	l.countOnce.Do(func() {
		l.stats, l.countErr = l.r.Stats(l.ctx, l.st.space)
	})
	return l.stats, l.countErr
}

// readVectorSets reads the turn, window and event vectors of the memory's
// embedder at once (store.VectorSetsIntoReader), each into a matrix sized
// from the store's counts, then puts the rows in the order of the turns
// and events once these are read. A kind whose vectors are not all there
// is listed again (as readTurnVectors, readWindowVectors and readEvents do
// without the sets), to be embedded again by install. The turn and event
// vectors are left out when the load leaves them for later
// (lazyTurnVectors).
func (l *loading) readVectorSets(vs store.VectorSetsIntoReader) {
	embID, dim := l.emb.ID(), l.emb.Dim()
	sts, err := l.storedStats()
	if err != nil {
		l.errs[2] = err
		return
	}
	lazy := l.leftForLater()
	wins := storevec.NewRows(sts.Turns, dim)
	sets := []store.VectorSet{wins.Set(store.VectorWindow, windowEmbedder(l.emb))}
	var turns, events *storevec.Rows
	if !lazy {
		turns, events = storevec.NewRows(sts.Turns, dim), storevec.NewRows(sts.Events, dim)
		sets = append(sets, turns.Set(store.VectorTurn, embID), events.Set(store.VectorEvent, embID))
	}
	if l.errs[2] = vs.VectorSetsInto(l.ctx, l.st.space, sets); l.errs[2] != nil {
		return
	}
	<-l.posReady
	if l.errs[0] != nil {
		return
	}
	if !lazy {
		l.tmat, l.tok = turns.InOrder(sets[1].N, l.pos, len(l.turns), l.st.limits.quantizeFor(store.VectorTurn))
		if !l.tok {
			if l.tvecs, l.tmat, l.tok, l.errs[2] = l.listedMatrix(store.VectorTurn, embID); l.errs[2] != nil {
				return
			}
		}
	}
	l.wmat, l.wok = wins.InOrder(sets[0].N, l.pos, len(l.turns), l.st.limits.quantizeFor(store.VectorWindow))
	if !l.wok {
		if l.wvecs, l.wmat, l.wok, l.errs[4] = l.listedMatrix(store.VectorWindow, windowEmbedder(l.emb)); l.errs[4] != nil {
			return
		}
	}
	<-l.evReady
	if !l.evOK || lazy {
		return
	}
	if l.emat, l.eok = events.InOrder(sets[2].N, l.evPos, len(l.events), l.st.limits.quantizeRows); !l.eok {
		l.errs[2] = l.listedEvents()
	}
}

// listedEvents lists the event vectors of the memory's embedder and lays
// them out in a matrix whose rows follow the events (eok when every event
// has one; see storevec.Stored). Caller has read the events.
func (l *loading) listedEvents() error {
	var err error
	if l.evecs, err = l.r.ListVectors(l.ctx, l.st.space, store.VectorEvent, l.emb.ID()); err != nil {
		return err
	}
	l.emat, l.eok = storevec.Stored(l.evecs, len(l.events), l.emb.Dim(), l.st.limits.quantizeRows, func(i int) string { return l.events[i].ID })
	return nil
}

// listedMatrix lists the vectors of kind stored under embedder id embID
// and, once the turns are read, lays them out in a matrix whose rows
// follow the turns (ok when every turn has one; see storevec.Stored).
func (l *loading) listedMatrix(kind store.VectorKind, embID string) (vs []store.Vector, m vec.Matrix, ok bool, err error) {
	if vs, err = l.r.ListVectors(l.ctx, l.st.space, kind, embID); err != nil {
		return nil, vec.Matrix{}, false, err
	}
	<-l.turnsReady
	if l.errs[0] != nil {
		return vs, vec.Matrix{}, false, nil
	}
	m, ok = storevec.Stored(vs, len(l.turns), l.emb.Dim(), l.st.limits.quantizeFor(kind), func(i int) string { return l.turns[i].ID })
	return vs, m, ok, nil
}

// readWindowVectors reads the window vectors (window.go) of the memory's
// embedder into a matrix whose rows follow the turns: straight into it
// when the store can (see turnRowsMatrix).
func (l *loading) readWindowVectors() {
	emb := windowEmbedder(l.emb)
	if vi, ok := l.r.(store.VectorsIntoReader); ok {
		if l.wmat, l.wok, l.errs[4] = l.turnRowsMatrix(vi, store.VectorWindow, emb); l.errs[4] != nil || l.wok || l.errs[0] != nil {
			return
		}
	}
	l.wvecs, l.wmat, l.wok, l.errs[4] = l.listedMatrix(store.VectorWindow, emb)
}

// readEvents reads the events (indexing their text), the links, the profile
// records and the event vectors, then builds event membership once the turn
// positions are known.
func (l *loading) readEvents() {
	defer close(l.eventsDone)
	sp, ctx := l.st.space, l.ctx
	evDone := false
	defer func() {
		if !evDone {
			close(l.evReady)
		}
	}()
	if l.events, l.errs[3] = l.r.ListEvents(ctx, sp); l.errs[3] != nil {
		return
	}
	events := l.events
	l.evPos = make(map[string]int, len(events))
	for i, e := range events {
		if j, dup := l.evPos[e.ID]; dup {
			l.errs[3] = fmt.Errorf("event %q listed twice (%d, %d)", e.ID, j, i)
			return
		}
		l.evPos[e.ID] = i
	}
	l.evOK, evDone = true, true
	close(l.evReady)
	docs := make([]bm25.Doc, len(events))
	for i, e := range events {
		docs[i] = bm25.Doc{ID: e.ID, Ref: i, Text: rules.EventText(e)}
	}
	l.eventLex.AddBatch(docs)
	if l.links, l.errs[3] = l.r.ListLinks(ctx, sp, nil); l.errs[3] != nil {
		return
	}
	var rs []store.ProfileRecord
	if rs, l.errs[3] = l.r.ListProfileRecords(ctx, sp, ""); l.errs[3] != nil {
		return
	}
	l.records = profilerec.New(rs)
	// Without the sets, the event vectors are read here, unless they are
	// left for later.
	readVecs := l.emb != nil && !l.sets && !l.leftForLater()
	if vi, ok := l.r.(store.VectorsIntoReader); ok && readVecs {
		if l.emat, l.eok, l.errs[3] = storevec.Into(ctx, vi, sp, store.VectorEvent, l.emb.ID(), l.emb.Dim(), len(events), l.evPos, l.st.limits.quantizeRows); l.errs[3] != nil {
			return
		}
	}
	if readVecs && !l.eok {
		if l.errs[3] = l.listedEvents(); l.errs[3] != nil {
			return
		}
	}
	<-l.posReady
	if l.errs[0] != nil {
		return
	}
	l.errs[3] = l.membership()
}

// membership builds the event positions, members and links, as putEvent
// and addLink would build them event by event.
func (l *loading) membership() error {
	events := l.events
	l.evTurns = make([][]int32, len(events))
	l.eventsOf = make(map[string][]string, len(l.turns))
	var latest *store.Event
	for i, e := range events {
		members := make([]int32, 0, len(e.TurnIDs))
		for _, id := range e.TurnIDs {
			l.eventsOf[id] = append(l.eventsOf[id], e.ID)
			if p, ok := l.pos[id]; ok {
				members = append(members, int32(p))
				if l.info.event[p] < 0 {
					l.info.event[p] = int32(i)
				}
			}
		}
		l.evTurns[i] = members
		l.eventSeq = max(l.eventSeq, rules.EventNumber(e.ID))
		if latest == nil || e.UpdatedAt.After(latest.UpdatedAt) {
			latest = &events[i]
		}
	}
	if latest != nil {
		l.lastEvent = latest.ID
	}
	l.linkMap = make(map[string][]store.Link)
	for _, lk := range l.links {
		addLink(l.linkMap, lk)
	}
	return nil
}

// install puts what was read into the state, embedding again the vectors
// that are missing or were made by another embedder (the turn and event
// vectors, when left for later, once they are read: see ensureTurnVectors
// and ensureEventVectors).
func (l *loading) install() error {
	st := l.st
	st.turns, st.pos, st.info = l.turns, l.pos, l.info
	st.events, st.evPos, st.evTurns, st.eventsOf = l.events, l.evPos, l.evTurns, l.eventsOf
	st.links = l.linkMap
	st.turnLex, st.eventLex = l.turnLex, l.eventLex
	st.eventSeq, st.lastEvent = l.eventSeq, l.lastEvent
	st.records = l.records
	for _, a := range l.anns {
		if i, ok := st.pos[a.TurnID]; ok {
			st.info.setTimeRefs(i, a.TimeRefs)
		}
	}
	st.annLoaded.Store(l.eager)
	st.times.reset()
	st.recBytes = st.recordBytes()
	st.turnVec, st.winVec, st.eventVec = vec.Matrix{}, vec.Matrix{}, vec.Matrix{}
	if emb := l.emb; emb != nil {
		tmat, wmat, emat := l.tmat, l.wmat, l.emat
		turnID := func(i int) string { return l.turns[i].ID }
		if !l.tok && !l.lazy {
			tv, err := l.m.matchVectors(l.ctx, l.tx, true, st.space, store.VectorTurn, emb.ID(), l.tvecs, len(l.turns), turnID,
				func(i int) string { return rules.EmbedText(l.turns[i]) })
			if err != nil {
				return err
			}
			tmat = storevec.FromRows(tv, emb.Dim())
		}
		if !l.wok {
			at := func(j int) *store.Turn { return &l.turns[j] }
			wv, err := l.m.matchVectors(l.ctx, l.tx, true, st.space, store.VectorWindow, windowEmbedder(emb), l.wvecs, len(l.turns), turnID,
				func(i int) string { return rules.WindowText(at, int(st.info.winStart[i]), i) })
			if err != nil {
				return err
			}
			wmat = storevec.FromRows(wv, emb.Dim())
		}
		if !l.eok && !l.lazy {
			ev, err := l.m.matchVectors(l.ctx, l.tx, true, st.space, store.VectorEvent, emb.ID(), l.evecs, len(l.events),
				func(i int) string { return l.events[i].ID }, func(i int) string { return rules.EventText(l.events[i]) })
			if err != nil {
				return err
			}
			emat = storevec.FromRows(ev, emb.Dim())
		}
		if l.lazy {
			tmat, emat = vec.Matrix{}, vec.Matrix{}
		}
		st.turnVec, st.winVec, st.eventVec = tmat, wmat, emat
	}
	st.turnVecLoaded.Store(!l.lazy)
	st.eventVecLoaded.Store(!l.lazy)
	st.turnVec.QuantizeFrom(st.limits.quantizeFor(store.VectorTurn))
	st.winVec.QuantizeFrom(st.limits.quantizeRows)
	st.eventVec.QuantizeFrom(st.limits.quantizeRows)
	return nil
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
	st.lazyMu.Lock()
	defer st.lazyMu.Unlock()
	if st.annLoaded.Load() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	anns, err := st.reader.ListAnnotations(ctx, st.space, nil)
	if err != nil {
		return wrapf(err, "load annotations of %s", st.space)
	}
	for _, a := range anns {
		if i, ok := st.pos[a.TurnID]; ok {
			st.info.setTimeRefs(i, a.TimeRefs)
		}
	}
	st.annLoaded.Store(true)
	st.size.Store(st.estimateSize())
	return nil
}

// ensureTurnVectors reads the turn vectors into turnVec, once per load,
// when the load left them for later (see lazyTurnVectors): offline
// retrieval reads the window vectors alone, so a large space opens without
// them, and everything that reads turnVec (hybrid turn search, the LLM
// modes' member scores, as-of offline questions whose hidden windows fall
// back to the turn's own cosine, a window weight below 1, segmenting new
// turns) calls this first. Caller holds st.mu, for reading or writing.
func (st *spaceState) ensureTurnVectors(ctx context.Context) error {
	if st.turnVecLoaded.Load() {
		return nil
	}
	return st.loadLazyVectors(ctx, st.reader, nil, st.lazyTurns())
}

// ensureEventVectors reads the event vectors into eventVec, once per load,
// when the load left them for later (see lazyTurnVectors), as
// ensureTurnVectors reads the turn vectors: offline retrieval does not
// read them; event search (the LLM modes' retrieval and construction,
// segmenting new turns) calls this first. Caller holds st.mu, for reading
// or writing.
func (st *spaceState) ensureEventVectors(ctx context.Context) error {
	if st.eventVecLoaded.Load() {
		return nil
	}
	return st.loadLazyVectors(ctx, st.reader, nil, st.lazyEvents())
}

// ensureVectors reads both the turn and the event vectors (see
// ensureTurnVectors and ensureEventVectors). Caller holds st.mu, for
// reading or writing.
func (st *spaceState) ensureVectors(ctx context.Context) error {
	if err := st.ensureTurnVectors(ctx); err != nil {
		return err
	}
	return st.ensureEventVectors(ctx)
}

// loadVectorsThrough reads the turn and event vectors a load left for
// later through tx (see loadLazyVectors). Caller holds st.mu for writing.
func (st *spaceState) loadVectorsThrough(ctx context.Context, tx store.Tx) error {
	if !st.turnVecLoaded.Load() {
		if err := st.loadLazyVectors(ctx, tx, tx, st.lazyTurns()); err != nil {
			return err
		}
	}
	if !st.eventVecLoaded.Load() {
		return st.loadLazyVectors(ctx, tx, tx, st.lazyEvents())
	}
	return nil
}

// lazyVectors is a matrix a load may leave for later: its kind, the flag
// set once it is read, where it goes, and the records its rows follow (n
// of them, at positions pos, each with its id and the text its vector
// embeds).
type lazyVectors struct {
	kind     store.VectorKind
	name     string
	loaded   *atomic.Bool
	mat      *vec.Matrix
	n        int
	pos      map[string]int
	id, text func(i int) string
	quantize int
}

// lazyTurns describes st's turn vectors as a lazyVectors.
func (st *spaceState) lazyTurns() lazyVectors {
	return lazyVectors{kind: store.VectorTurn, name: "turn", loaded: &st.turnVecLoaded, mat: &st.turnVec, n: len(st.turns), pos: st.pos,
		id: func(i int) string { return st.turns[i].ID }, text: func(i int) string { return rules.EmbedText(st.turns[i]) },
		quantize: st.limits.quantizeFor(store.VectorTurn)}
}

// lazyEvents describes st's event vectors as a lazyVectors.
func (st *spaceState) lazyEvents() lazyVectors {
	return lazyVectors{kind: store.VectorEvent, name: "event", loaded: &st.eventVecLoaded, mat: &st.eventVec, n: len(st.events), pos: st.evPos,
		id: func(i int) string { return st.events[i].ID }, text: func(i int) string { return rules.EventText(st.events[i]) },
		quantize: st.limits.quantizeRows}
}

// loadLazyVectors reads the vectors lv describes through r (tx when r is a
// transaction, which re-embedded vectors are then written through). The
// store is read at its own version, which may be ahead of the state's: the
// vectors are matched to the state's records by id, and those of records
// the store no longer holds, or holds under another embedder, are embedded
// again (as a load does), and stored only when the state is at the store's
// version (a record deleted since would otherwise get a vector again).
// Caller holds st.mu, for reading or writing.
func (st *spaceState) loadLazyVectors(ctx context.Context, r store.Reader, tx store.Tx, lv lazyVectors) error {
	st.lazyMu.Lock()
	defer st.lazyMu.Unlock()
	if lv.loaded.Load() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	m, sp := st.mem, st.space
	var mat vec.Matrix
	if emb := m.opts.Embedder; emb != nil {
		ok := false
		if vi, into := r.(store.VectorsIntoReader); into {
			var err error
			if mat, ok, err = storevec.Into(ctx, vi, sp, lv.kind, emb.ID(), emb.Dim(), lv.n, lv.pos, lv.quantize); err != nil {
				return wrapf(err, "load %s vectors of %s", lv.name, sp)
			}
		}
		if !ok {
			stored, err := r.ListVectors(ctx, sp, lv.kind, emb.ID())
			if err != nil {
				return wrapf(err, "load %s vectors of %s", lv.name, sp)
			}
			put := tx != nil
			if !put && !st.torn {
				v, err := m.store.SpaceVersion(ctx, sp)
				put = err == nil && v == st.version.Load()
			}
			vs, err := m.matchVectors(ctx, tx, put, sp, lv.kind, emb.ID(), stored, lv.n, lv.id, lv.text)
			if err != nil {
				return err
			}
			mat = storevec.FromRows(vs, emb.Dim())
			mat.QuantizeFrom(lv.quantize)
		}
	}
	*lv.mat = mat
	lv.loaded.Store(true)
	st.size.Store(st.estimateSize())
	return nil
}

// evidenceTimes returns the time expressions of the annotations of the
// given turns (indexes into turns): from info once annotations are loaded,
// else from the times cache (timesCache) and, for the turns it does not
// hold, read from the store for these turns only (their time expressions
// alone when the store is a store.TimeRefsReader). Caller holds st.mu.
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
	// A state that may not be one snapshot of the store (torn, or of no
	// version) does not use the cache.
	v := st.version.Load()
	cached := st.loaded && !st.torn && v >= 0
	missing := make([]int, len(ids))
	for j := range missing {
		missing[j] = j
	}
	if cached {
		if missing = st.times.lookup(v, ids, out); len(missing) == 0 {
			return out, nil
		}
	}
	read := make([]string, len(missing))
	for k, j := range missing {
		read[k] = ids[j]
	}
	refs, err := st.readTimes(ctx, read)
	if err != nil {
		return nil, err
	}
	for k, j := range missing {
		out[j] = refs[k]
	}
	if cached {
		st.times.fill(v, ids, missing, refs)
	}
	return out, nil
}

// readTimes reads the time expressions of the annotations of the given
// turns from the store: refs[j] are those of ids[j].
func (st *spaceState) readTimes(ctx context.Context, ids []string) ([][]store.TimeRef, error) {
	if tr, ok := st.reader.(store.TimeRefsReader); ok {
		out, err := tr.ListTimeRefs(ctx, st.space, ids)
		if err != nil {
			return nil, wrapf(err, "read time expressions")
		}
		if len(out) != len(ids) {
			return nil, fmt.Errorf("higmem: the store read time expressions for %d turns of %d", len(out), len(ids))
		}
		return out, nil
	}
	anns, err := st.reader.ListAnnotations(ctx, st.space, ids)
	if err != nil {
		return nil, wrapf(err, "read annotations")
	}
	refs := make(map[string][]store.TimeRef, len(anns))
	for _, a := range anns {
		refs[a.TurnID] = a.TimeRefs
	}
	out := make([][]store.TimeRef, len(ids))
	for j, id := range ids {
		out[j] = refs[id]
	}
	return out, nil
}

// matchVectors returns the n vectors of one kind (those of the records
// id(0) to id(n-1)), in order, from the stored ones (made under embedder id
// embID), embedding text(i) for the vectors that are missing or were made
// by another embedder, and, when put is set, storing those (through tx when
// set).
func (m *Memory) matchVectors(ctx context.Context, tx store.Tx, put bool, sp store.Space, kind store.VectorKind, embID string, stored []store.Vector, n int, id, text func(i int) string) ([][]float32, error) {
	emb := m.opts.Embedder
	byID := make(map[string][]float32, len(stored))
	for _, v := range stored {
		if len(v.Values) == emb.Dim() {
			byID[v.ID] = v.Values
		}
	}
	out := make([][]float32, n)
	var missing []int
	var texts []string
	for i := range n {
		if v, ok := byID[id(i)]; ok {
			out[i] = v
			continue
		}
		missing = append(missing, i)
		texts = append(texts, text(i))
	}
	if len(missing) == 0 {
		return out, nil
	}
	m.opts.Logger.Info("re-embedding vectors made by another embedder or missing",
		"space", sp.String(), "kind", kind, "count", len(missing), "embedder", embID)
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	recs := make([]store.Vector, len(missing))
	for j, i := range missing {
		out[i] = vs[j]
		recs[j] = store.Vector{Kind: kind, ID: id(i), Embedder: embID, Values: vs[j]}
	}
	if !put {
		return out, nil
	}
	if tx != nil {
		err = tx.PutVectors(ctx, sp, recs)
	} else {
		err = m.store.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, recs) })
	}
	if err != nil {
		return nil, wrapf(err, "store re-embedded vectors")
	}
	return out, nil
}

// embed embeds texts with the configured embedder, normalising the result.
func (m *Memory) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if m.opts.Embedder == nil || len(texts) == 0 {
		return nil, nil
	}
	return m.embedWith(ctx, texts, m.opts.Embedder.Embed)
}

// embedQuestion embeds a question: with EmbedQuery when the embedder is an
// embed.QueryEmbedder, else as embed does.
func (m *Memory) embedQuestion(ctx context.Context, question string) ([]float32, error) {
	if m.opts.Embedder == nil {
		return nil, nil
	}
	fn := m.opts.Embedder.Embed
	if qe, ok := m.opts.Embedder.(embed.QueryEmbedder); ok {
		fn = qe.EmbedQuery
	}
	vs, err := m.embedWith(ctx, []string{question}, fn)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// embedWith embeds texts with fn, one of the embedder's methods, checking
// and normalising the result.
func (m *Memory) embedWith(ctx context.Context, texts []string, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	vs, err := fn(ctx, texts)
	if err != nil {
		return nil, wrapf(err, "embed with %s", m.opts.Embedder.ID())
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("higmem: embedder %s returned %d vectors for %d texts", m.opts.Embedder.ID(), len(vs), len(texts))
	}
	for _, v := range vs {
		vec.Normalize(v)
	}
	return vs, nil
}
