package higmem

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Many writers (docs/CONCURRENCY.md): a batch commits in one transaction
// that first takes the space's write lock (store.Tx.Lock). When the space
// still stands at the version the batch was built on (batch.base), its Seq,
// ids and event changes hold as built. Otherwise it re-bases: offline
// construction is built again inside the transaction; a model-built batch
// rolls back and is built again on the space as it now stands, and after
// maxRebuilds tries by offline construction inside the transaction (with a
// warning), so a writer always makes progress. No model is called while
// the lock is held.

// maxRebuilds bounds how often a model-built batch is built again because
// another writer committed to the space while it was being built.
const maxRebuilds = 4

// errMoved says that the space moved under a batch built outside the lock.
var errMoved = errors.New("higmem: space changed while the batch was built")

// chunk is one batch of an Add: the prepared turns (ids may be empty), and
// once resolved against a state, the turns to build with their Seq and ids
// (turns), the version of that state (base) and the ids found already
// stored identically (skipped).
type chunk struct {
	pending []store.Turn
	turns   []store.Turn
	base    int64
	skipped []string
}

// resolve gives the turns of a batch their Seq and generated ids after the
// last turn of st, and drops those already stored: identical ones are
// skipped, a different turn under the same id fails with ErrConflict.
// Caller holds st.mu (or owns st).
func (st *spaceState) resolve(pending []store.Turn) (*chunk, error) {
	c := &chunk{pending: pending, base: st.version.Load()}
	next := int64(1)
	if n := len(st.turns); n > 0 {
		next = st.turns[n-1].Seq + 1
	}
	taken := map[string]bool{}
	for _, t := range pending {
		if t.ID != "" {
			taken[t.ID] = true
		}
	}
	for _, t := range pending {
		if t.ID != "" {
			if old, ok := st.turn(t.ID); ok {
				if !rules.SameTurn(old, t) {
					return nil, fmt.Errorf("%w: turn %q: id already holds a different turn (stored by another writer)", ErrConflict, t.ID)
				}
				c.skipped = append(c.skipped, t.ID)
				continue
			}
		}
		t.Seq = next
		next++
		if t.ID == "" {
			t.ID = "t" + strconv.FormatInt(t.Seq, 10)
			for {
				_, stored := st.pos[t.ID]
				if !stored && !taken[t.ID] {
					break
				}
				t.ID += "'"
			}
			taken[t.ID] = true
		}
		c.turns = append(c.turns, t)
	}
	return c, nil
}

// addChunk resolves one batch on the current state and builds and commits
// it, building again when another writer committed meanwhile. Caller holds
// st.writeMu.
func (m *Memory) addChunk(ctx context.Context, st *spaceState, pending []store.Turn, rec *recorder, res *AddResult) error {
	for attempt := 1; ; attempt++ {
		st.mu.RLock()
		c, err := st.resolve(pending)
		st.mu.RUnlock()
		if err != nil {
			return err
		}
		if len(c.turns) == 0 {
			res.Skipped = append(res.Skipped, c.skipped...)
			return nil
		}
		if attempt > maxRebuilds {
			rec.note("batch from %s: other writers kept changing the space; placed by offline construction", c.turns[0].ID)
			if m.opts.Ablations.NoEvents {
				return m.buildTurnsOnly(ctx, st, c, res)
			}
			return m.buildOffline(ctx, st, c, res)
		}
		err = m.build(ctx, st, c, rec, res)
		if errors.Is(err, llm.ErrContextLength) {
			return m.tooLong(ctx, st, c, pending, rec, res)
		}
		if !errors.Is(err, errMoved) {
			return err
		}
		if err := m.refresh(ctx, st); err != nil {
			return err
		}
	}
}

