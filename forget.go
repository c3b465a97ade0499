package higmem

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/redact"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// What Delete does so that a deleted turn's text stays nowhere: the events
// it belonged to are rebuilt from their remaining turns, every other
// derived record that repeats it (an LLM-written annotation or event) is
// rebuilt by the offline rules, the history entries that held it lose their
// bodies, the LLM response cache drops the replies that repeat it, and the
// store is asked to purge its files (see docs/PRIVACY.md).

// forgetPlan is what deleting one turn changes besides the turn itself.
type forgetPlan struct {
	trace    *redact.Trace
	dropped  []string      // events left without members
	rebuilt  []store.Event // events rewritten without the turn
	anns     []store.Annotation
	profiles profilerec.Forget
	// windows are the turns whose window vector held the turn, and
	// windowTexts their windows without it (see spaceState.windowsWithout).
	windows, windowTexts []string
}

// planForget works out the events and annotations to rewrite when gone is
// deleted. anns are the space's stored annotations. Caller holds st.mu for
// reading and st.writeMu.
func planForget(st *spaceState, gone store.Turn, anns []store.Annotation, now time.Time) forgetPlan {
	p := forgetPlan{trace: redact.New(gone, st.turns)}
	b := newBatch(st, &chunk{}, now)
	for _, e := range st.events {
		member := slices.Contains(e.TurnIDs, gone.ID)
		if !member && !p.trace.InEvent(e) {
			continue
		}
		c := b.event(e.ID)
		c.TurnIDs = slices.DeleteFunc(c.TurnIDs, func(x string) bool { return x == gone.ID })
		if len(c.TurnIDs) == 0 {
			p.dropped = append(p.dropped, e.ID)
			continue
		}
		rebuildEvent(st, b, c, p.trace)
		c.Version++
		c.UpdatedAt = now
		p.rebuilt = append(p.rebuilt, *c)
	}
	p.profiles = profilerec.PlanForget(st.records.List(), p.trace)
	for _, a := range anns {
		if a.TurnID == gone.ID || !p.trace.InAnnotation(a) {
			continue
		}
		if t, ok := st.turn(a.TurnID); ok {
			na := rules.Annotate(t)
			na.UpdatedAt = now
			p.anns = append(p.anns, na)
		}
	}
	return p
}

// rebuildEvent rewrites e from its (remaining) members: time span and
// speakers from the turns, title, summary and keywords by the offline
// rules. Facts that cite the deleted turn or hold the trace go; of what a
// model wrote, the tags and entities that do not hold the trace are kept.
func rebuildEvent(st *spaceState, b *batch, e *store.Event, tr *redact.Trace) {
	e.Start, e.End = time.Time{}, time.Time{}
	var speakers []string
	for _, id := range e.TurnIDs {
		t, ok := st.turn(id)
		if !ok {
			continue
		}
		if !t.OccurredAt.IsZero() {
			if e.Start.IsZero() || t.OccurredAt.Before(e.Start) {
				e.Start = t.OccurredAt
			}
			if t.OccurredAt.After(e.End) {
				e.End = t.OccurredAt
			}
		}
		if t.Speaker != "" && !slices.Contains(speakers, t.Speaker) {
			speakers = append(speakers, t.Speaker)
		}
	}
	// Facts citing the deleted turn, or holding its words, go whoever wrote
	// them: an event a model wrote and an earlier delete rebuilt by rules
	// still holds the model's facts.
	e.Facts = slices.DeleteFunc(e.Facts, func(f store.Fact) bool { return f.TurnID == tr.ID || tr.In(f.Text, f.Time) })
	if e.Producer != offline.Producer {
		e.Tags = tr.Keep(e.Tags)
		for _, x := range tr.Keep(e.Entities) {
			if !slices.Contains(speakers, x) {
				speakers = append(speakers, x)
			}
		}
	}
	e.Entities = speakers
	summariseExtractive(st, b, e)
}

// afterDelete forgets the LLM cache entries that repeat tr, then purges the
// store's files (the cache may share them), after a delete committed.
func (m *Memory) afterDelete(ctx context.Context, tr *redact.Trace) error {
	var errs []error
	if tr != nil && !tr.Empty() {
		needles := tr.Needles()
		for _, model := range []llm.Model{m.opts.MemoryModel, m.opts.AnswerModel} {
			f, ok := model.(llm.Forgetter)
			if !ok {
				continue
			}
			if _, err := f.Forget(ctx, needles); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p, ok := m.store.(store.Purger); ok {
		err := p.Purge(ctx)
		switch {
		case errors.Is(err, store.ErrPurgeBlocked):
			// The deleted pages are zeroed in the database file already;
			// only the log's older copies wait for the next purge.
			m.opts.Logger.Warn("higmem: purging the store's files after a delete: readers kept the log; the next delete purges it", "err", err)
		case err != nil:
			errs = append(errs, err)
		}
	}

	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w (the delete is committed; what failed is cleaning up after it)", err)
	}
	return nil
}
