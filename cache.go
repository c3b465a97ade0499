package higmem

import "github.com/higmem/higmem/internal/heapsize"

// Loaded spaces are cached within Options.CacheBytes: past the bound the
// least recently used states are dropped from Memory.spaces. A dropped
// state stays valid for whoever still holds it; the next use of the space
// loads a new one. Correctness does not rest on the cache: reads check the
// space's version, commits the store's lock. A state's size (estimateSize)
// is the Go heap it occupies, counted from its lengths and capacities, plus
// the fragmentation repeated loads leave; TestStateSizeEstimate checks it
// against the measured heap (figures in docs/CONCURRENCY.md).

// Per-item costs of a state beyond its records (heapsize has the records').
const (
	// infoBytes is turnInfo per turn: a time-ref header, five flags and
	// the cues, the event, speaker and run indexes.
	infoBytes = 24 + 6 + 4 + 4 + 4
	// scratchBytes is the scratch of a question per turn (BM25 scores,
	// cosines, offline relevance and bounds, hybrid search), which a
	// state keeps in its pool between questions.
	scratchBytes = 96
	// stateBytes is what a loaded state takes whatever its size: the
	// state, its maps and indexes empty, a question's fixed buffers
	// (measured at 15–30 KiB with a few hundred turns).
	stateBytes = 16 << 10
	// fragmentation is the share of heap, beyond what states hold, that
	// loading and dropping states leaves in use (spans kept by a few live
	// objects), measured at about 20% with states coming and going under
	// a bound (TestStateSizeEstimate).
	fragmentation = 0.2
)

// estimateSize returns the estimated heap bytes of the loaded working set,
// in O(1) (recBytes holds what depends on the records' contents). Caller
// holds st.mu for writing, or for reading and lazyMu.
func (st *spaceState) estimateSize() int64 {
	n := int64(stateBytes) + int64(cap(st.turns))*heapsize.TurnStruct
	n += int64(len(st.pos)) * heapsize.MapEntry
	n += int64(cap(st.info.event)) * (infoBytes + scratchBytes)
	n += int64(len(st.info.RunStart))*14 + int64(len(st.info.winStart))*8 + st.info.refBytes
	n += int64(cap(st.events)) * heapsize.EventStruct
	n += int64(len(st.evPos)+len(st.eventsOf)+len(st.links)) * heapsize.MapEntry
	n += int64(cap(st.evTurns)) * 24
	if st.turnLex != nil {
		n += st.turnLex.Bytes()
	}
	if st.eventLex != nil {
		n += st.eventLex.Bytes()
	}
	if st.turnVecLoaded.Load() {
		n += st.turnVec.Bytes()
	}
	if st.eventVecLoaded.Load() {
		n += st.eventVec.Bytes()
	}
	n += st.winVec.Bytes()
	if px := st.pass.Load(); px != nil {
		n += px.Bytes.Load()
	}
	n += st.recBytes + st.records.Bytes()
	return int64(float64(n) * (1 + fragmentation))
}

// recordBytes sums what the state's records take (see recBytes). Caller
// holds st.mu.
func (st *spaceState) recordBytes() int64 {
	var n int64
	for i := range st.turns {
		n += heapsize.Turn(&st.turns[i])
	}
	for i := range st.events {
		n += heapsize.Event(&st.events[i])
	}
	seen := map[[3]string]bool{}
	for _, ls := range st.links {
		for i := range ls {
			k := [3]string{ls[i].Source, ls[i].Target, ls[i].Relation}
			if !seen[k] {
				seen[k] = true
				n += heapsize.Link(&ls[i])
			}
		}
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
