package higmem

import (
	"context"
	"slices"

	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/heapsize"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/storevec"
	"github.com/higmem/higmem/store"
)

// Catching up (docs/CONCURRENCY.md, "What a reader pays"): a state whose
// space another writer changed is brought to the store's version in place
// from the store's journal (store.Reader.Changes), as a fresh load would
// have built it (TestCatchUpEqualsFreshLoadRandom). Appends cost what they
// add; a delete or an insertion moves the rows after it. When the journal
// cannot answer, the space is loaded afresh.

// catchUp applies to st, in place, what was written to its space since
// st's version, as r reads it, and returns the version st then reflects.
// It reports false, changing nothing, when st is not loaded or torn, or
// the journal does not reach back to st's version: the caller loads the
// space afresh. Through a transaction, catch up before it writes (its
// own writes would be applied too). Caller holds st.mu for writing, or
// owns st.
func (m *Memory) catchUp(ctx context.Context, st *spaceState, r store.Reader) (int64, bool, error) {
	if !st.loaded || st.torn {
		return 0, false, nil
	}
	emb := ""
	if m.opts.Embedder != nil {
		emb = m.opts.Embedder.ID()
	}
	ch, err := r.Changes(ctx, st.space, st.version.Load(), emb)
	if err != nil {
		return 0, false, err
	}
	if ch.Reset {
		return 0, false, nil
	}
	if ch.Empty() {
		return ch.Version, true, nil
	}
	d, err := m.planDelta(ctx, st, ch)
	if err != nil || d == nil {
		return 0, false, err
	}
	st.applyDelta(d)
	if emb := m.opts.Embedder; emb != nil {
		st.passages().Note(ch.Vectors, passageEmbedder(emb))
	}
	m.catchUps.Add(1)
	return ch.Version, true, nil
}

// delta is what a catch-up changes in a state, worked out (and embedded)
// before anything changes.
type delta struct {
	gone    map[string]bool // cached turns to remove (deleted, or stored anew)
	add     []store.Turn    // turns to put in, by (Seq, ID)
	addVecs [][]float32     // their vectors (nil without an embedder)
	setVecs map[string][]float32
	// addWin and setWin are the window vectors (window.go) of the turns
	// added and of turns that stay whose stored window changed.
	addWin [][]float32
	setWin map[string][]float32
	anns   []store.Annotation

	evGone    map[string]bool // cached events to remove (deleted, or moved)
	evPut     []store.Event   // events to put in or replace, ordered like ListEvents
	evVecs    [][]float32
	evSetVecs map[string][]float32
	links     []store.Link

	records     []store.ProfileRecord // profile records put
	recordsGone []string              // profile records deleted
}

// planDelta works out the delta of ch for st, reading the vectors it
// needs from ch and embedding (without storing) those missing, as loading
// the space would. It returns nil when a window vector is missing for a
// turn stored among the existing ones (its window is known only in the new
// order): the caller loads the space afresh. Caller holds st.mu.
func (m *Memory) planDelta(ctx context.Context, st *spaceState, ch store.Changes) (*delta, error) {
	d := &delta{gone: map[string]bool{}, evGone: map[string]bool{}, anns: ch.Annotations, links: ch.Links,
		records: ch.ProfileRecords, recordsGone: ch.DeletedProfileRecords}
	d.planRecords(st, ch)
	emb := m.opts.Embedder
	if emb == nil {
		return d, nil
	}
	stored := storevec.ByKind(ch.Vectors, emb.Dim(), map[store.VectorKind]string{
		store.VectorTurn: emb.ID(), store.VectorEvent: emb.ID(), store.VectorWindow: windowEmbedder(emb)})
	ok, err := m.planVectors(ctx, st, d, stored)
	if err != nil || !ok {
		return nil, err
	}
	d.planChangedVectors(st, stored)
	return d, nil
}

