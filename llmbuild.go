package higmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Producer strings of LLM-built records.
const (
	paperProducer   = "llm:paper:" + prompt.Version
	defaultProducer = "llm:default:" + prompt.Version
)

// Caps on what models may write into an event.
const (
	maxEventKeywords = 10
	maxEventTags     = 6
	maxEventFacts    = 40 // facts shown back to the model; older ones stay stored
	maxTitleLen      = 90
)

// dateOf is a turn's date as shown to models: "8 May 2023", or the raw
// string when it could not be parsed.
func dateOf(t store.Turn) string {
	if !t.OccurredAt.IsZero() {
		return temporal.FormatDay(t.OccurredAt)
	}
	return t.OccurredRaw
}

func promptTurn(t store.Turn) prompt.Turn {
	return prompt.Turn{ID: t.ID, Date: dateOf(t), Speaker: t.Speaker, Text: content(t)}
}

func promptTurns(ts []store.Turn) []prompt.Turn {
	out := make([]prompt.Turn, len(ts))
	for i, t := range ts {
		out[i] = promptTurn(t)
	}
	return out
}

func promptEvent(e store.Event) prompt.Event {
	pe := prompt.Event{ID: e.ID, Title: e.Title, Summary: e.Summary, Keywords: e.Keywords, Tags: e.Tags}
	facts := e.Facts
	if len(facts) > maxEventFacts {
		facts = facts[len(facts)-maxEventFacts:]
	}
	for _, f := range facts {
		pe.Facts = append(pe.Facts, prompt.Fact{Time: f.Time, Text: f.Text, TurnID: f.TurnID})
	}
	return pe
}

// window returns the last n turns of the space before the batch plus the
// batch turns before index i. Caller holds st.mu.
func (st *spaceState) window(n int, batch []store.Turn, i int) []store.Turn {
	var w []store.Turn
	w = append(w, batch[:i]...)
	for j := len(st.turns) - 1; j >= 0 && len(w) < n; j-- {
		w = append([]store.Turn{st.turns[j]}, w...)
	}
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return w
}

// annotationFromNote turns a turn_note reply into an annotation; entities
// and time expressions always come from the rules too.
func annotationFromNote(t store.Turn, kw, tags []string, context string, entities []string, producer string) store.Annotation {
	a := annotateRules(t)
	a.Producer = producer
	if k := cleanList(kw, 12); len(k) > 0 {
		a.Keywords = k
	}
	a.Tags = cleanList(tags, 8)
	if c := strings.TrimSpace(context); c != "" {
		a.Context = c
	}
	for _, e := range cleanList(entities, 20) {
		if !slices.Contains(a.Entities, e) {
			a.Entities = append(a.Entities, e)
		}
	}
	return a
}

// cleanList trims, drops empties and duplicates (case-insensitively) and
// caps a list a model wrote.
func cleanList(in []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	return out
}

// titleFrom derives a short title from a summary: its first sentence.
func titleFrom(summary string) string {
	return truncate(firstSentence(strings.TrimSpace(summary)), maxTitleLen)
}

// applyUpdate merges an event_update reply into e. Facts must cite one of
// the new turns; others lose their turn id.
func applyUpdate(e *store.Event, r prompt.EventUpdateReply, newTurns []store.Turn) {
	if s := strings.TrimSpace(r.Summary); s != "" {
		e.Summary = s
		if e.Title == "" || strings.HasPrefix(e.Title, "New event") {
			e.Title = titleFrom(s)
		}
	}
	if k := cleanList(r.Keywords, maxEventKeywords); len(k) > 0 {
		e.Keywords = k
	}
	if t := cleanList(r.Tags, maxEventTags); len(t) > 0 {
		e.Tags = t
	}
	for _, f := range r.NewFacts {
		text := strings.TrimSpace(f.Fact)
		if text == "" {
			continue
		}
		id := f.TurnID
		if !slices.ContainsFunc(newTurns, func(t store.Turn) bool { return t.ID == id }) {
			id = ""
		}
		e.Facts = append(e.Facts, store.Fact{Time: strings.TrimSpace(f.Time), Text: text, TurnID: id})
	}
}

