package higmem

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/memcheck"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// buildDefault builds a batch of turns with one build_batch call: the
// model annotates the turns, puts each into events (candidates shown with
// their current records, or new ones) and writes the record (title,
// summary, keywords, facts) of every event the turns joined. Every part of
// the reply passes its memcheck check first; what is missing or junk falls
// back per turn (rules and the offline segmenter) and per event (an
// existing event keeps its record, a new one gets an offline summary and a
// producer marked +fallback), with a note. No model is called under the
// space's lock.
func (m *Memory) buildDefault(ctx context.Context, st *spaceState, c *chunk, rec *recorder, res *AddResult) error {
	turns := c.turns
	b := newBatch(st, c, m.now().UTC())
	// Each turn is embedded twice: as stored (rules.EmbedText) and as a query
	// for its candidate events (its content).
	texts := make([]string, 0, 2*len(turns))
	for _, t := range turns {
		texts = append(texts, rules.EmbedText(t))
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
	var ids []string
	var prevEvents []string
	st.mu.RLock()
	if queryVecs != nil {
		if err := st.ensureEventVectors(ctx); err != nil {
			st.mu.RUnlock()
			return err
		}
	}
	if !m.opts.Ablations.NoEvents {
		ids, data.Candidates, prevEvents = m.candidateEvents(st, turns, queryVecs)
	}
	if data.AskPeople {
		data.People = knownPeople(st, turns) // profile facts: build_default_profiles.go
	}
	st.mu.RUnlock()
	var reply prompt.BuildBatchReply
	replyErr := m.askBuild(ctx, rec, data, &reply)
	if replyErr != nil && !fallible(ctx, replyErr) {
		return replyErr
	}
	if replyErr != nil {
		rec.note("batch from %s: build reply unusable, offline segmentation used: %v", turns[0].ID, replyErr)
	}
	if replyErr == nil && data.AskPeople {
		b.profiles = profilerec.FromPeople(reply.People, b.turnAt(nil), defaultProducer, b.now)
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
				b.ann[t.ID] = rules.FromNote(t, r.Keywords, r.Tags, r.Context, nil, defaultProducer)
			} else {
				b.ann[t.ID] = rules.Annotate(t)
			}
		}
		st.mu.RUnlock()
		return m.commit(ctx, b, res)
	}
	labels, missing := m.assignBatch(st, b, reply, byID, ids, prevEvents)
	if missing > 0 && replyErr == nil {
		rec.note("batch from %s: %d turns missing from the build reply were placed by offline segmentation", turns[0].ID, missing)
	}
	applyRecords(rec, b, reply.Events, labels, replyErr == nil)
	st.mu.RUnlock()
	return m.commit(ctx, b, res)
}

// Bounds of what a build_batch prompt shows of each candidate event: its
// latest facts and its summary cut to a length. Candidates are at most
// Options.KEvent and turns at most Options.BatchSize, each cut to
// maxPromptTurnBytes; a prompt the server still finds too long for its
// context is shown again compacted (askBuild), then split (addChunk).
const (
	batchFactsShown   = 3
	batchSummaryBytes = 600
	// compactCandidates is how many candidates a compacted prompt shows,
	// without facts or keywords and with summaries cut to
	// compactSummaryBytes.
	compactCandidates   = 3
	compactSummaryBytes = 200
)

// askBuild makes the batch's build_batch call. When the server refuses
// the prompt as too long for its context (llm.ErrContextLength), it is
// shown once more compacted; if that is still too long the error is
// returned, and addChunk splits the batch.
func (m *Memory) askBuild(ctx context.Context, rec *recorder, data prompt.BuildBatchData, out *prompt.BuildBatchReply) error {
	err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.BuildBatch, data, out)
	if !errors.Is(err, llm.ErrContextLength) {
		return err
	}
	small := compactEvents(data.Candidates)
	if !shrinks(data.Candidates, small) {
		return err
	}
	rec.note("batch from %s: prompt over the model's context; asked again with %d of %d candidate events, without their facts", data.New[0].ID, len(small), len(data.Candidates))
	*out = prompt.BuildBatchReply{}
	data.Candidates = small
	return m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.BuildBatch, data, out)
}