// planRecords lists the turns and events of ch to remove and to put in.
func (d *delta) planRecords(st *spaceState, ch store.Changes) {
	for _, id := range ch.DeletedTurns {
		if _, ok := st.pos[id]; ok {
			d.gone[id] = true
		}
	}
	for _, t := range ch.Turns {
		if _, ok := st.pos[t.ID]; ok {
			// A turn is written once: one the state holds was deleted and
			// stored anew since.
			d.gone[t.ID] = true
		}
		d.add = append(d.add, t)
	}
	for _, id := range ch.DeletedEvents {
		if _, ok := st.evPos[id]; ok {
			d.evGone[id] = true
		}
	}
	for _, e := range ch.Events {
		if old, ok := st.event(e.ID); ok && !d.evGone[e.ID] && !old.CreatedAt.Equal(e.CreatedAt) {
			d.evGone[e.ID] = true // its place in the order changes
		}
		d.evPut = append(d.evPut, e)
	}
}

// planVectors gives the turns and events d adds their vectors: the stored
// ones, else embedded here. It reports false when a window vector is
// missing and turns were not only appended (a fresh load makes it).
func (m *Memory) planVectors(ctx context.Context, st *spaceState, d *delta, stored map[store.VectorKind]map[string][]float32) (bool, error) {
	var texts []string
	var fill []*[]float32
	need := func(dst [][]float32, kind store.VectorKind, i int, id string, text func() string) {
		if v, ok := stored[kind][id]; ok {
			dst[i] = v
			return
		}
		texts = append(texts, text())
		fill = append(fill, &dst[i])
	}
	if st.turnVecLoaded.Load() {
		// Else the turn vectors are read from the store when first needed.
		d.addVecs = make([][]float32, len(d.add))
		for i, t := range d.add {
			need(d.addVecs, store.VectorTurn, i, t.ID, func() string { return rules.EmbedText(t) })
		}
	}
	d.addWin = make([][]float32, len(d.add))
	var windows []string
	for i, t := range d.add {
		if v, ok := stored[store.VectorWindow][t.ID]; ok {
			d.addWin[i] = v
			continue
		}
		if !st.appendsOnly(d) {
			return false, nil
		}
		if windows == nil {
			windows = st.windowTexts(d.add)
		}
		texts = append(texts, windows[i])
		fill = append(fill, &d.addWin[i])
	}
	if st.eventVecLoaded.Load() {
		// Else the event vectors are read from the store when first
		// needed.
		d.evVecs = make([][]float32, len(d.evPut))
		for i, e := range d.evPut {
			need(d.evVecs, store.VectorEvent, i, e.ID, func() string { return rules.EventText(e) })
		}
	}
	if len(texts) == 0 {
		return true, nil
	}
	m.opts.Logger.Debug("embedding vectors missing from the store while catching up",
		"space", st.space.String(), "count", len(texts), "embedder", m.opts.Embedder.ID())
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return false, err
	}
	for i, p := range fill {
		*p = vs[i]
	}
	return true, nil
}

// planChangedVectors notes the stored vectors of turns and events that
// stay, and changed.
func (d *delta) planChangedVectors(st *spaceState, stored map[store.VectorKind]map[string][]float32) {
	put := map[string]bool{}
	for _, e := range d.evPut {
		put[e.ID] = true
	}
	for id, v := range stored[store.VectorTurn] {
		if i, ok := st.pos[id]; ok && !d.gone[id] && st.turnVecsReady() && !slices.Equal(st.turnVec.Row(i), v) {
			if d.setVecs == nil {
				d.setVecs = map[string][]float32{}
			}
			d.setVecs[id] = v
		}
	}
	for id, v := range stored[store.VectorWindow] {
		if i, ok := st.pos[id]; ok && !d.gone[id] && st.winVec.Rows() == len(st.turns) && !slices.Equal(st.winVec.Row(i), v) {
			if d.setWin == nil {
				d.setWin = map[string][]float32{}
			}
			d.setWin[id] = v
		}
	}
	for id, v := range stored[store.VectorEvent] {
		if i, ok := st.evPos[id]; ok && !put[id] && !d.evGone[id] && st.eventVecsReady() && !slices.Equal(st.eventVec.Row(i), v) {
			if d.evSetVecs == nil {
				d.evSetVecs = map[string][]float32{}
			}
			d.evSetVecs[id] = v
		}
	}
}

