package higmem

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem/internal/history"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/redact"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// Memory: opening and closing, the cache of loaded spaces, and the reads
// and deletes that need no retrieval.

// Memory is a long-term memory. It is safe for concurrent use: reads run in
// parallel, and writers are serialised per space.
type Memory struct {
	opts      Options
	store     store.Store
	ownsStore bool
	closed    atomic.Bool
	// now is the clock that stamps records (time.Now; tests fix it).
	now func() time.Time
	// limits are given to every space state this memory loads.
	limits limits

	// mu guards spaces and lru.
	mu     sync.Mutex
	spaces map[store.Space]*spaceState
	// lru orders the states of spaces, most recently used first (see
	// cache.go).
	lru list.List
	// catchUps counts the states caught up in place (see catchUp), for
	// tests.
	catchUps atomic.Int64
	// watcher, when the store can tell of other writers' commits, keeps
	// loaded spaces current between reads (see watch.go).
	watcher *watcher
	// learned is offline retrieval's second stage for the embedder (nil:
	// none fitted, no embedder, or Ablations.NoStage), found once at
	// Open rather than by the embedder's id at every question.
	learned *offline.Stage
}

// Open returns a Memory configured by opts. The zero Options gives an
// in-memory, offline, lexical-only memory.
func Open(ctx context.Context, opts Options) (*Memory, error) {
	if _, err := ParseMode(string(opts.Mode)); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if opts.KTurn > MaxK || opts.KEvent > MaxK {
		return nil, fmt.Errorf("%w: Options.KTurn %d and KEvent %d: at most %d", ErrInvalidInput, opts.KTurn, opts.KEvent, MaxK)
	}
	if opts.Mode != ModeOffline && opts.MemoryModel == nil {
		return nil, fmt.Errorf("%w: mode %s needs a memory model (Options.MemoryModel); use offline mode without one", ErrNoLLM, opts.Mode)
	}
	m := &Memory{opts: opts, store: opts.Store, now: time.Now, limits: defaultLimits(), spaces: make(map[store.Space]*spaceState)}
	m.limits.turnInt8 = opts.Mode == ModePaper
	if e := opts.Embedder; e != nil && !opts.Ablations.NoStage {
		m.learned = offline.StageFor(e.ID())
	}
	if m.store == nil {
		m.store = memstore.New()
		m.ownsStore = true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.startWatching()
	return m, nil
}

// Mode returns the mode the memory runs in (never ModeAuto).
func (m *Memory) Mode() Mode { return m.opts.Mode }

// Options returns the resolved options.
func (m *Memory) Options() Options { return m.opts }

// Close releases the memory. It closes the store only when Open created it.
func (m *Memory) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.stopWatching()
	if m.ownsStore {
		return m.store.Close()
	}
	return nil
}

func (m *Memory) check(sp Space) error {
	if m.closed.Load() {
		return ErrClosed
	}
	if err := sp.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return nil
}

// checkedState checks sp and returns its loaded state.
func (m *Memory) checkedState(ctx context.Context, sp Space) (*spaceState, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	return m.state(ctx, sp)
}

// lockSpace checks sp and returns its loaded state with the space's writer
// lock held; the caller unlocks st.writeMu.
//
// Writers of one space in this process wait for each other here, which
// saves them rebuilding batches for each other; across processes the
// store's write lock decides (see commitWith).
func (m *Memory) lockSpace(ctx context.Context, sp Space) (*spaceState, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	st := m.spaceOf(sp)
	st.writeMu.Lock()
	if err := m.refresh(ctx, st); err != nil {
		st.writeMu.Unlock()
		return nil, err
	}
	m.evict(st)
	return st, nil
}

// Get returns one turn.
func (m *Memory) Get(ctx context.Context, sp Space, id string) (Turn, error) {
	if err := m.check(sp); err != nil {
		return Turn{}, err
	}
	t, err := m.store.GetTurn(ctx, sp, id)
	if err != nil {
		return Turn{}, wrapf(err, "get turn %q", id)
	}
	return t, nil
}

// ListOptions selects turns for List.
type ListOptions = store.TurnQuery

