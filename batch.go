package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/higmem/higmem/internal/history"
	"github.com/higmem/higmem/internal/passindex"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// batch accumulates the writes of one construction step so that they can be
// committed in one transaction and then applied to the in-memory state.
type batch struct {
	st     *spaceState
	turns  []store.Turn
	ann    map[string]store.Annotation
	events map[string]*store.Event // touched events, working copies
	before map[string]store.Event  // state before the batch; absent for new events
	order  []string                // touched event ids, first touch first
	links  []store.Link
	// profiles are the profile records the batch's model calls stated.
	profiles []store.ProfileRecord
	now      time.Time
	lastID   int // highest event number handed out by this batch
	// turnVecs, when set, holds the vectors of turns (same order), already
	// computed during construction, so commit does not embed them twice.
	turnVecs [][]float32
	// base is the version of the state the batch was built on; skipped
	// lists the ids of its turns found already stored.
	base    int64
	skipped []string
}

// newBatch starts the batch of chunk c on state st.
func newBatch(st *spaceState, c *chunk, now time.Time) *batch {
	return &batch{
		st:      st,
		turns:   c.turns,
		base:    c.base,
		skipped: c.skipped,
		ann:     make(map[string]store.Annotation, len(c.turns)),
		events:  make(map[string]*store.Event),
		before:  make(map[string]store.Event),
		now:     now,
	}
}

// event returns the working copy of an event, copying it from the state on
// first touch; nil when it does not exist. Caller holds st.mu for reading
// or st.writeMu.
func (b *batch) event(id string) *store.Event {
	if e, ok := b.events[id]; ok {
		return e
	}
	e, ok := b.st.event(id)
	if !ok {
		return nil
	}
	b.before[id] = e
	c := e
	c.TurnIDs = slices.Clone(e.TurnIDs)
	c.Keywords = slices.Clone(e.Keywords)
	c.Tags = slices.Clone(e.Tags)
	c.Entities = slices.Clone(e.Entities)
	c.Facts = slices.Clone(e.Facts)
	b.events[id] = &c
	b.order = append(b.order, id)
	return &c
}

// peek returns an event as the batch sees it without touching it (event
// copies it into the batch, which then writes it): the batch's working
// copy once it has one, else the state's. The caller must not change it.
// nil when the event does not exist. Caller holds st.mu for reading or
// st.writeMu.
func (b *batch) peek(id string) *store.Event {
	if e, ok := b.events[id]; ok {
		return e
	}
	if e, ok := b.st.event(id); ok {
		return &e
	}
	return nil
}

// newEvent creates an event with the next free id ("e<n>", stable and
// deterministic).
func (b *batch) newEvent(title, producer string) *store.Event {
	b.lastID = max(b.lastID, b.st.eventSeq) + 1
	id := "e" + strconv.Itoa(b.lastID)
	e := &store.Event{Space: b.st.space, ID: id, Title: title, Producer: producer, CreatedAt: b.now, UpdatedAt: b.now}
	b.events[id] = e
	b.order = append(b.order, id)
	return e
}

// join adds turn t to event e (idempotently) and widens its time span.
func (b *batch) join(e *store.Event, t store.Turn) {
	if slices.Contains(e.TurnIDs, t.ID) {
		return
	}
	e.TurnIDs = append(e.TurnIDs, t.ID)
	if !t.OccurredAt.IsZero() {
		if e.Start.IsZero() || t.OccurredAt.Before(e.Start) {
			e.Start = t.OccurredAt
		}
		if t.OccurredAt.After(e.End) {
			e.End = t.OccurredAt
		}
	}
	if t.Speaker != "" && !slices.Contains(e.Entities, t.Speaker) {
		e.Entities = append(e.Entities, t.Speaker)
	}
}

