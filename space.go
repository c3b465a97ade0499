package higmem

import (
	"container/list"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/heapsize"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/passindex"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/rules"
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

	// elem is the state's entry in Memory.lru (guarded by Memory.mu);
	// size estimates the bytes of the working set (see estimateSize).
	elem *list.Element
	size atomic.Int64

	// notified and catchingUp drive the background catch-up of a watched
	// store (see Memory.changed).
	notified, catchingUp atomic.Bool

	// version is the store version of the space this state reflects
	// (store.Store.SpaceVersion); it changes under mu held for writing.
	version atomic.Int64

	// mu guards every field below.
	mu     sync.RWMutex
	loaded bool
	// recBytes is what the records' contents take on the heap (see
	// estimateSize): their strings and lists, kept as records come and go.
	recBytes int64
	// torn is set when the state was read while the space changed (its
	// reads may not be one snapshot): it is then loaded afresh, never
	// caught up, on its next refresh.
	torn  bool
	turns []store.Turn // ordered by Seq
	pos   map[string]int
	// info holds per-turn facts, indexed like turns.
	info   turnInfo
	events []store.Event // ordered by creation
	evPos  map[string]int
	// evTurns[i] holds the positions in turns of events[i]'s members.
	evTurns  [][]int32
	eventsOf map[string][]string     // turn id -> event ids
	links    map[string][]store.Link // turn id (source or target) -> links
	turnVec  vec.Matrix              // row i embeds turns[i]; empty without an embedder or until turnVecLoaded
	winVec   vec.Matrix              // row i embeds turns[i]'s window (window.go); empty without an embedder
	eventVec vec.Matrix              // row i embeds events[i]; empty without an embedder or until eventVecLoaded
	turnLex  *bm25.Index
	eventLex *bm25.Index
	// eventSeq is the highest n of the event ids "e<n>".
	eventSeq int
	// lastEvent is the most recently updated event (paper-mode affiliation
	// context and default-mode continuity).
	lastEvent string

	// Annotations and, in a large offline space, the turn and event
	// vectors are read on first need (see ensureAnnotations,
	// ensureTurnVectors and ensureEventVectors): lazyMu serialises those
	// reads (and the size estimate each then stores), annLoaded is set
	// once info.timeRefs holds every stored annotation, turnVecLoaded
	// (eventVecLoaded) once turnVec (eventVec) holds every turn's (event's)
	// vector; until then the matrix is empty, and nothing but the read
	// may read or write it. reader is the store they come from, mem the
	// memory whose embedder made them.
	lazyMu    sync.Mutex
	annLoaded atomic.Bool
	// times caches what evidenceTimes reads from the store while
	// annotations are not loaded (see timesCache).
	times          timesCache
	turnVecLoaded  atomic.Bool
	eventVecLoaded atomic.Bool
	reader         store.Reader
	mem            *Memory

	// records holds the space's stored profile records (what a model
	// stated about a person), nil when there are none; it is replaced,
	// never changed in place, whenever they change (guarded by mu).
	records *profilerec.Set

	// profileCache holds the profiles derived from turns and records (see
	// spaceState.profiles); it is checked against both on every use.
	profileCache atomic.Pointer[profileCache]
	// profileMu serialises deriving them (a derivation is extended in
	// place).
	profileMu sync.Mutex

	// scratch holds *scratch buffers for queries (see getScratch). It is
	// a pointer so that the runtime's list of pools does not keep the
	// whole state alive after the space is dropped.
	scratch *sync.Pool
	// qscratch holds the scratches of questions (query.sc), given back
	// with their lexical scores left to clear (see putQueryScratch).
	qscratch *sync.Pool

	// pass holds the passages of the space's long turns (passages.go),
	// made on first use; it has its own lock.
	pass atomic.Pointer[passindex.Index]
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
	// number is true when the turn mentions a number (rules.HasNumber).
	number []bool
	// event is the index in events of the turn's first event, -1 if none.
	event []int32
	// cues packs question, number and dated in one byte (offline.CuesOf), for
	// the offline scorer's passes over every turn.
	cues []uint8
	// speaker indexes speakers.
	speaker []int32
	// visible is all true: the visibility of an unfiltered question.
	visible []bool
	// speakers are the distinct lower-cased speakers, speakerID their
	// indexes.
	speakers  []string
	speakerID map[string]int32
	// Runs are the speaker runs (internal/offline).
	offline.Runs
	// words is the number of words of each turn's content, and winStart
	// the index of the first turn of its window (window.go).
	words, winStart []int32
	// refBytes is what timeRefs take on the heap (see estimateSize).
	refBytes int64
	// spk counts the units and words of each speaker: the conversation's
	// shape, which offline retrieval adapts to (offline.Shape).
	spk offline.SpeakerStats
}