// List returns the turns of a space in order.
func (m *Memory) List(ctx context.Context, sp Space, q ListOptions) ([]Turn, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	ts, err := m.store.ListTurns(ctx, sp, q)
	if err != nil {
		return nil, wrapf(err, "list turns")
	}
	return ts, nil
}

// Annotations returns the annotations of the given turns (all when ids is
// nil).
func (m *Memory) Annotations(ctx context.Context, sp Space, ids []string) ([]Annotation, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	return m.store.ListAnnotations(ctx, sp, ids)
}

// Events returns every event of a space with its member turns, in creation
// order.
func (m *Memory) Events(ctx context.Context, sp Space) ([]EventView, error) {
	st, err := m.checkedState(ctx, sp)
	if err != nil {
		return nil, err
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make([]EventView, len(st.events))
	for i, e := range st.events {
		out[i] = st.view(e)
	}
	return out, nil
}

// Event returns one event with its member turns.
func (m *Memory) Event(ctx context.Context, sp Space, id string) (EventView, error) {
	st, err := m.checkedState(ctx, sp)
	if err != nil {
		return EventView{}, err
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	e, ok := st.event(id)
	if !ok {
		return EventView{}, wrapf(ErrNotFound, "event %q", id)
	}
	return st.view(e), nil
}

// History returns the changes recorded for derived records. Empty kind or
// id match any.
func (m *Memory) History(ctx context.Context, sp Space, kind, id string) ([]Change, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	return m.store.History(ctx, sp, kind, id)
}

// Stats summarises a space.
func (m *Memory) Stats(ctx context.Context, sp Space) (store.Stats, error) {
	if err := m.check(sp); err != nil {
		return store.Stats{}, err
	}
	return m.store.Stats(ctx, sp)
}

// Spaces lists the spaces that hold memory.
func (m *Memory) Spaces(ctx context.Context) ([]Space, error) {
	if m.closed.Load() {
		return nil, ErrClosed
	}
	return m.store.Spaces(ctx)
}

// Delete removes a turn with its annotation, vector and links, and forgets
// it: its events are rebuilt from their remaining turns (an event left
// empty is deleted); profile records citing it go, or are stored again
// without it when they have other evidence; other derived records
// repeating its text are rebuilt by the offline rules; history entries
// that held its text keep only that a change happened; the LLM response
// cache drops replies repeating it; a store.Purger purges its files. Every
// change is recorded in the history (docs/PRIVACY.md). When another writer
// committed first, the plan is made again inside the transaction.
func (m *Memory) Delete(ctx context.Context, sp Space, id string) error {
	st, err := m.lockSpace(ctx, sp)
	if err != nil {
		return err
	}
	defer st.writeMu.Unlock()
	plan, err := m.deleteTurn(ctx, st, sp, id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrNotFound) {
		// Not there, or another writer deleted it first.
		return wrapf(ErrNotFound, "delete turn %q", id)
	}
	if err != nil {
		return wrapf(err, "delete turn %q", id)
	}
	// The next use of the space catches up from the journal (catchUp),
	// which holds the delete and the records it rewrote.
	if err := m.afterDelete(ctx, plan.trace); err != nil {
		return wrapf(err, "delete turn %q", id)
	}
	return nil
}

// deleteTurn plans the delete of turn id on the cached state st and
// commits it; when the store's space has moved past the cached version, it
// plans again inside the transaction.
func (m *Memory) deleteTurn(ctx context.Context, st *spaceState, sp Space, id string) (forgetPlan, error) {
	anns, err := m.store.ListAnnotations(ctx, sp, nil)
	if err != nil {
		return forgetPlan{}, err
	}
	now := m.now().UTC()
	version := st.version.Load()
	plan, vs, wvs, err := m.planDelete(ctx, st, id, anns, now)
	if err != nil {
		return forgetPlan{}, err
	}
	err = m.store.Update(ctx, func(tx store.Tx) error {
		head, err := tx.Lock(ctx, sp)
		if err != nil {
			return err
		}
		if head.Version != version {
			// Another writer committed since the plan: plan again on the
			// space as this transaction sees it.
			ns, err := m.rebase(ctx, st, tx, head)
			if err != nil {
				return err
			}
			anns, err := tx.ListAnnotations(ctx, sp, nil)
			if err != nil {
				return err
			}
			if plan, vs, wvs, err = m.planDelete(ctx, ns, id, anns, now); err != nil {
				return err
			}
		}
		return m.writeDelete(ctx, tx, sp, id, plan, vs, wvs, now)
	})
	return plan, err
}

// writeDelete writes in tx the delete of turn id as plan has it: the
// history redacted, the turn deleted, the profile records, events and
// annotations it changes rewritten (each change in the history), the
// vectors of the rebuilt events (vs) and of the windows that held it (wvs).
func (m *Memory) writeDelete(ctx context.Context, tx store.Tx, sp Space, id string, plan forgetPlan, vs, wvs [][]float32, now time.Time) error {
	hist, err := tx.History(ctx, sp, "", "")
	if err != nil {
		return err
	}
	if err := tx.RedactHistory(ctx, sp, plan.trace.History(hist), redact.Note(id)); err != nil {
		return err
	}
	if err := tx.DeleteTurn(ctx, sp, id); err != nil {
		return err
	}
	if err := history.Append(ctx, tx, sp, "turn", id, "delete", "user", nil, nil, now); err != nil {
		return err
	}
	if err := applyProfileForget(ctx, tx, sp, plan.profiles, now); err != nil {
		return err
	}
	for _, eid := range plan.dropped {
		if err := tx.DeleteEvent(ctx, sp, eid); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "event", eid, "delete", "user", nil, nil, now); err != nil {
			return err
		}
	}
	var vrecs []store.Vector
	for i, e := range plan.rebuilt {
		if err := tx.PutEvent(ctx, e); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "event", e.ID, "update", "user", nil, e, now); err != nil {
			return err
		}
		if vs != nil {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorEvent, ID: e.ID, Embedder: m.opts.Embedder.ID(), Values: vs[i]})
		}
	}
	for _, a := range plan.anns {
		if err := tx.PutAnnotation(ctx, sp, a); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "annotation", a.TurnID, "update", "user", nil, a, now); err != nil {
			return err
		}
	}
	for i, wid := range plan.windows {
		if wvs != nil {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorWindow, ID: wid, Embedder: windowEmbedder(m.opts.Embedder), Values: wvs[i]})
		}
	}
	return tx.PutVectors(ctx, sp, vrecs)
}

