package higmem

import (
	"context"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// buildOffline annotates turns by rules and groups them into events by
// similarity, then commits the batch.
//
// Offline construction is cheap and needs no model, so when the space moved
// under it (another writer committed), the commit builds the batch again,
// inside the transaction, on the space as it now stands.
func (m *Memory) buildOffline(ctx context.Context, st *spaceState, c *chunk, res *AddResult) error {
	b, err := m.offlineBatch(ctx, st, c)
	if err != nil {
		return err
	}
	return m.commitWith(ctx, b, res, func(ctx context.Context, ns *spaceState) (*batch, error) {
		nc, err := ns.resolve(c.pending)
		if err != nil {
			return nil, err
		}
		return m.offlineBatch(ctx, ns, nc)
	})
}

// offlineBatch builds the batch of chunk c on state st.
func (m *Memory) offlineBatch(ctx context.Context, st *spaceState, c *chunk) (*batch, error) {
	turns := c.turns
	b := newBatch(st, c, m.now().UTC())
	texts := make([]string, len(turns))
	for i, t := range turns {
		texts[i] = rules.EmbedText(t)
	}
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	b.turnVecs = vs

	st.mu.RLock()
	if vs != nil {
		// Segmenting compares the new turns with the stored turns and
		// events.
		if err := st.ensureVectors(ctx); err != nil {
			st.mu.RUnlock()
			return nil, err
		}
	}
	seg := newSegmenter(st, b)
	for i, t := range turns {
		b.ann[t.ID] = rules.Annotate(t)
		var v []float32
		if vs != nil {
			v = vs[i]
		}
		seg.assign(t, v)
	}
	for _, id := range b.order {
		summariseExtractive(st, b, b.events[id])
	}
	st.mu.RUnlock()
	return b, nil
}

// segmenter assigns turns to events without an LLM, weighing them with
// internal/rules.
type segmenter struct {
	*rules.Segmenter
	st   *spaceState
	b    *batch
	prev store.Turn // the turn before the one being assigned
}

func newSegmenter(st *spaceState, b *batch) *segmenter {
	s := &segmenter{st: st, b: b}
	s.Segmenter = rules.NewSegmenter(s)
	if n := len(st.turns); n > 0 {
		s.prev = st.turns[n-1]
	}
	return s
}

// Turn returns a stored turn or one of the batch.
func (s *segmenter) Turn(id string) (store.Turn, bool) {
	if t, ok := s.st.turn(id); ok {
		return t, true
	}
	for _, t := range s.b.turns {
		if t.ID == id {
			return t, true
		}
	}
	return store.Turn{}, false
}

// TurnVec returns the vector of a stored turn or one of the batch.
func (s *segmenter) TurnVec(id string) []float32 {
	if i, ok := s.st.pos[id]; ok && s.st.turnVec.Rows() > i {
		return s.st.turnVec.Row(i)
	}
	for i, t := range s.b.turns {
		if t.ID == id && s.b.turnVecs != nil {
			return s.b.turnVecs[i]
		}
	}
	return nil
}

// assign puts turn t into an event: the open event of its session when t
// continues it, else the best matching older event, else a new one.
func (s *segmenter) assign(t store.Turn, v []float32) {
	ts := rules.TurnTerms(t)
	// Events are read through peek while they are only weighed, so that
	// the batch writes (and stamps a new version on) only those a turn
	// joins.
	var target, open *store.Event
	if s.prev.ID != "" && s.prev.SessionID == t.SessionID {
		if evs := s.b.eventsOf(s.prev.ID); len(evs) > 0 {
			open = s.b.peek(evs[0])
			if s.Continues(open, ts, v) {
				target = open
			}
		}
	}
	// A session opens with a new event (its first turns are greetings,
	// which resemble every other greeting); later topic shifts may rejoin
	// an older event.
	if target == nil && open != nil && len(ts) >= offline.SegShortTerms {
		best, bestSim := (*store.Event)(nil), 0.0
		consider := func(e *store.Event) {
			if e == nil || e.ID == open.ID {
				return
			}
			if sim := s.RejoinScore(e, ts, v); sim > bestSim {
				best, bestSim = e, sim
			}
		}
		for _, h := range s.st.searchEvents(content(t), v, 5, nil) {
			consider(s.b.peek(s.st.events[h.Index].ID))
		}
		// Events created earlier in this batch are not indexed yet.
		for _, id := range s.b.order {
			if _, old := s.b.before[id]; !old {
				consider(s.b.events[id])
			}
		}
		target = best
	}
	if target != nil {
		target = s.b.event(target.ID)
	} else {
		target = s.b.newEvent("", offline.Producer)
	}
	s.b.join(target, t)
	s.Changed(target.ID)
	s.prev = t
}

// summariseExtractive sets an event's keywords, title and summary from its
// members (rules.Summarise).
func summariseExtractive(st *spaceState, b *batch, e *store.Event) {
	var members []store.Turn
	for _, id := range e.TurnIDs {
		if t, ok := st.turn(id); ok {
			members = append(members, t)
			continue
		}
		for _, t := range b.turns {
			if t.ID == id {
				members = append(members, t)
			}
		}
	}
	rules.Summarise(e, members)
}
