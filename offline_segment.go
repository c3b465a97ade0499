package higmem

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/textnorm"
	"github.com/higmem/higmem/internal/vec"
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
		texts[i] = turnEmbedText(t)
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
		b.ann[t.ID] = annotateRules(t)
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

// segmenter assigns turns to events without an LLM.
type segmenter struct {
	st   *spaceState
	b    *batch
	prev store.Turn // the turn before the one being assigned
	// centroid and terms describe whole events (for rejoining), cached
	// until the event changes.
	centroid map[string][]float32
	terms    map[string]map[string]bool
}

func newSegmenter(st *spaceState, b *batch) *segmenter {
	s := &segmenter{st: st, b: b, centroid: map[string][]float32{}, terms: map[string]map[string]bool{}}
	if n := len(st.turns); n > 0 {
		s.prev = st.turns[n-1]
	}
	return s
}

// termsOf returns the content terms of the given turns.
func (s *segmenter) termsOf(ids []string) map[string]bool {
	ts := map[string]bool{}
	for _, id := range ids {
		if t, ok := s.turn(id); ok {
			for _, w := range textnorm.Terms(content(t)) {
				ts[w] = true
			}
		}
	}
	return ts
}

// centroidOf returns the normalised mean vector of the given turns, nil
// when none has a vector.
func (s *segmenter) centroidOf(ids []string) []float32 {
	var c []float32
	for _, id := range ids {
		v := s.turnVec(id)
		if v == nil {
			continue
		}
		if c == nil {
			c = make([]float32, len(v))
		}
		for i, x := range v {
			c[i] += x
		}
	}
	if c != nil {
		vec.Normalize(c)
	}
	return c
}

// eventTerms returns the content terms of an event's members.
func (s *segmenter) eventTerms(e *store.Event) map[string]bool {
	if ts, ok := s.terms[e.ID]; ok {
		return ts
	}
	ts := s.termsOf(e.TurnIDs)
	s.terms[e.ID] = ts
	return ts
}

// eventCentroid returns the normalised mean vector of an event's members.
func (s *segmenter) eventCentroid(e *store.Event) []float32 {
	if c, ok := s.centroid[e.ID]; ok {
		return c
	}
	c := s.centroidOf(e.TurnIDs)
	s.centroid[e.ID] = c
	return c
}

func (s *segmenter) turn(id string) (store.Turn, bool) {
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

func (s *segmenter) turnVec(id string) []float32 {
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

// similarity scores how well a turn (terms ts, vector v) fits a group of
// turns (centroid c, terms gt): the cosine when both vectors exist, else
// the share of the turn's terms the group contains. dense reports which.
func similarity(ts []string, v []float32, gt map[string]bool, c []float32) (sim float64, dense bool) {
	if v != nil && c != nil {
		return float64(vec.Dot(v, c)), true
	}
	if len(ts) == 0 {
		return 0, false
	}
	hit := 0
	for _, w := range ts {
		if gt[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(ts)), false
}

// continues reports whether turn t (terms ts, vector v) continues the open
// event e.
func (s *segmenter) continues(e *store.Event, ts []string, v []float32) bool {
	n := len(e.TurnIDs)
	switch {
	case n >= offline.SegMaxEventSize:
		return false
	case n < offline.SegMinEventSize || len(ts) < offline.SegShortTerms:
		return true
	}
	win := e.TurnIDs[n-min(n, offline.SegWindow):]
	var c []float32
	if v != nil {
		c = s.centroidOf(win)
	}
	sim, dense := similarity(ts, v, s.termsOf(win), c)
	if dense {
		return sim >= offline.SegJoinDense
	}
	return sim >= offline.SegJoinLexical
}

// rejoinScore returns how well a turn fits an older event, or 0 when it
// is below the rejoin threshold.
func (s *segmenter) rejoinScore(e *store.Event, ts []string, v []float32) float64 {
	if len(e.TurnIDs) >= offline.SegMaxEventSize {
		return 0
	}
	var c []float32
	if v != nil {
		c = s.eventCentroid(e)
	}
	sim, dense := similarity(ts, v, s.eventTerms(e), c)
	if dense && sim < offline.SegRejoinDense || !dense && sim < offline.SegRejoinLex {
		return 0
	}
	return sim
}

// assign puts turn t into an event: the open event of its session when t
// continues it, else the best matching older event, else a new one.
func (s *segmenter) assign(t store.Turn, v []float32) {
	ts := slices.Compact(slices.Sorted(slices.Values(textnorm.Terms(content(t)))))
	// Events are read through peek while they are only weighed, so that
	// the batch writes (and stamps a new version on) only those a turn
	// joins.
	var target, open *store.Event
	if s.prev.ID != "" && s.prev.SessionID == t.SessionID {
		if evs := s.b.eventsOf(s.prev.ID); len(evs) > 0 {
			open = s.b.peek(evs[0])
			if s.continues(open, ts, v) {
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
			if sim := s.rejoinScore(e, ts, v); sim > bestSim {
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
	delete(s.centroid, target.ID)
	delete(s.terms, target.ID)
	s.prev = t
}

// summariseExtractive sets an event's keywords, title and summary from its
// members: the most frequent content words, and the most central turns.
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
	// Speakers are the event's entities, not its topic.
	names := nameSet(e.Entities...)
	freq := map[string]int{}
	first := map[string]int{}
	display := map[string]string{}
	for _, t := range members {
		for _, w := range keywordsOf(topicText(t), 32, names) {
			k := strings.ToLower(w)
			if _, ok := first[k]; !ok {
				first[k] = len(first)
				display[k] = w
			}
			freq[k]++
		}
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range freq {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(freq[b], freq[a]); c != 0 {
			return c
		}
		return cmp.Compare(first[a], first[b])
	})
	if len(keys) > offline.KeywordsPerEvent {
		keys = keys[:offline.KeywordsPerEvent]
	}
	e.Keywords = e.Keywords[:0]
	for _, k := range keys {
		e.Keywords = append(e.Keywords, display[k])
	}
	// Centrality: how many of the event's top keywords a turn mentions.
	top := map[string]bool{}
	for _, k := range keys {
		top[k] = true
	}
	type cand struct {
		i     int
		score int
	}
	var cs []cand
	for i, t := range members {
		n := 0
		for _, w := range keywordsOf(topicText(t), 32, names) {
			if top[strings.ToLower(w)] {
				n++
			}
		}
		cs = append(cs, cand{i, n})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	if len(cs) > offline.SummaryTurns {
		cs = cs[:offline.SummaryTurns]
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(a.i, b.i) })
	var parts []string
	for _, c := range cs {
		t := members[c.i]
		parts = append(parts, t.Speaker+": "+truncate(content(t), offline.SummaryTurnMaxLen))
	}
	e.Summary = strings.Join(parts, " / ")
	speakers := slices.Clone(e.Entities)
	if len(speakers) > 2 {
		speakers = speakers[:2]
	}
	title := strings.Join(e.Keywords[:min(3, len(e.Keywords))], ", ")
	if len(speakers) > 0 {
		title = strings.Join(speakers, " & ") + ": " + title
	}
	e.Title = title
	e.Producer = offline.Producer
}
