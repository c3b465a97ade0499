package higmem

// Loaded spaces are cached within Options.CacheBytes: each state's size is
// estimated when it loads (and grows with the batches it applies), and when
// the sum passes the bound the least recently used states are dropped from
// Memory.spaces. A dropped state that a reader or writer still holds stays
// valid for it (nothing is freed under it; the garbage collector takes it
// once released), and the next use of the space loads a new state from the
// store. Correctness does not rest on the cache: every read checks the
// space's version and every commit the store's lock.

// Per-record estimates of what a state holds besides the text itself:
// slice and map entries, turn facts, BM25 postings (about as large again
// as the text), event membership.
const (
	turnOverhead  = 320
	eventOverhead = 400
	textFactor    = 3 // the text, its BM25 postings and lexicon share
)

// estimateSize returns the estimated bytes of the loaded working set.
// Caller holds st.mu.
func (st *spaceState) estimateSize() int64 {
	var n int64
	for i := range st.turns {
		n += turnBytes(&st.turns[i])
	}
	for i := range st.events {
		n += eventBytes(&st.events[i])
	}
	n += int64(len(st.turnVec.Data)+len(st.winVec.Data)+len(st.eventVec.Data)) * 5 // float32 and int8 copies
	for _, ls := range st.links {
		n += int64(len(ls)) * 96
	}
	return n
}

func turnBytes(t *Turn) int64 {
	return turnOverhead + textFactor*int64(len(t.Text)+len(t.ID)+len(t.Speaker)+len(t.SessionID)+len(t.OccurredRaw))
}

func eventBytes(e *Event) int64 {
	n := eventOverhead + textFactor*int64(len(e.Title)+len(e.Summary))
	for _, f := range e.Facts {
		n += int64(len(f.Text) + len(f.Time) + len(f.TurnID))
	}
	for _, id := range e.TurnIDs {
		n += int64(len(id)) + 48
	}
	return n
}

// evict drops the least recently used states while the loaded ones exceed
// Options.CacheBytes, never keep itself.
func (m *Memory) evict(keep *spaceState) {
	limit := m.opts.CacheBytes
	if limit < 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	for e := m.lru.Front(); e != nil; e = e.Next() {
		total += e.Value.(*spaceState).size.Load()
	}
	for e := m.lru.Back(); e != nil && total > limit; {
		prev := e.Prev()
		st := e.Value.(*spaceState)
		if st != keep {
			total -= st.size.Load()
			m.lru.Remove(e)
			delete(m.spaces, st.space)
		}
		e = prev
	}
}