// applyDelta applies d to st. Caller holds st.mu for writing.
func (st *spaceState) applyDelta(d *delta) {
	// The members of the events replaced or removed, before they go.
	was := map[string][]string{}
	for _, e := range d.evPut {
		if old, ok := st.event(e.ID); ok {
			was[e.ID] = old.TurnIDs
		}
	}
	for id := range d.evGone {
		was[id] = st.events[st.evPos[id]].TurnIDs
	}
	turnMoved := st.applyTurns(d)
	evMoved := st.applyEvents(d)
	st.applyMembership(d, was, turnMoved, evMoved)
	st.latestEvent(d)
	st.applyLinks(d)
	st.applyRecords(d)
	if st.annLoaded.Load() {
		for _, a := range d.anns {
			if i, ok := st.pos[a.TurnID]; ok {
				st.info.setTimeRefs(i, a.TimeRefs)
			}
		}
	}
	st.turnVec.QuantizeFrom(st.limits.quantizeFor(store.VectorTurn))
	st.winVec.QuantizeFrom(st.limits.quantizeRows)
	st.eventVec.QuantizeFrom(st.limits.quantizeRows)
	st.size.Store(st.estimateSize())
}

// applyTurns removes and adds the turns of d. When the turns after the
// first change moved, it returns their old positions' new ones (-1 for a
// removed turn); nil when turns were only appended.
func (st *spaceState) applyTurns(d *delta) []int32 {
	hasVecs := st.turnVecLoaded.Load() && (len(st.turns) > 0 && st.turnVec.Rows() == len(st.turns) || len(st.turns) == 0 && d.addVecs != nil)
	hasWin := len(st.turns) > 0 && st.winVec.Rows() == len(st.turns) || len(st.turns) == 0 && d.addWin != nil
	if st.appendsOnly(d) {
		var vs, ws [][]float32
		if hasVecs {
			vs = d.addVecs
		}
		if hasWin {
			ws = d.addWin
		}
		st.addTurns(d.add, vs, ws)
		st.setTurnVectors(d)
		return nil
	}
	n := len(st.turns)
	turns, src, moved := st.mergeTurns(d)
	st.profileCache.Store(nil) // the slice may be the same array
	// Positions, facts, vectors and the lexical index follow the order.
	for id := range d.gone {
		delete(st.pos, id)
		st.turnLex.Remove(id)
	}
	st.info = spliceInfo(&st.info, turns, src)
	for j := storevec.FirstMoved(src); j < len(turns); j++ {
		st.pos[turns[j].ID] = j
	}
	if hasVecs {
		st.turnVec = st.turnVec.Splice(src, d.addVecs)
	}
	if hasWin {
		st.winVec = st.winVec.Splice(src, d.addWin)
	}
	st.turnLex.MapRefs(func(ref int) int {
		if ref < n {
			return int(moved[ref])
		}
		return -1
	})
	docs := make([]bm25.Doc, len(d.add))
	for k, t := range d.add {
		docs[k] = bm25.Doc{ID: t.ID, Ref: st.pos[t.ID], Text: rules.LexText(t)}
		st.recBytes += heapsize.Turn(&d.add[k])
	}
	st.turnLex.AddBatch(docs)
	st.turns = turns
	st.setTurnVectors(d)
	return moved
}

// mergeTurns merges the turns that stay with those d adds, by (Seq, ID),
// and takes the removed turns' bytes off recBytes. src[j] is new turn j's
// old position, or -(k+1) for d.add[k]; moved maps old positions to new
// ones (-1 for a removed turn). When every turn added goes after those
// that stay (the store hands out Seq in order), the turns move down in
// place in st.turns, else into a new slice.
func (st *spaceState) mergeTurns(d *delta) (turns []store.Turn, src []int, moved []int32) {
	n := len(st.turns)
	inPlace := true
	if len(d.add) > 0 {
		for i := n - 1; i >= 0; i-- {
			if !d.gone[st.turns[i].ID] {
				inPlace = storevec.CompareTurns(st.turns[i], d.add[0]) < 0
				break
			}
		}
	}
	src = make([]int, 0, n-len(d.gone)+len(d.add))
	moved = make([]int32, n)
	turns = st.turns[:0]
	if !inPlace {
		turns = make([]store.Turn, 0, cap(src))
	}
	k := 0
	for i := range n {
		if d.gone[st.turns[i].ID] {
			moved[i] = -1
			st.recBytes -= heapsize.Turn(&st.turns[i])
			continue
		}
		for k < len(d.add) && storevec.CompareTurns(d.add[k], st.turns[i]) < 0 {
			src = append(src, -(k + 1))
			turns = append(turns, d.add[k])
			k++
		}
		moved[i] = int32(len(src))
		src = append(src, i)
		turns = append(turns, st.turns[i])
	}
	if inPlace {
		clear(st.turns[len(turns):n]) // what moved down, for the collector
	}
	for ; k < len(d.add); k++ {
		src = append(src, -(k + 1))
		turns = append(turns, d.add[k])
	}
	return turns, src, moved
}

