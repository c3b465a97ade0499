package higmem

import (
	"context"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/parallel"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Paper mode's construction, as the reference implementation does it: one
// turn at a time, three model calls (annotate, affiliate, update).

// buildPaper runs the reference construction for one turn: annotation,
// candidate events by similarity, affiliation, and one update per joined
// event (summary rewrite below SmallEvent members, keyword refresh above).
func (m *Memory) buildPaper(ctx context.Context, st *spaceState, c *chunk, rec *recorder, res *AddResult) error {
	t := c.turns[0]
	b := newBatch(st, c, m.now().UTC())
	vs, err := m.embed(ctx, []string{rules.EmbedText(t), content(t)})
	if err != nil {
		return err
	}
	var qv []float32
	if vs != nil {
		b.turnVecs = vs[:1]
		qv = vs[1]
	}
	v, err := m.paperView(ctx, st, t, qv)
	if err != nil {
		return err
	}

	// 1. Annotation.
	if err := m.annotatePaper(ctx, rec, b, t, v.window); err != nil {
		return err
	}
	if m.opts.Ablations.NoEvents {
		return m.commit(ctx, b, res)
	}

	// 2. Affiliation.
	joined, err := m.affiliatePaper(ctx, rec, st, b, t, v)
	if err != nil {
		return err
	}
	// Profiles (Options.PaperProfiles): the previous turn's event ended.
	if m.opts.PaperProfiles && v.hadPrev && v.prevMain.ID != joined[0].ID {
		if err := m.paperProfiles(ctx, rec, b, v.prevMain); err != nil {
			return err
		}
	}

	// 3. One update per joined event, in parallel.
	w := append(v.window, t)
	if len(w) > m.opts.Window {
		w = w[len(w)-m.opts.Window:]
	}
	wrote := make([]bool, len(joined))
	if err := m.updatePaperEvents(ctx, rec, joined, w, t, wrote); err != nil {
		return err
	}
	for i, e := range joined {
		b.join(e, t) // the reference adds the turn even when not relevant
		finishEvent(rec, e, b.ann[t.ID], paperProducer, wrote[i])
	}
	return m.commit(ctx, b, res)
}

// paperView is what paper mode reads of the space for one turn.
type paperView struct {
	window   []store.Turn   // the turns before it (Options.Window)
	cands    []prompt.Event // the events most like it (Options.KEvent)
	last     *prompt.Event  // the event updated last, if any
	prevMain store.Event    // the previous turn's first event
	hadPrev  bool
}

// paperView reads what the prompts about turn t show; qv is t's vector
// (nil without an embedder).
func (m *Memory) paperView(ctx context.Context, st *spaceState, t store.Turn, qv []float32) (paperView, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if qv != nil {
		if err := st.ensureEventVectors(ctx); err != nil {
			return paperView{}, err
		}
	}
	v := paperView{window: st.window(m.opts.Window, nil, 0)}
	for _, h := range st.searchEvents(content(t), qv, m.opts.KEvent, nil) {
		v.cands = append(v.cands, paperEvent(st.events[h.Index]))
	}
	if e, ok := st.event(st.lastEvent); ok {
		pe := paperEvent(e)
		v.last = &pe
	}
	v.prevMain, v.hadPrev = st.lastTurnEvent()
	return v, nil
}

// annotatePaper annotates turn t (turn_note; with Options.PaperLinks, also
// its links to the window), by the rules when the reply is unusable.
func (m *Memory) annotatePaper(ctx context.Context, rec *recorder, b *batch, t store.Turn, window []store.Turn) error {
	var note prompt.TurnNoteReply
	nd := prompt.TurnNoteData{Turn: promptTurn(t), Links: m.opts.PaperLinks}
	if m.opts.PaperLinks {
		nd.Window = promptTurns(window)
	}
	switch err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.TurnNote, nd, &note); {
	case err == nil:
		b.ann[t.ID] = rules.FromNote(t, note.Keywords, note.Tags, note.Context, note.Entities, paperProducer)
		if m.opts.PaperLinks {
			b.links = rules.LinksFrom(t, window, note, b.now)
		}
	case fallible(ctx, err):
		rec.note("turn %s: annotation reply unusable, rule-based annotation used: %v", t.ID, err)
		b.ann[t.ID] = rules.Annotate(t)
	default:
		return err
	}
	return nil
}

// affiliatePaper asks which events turn t joins (affiliate) and returns
// them, a new one first when the reply says NEW, names none, or is
// unusable.
func (m *Memory) affiliatePaper(ctx context.Context, rec *recorder, st *spaceState, b *batch, t store.Turn, v paperView) ([]*store.Event, error) {
	var aff prompt.AffiliateReply
	err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.Affiliate, prompt.AffiliateData{Last: v.last, Candidates: v.cands, Turn: promptTurn(t)}, &aff)
	if err != nil && !fallible(ctx, err) {
		return nil, err
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
		// The reference accepts any existing id; memcheck has kept only
		// the ids shown (candidates and the last event; docs/PAPER.md).
		if e := b.event(id); e != nil && !slices.Contains(joined, e) {
			joined = append(joined, e)
		}
	}
	st.mu.RUnlock()
	if newFirst || len(joined) == 0 {
		e := b.newEvent("New event by "+t.Speaker, paperProducer)
		joined = append([]*store.Event{e}, joined...)
	}
	return joined, nil
}

// paperEvent is how paper mode shows an event to the affiliation and
// prediction prompts: its id and its current summary, as the reference
// does in its event-metadata-only setting, where the event's "title" field
// holds the 2–3-sentence summary that every small-event update rewrites
// (reference-higmem.md §1.2: "The small-event update rewrites it as a
// concise 2–3-sentence summary"; §2 step 5: the candidates go to the
// affiliation prompt as {id, title}, and so does the last updated event;
// §3 step 5: the per-event prediction shows "the event title"). An event
// without a summary yet shows its title ("New event by <speaker>").
func paperEvent(e store.Event) prompt.Event {
	text := e.Summary
	if text == "" {
		text = e.Title
	}
	return prompt.Event{ID: e.ID, Title: text}
}

// updatePaperEvents runs one update call per joined event, in parallel:
// an event below SmallEvent members gets its summary rewritten, a larger
// one only its keywords and tags refreshed when the model finds the turn
// relevant. wrote[i] is set when event i's summary was rewritten.
func (m *Memory) updatePaperEvents(ctx context.Context, rec *recorder, joined []*store.Event, window []store.Turn, t store.Turn, wrote []bool) error {
	return parallel.Run(ctx, m.opts.Concurrency, len(joined), func(ctx context.Context, i int) error {
		e := joined[i]
		data := prompt.EventUpdateData{Event: rules.PromptEvent(*e), Window: promptTurns(window), New: []prompt.Turn{promptTurn(t)}}
		if len(e.TurnIDs) < m.opts.SmallEvent {
			var err error
			wrote[i], err = m.updateEvent(ctx, rec, e, data, []store.Turn{t})
			return err
		}
		data.Window = nil
		var r prompt.EventCheckReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.EventCheck, data, &r)
		if fallible(ctx, err) {
			rec.note("event %s: check reply unusable, keywords kept: %v", e.ID, err)
			return nil
		}
		if err == nil && r.IsRelevant {
			if k := rules.CleanList(r.Keywords, rules.MaxEventKeywords); len(k) > 0 {
				e.Keywords = k
			}
			if tg := rules.CleanList(r.Tags, rules.MaxEventTags); len(tg) > 0 {
				e.Tags = tg
			}
		}
		return err
	})
}