// newTurnInfo returns an empty turnInfo with room for n turns.
func newTurnInfo(n int) turnInfo {
	return turnInfo{
		timeRefs:    make([][]store.TimeRef, 0, n),
		dated:       make([]bool, 0, n),
		sameSession: make([]bool, 0, n),
		question:    make([]bool, 0, n),
		number:      make([]bool, 0, n),
		event:       make([]int32, 0, n),
		cues:        make([]uint8, 0, n),
		speaker:     make([]int32, 0, n),
		visible:     make([]bool, 0, n),
		speakerID:   map[string]int32{},
		words:       make([]int32, 0, n),
		winStart:    make([]int32, 0, n),
	}
}

// add appends the facts of turn t.
func (ti *turnInfo) add(t store.Turn, prev *store.Turn) {
	c := content(t)
	ti.addFacts(strings.ToLower(t.Speaker), prev != nil && prev.SessionID == t.SessionID,
		strings.Contains(t.Text, "?"), rules.HasNumber(c), rules.CountFields(c))
}

// addFacts appends a turn said by speaker sp (lower-cased), in the
// session of the turn before or not, asking a question or not, mentioning
// a number or not, of so many words; without time expressions or an event
// yet.
func (ti *turnInfo) addFacts(sp string, sameSession, question, number bool, words int) {
	id, ok := ti.speakerID[sp]
	if !ok {
		id = int32(len(ti.speakers))
		ti.speakers = append(ti.speakers, sp)
		ti.speakerID[sp] = id
	}
	ti.timeRefs = append(ti.timeRefs, nil)
	ti.dated = append(ti.dated, false)
	ti.sameSession = append(ti.sameSession, sameSession)
	ti.question = append(ti.question, question)
	ti.number = append(ti.number, number)
	ti.event = append(ti.event, -1)
	ti.cues = append(ti.cues, offline.CuesOf(question, number, false))
	ti.speaker = append(ti.speaker, id)
	ti.visible = append(ti.visible, true)
	ti.words = append(ti.words, int32(words))
	ti.spk.Add(id, int32(words))
	i := len(ti.speaker) - 1
	ti.Runs.Add(ti.sameSession, i > 0 && ti.speaker[i] == ti.speaker[i-1], int32(words), question)
	ti.addWindow(i)
}

// setTimeRefs records the time expressions of turn i's annotation.
func (ti *turnInfo) setTimeRefs(i int, refs []store.TimeRef) {
	ti.refBytes += heapsize.TimeRefs(refs) - heapsize.TimeRefs(ti.timeRefs[i])
	ti.timeRefs[i] = refs
	ti.dated[i] = len(refs) > 0
	ti.cues[i] = offline.CuesOf(ti.question[i], ti.number[i], ti.dated[i])
}

// state returns the state of a space, current with the store: one cheap
// version read (store.Store.SpaceVersion) per call, and a reload when
// another writer (or process) committed to the space since it was loaded.
func (m *Memory) state(ctx context.Context, sp store.Space) (*spaceState, error) {
	st := m.spaceOf(sp)
	if err := m.refresh(ctx, st); err != nil {
		return nil, err
	}
	m.evict(st)
	return st, nil
}

// spaceOf returns the state object of a space, creating it (unloaded),
// and marks it the most recently used.
func (m *Memory) spaceOf(sp store.Space) *spaceState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.spaces[sp]
	if !ok {
		st = m.newState(sp)
		m.spaces[sp] = st
		st.elem = m.lru.PushFront(st)
	} else {
		m.lru.MoveToFront(st.elem)
	}
	return st
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

// addTurns appends stored turns (with their vectors and window vectors,
// if any) and indexes them. Caller holds st.mu for writing.
func (st *spaceState) addTurns(turns []store.Turn, vs, wvs [][]float32) {
	docs := make([]bm25.Doc, len(turns))
	for i, t := range turns {
		docs[i] = bm25.Doc{ID: t.ID, Ref: len(st.turns) + i, Text: rules.LexText(t)}
	}
	st.turnLex.AddBatch(docs)
	st.appendTurns(turns, vs, wvs)
}

