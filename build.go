package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/store"
)

// maxIDLen bounds caller-given turn ids.
const maxIDLen = 256

// Add stores turns in a space and builds memory from them: annotations,
// event membership, event summaries and vectors, as the mode prescribes.
//
// Input is validated as a whole before anything is stored: an empty text, an
// over-long id, or an id already used by a different turn rejects the call
// with ErrInvalidInput or ErrConflict. Re-adding identical turns is a no-op
// (their ids are reported in Skipped), so an interrupted ingest can simply be
// repeated. Each batch of turns (one turn in paper mode) commits in one
// transaction: when an LLM endpoint fails mid-way, earlier batches stay
// stored and the error names the first turn that was not.
func (m *Memory) Add(ctx context.Context, sp Space, turns []TurnInput) (*AddResult, error) {
	if err := m.check(sp); err != nil {
		return nil, err
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		return nil, err
	}
	st.writeMu.Lock()
	defer st.writeMu.Unlock()

	res := &AddResult{}
	prepared, err := m.prepare(st, turns, res)
	if err != nil {
		return nil, err
	}
	rec := &recorder{}
	defer func() {
		res.Calls = rec.calls
		res.Warnings = append(res.Warnings, rec.notes...)
		slices.Sort(res.Events)
		res.Events = slices.Compact(res.Events)
	}()
	var chunks [][]store.Turn
	switch m.opts.Mode {
	case ModePaper:
		for _, t := range prepared {
			chunks = append(chunks, []store.Turn{t})
		}
	default:
		chunks = splitBatches(prepared, m.opts.BatchSize)
	}
	for _, chunk := range chunks {
		var err error
		switch {
		case m.opts.Mode == ModePaper:
			err = m.buildPaper(ctx, st, chunk[0], rec, res)
		case m.opts.Mode == ModeDefault:
			err = m.buildDefault(ctx, st, chunk, rec, res)
		case m.opts.Ablations.NoEvents:
			err = m.buildTurnsOnly(ctx, st, chunk, res)
		default:
			err = m.buildOffline(ctx, st, chunk, res)
		}
		if err != nil {
			return res, fmt.Errorf("higmem: add: turns from %q on not stored: %w", chunk[0].ID, err)
		}
	}
	return res, nil
}

// splitBatches cuts turns into runs of at most n turns that do not cross a
// session boundary.
func splitBatches(turns []store.Turn, n int) [][]store.Turn {
	var out [][]store.Turn
	start := 0
	for i := 1; i <= len(turns); i++ {
		if i == len(turns) || i-start >= n || turns[i].SessionID != turns[start].SessionID {
			out = append(out, turns[start:i])
			start = i
		}
	}
	return out
}

// prepare validates inputs and turns them into store records with Seq,
// ids, parsed times and RecordedAt. Identical re-adds are reported in
// res.Skipped and dropped. Caller holds st.writeMu.
func (m *Memory) prepare(st *spaceState, in []TurnInput, res *AddResult) ([]store.Turn, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	next := int64(1)
	if n := len(st.turns); n > 0 {
		next = st.turns[n-1].Seq + 1
	}
	now := m.now().UTC()
	seen := make(map[string]store.Turn, len(in))
	var out []store.Turn
	for i, ti := range in {
		t := store.Turn{
			Space:       st.space,
			ID:          strings.TrimSpace(ti.ID),
			SessionID:   ti.SessionID,
			Speaker:     strings.TrimSpace(ti.Speaker),
			Text:        strings.TrimSpace(ti.Text),
			Attachments: ti.Attachments,
			Metadata:    ti.Metadata,
			OccurredRaw: ti.Time,
			RecordedAt:  now,
		}
		where := fmt.Sprintf("turn %d", i+1)
		if t.ID != "" {
			where += fmt.Sprintf(" (%q)", t.ID)
		}
		if content(t) == "" {
			return nil, fmt.Errorf("%w: %s: empty text", ErrInvalidInput, where)
		}
		if len(t.ID) > maxIDLen || strings.ContainsAny(t.ID, "\n\r\t") {
			return nil, fmt.Errorf("%w: %s: id must be at most %d characters without line breaks or tabs", ErrInvalidInput, where, maxIDLen)
		}
		switch {
		case !ti.OccurredAt.IsZero():
			t.OccurredAt = ti.OccurredAt.UTC()
			if t.OccurredRaw == "" {
				t.OccurredRaw = ti.OccurredAt.Format(time.RFC3339)
			}
		case ti.Time != "":
			at, _, err := temporal.ParseTime(ti.Time, m.opts.Location)
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: time %q not understood; kept as written, turn has no date", where, ti.Time))
			} else {
				t.OccurredAt = at.UTC()
			}
		}
		if t.ID != "" {
			if old, ok := st.turn(t.ID); ok {
				if !sameTurn(old, t) {
					return nil, fmt.Errorf("%w: %s: id already holds a different turn", ErrConflict, where)
				}
				res.Skipped = append(res.Skipped, t.ID)
				continue
			}
			if old, ok := seen[t.ID]; ok {
				if !sameTurn(old, t) {
					return nil, fmt.Errorf("%w: %s: id given twice with different content", ErrConflict, where)
				}
				res.Skipped = append(res.Skipped, t.ID)
				continue
			}
		}
		t.Seq = next
		next++
		if t.ID == "" {
			t.ID = "t" + strconv.FormatInt(t.Seq, 10)
			for _, taken := st.pos[t.ID]; taken; _, taken = st.pos[t.ID] {
				t.ID += "'"
			}
		}
		seen[t.ID] = t
		out = append(out, t)
	}
	return out, nil
}