// appendsOnly reports whether d removes no turn and adds its turns after
// all of st's (the store hands out Seq in order).
func (st *spaceState) appendsOnly(d *delta) bool {
	return len(d.gone) == 0 && (len(d.add) == 0 || len(st.turns) == 0 || storevec.CompareTurns(st.turns[len(st.turns)-1], d.add[0]) < 0)
}

// setTurnVectors replaces the vectors and window vectors of turns that
// stay and whose stored vector changed.
func (st *spaceState) setTurnVectors(d *delta) {
	for id, v := range d.setVecs {
		if i, ok := st.pos[id]; ok && st.turnVecsReady() {
			st.turnVec.Set(i, v)
		}
	}
	for id, v := range d.setWin {
		if i, ok := st.pos[id]; ok && st.winVec.Rows() == len(st.turns) {
			st.winVec.Set(i, v)
		}
	}
}

// spliceInfo returns the facts of turns, a new order of old's turns and
// new ones: src[j] is turn j's position in old, or negative for a new
// turn. What a turn's own text and annotation decide is carried over;
// what depends on its neighbours (sessions, speaker runs) and the speaker
// numbering (first appearance) is worked out again, as loading does. The
// event of a carried turn is its old one (an index into the old events).
func spliceInfo(old *turnInfo, turns []store.Turn, src []int) turnInfo {
	ti := newTurnInfo(len(turns))
	for j, t := range turns {
		var prev *store.Turn
		if j > 0 {
			prev = &turns[j-1]
		}
		p := src[j]
		if p < 0 {
			ti.add(t, prev)
			continue
		}
		ti.addFacts(old.speakers[old.speaker[p]], prev != nil && prev.SessionID == t.SessionID, old.question[p], old.number[p], int(old.words[p]))
		if old.timeRefs[p] != nil {
			ti.setTimeRefs(j, old.timeRefs[p])
		}
		ti.event[j] = old.event[p]
	}
	return ti
}

// applyEvents removes, replaces and adds the events of d (vectors and
// lexical index with them). When the events after the first change moved,
// it returns their old positions' new ones (-1 for a removed event); nil
// when events were only replaced in place or appended.
func (st *spaceState) applyEvents(d *delta) []int32 {
	hasVecs := st.eventVecLoaded.Load() && (len(st.events) > 0 && st.eventVec.Rows() == len(st.events) || len(st.events) == 0 && d.evVecs != nil)
	// Events put that are new (or moving) are inserted; the others are
	// replaced where they are.
	inserted := map[int]bool{} // indexes into d.evPut
	var ins []int
	for i, e := range d.evPut {
		if _, ok := st.evPos[e.ID]; !ok || d.evGone[e.ID] {
			ins = append(ins, i)
			inserted[i] = true
		}
	}
	n := len(st.events)
	var moved []int32
	if len(d.evGone) > 0 || len(ins) > 0 && n > 0 && storevec.CompareEvents(st.events[n-1], d.evPut[ins[0]]) >= 0 {
		moved = st.spliceEvents(d, ins, hasVecs)
	} else {
		for _, i := range ins {
			e := d.evPut[i]
			st.evPos[e.ID] = len(st.events)
			st.events = append(st.events, e)
			st.recBytes += heapsize.Event(&e)
			st.evTurns = append(st.evTurns, nil)
			if hasVecs {
				if st.eventVec.Dim == 0 {
					st.eventVec.Dim = len(d.evVecs[i])
				}
				st.eventVec.Append(d.evVecs[i])
			}
		}
	}
	for i, e := range d.evPut {
		j := st.evPos[e.ID]
		if !inserted[i] {
			st.recBytes += heapsize.Event(&e) - heapsize.Event(&st.events[j])
			st.events[j] = e
			if hasVecs {
				st.eventVec.Set(j, d.evVecs[i])
			}
		}
		st.eventLex.AddRef(e.ID, j, rules.EventText(e))
	}
	for id, v := range d.evSetVecs {
		if j, ok := st.evPos[id]; ok && hasVecs {
			st.eventVec.Set(j, v)
		}
	}
	return moved
}