// appendTurns appends turns, their vectors and their window vectors
// without indexing their text. The vectors are left to the store while
// the turn vectors are not loaded (see ensureTurnVectors). Caller holds
// st.mu for writing.
func (st *spaceState) appendTurns(turns []store.Turn, vs, wvs [][]float32) {
	for i, t := range turns {
		var prev *store.Turn
		if n := len(st.turns); n > 0 {
			prev = &st.turns[n-1]
		}
		st.info.add(t, prev)
		st.pos[t.ID] = len(st.turns)
		st.turns = append(st.turns, t)
		st.recBytes += heapsize.Turn(&t)
		if vs != nil && st.turnVecLoaded.Load() {
			if st.turnVec.Dim == 0 {
				st.turnVec.Dim = len(vs[i])
			}
			st.turnVec.Append(vs[i])
		}
		if wvs != nil {
			if st.winVec.Dim == 0 {
				st.winVec.Dim = len(wvs[i])
			}
			st.winVec.Append(wvs[i])
		}
	}
}

// putEvent inserts or replaces an event (and its vector, left to the store
// while the event vectors are not loaded). Caller holds st.mu for writing.
func (st *spaceState) putEvent(e store.Event, v []float32) {
	i, ok := st.evPos[e.ID]
	var old []string
	st.recBytes += heapsize.Event(&e)
	if ok {
		st.recBytes -= heapsize.Event(&st.events[i])
		old = st.events[i].TurnIDs
		for _, id := range old {
			st.eventsOf[id] = slices.DeleteFunc(st.eventsOf[id], func(x string) bool { return x == e.ID })
		}
		st.events[i] = e
		if v != nil && st.eventVecLoaded.Load() {
			st.eventVec.Set(i, v)
		}
	} else {
		i = len(st.events)
		st.evPos[e.ID] = i
		st.events = append(st.events, e)
		st.evTurns = append(st.evTurns, nil)
		if v != nil && st.eventVecLoaded.Load() {
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
	st.eventSeq = max(st.eventSeq, rules.EventNumber(e.ID))
	st.eventLex.AddRef(e.ID, i, rules.EventText(e))
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
			st.info.event[i] = int32(e)
		}
	}
}

// addLink indexes a link under both of its ends. Caller holds st.mu.
func (st *spaceState) addLink(l store.Link) {
	if addLink(st.links, l) {
		st.recBytes += heapsize.Link(&l)
	}
}

// addLink indexes a link under both of its ends in links, and reports
// whether it was new.
func addLink(links map[string][]store.Link, l store.Link) bool {
	has := func(ls []store.Link) bool {
		return slices.ContainsFunc(ls, func(x store.Link) bool {
			return x.Source == l.Source && x.Target == l.Target && x.Relation == l.Relation
		})
	}
	added := false
	if !has(links[l.Source]) {
		links[l.Source] = append(links[l.Source], l)
		added = true
	}
	if l.Target != l.Source && !has(links[l.Target]) {
		links[l.Target] = append(links[l.Target], l)
		added = true
	}
	return added
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

// window returns the last n turns of the space before the batch plus the
// batch turns before index i. Caller holds st.mu.
func (st *spaceState) window(n int, batch []store.Turn, i int) []store.Turn {
	var w []store.Turn
	w = append(w, batch[:i]...)
	for j := len(st.turns) - 1; j >= 0 && len(w) < n; j-- {
		w = append([]store.Turn{st.turns[j]}, w...)
	}
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return w
}

// prevTurn returns the turn before batch index i: the previous batch turn,
// or the last stored turn. Caller holds st.mu.
func prevTurn(st *spaceState, batch []store.Turn, i int) store.Turn {
	if i > 0 {
		return batch[i-1]
	}
	if n := len(st.turns); n > 0 {
		return st.turns[n-1]
	}
	return store.Turn{}
}

// view returns event e with its member turns. Caller holds st.mu.
func (st *spaceState) view(e store.Event) EventView {
	v := EventView{Event: e}
	for _, id := range e.TurnIDs {
		if t, ok := st.turn(id); ok {
			v.Turns = append(v.Turns, t)
		}
	}
	return v
}

// turnVecsReady reports whether turnVec holds the vector of every turn:
// read (not left for later, see ensureTurnVectors) and in step with the
// turns. Caller holds st.mu.
func (st *spaceState) turnVecsReady() bool {
	return st.turnVecLoaded.Load() && st.turnVec.Rows() == len(st.turns)
}

// eventVecsReady is turnVecsReady for eventVec and the events.
func (st *spaceState) eventVecsReady() bool {
	return st.eventVecLoaded.Load() && st.eventVec.Rows() == len(st.events)
}