// tooLong adds a batch whose build prompt the model refused as too long
// for its context, even compacted: in two halves, each built on its own
// (and split again if need be); a single turn is placed by offline
// construction, with a note.
func (m *Memory) tooLong(ctx context.Context, st *spaceState, c *chunk, pending []store.Turn, rec *recorder, res *AddResult) error {
	if len(pending) > 1 {
		half := len(pending) / 2
		rec.note("batch from %s: prompt over the model's context; built in two halves", c.turns[0].ID)
		if err := m.addChunk(ctx, st, pending[:half], rec, res); err != nil {
			return err
		}
		return m.addChunk(ctx, st, pending[half:], rec, res)
	}
	rec.note("turn %s: prompt over the model's context even alone; placed by offline segmentation", c.turns[0].ID)
	if m.opts.Ablations.NoEvents {
		return m.buildTurnsOnly(ctx, st, c, res)
	}
	return m.buildOffline(ctx, st, c, res)
}

// commitWith commits batch b. When the space moved since b's state
// (another writer committed), rebuild, if set, builds the batch again
// inside the transaction on a fresh state read through it; without
// rebuild the commit fails with errMoved and writes nothing.
func (m *Memory) commitWith(ctx context.Context, b *batch, res *AddResult, rebuild func(ctx context.Context, ns *spaceState) (*batch, error)) error {
	st := b.st
	sp := st.space
	vs, wvs, vrecs, err := m.batchVectors(ctx, b)
	if err != nil {
		return err
	}
	var head store.Head
	var fresh *spaceState // the state rebuilt inside the transaction, if any
	err = m.store.Update(ctx, func(tx store.Tx) error {
		var err error
		fresh = nil
		if head, err = tx.Lock(ctx, sp); err != nil {
			return err
		}
		if head.Version != b.base || (len(b.turns) > 0 && b.turns[0].Seq != head.LastSeq+1) {
			if rebuild == nil {
				return errMoved
			}
			ns, err := m.rebase(ctx, st, tx, head)
			if err != nil {
				return err
			}
			nb, err := rebuild(ctx, ns)
			if err != nil {
				return err
			}
			if vs, wvs, vrecs, err = m.batchVectors(ctx, nb); err != nil {
				return err
			}
			b, fresh = nb, ns
		}
		return m.writeBatch(ctx, tx, b, vrecs)
	})
	if err != nil {
		if errors.Is(err, errMoved) {
			return err
		}
		return fmt.Errorf("commit: %w", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if fresh != nil && fresh != st && st.version.Load() != head.Next {
		st.adopt(fresh)
	}
	if st.loaded && st.version.Load() == head.Version {
		// Nothing but this batch happened between the state and the
		// commit: apply it.
		b.st = st
		st.apply(b, vs, wvs, res)
		st.version.Store(head.Next)
		return nil
	}
	// The state moved on by itself (a reader caught up meanwhile, which
	// then read this batch too) or is behind: report, and let the next use
	// catch up from the store's journal.
	st.report(b, res)
	return nil
}

// rebase returns the state of the space as transaction tx sees it (at
// head.Version), to build a batch on again: st itself, caught up in place
// when nobody is reading it, else a state loaded through tx.
func (m *Memory) rebase(ctx context.Context, st *spaceState, tx store.Tx, head store.Head) (*spaceState, error) {
	if st.mu.TryLock() {
		defer st.mu.Unlock()
		_, caught, err := m.catchUp(ctx, st, tx)
		if err != nil {
			return nil, err
		}
		if caught {
			// The batch is built again on st at once: its turn and event
			// vectors are read now, through tx, if the load left them for
			// later.
			if err := st.loadVectorsThrough(ctx, tx); err != nil {
				return nil, err
			}
			st.version.Store(head.Version)
			return st, nil
		}
	}
	ns := m.newState(st.space)
	if err := m.loadFrom(ctx, ns, tx, tx); err != nil {
		return nil, err
	}
	ns.loaded = true
	ns.version.Store(head.Version)
	ns.size.Store(ns.estimateSize())
	return ns, nil
}

// newState returns an empty, unloaded state of space sp.
func (m *Memory) newState(sp store.Space) *spaceState {
	return &spaceState{space: sp, scratch: new(sync.Pool), qscratch: new(sync.Pool), reader: m.store, mem: m, limits: m.limits}
}

// adopt takes the loaded working set of ns (a state nobody else sees).
// Caller holds st.mu for writing.
func (st *spaceState) adopt(ns *spaceState) {
	st.loaded, st.torn = ns.loaded, ns.torn
	st.turns, st.pos, st.info = ns.turns, ns.pos, ns.info
	st.events, st.evPos, st.evTurns, st.eventsOf = ns.events, ns.evPos, ns.evTurns, ns.eventsOf
	st.links = ns.links
	st.turnVec, st.winVec, st.eventVec = ns.turnVec, ns.winVec, ns.eventVec
	st.turnLex, st.eventLex = ns.turnLex, ns.eventLex
	st.eventSeq, st.lastEvent = ns.eventSeq, ns.lastEvent
	st.recBytes = ns.recBytes
	st.records = ns.records
	st.annLoaded.Store(ns.annLoaded.Load())
	st.times.reset()
	st.turnVecLoaded.Store(ns.turnVecLoaded.Load())
	st.eventVecLoaded.Store(ns.eventVecLoaded.Load())
	st.version.Store(ns.version.Load())
	st.size.Store(ns.estimateSize())
}

// refresh brings st up to the store's version of its space (see state).
func (m *Memory) refresh(ctx context.Context, st *spaceState) error {
	return m.refreshCounting(ctx, st, nil)
}

// refreshCounting is refresh that, when moves is not nil, adds one to it
// if it moved st itself (caught it up to another version, or loaded it).
// It compares st before and after under st's write lock and counts before
// letting go of it: a version someone else stored before it took the lock
// (a commit applying its own batch, another reader) is not counted, and
// whoever takes the lock after it (such a commit, which then finds its
// batch applied) finds the count made.
func (m *Memory) refreshCounting(ctx context.Context, st *spaceState, moves *atomic.Int64) error {
	v, err := m.store.SpaceVersion(ctx, st.space)
	if err != nil {
		return wrapf(err, "version of %s", st.space)
	}
	st.mu.RLock()
	current := st.loaded && st.version.Load() == v
	st.mu.RUnlock()
	if current {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if moves != nil {
		was, wasLoaded := st.version.Load(), st.loaded
		defer func() { // before the unlock
			if st.loaded && (!wasLoaded || st.version.Load() != was) {
				moves.Add(1)
			}
		}()
	}
	// A catch-up reads the journal in one snapshot, and brings the state
	// to the version of that snapshot. A load reads on several
	// connections at once; it is one snapshot when the version did not
	// move while it ran. Else read again (a few times), and keep the
	// older version, so that the next use and every commit (which
	// compares versions) know the state may be behind. A state loaded
	// from reads that were not one snapshot is loaded afresh the next
	// time, never caught up.
	for attempt := 0; ; attempt++ {
		if st.loaded && st.version.Load() == v {
			return nil
		}
		at, caught, err := m.catchUp(ctx, st, m.store)
		if err != nil {
			return err
		}
		if caught {
			st.version.Store(at)
			return nil
		}
		if err := m.load(ctx, st); err != nil {
			st.loaded = false
			return err
		}
		st.size.Store(st.estimateSize())
		st.torn = false
		st.loaded = true
		st.version.Store(v)
		after, err := m.store.SpaceVersion(ctx, st.space)
		if err != nil {
			// Whether the load was one snapshot is not known: as if
			// it was not, so that the next use loads afresh.
			st.torn = true
			st.version.Store(-1)
			return wrapf(err, "version of %s", st.space)
		}
		if after == v {
			return nil
		}
		st.torn = true
		if attempt == 2 {
			return nil
		}
		v = after
		st.version.Store(-1)
	}
}