// spliceEvents removes the events d.evGone and inserts d.evPut[i] for each
// i of ins, in the order ListEvents gives, and returns the old positions'
// new ones (-1 for a removed event).
func (st *spaceState) spliceEvents(d *delta, ins []int, hasVecs bool) []int32 {
	n := len(st.events)
	src := make([]int, 0, n-len(d.evGone)+len(ins))
	moved := make([]int32, n)
	events := make([]store.Event, 0, cap(src))
	evTurns := make([][]int32, 0, cap(src))
	var addVecs [][]float32
	k := 0
	insert := func() {
		e := d.evPut[ins[k]]
		st.recBytes += heapsize.Event(&e)
		if hasVecs {
			addVecs = append(addVecs, d.evVecs[ins[k]])
		}
		src = append(src, -(k + 1))
		events = append(events, e)
		evTurns = append(evTurns, nil)
		k++
	}
	for i := range n {
		if d.evGone[st.events[i].ID] {
			moved[i] = -1
			st.recBytes -= heapsize.Event(&st.events[i])
			continue
		}
		for k < len(ins) && storevec.CompareEvents(d.evPut[ins[k]], st.events[i]) < 0 {
			insert()
		}
		moved[i] = int32(len(src))
		src = append(src, i)
		events = append(events, st.events[i])
		evTurns = append(evTurns, st.evTurns[i])
	}
	for k < len(ins) {
		insert()
	}
	for id := range d.evGone {
		delete(st.evPos, id)
		st.eventLex.Remove(id)
	}
	for j := storevec.FirstMoved(src); j < len(events); j++ {
		st.evPos[events[j].ID] = j
	}
	if hasVecs {
		st.eventVec = st.eventVec.Splice(src, addVecs)
	}
	st.eventLex.MapRefs(func(ref int) int {
		if ref < n {
			return int(moved[ref])
		}
		return -1
	})
	st.events, st.evTurns = events, evTurns
	return moved
}

// applyMembership brings event membership up to date after applyTurns
// and applyEvents: which turns each event holds (evTurns), which events
// each turn id is in (eventsOf, in event order), each turn's first event,
// the highest event number and the latest event. turnMoved and evMoved
// map old positions to new ones (nil: nothing moved).
func (st *spaceState) applyMembership(d *delta, was map[string][]string, turnMoved, evMoved []int32) {
	touched := map[string]bool{} // turn ids whose first event may change
	st.updateEventsOf(d, was, touched)
	st.updateEvTurns(d, turnMoved, touched)
	// Each turn's first event: moved with the events, and worked out
	// again for the turns touched.
	if evMoved != nil {
		st.moveFirstEvents(evMoved, touched)
	}
	for id := range touched {
		st.refreshEvent(id)
	}
	// The highest event number and the latest event, as loading finds them.
	if len(d.evGone) > 0 {
		st.eventSeq = 0
		for _, e := range st.events {
			st.eventSeq = max(st.eventSeq, rules.EventNumber(e.ID))
		}
	}
	for _, e := range d.evPut {
		st.eventSeq = max(st.eventSeq, rules.EventNumber(e.ID))
	}
}

// updateEventsOf drops from eventsOf the events removed or rewritten (was
// holds their members before) and adds those put, in event order, marking
// the turns touched.
func (st *spaceState) updateEventsOf(d *delta, was map[string][]string, touched map[string]bool) {
	for eid, ids := range was {
		for _, id := range ids {
			evs := slices.DeleteFunc(st.eventsOf[id], func(e string) bool { return e == eid })
			if len(evs) == 0 {
				delete(st.eventsOf, id)
			} else {
				st.eventsOf[id] = evs
			}
			touched[id] = true
		}
	}
	for _, e := range d.evPut {
		for _, id := range e.TurnIDs {
			evs := st.eventsOf[id]
			at := len(evs)
			for at > 0 && st.evPos[evs[at-1]] > st.evPos[e.ID] {
				at--
			}
			st.eventsOf[id] = slices.Insert(evs, at, e.ID)
			touched[id] = true
		}
	}
}

