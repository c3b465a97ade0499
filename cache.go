package higmem

import "github.com/higmem/higmem/store"

// Loaded spaces are cached within Options.CacheBytes: past the bound the
// least recently used states are dropped from Memory.spaces. A dropped
// state stays valid for whoever still holds it; the next use of the space
// loads a new one. Correctness does not rest on the cache: reads check the
// space's version, commits the store's lock. A state's size (estimateSize)
// is the Go heap it occupies, counted from its lengths and capacities, plus
// the fragmentation repeated loads leave; TestStateSizeEstimate checks it
// against the measured heap (figures in docs/CONCURRENCY.md).

// Per-item costs of what a state holds besides its strings, from the sizes
// of the types (store.Turn is 200 bytes, store.Event 320, store.Link 104,
// store.TimeRef 88) and of Go's maps (about 48 bytes an entry with their
// slack).
const (
	turnStructBytes  = 200
	eventStructBytes = 320
	linkBytes        = 104
	timeRefBytes     = 88
	// profileRecordBytes is a profile record with its statement (store.
	// ProfileRecord, profile.Statement).
	profileRecordBytes = 160 + 96
	mapEntryBytes      = 48
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
	n := int64(stateBytes) + int64(cap(st.turns))*turnStructBytes
	n += int64(len(st.pos)) * mapEntryBytes
	n += int64(cap(st.info.event)) * (infoBytes + scratchBytes)
	n += int64(len(st.info.RunStart))*14 + int64(len(st.info.winStart))*8 + st.info.refBytes
	n += int64(cap(st.events)) * eventStructBytes
	n += int64(len(st.evPos)+len(st.eventsOf)+len(st.links)) * mapEntryBytes
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
		n += px.bytes.Load()
	}
	n += st.recBytes
	if st.records != nil {
		n += st.records.bytes
	}
	return int64(float64(n) * (1 + fragmentation))
}

// allocBytes is the heap a string or slice of n bytes takes: Go rounds
// allocations up to its size classes (8 and 16 bytes apart for small
// ones, at most an eighth more for larger ones).
func allocBytes(n int) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 16:
		return int64(n+7) &^ 7
	case n <= 256:
		return int64(n+15) &^ 15
	default:
		return int64(n + n/16 + 15)
	}
}

// stringsBytes is the heap of a slice of strings.
func stringsBytes(ss []string) int64 {
	n := allocBytes(16 * cap(ss))
	for _, s := range ss {
		n += allocBytes(len(s))
	}
	return n
}

// turnBytes is what a turn's contents take on the heap (its strings,
// attachments and metadata), beyond its slot in the state's slices.
func turnBytes(t *store.Turn) int64 {
	n := allocBytes(len(t.ID)) + allocBytes(len(t.SessionID)) + allocBytes(len(t.Speaker)) +
		allocBytes(len(t.Text)) + allocBytes(len(t.OccurredRaw))
	if len(t.Attachments) > 0 {
		n += allocBytes(48 * cap(t.Attachments))
		for _, a := range t.Attachments {
			n += allocBytes(len(a.Kind)) + allocBytes(len(a.URL)) + allocBytes(len(a.Caption))
		}
	}
	for k, v := range t.Metadata {
		n += mapEntryBytes + allocBytes(len(k)) + allocBytes(len(v))
	}
	return n
}

// eventBytes is what an event's contents take on the heap (strings,
// facts, lists), with its membership (an entry of eventsOf and of evTurns
// per member), beyond its slot in the state's slices.
func eventBytes(e *store.Event) int64 {
	n := allocBytes(len(e.ID)) + allocBytes(len(e.Title)) + allocBytes(len(e.Summary)) + allocBytes(len(e.Producer))
	n += allocBytes(48 * cap(e.Facts))
	for _, f := range e.Facts {
		n += allocBytes(len(f.Time)) + allocBytes(len(f.Text)) + allocBytes(len(f.TurnID))
	}
	n += stringsBytes(e.Entities) + stringsBytes(e.Keywords) + stringsBytes(e.Tags) + stringsBytes(e.TurnIDs)
	n += int64(len(e.TurnIDs)) * (16 + 4)
	return n
}

// linkBytes is what a link takes: a copy under each of its ends, and its
// strings.
func linkSize(l *store.Link) int64 {
	return 2*linkBytes + allocBytes(len(l.Source)) + allocBytes(len(l.Target)) + allocBytes(len(l.Relation))
}

// timeRefsBytes is what the time expressions of one annotation take.
func timeRefsBytes(refs []store.TimeRef) int64 {
	n := allocBytes(timeRefBytes * cap(refs))
	for _, r := range refs {
		n += allocBytes(len(r.Text)) + allocBytes(len(r.Granularity))
	}
	return n
}

// recordBytes sums what the state's records take (see recBytes). Caller
// holds st.mu.
func (st *spaceState) recordBytes() int64 {
	var n int64
	for i := range st.turns {
		n += turnBytes(&st.turns[i])
	}
	for i := range st.events {
		n += eventBytes(&st.events[i])
	}
	seen := map[[3]string]bool{}
	for _, ls := range st.links {
		for i := range ls {
			k := [3]string{ls[i].Source, ls[i].Target, ls[i].Relation}
			if !seen[k] {
				seen[k] = true
				n += linkSize(&ls[i])
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