// planDelete plans the delete of turn id on state st (see planForget) and
// embeds the events it rebuilds (vs) and the windows that held the turn
// (wvs, in the order of plan.windows).
func (m *Memory) planDelete(ctx context.Context, st *spaceState, id string, anns []store.Annotation, now time.Time) (plan forgetPlan, vs, wvs [][]float32, err error) {
	st.mu.RLock()
	gone, ok := st.turn(id)
	if ok {
		plan = planForget(st, gone, anns, now)
		plan.windows, plan.windowTexts = st.windowsWithout(st.pos[id])
	}
	st.mu.RUnlock()
	if !ok {
		return forgetPlan{}, nil, nil, ErrNotFound
	}
	texts := make([]string, len(plan.rebuilt), len(plan.rebuilt)+len(plan.windowTexts))
	for i, e := range plan.rebuilt {
		texts[i] = rules.EventText(e)
	}
	texts = append(texts, plan.windowTexts...)
	vs, err = m.embed(ctx, texts)
	if err != nil {
		return forgetPlan{}, nil, nil, err
	}
	if vs != nil {
		vs, wvs = vs[:len(plan.rebuilt)], vs[len(plan.rebuilt):]
	}
	return plan, vs, wvs, nil
}

// DeleteSpace removes everything stored for a space, history included, and
// has a store that can (store.Purger) purge its files. It does not search
// the LLM response cache, which all spaces share (see docs/PRIVACY.md).
func (m *Memory) DeleteSpace(ctx context.Context, sp Space) error {
	st, err := m.lockSpace(ctx, sp)
	if err != nil {
		return err
	}
	defer st.writeMu.Unlock()
	if err := m.store.Update(ctx, func(tx store.Tx) error { return tx.DeleteSpace(ctx, sp) }); err != nil {
		return wrapf(err, "delete space %s", sp)
	}
	m.invalidate(sp)
	if err := m.afterDelete(ctx, nil); err != nil {
		return wrapf(err, "delete space %s", sp)
	}
	return nil
}
