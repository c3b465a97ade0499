package higmem

import (
	"context"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// buildDefault builds a batch of turns with one annotation-and-assignment
// call (build_batch) and one event_updates call for the events the batch
// touched (one per updatesPerCall events).
func (m *Memory) buildDefault(ctx context.Context, st *spaceState, c *chunk, rec *recorder, res *AddResult) error {
	turns := c.turns
	b := newBatch(st, c, m.now().UTC())
	// Each turn is embedded twice: as stored (turnEmbedText) and as a query
	// for its candidate events (its content).
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
	var queryVecs [][]float32
	if vs != nil {
		b.turnVecs, queryVecs = vs[:len(turns)], vs[len(turns):]
	}

	data := prompt.BuildBatchData{New: promptTurns(turns), AskPeople: !m.opts.Ablations.NoProfiles}
	st.mu.RLock()
	ids, cands, prevEvents := m.candidateEvents(st, turns, queryVecs)
	if data.AskPeople {
		data.People = knownPeople(st, turns) // profile facts: build_default_profiles.go
	}
	st.mu.RUnlock()
	if m.opts.Ablations.NoEvents {
		cands, ids = nil, nil
	}
	data.Candidates = cands
	var reply prompt.BuildBatchReply
	replyErr := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.BuildBatch, data, &reply)
	if replyErr != nil && !invalid(replyErr) {
		return replyErr
	}
	if replyErr != nil {
		rec.note("batch from %s: build reply unusable, offline segmentation used: %v", turns[0].ID, replyErr)
	}
	if replyErr == nil && data.AskPeople {
		b.profiles = peopleRecords(b, reply.People, defaultProducer)
	}

	st.mu.RLock()
	byID := map[string]int{}
	for i, r := range reply.Turns {
		if _, dup := byID[r.ID]; !dup {
			byID[r.ID] = i
		}
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
	missing := m.assignBatch(st, b, reply, byID, ids, prevEvents)
	if missing > 0 && replyErr == nil {
		rec.note("batch from %s: %d turns missing from the build reply were placed by offline segmentation", turns[0].ID, missing)
	}
	jobs := m.updateJobs(st, b)
	st.mu.RUnlock()

	if err := m.updateBatchEvents(ctx, rec, b, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		finishEvent(rec, j.e, b.ann[j.added[0].ID], defaultProducer, j.wrote)
	}
	return m.commit(ctx, b, res)
}

// candidateEvents returns the events a batch may join, best first, at most
// KEvent: those similar to any turn of the batch (queryVecs, when set,
// holds the turns' query vectors), plus the events of the turn just before
// the batch (continuity), which it also returns. Caller holds st.mu.
func (m *Memory) candidateEvents(st *spaceState, turns []store.Turn, queryVecs [][]float32) (ids []string, cands []prompt.Event, prevEvents []string) {
	score := map[string]float64{}
	if n := len(st.turns); n > 0 {
		prevEvents = st.eventsOf[st.turns[n-1].ID]
	}
	for _, id := range prevEvents {
		score[id] += 1
	}
	for i, t := range turns {
		var qv []float32
		if queryVecs != nil {
			qv = queryVecs[i]
		}
		for _, h := range st.searchEvents(content(t), qv, 3, nil) {
			score[st.events[h.Index].ID] += h.Score
		}
	}
	ids = slices.Sorted(func(yield func(string) bool) {
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
	for _, id := range ids {
		e, _ := st.event(id)
		cands = append(cands, prompt.Event{ID: e.ID, Title: e.Title, Summary: e.Summary})
	}
	return ids, cands, prevEvents
}

// assignBatch annotates the batch's turns and puts each into the events
// the build reply names: candidates (ids) or new events by label. A turn
// the reply names no event for joins the previous turn's event while that
// is not too large, else a new one; a turn missing from the reply is
// annotated by rules and placed by the offline segmenter. It returns how
// many turns were missing. byID maps a turn id to its entry in the reply.
// Caller holds st.mu.
func (m *Memory) assignBatch(st *spaceState, b *batch, reply prompt.BuildBatchReply, byID map[string]int, ids, prevEvents []string) (missing int) {
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
	for i, t := range b.turns {
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
			if b.turnVecs != nil {
				v = b.turnVecs[i]
			}
			seg.prev = prevTurn(st, b.turns, i)
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
	return missing
}

// Caps of the event_updates call.
const (
	// updatesPerCall caps the events one event_updates call rewrites: a
	// batch rarely touches more, so that a batch costs two calls.
	updatesPerCall = 24
	// updateFactsShown caps the latest facts each event shows it.
	updateFactsShown = 12
)

// updateJob is one event of a default-mode batch's event_updates calls:
// the event's working copy, how its prompt shows it and the batch turns
// that joined it.
type updateJob struct {
	e     *store.Event
	item  prompt.EventUpdatesItem
	added []store.Turn
	wrote bool // the update reply for it was applied
}

// updateJobs snapshots what each touched event's update needs, so that the
// calls run without the lock. Caller holds st.mu.
func (m *Memory) updateJobs(st *spaceState, b *batch) []updateJob {
	var jobs []updateJob
	for _, id := range b.order {
		e := b.events[id]
		var added []store.Turn
		var ids []string
		for _, t := range b.turns {
			if slices.Contains(e.TurnIDs, t.ID) {
				added = append(added, t)
				ids = append(ids, t.ID)
			}
		}
		if len(added) == 0 {
			continue
		}
		old := promptEvent(*e)
		if len(old.Facts) > updateFactsShown {
			old.Facts = old.Facts[len(old.Facts)-updateFactsShown:]
		}
		if _, existed := b.before[id]; !existed {
			old.Summary, old.Facts, old.Keywords, old.Tags = "", nil, nil, nil
		}
		if strings.TrimSpace(old.Title) == "" {
			old.Title = "New event"
		}
		jobs = append(jobs, updateJob{e: e, added: added, item: prompt.EventUpdatesItem{Event: old, NewIDs: ids}})
	}
	return jobs
}

// updateBatchEvents rewrites the events of jobs with event_updates calls
// of at most updatesPerCall events each, in parallel. Each call shows the
// turns before the batch and the batch turns its events got. An unusable
// reply, or an event a reply leaves out or answers with junk, keeps that
// event's record, and is noted.
func (m *Memory) updateBatchEvents(ctx context.Context, rec *recorder, b *batch, jobs []updateJob) error {
	st := b.st
	st.mu.RLock()
	window := promptTurns(st.window(m.opts.Window, b.turns, 0))
	st.mu.RUnlock()
	var groups [][]int
	for i := range jobs {
		if i%updatesPerCall == 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
	}
	return parallel(ctx, m.opts.Concurrency, len(groups), func(ctx context.Context, g int) error {
		data := prompt.EventUpdatesData{Window: window}
		var news []store.Turn
		for _, i := range groups[g] {
			data.Events = append(data.Events, jobs[i].item)
			for _, t := range jobs[i].added {
				if !slices.ContainsFunc(news, func(n store.Turn) bool { return n.ID == t.ID }) {
					news = append(news, t)
				}
			}
		}
		slices.SortFunc(news, compareTurns)
		data.New = promptTurns(news)
		var r prompt.EventUpdatesReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.EventUpdates, data, &r)
		if err != nil && !invalid(err) {
			return err
		}
		if err != nil {
			rec.note("batch from %s: updates reply unusable, summaries kept: %v", b.turns[0].ID, err)
			return nil
		}
		for _, i := range groups[g] {
			j := &jobs[i]
			k := slices.IndexFunc(r.Events, func(it prompt.EventUpdatesReplyItem) bool { return it.ID == j.e.ID })
			if k < 0 {
				rec.note("event %s: updates reply unusable for it (left out or junk), summary kept", j.e.ID)
				continue
			}
			applyUpdate(j.e, r.Events[k].EventUpdateReply, j.added)
			j.wrote = true
		}
		return nil
	})
}