// shrinks reports whether the compacted candidates small show less than
// cands.
func shrinks(cands, small []prompt.Event) bool {
	if len(small) < len(cands) {
		return true
	}
	for i, e := range cands {
		if len(e.Facts) > 0 || len(e.Keywords) > 0 || len(e.Summary) > len(small[i].Summary) {
			return true
		}
	}
	return false
}

// compactEvents is what a compacted build_batch prompt shows of cands.
func compactEvents(cands []prompt.Event) []prompt.Event {
	out := make([]prompt.Event, 0, compactCandidates)
	for _, e := range cands[:min(len(cands), compactCandidates)] {
		out = append(out, prompt.Event{ID: e.ID, Title: e.Title, Summary: rules.Cut(e.Summary, compactSummaryBytes)})
	}
	return out
}

// candidateEvents returns the events a batch may join, best first, at most
// KEvent: those similar to any turn of the batch (queryVecs, when set,
// holds the turns' query vectors), plus the events of the turn just before
// the batch (continuity), which it also returns; cands is how the prompt
// shows them (their records, bounded). Caller holds st.mu.
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
		pe := rules.PromptEvent(e)
		pe.Summary = rules.Cut(pe.Summary, batchSummaryBytes)
		pe.Tags = nil
		pe.Facts = pe.Facts[max(0, len(pe.Facts)-batchFactsShown):]
		cands = append(cands, pe)
	}
	return ids, cands, prevEvents
}

// assignBatch annotates the batch's turns and puts each into the events
// the build reply names: candidates (ids) or new events by label, titled
// by their records. A turn the reply names no event for joins the previous
// turn's event while that is not too large, else a new one; a turn missing
// from the reply is annotated by rules and placed by the offline
// segmenter. It returns the events made for labels and how many turns
// were missing. byID maps a turn id to its entry in the reply. Caller
// holds st.mu.
func (m *Memory) assignBatch(st *spaceState, b *batch, reply prompt.BuildBatchReply, byID map[string]int, ids, prevEvents []string) (labels map[string]*store.Event, missing int) {
	titles := map[string]string{}
	for _, r := range reply.Events {
		if t := strings.TrimSpace(r.Title); t != "" && titles[r.ID] == "" {
			titles[r.ID] = t
		}
	}
	labels = map[string]*store.Event{}
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
			b.ann[t.ID] = rules.Annotate(t)
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
		b.ann[t.ID] = rules.FromNote(t, r.Keywords, r.Tags, r.Context, nil, defaultProducer)
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
	return labels, missing
}

// applyRecords writes the event records of a build reply into the events
// the batch's turns joined (records name candidates by id and new events
// by label). An event without a usable record falls back: an existing one
// keeps its record, a new one (or one without a summary) gets an offline
// extractive summary (a model title kept) and a producer marked
// +fallback. usable says whether
// the reply as a whole was usable: only then is each fallback noted (an
// unusable reply was noted once). Caller holds b.st.mu.
func applyRecords(rec *recorder, b *batch, records []prompt.BatchEvent, labels map[string]*store.Event, usable bool) {
	byEvent := map[string]prompt.BatchEvent{}
	for _, r := range records {
		id := r.ID
		if e := labels[id]; e != nil {
			id = e.ID
		}
		if _, dup := byEvent[id]; !dup {
			byEvent[id] = r
		}
	}
	for _, id := range b.order {
		e := b.events[id]
		var added []store.Turn
		for _, t := range b.turns {
			if slices.Contains(e.TurnIDs, t.ID) {
				added = append(added, t)
			}
		}
		if len(added) == 0 {
			continue
		}
		_, existed := b.before[id]
		r, ok := byEvent[id]
		switch {
		case ok && r.Summary != "":
			rules.ApplyUpdate(e, r.EventUpdateReply, added)
			e.Producer = defaultProducer
		case existed && e.Summary != "":
			if usable {
				rec.note("event %s: build reply unusable for it (left out or junk), summary kept", id)
			}
		default:
			title := e.Title
			summariseExtractive(b.st, b, e)
			e.Keywords = memcheck.Terms(e.Keywords, rules.MaxEventKeywords)
			if title != "" {
				e.Title = title
			}
			e.Producer = defaultProducer + rules.FallbackSuffix
			if usable {
				rec.note("event %s: build reply unusable for it (left out or junk), an offline summary stands in, marked in the producer", id)
			}
		}
		if e.Title == "" {
			e.Title = rules.TitleFrom(e.Summary)
		}
	}
}