// buildTurnsOnly stores turns with rule-based annotations and no events
// (offline mode with the NoEvents ablation).
func (m *Memory) buildTurnsOnly(ctx context.Context, st *spaceState, turns []store.Turn, res *AddResult) error {
	b := newBatch(st, turns, m.now().UTC())
	for _, t := range turns {
		b.ann[t.ID] = annotateRules(t)
	}
	return m.commit(ctx, b, res)
}

// sameTurn reports whether two turns say the same thing (the fields a
// caller gives). Seq and RecordedAt are not compared.
func sameTurn(a, b store.Turn) bool {
	return a.ID == b.ID && a.Speaker == b.Speaker && a.Text == b.Text && a.SessionID == b.SessionID &&
		a.OccurredRaw == b.OccurredRaw && slices.Equal(a.Attachments, b.Attachments)
}

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
	now    time.Time
	lastID int // highest event number handed out by this batch
	// turnVecs, when set, holds the vectors of turns (same order), already
	// computed during construction, so commit does not embed them twice.
	turnVecs [][]float32
}

func newBatch(st *spaceState, turns []store.Turn, now time.Time) *batch {
	return &batch{
		st:     st,
		turns:  turns,
		ann:    make(map[string]store.Annotation, len(turns)),
		events: make(map[string]*store.Event),
		before: make(map[string]store.Event),
		now:    now,
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

// eventNumber returns n for an id "e<n>", else 0.
func eventNumber(id string) int {
	if !strings.HasPrefix(id, "e") {
		return 0
	}
	n, err := strconv.Atoi(id[1:])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// commit embeds the batch's turns and touched events, writes everything in
// one transaction, then applies it to the in-memory state.
func (m *Memory) commit(ctx context.Context, b *batch, res *AddResult) error {
	st := b.st
	sp := st.space
	var texts []string
	if b.turnVecs == nil {
		for _, t := range b.turns {
			texts = append(texts, turnEmbedText(t))
		}
	}
	for _, id := range b.order {
		b.events[id].Version++
		b.events[id].UpdatedAt = b.now
		texts = append(texts, eventText(*b.events[id]))
	}
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return err
	}
	if vs != nil && b.turnVecs != nil {
		vs = append(slices.Clone(b.turnVecs), vs...)
	}
	var vrecs []store.Vector
	if vs != nil {
		emb := m.opts.Embedder.ID()
		for i, t := range b.turns {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorTurn, ID: t.ID, Embedder: emb, Values: vs[i]})
		}
		for j, id := range b.order {
			vrecs = append(vrecs, store.Vector{Kind: store.VectorEvent, ID: id, Embedder: emb, Values: vs[len(b.turns)+j]})
		}
	}
	err = m.store.Update(ctx, func(tx store.Tx) error {
		for _, t := range b.turns {
			if _, err := tx.PutTurn(ctx, t); err != nil {
				return err
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
			if err := appendChange(ctx, tx, sp, "annotation", t.ID, "create", a.Producer, nil, a, b.now); err != nil {
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
			if err := appendChange(ctx, tx, sp, "event", id, action, e.Producer, before, e, b.now); err != nil {
				return err
			}
		}
		for _, l := range b.links {
			if err := tx.PutLink(ctx, sp, l); err != nil {
				return err
			}
		}
		if len(vrecs) > 0 {
			return tx.PutVectors(ctx, sp, vrecs)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	var tv [][]float32
	if vs != nil {
		tv = vs[:len(b.turns)]
	}
	st.addTurns(b.turns, tv)
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
		res.Events = append(res.Events, id)
	}
	for _, l := range b.links {
		st.addLink(l)
	}
	if n := len(b.turns); n > 0 {
		if evs := st.eventsOf[b.turns[n-1].ID]; len(evs) > 0 {
			st.lastEvent = evs[0]
		}
	}
	for _, t := range b.turns {
		res.Added = append(res.Added, t.ID)
	}
	return nil
}