// buildPaper runs the reference construction for one turn: annotation,
// candidate events by similarity, affiliation, and one update per joined
// event (summary rewrite below SmallEvent members, keyword refresh above).
func (m *Memory) buildPaper(ctx context.Context, st *spaceState, t store.Turn, rec *recorder, res *AddResult) error {
	b := newBatch(st, []store.Turn{t}, m.now().UTC())
	vs, err := m.embed(ctx, []string{turnEmbedText(t), content(t)})
	if err != nil {
		return err
	}
	var qv []float32
	if vs != nil {
		b.turnVecs = vs[:1]
		qv = vs[1]
	}

	st.mu.RLock()
	window := st.window(m.opts.Window, nil, 0)
	var cands []prompt.Event
	candIDs := map[string]bool{}
	for _, h := range st.searchEvents(content(t), qv, m.opts.KEvent, nil) {
		e := st.events[h.idx]
		cands = append(cands, prompt.Event{ID: e.ID, Title: e.Title})
		candIDs[e.ID] = true
	}
	var last *prompt.Event
	if e, ok := st.event(st.lastEvent); ok {
		last = &prompt.Event{ID: e.ID, Title: e.Title}
	}
	st.mu.RUnlock()

	// 1. Annotation.
	var note prompt.TurnNoteReply
	nd := prompt.TurnNoteData{Turn: promptTurn(t), Links: m.opts.PaperLinks}
	if m.opts.PaperLinks {
		nd.Window = promptTurns(window)
	}
	switch err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.TurnNote, nd, &note); {
	case err == nil:
		b.ann[t.ID] = annotationFromNote(t, note.Keywords, note.Tags, note.Context, note.Entities, paperProducer)
		if m.opts.PaperLinks {
			b.links = linksFrom(t, window, note, b.now)
		}
	case invalid(err):
		rec.note("turn %s: annotation reply unusable, rule-based annotation used: %v", t.ID, err)
		b.ann[t.ID] = annotateRules(t)
	default:
		return err
	}

	if m.opts.Ablations.NoEvents {
		return m.commit(ctx, b, res)
	}

	// 2. Affiliation.
	var aff prompt.AffiliateReply
	err = m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.Affiliate, prompt.AffiliateData{Last: last, Candidates: cands, Turn: promptTurn(t)}, &aff)
	if err != nil && !invalid(err) {
		return err
	}
	if err != nil {
		rec.note("turn %s: affiliation reply unusable, new event created: %v", t.ID, err)
	}
	st.mu.RLock()
	var joined []*store.Event
	newFirst := false
	for _, id := range aff.Affiliations {
		id = strings.TrimSpace(id)
		if strings.EqualFold(id, "NEW") || strings.EqualFold(id, "NEW_EVENT") {
			newFirst = true
			continue
		}
		// The reference accepts any existing id; we keep that in paper
		// mode but drop ids that do not exist.
		if e := b.event(id); e != nil && !slices.Contains(joined, e) {
			joined = append(joined, e)
		}
	}
	st.mu.RUnlock()
	if newFirst || len(joined) == 0 {
		e := b.newEvent("New event by "+t.Speaker, paperProducer)
		joined = append([]*store.Event{e}, joined...)
	}

	// 3. One update per joined event, in parallel.
	w := append(window, t)
	if len(w) > m.opts.Window {
		w = w[len(w)-m.opts.Window:]
	}
	err = parallel(ctx, m.opts.Concurrency, len(joined), func(ctx context.Context, i int) error {
		e := joined[i]
		data := prompt.EventUpdateData{Event: promptEvent(*e), Window: promptTurns(w), New: []prompt.Turn{promptTurn(t)}}
		if len(e.TurnIDs) < m.opts.SmallEvent {
			var r prompt.EventUpdateReply
			err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.EventUpdate, data, &r)
			if invalid(err) {
				rec.note("event %s: update reply unusable, summary kept: %v", e.ID, err)
				return nil
			}
			if err == nil {
				applyUpdate(e, r, []store.Turn{t})
			}
			return err
		}
		data.Window = nil
		var r prompt.EventCheckReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.EventCheck, data, &r)
		if invalid(err) {
			rec.note("event %s: check reply unusable, keywords kept: %v", e.ID, err)
			return nil
		}
		if err == nil && r.IsRelevant {
			if k := cleanList(r.Keywords, maxEventKeywords); len(k) > 0 {
				e.Keywords = k
			}
			if tg := cleanList(r.Tags, maxEventTags); len(tg) > 0 {
				e.Tags = tg
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, e := range joined {
		b.join(e, t) // the reference adds the turn even when not relevant
		if e.Summary == "" {
			e.Summary = b.ann[t.ID].Context
		}
		e.Producer = paperProducer
	}
	return m.commit(ctx, b, res)
}

// linksFrom keeps the links a model proposed to turns of the window.
func linksFrom(t store.Turn, window []store.Turn, r prompt.TurnNoteReply, now time.Time) []store.Link {
	var out []store.Link
	for _, l := range r.Links {
		target := strings.TrimSpace(l.Target)
		if target == t.ID || !slices.ContainsFunc(window, func(w store.Turn) bool { return w.ID == target }) {
			continue
		}
		rel := strings.TrimSpace(l.Relation)
		if rel == "" {
			rel = "relates_to"
		}
		out = append(out, store.Link{Source: t.ID, Target: target, Relation: rel, Confidence: 1, CreatedAt: now})
	}
	return out
}

// buildDefault builds a batch of turns with one annotation-and-assignment
// call and one update call per touched event.
func (m *Memory) buildDefault(ctx context.Context, st *spaceState, turns []store.Turn, rec *recorder, res *AddResult) error {
	b := newBatch(st, turns, m.now().UTC())
	texts := make([]string, 0, 2*len(turns))
	for _, t := range turns {
		texts = append(texts, turnEmbedText(t))
	}
	for _, t := range turns {
		texts = append(texts, content(t))
	}
	vs, err := m.embed(ctx, texts)
	if err != nil {
		return err
	}
	if vs != nil {
		b.turnVecs = vs[:len(turns)]
	}

	// Candidates: events similar to any turn of the batch, plus the events
	// of the turn just before the batch (continuity).
	st.mu.RLock()
	score := map[string]float64{}
	var prevEvents []string
	if n := len(st.turns); n > 0 {
		prevEvents = st.eventsOf[st.turns[n-1].ID]
	}
	for _, id := range prevEvents {
		score[id] += 1
	}
	for i, t := range turns {
		var qv []float32
		if vs != nil {
			qv = vs[len(turns)+i]
		}
		for _, h := range st.searchEvents(content(t), qv, 3, nil) {
			score[st.events[h.idx].ID] += h.score
		}
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range score {
			if !yield(id) {
				return
			}
		}
	})
	slices.SortStableFunc(ids, func(a, b string) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	if len(ids) > m.opts.KEvent {
		ids = ids[:m.opts.KEvent]
	}
	var cands []prompt.Event
	for _, id := range ids {
		e, _ := st.event(id)
		cands = append(cands, prompt.Event{ID: e.ID, Title: e.Title, Summary: e.Summary})
	}
	st.mu.RUnlock()

	if m.opts.Ablations.NoEvents {
		cands, ids = nil, nil
	}
	var reply prompt.BuildBatchReply
	err = m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.BuildBatch, prompt.BuildBatchData{Candidates: cands, New: promptTurns(turns)}, &reply)
	if err != nil && !invalid(err) {
		return err
	}
	if err != nil {
		rec.note("batch from %s: build reply unusable, offline segmentation used: %v", turns[0].ID, err)
	}

	st.mu.RLock()
	byID := map[string]int{}
	for i, r := range reply.Turns {
		if _, dup := byID[r.ID]; !dup {
			byID[r.ID] = i
		}
	}
	titles := map[string]string{}
	for _, ne := range reply.NewEvents {
		titles[strings.TrimSpace(ne.Label)] = strings.TrimSpace(ne.Title)
	}
	labels := map[string]*store.Event{}
	isCand := map[string]bool{}
	for _, id := range ids {
		isCand[id] = true
	}
	var seg *segmenter
	var prev *store.Event
	if len(prevEvents) > 0 {
		prev = b.event(prevEvents[0])
	}
	if m.opts.Ablations.NoEvents {
		for _, t := range turns {
			if ri, ok := byID[t.ID]; ok {
				r := reply.Turns[ri]
				b.ann[t.ID] = annotationFromNote(t, r.Keywords, r.Tags, r.Context, nil, defaultProducer)
			} else {
				b.ann[t.ID] = annotateRules(t)
			}
		}
		st.mu.RUnlock()
		return m.commit(ctx, b, res)
	}
	missing := 0
	for i, t := range turns {
		ri, ok := byID[t.ID]
		if !ok {
			// The model skipped this turn (or the reply was unusable):
			// rules annotate it and the offline segmenter places it.
			missing++
			b.ann[t.ID] = annotateRules(t)
			if seg == nil {
				seg = newSegmenter(st, b)
			}
			var v []float32
			if vs != nil {
				v = vs[i]
			}
			seg.prev = prevTurn(st, turns, i)
			seg.assign(t, v)
			if evs := b.eventsOf(t.ID); len(evs) > 0 {
				prev = b.event(evs[0])
			}
			continue
		}
		r := reply.Turns[ri]
		b.ann[t.ID] = annotationFromNote(t, r.Keywords, r.Tags, r.Context, nil, defaultProducer)
		var joined []*store.Event
		for _, ref := range r.Events {
			ref = strings.TrimSpace(ref)
			var e *store.Event
			switch {
			case isCand[ref]:
				e = b.event(ref)
			case strings.HasPrefix(strings.ToLower(ref), "new"):
				e = labels[ref]
				if e == nil {
					e = b.newEvent(titles[ref], defaultProducer)
					labels[ref] = e
				}
			}
			if e != nil && !slices.Contains(joined, e) {
				joined = append(joined, e)
			}
		}
		if len(joined) == 0 {
			if prev != nil && len(prev.TurnIDs) < 4*m.opts.SmallEvent {
				joined = append(joined, prev)
			} else {
				joined = append(joined, b.newEvent("", defaultProducer))
			}
		}
		for _, e := range joined {
			b.join(e, t)
		}
		prev = joined[0]
	}
	if missing > 0 && err == nil {
		rec.note("batch from %s: %d turns missing from the build reply were placed by offline segmentation", turns[0].ID, missing)
	}
	// Snapshot what each touched event's update call needs.
	type job struct {
		e     *store.Event
		data  prompt.EventUpdateData
		added []store.Turn
	}
	var jobs []job
	for _, id := range b.order {
		e := b.events[id]
		var added []store.Turn
		for _, t := range turns {
			if slices.Contains(e.TurnIDs, t.ID) {
				added = append(added, t)
			}
		}
		if len(added) == 0 {
			continue
		}
		first := slices.IndexFunc(turns, func(t store.Turn) bool { return t.ID == added[0].ID })
		w := st.window(m.opts.Window, turns, first)
		old := *e
		if _, existed := b.before[id]; !existed {
			old.TurnIDs = nil
		}
		jobs = append(jobs, job{e: e, added: added, data: prompt.EventUpdateData{Event: promptEvent(old), Window: promptTurns(w), New: promptTurns(added)}})
	}
	st.mu.RUnlock()

	err = parallel(ctx, m.opts.Concurrency, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		var r prompt.EventUpdateReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.EventUpdate, j.data, &r)
		if invalid(err) {
			rec.note("event %s: update reply unusable, summary kept: %v", j.e.ID, err)
			return nil
		}
		if err == nil {
			applyUpdate(j.e, r, j.added)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.e.Summary == "" {
			j.e.Summary = b.ann[j.added[0].ID].Context
		}
		if j.e.Title == "" {
			j.e.Title = titleFrom(j.e.Summary)
		}
		j.e.Producer = defaultProducer
	}
	return m.commit(ctx, b, res)
}

// prevTurn returns the turn before batch index i: the previous batch turn,
// or the last stored turn. Caller holds st.mu.
func prevTurn(st *spaceState, batch []store.Turn, i int) store.Turn {
	if i > 0 {
		return batch[i-1]
	}
	if n := len(st.turns); n > 0 {
		return st.turns[n-1]
	}
	return store.Turn{}
}