// eventsOf returns the events a turn belongs to, counting this batch's
// changes.
func (b *batch) eventsOf(turnID string) []string {
	ids := slices.Clone(b.st.eventsOf[turnID])
	for _, id := range b.order {
		if slices.Contains(b.events[id].TurnIDs, turnID) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// commit commits a batch built outside the write lock (by a model): it
// fails with errMoved when another writer committed to the space since the
// batch's state, and the caller builds it again.
func (m *Memory) commit(ctx context.Context, b *batch, res *AddResult) error {
	return m.commitWith(ctx, b, res, nil)
}

// batchVectors stamps the batch's touched events and embeds its turns
// (unless construction did), their windows (wvs, window.go) and events.
// vs holds the turns' vectors, then the events'.
func (m *Memory) batchVectors(ctx context.Context, b *batch) (vs, wvs [][]float32, vrecs []store.Vector, err error) {
	var texts []string
	if b.turnVecs == nil {
		for _, t := range b.turns {
			texts = append(texts, rules.EmbedText(t))
		}
	}
	for _, id := range b.order {
		e := b.events[id]
		e.Version = b.eventVersion(id) + 1
		e.UpdatedAt = b.now
		texts = append(texts, rules.EventText(*e))
	}
	var windows, ptexts []string
	var tps []*passindex.Turn
	if m.opts.Embedder != nil {
		b.st.mu.RLock()
		windows = b.st.windowTexts(b.turns)
		b.st.mu.RUnlock()
		texts = append(texts, windows...)
		// The passages of the long turns (passages.go), last.
		if !m.opts.Ablations.NoPassages {
			tps, ptexts = passindex.Texts(b.turns)
		}
		texts = append(texts, ptexts...)
	}
	vs, err = m.embed(ctx, texts)
	if err != nil {
		return nil, nil, nil, err
	}
	var pvs [][]float32
	if vs != nil {
		vs, pvs = vs[:len(vs)-len(ptexts)], vs[len(vs)-len(ptexts):]
		vs, wvs = vs[:len(vs)-len(windows)], vs[len(vs)-len(windows):]
	}
	if vs != nil && b.turnVecs != nil {
		vs = append(slices.Clone(b.turnVecs), vs...)
	}
	if vs != nil {
		emb, wemb := m.opts.Embedder.ID(), windowEmbedder(m.opts.Embedder)
		for i, t := range b.turns {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorTurn, ID: t.ID, Embedder: emb, Values: vs[i]},
				store.Vector{Kind: store.VectorWindow, ID: t.ID, Embedder: wemb, Values: wvs[i]})
		}
		for j, id := range b.order {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorEvent, ID: id, Embedder: emb, Values: vs[len(b.turns)+j]})
		}
		precs := passindex.Fill(tps, pvs, passageEmbedder(m.opts.Embedder))
		vrecs = append(vrecs, precs...)
		// The state's passage index takes them once the turns are in.
		b.st.passages().Note(precs, passageEmbedder(m.opts.Embedder))
	}
	return vs, wvs, vrecs, nil
}

// eventVersion is the version of event id before the batch (0 for a new
// one).
func (b *batch) eventVersion(id string) int64 {
	if old, ok := b.before[id]; ok {
		return old.Version
	}
	return 0
}

// writeBatch writes a batch in transaction tx.
func (m *Memory) writeBatch(ctx context.Context, tx store.Tx, b *batch, vrecs []store.Vector) error {
	sp := b.st.space
	for _, t := range b.turns {
		created, err := tx.PutTurn(ctx, t)
		if err != nil {
			return fmt.Errorf("turn %q: %w", t.ID, err)
		}
		if !created {
			// The state the batch was built on said the id was free.
			return fmt.Errorf("%w: turn %q: id taken by another writer", ErrConflict, t.ID)
		}
	}
	for _, t := range b.turns {
		a, ok := b.ann[t.ID]
		if !ok {
			continue
		}
		a.UpdatedAt = b.now
		if err := tx.PutAnnotation(ctx, sp, a); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "annotation", t.ID, "create", a.Producer, nil, a, b.now); err != nil {
			return err
		}
	}
	for _, id := range b.order {
		e := b.events[id]
		if err := tx.PutEvent(ctx, *e); err != nil {
			return err
		}
		action, before := "create", any(nil)
		if old, ok := b.before[id]; ok {
			action, before = "update", old
		}
		if err := history.Append(ctx, tx, sp, "event", id, action, e.Producer, before, e, b.now); err != nil {
			return err
		}
	}
	for _, l := range b.links {
		if err := tx.PutLink(ctx, sp, l); err != nil {
			return err
		}
	}
	if err := writeProfileRecords(ctx, tx, sp, b.profiles, b.st.records, b.now); err != nil {
		return err
	}
	if len(vrecs) > 0 {
		return tx.PutVectors(ctx, sp, vrecs)
	}
	return nil
}

// apply puts a committed batch into the state and reports it in res (vs
// and wvs as batchVectors returns them). Caller holds st.mu for writing.
func (st *spaceState) apply(b *batch, vs, wvs [][]float32, res *AddResult) {
	var tv [][]float32
	if vs != nil {
		tv = vs[:len(b.turns)]
	}
	st.addTurns(b.turns, tv, wvs)
	for id, a := range b.ann {
		if i, ok := st.pos[id]; ok {
			st.info.setTimeRefs(i, a.TimeRefs)
		}
	}
	for j, id := range b.order {
		var v []float32
		if vs != nil {
			v = vs[len(b.turns)+j]
		}
		st.putEvent(*b.events[id], v)
	}
	for _, l := range b.links {
		st.addLink(l)
	}
	st.records = st.records.With(b.profiles, nil)
	if n := len(b.turns); n > 0 {
		if evs := st.eventsOf[b.turns[n-1].ID]; len(evs) > 0 {
			st.lastEvent = evs[0]
		}
	}
	st.size.Store(st.estimateSize())
	st.report(b, res)
}

// report records a committed batch in res.
func (st *spaceState) report(b *batch, res *AddResult) {
	res.Events = append(res.Events, b.order...)
	for _, t := range b.turns {
		res.Added = append(res.Added, t.ID)
	}
	res.Skipped = append(res.Skipped, b.skipped...)
}