// updateEvTurns works out evTurns again from their ids for the events put
// and those holding a turn added (marking the turns added touched); the
// others follow the turns' moves.
func (st *spaceState) updateEvTurns(d *delta, turnMoved []int32, touched map[string]bool) {
	redo := map[int]bool{}
	for _, e := range d.evPut {
		redo[st.evPos[e.ID]] = true
	}
	for _, t := range d.add {
		for _, eid := range st.eventsOf[t.ID] {
			redo[st.evPos[eid]] = true
		}
		touched[t.ID] = true
	}
	if turnMoved != nil {
		for i := range st.events {
			if redo[i] {
				continue
			}
			members := st.evTurns[i][:0]
			for _, p := range st.evTurns[i] {
				if q := turnMoved[p]; q >= 0 {
					members = append(members, q)
				}
			}
			st.evTurns[i] = members
		}
	}
	for i := range redo {
		members := st.evTurns[i][:0]
		for _, id := range st.events[i].TurnIDs {
			if p, ok := st.pos[id]; ok {
				members = append(members, int32(p))
			}
		}
		st.evTurns[i] = members
	}
}

// moveFirstEvents moves each turn's first event with the events, marking
// touched the turns whose first event went.
func (st *spaceState) moveFirstEvents(evMoved []int32, touched map[string]bool) {
	for p, e := range st.info.event {
		if e >= 0 {
			if int(e) >= len(evMoved) {
				st.info.event[p] = -1
			} else {
				st.info.event[p] = evMoved[e]
			}
		}
		if st.info.event[p] < 0 && e >= 0 {
			touched[st.turns[p].ID] = true
		}
	}
}

// latestEvent sets lastEvent as loading finds it: the first event, in
// order, updated last (a pass over the events' times, when any changed).
func (st *spaceState) latestEvent(d *delta) {
	if len(d.evPut)+len(d.evGone) == 0 {
		return
	}
	latest := -1
	for i := range st.events {
		if latest < 0 || st.events[i].UpdatedAt.After(st.events[latest].UpdatedAt) {
			latest = i
		}
	}
	st.lastEvent = ""
	if latest >= 0 {
		st.lastEvent = st.events[latest].ID
	}
}

// applyLinks removes the links of the turns removed and puts the links of
// d, each list in the order loading gives it (Source, Target, Relation).
func (st *spaceState) applyLinks(d *delta) {
	dropped := map[[3]string]bool{}
	for id := range d.gone {
		for _, l := range st.links[id] {
			if k := [3]string{l.Source, l.Target, l.Relation}; !dropped[k] {
				dropped[k] = true
				st.recBytes -= heapsize.Link(&l)
			}
			other := l.Target
			if other == id {
				other = l.Source
			}
			if other == id {
				continue
			}
			ls := slices.DeleteFunc(st.links[other], func(x store.Link) bool { return storevec.SameLink(x, l) })
			if len(ls) == 0 {
				delete(st.links, other)
			} else {
				st.links[other] = ls
			}
		}
		delete(st.links, id)
	}
	for _, l := range d.links {
		st.recBytes += heapsize.Link(&l)
		if ls := st.links[l.Source]; len(ls) > 0 {
			if at, found := slices.BinarySearchFunc(ls, l, storevec.CompareLinks); found {
				st.recBytes -= heapsize.Link(&ls[at])
			}
		}
		st.putLink(l.Source, l)
		if l.Target != l.Source {
			st.putLink(l.Target, l)
		}
	}
}

// applyRecords brings the profile records up to date: those citing a turn
// removed go with it (as the store removed them), those deleted go, those
// put replace or join them.
func (st *spaceState) applyRecords(d *delta) {
	drop := d.recordsGone
	if len(d.gone) > 0 {
		for _, r := range st.records.List() {
			if slices.ContainsFunc(r.TurnIDs, func(id string) bool { return d.gone[id] }) {
				drop = append(drop, r.ID)
			}
		}
	}
	st.records = st.records.With(d.records, drop)
}

// putLink puts l in the links of turn id, replacing the link with its key.
func (st *spaceState) putLink(id string, l store.Link) {
	ls := st.links[id]
	at, found := slices.BinarySearchFunc(ls, l, storevec.CompareLinks)
	if found {
		ls[at] = l
		return
	}
	st.links[id] = slices.Insert(ls, at, l)
}
