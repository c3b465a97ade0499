package exportfmt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/higmem/higmem/internal/history"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// Counts is what an import stored (the root's ImportResult).
type Counts struct {
	Turns       int
	Skipped     int
	Annotations int
	Events      int
	Links       int
	Profiles    int
}

// Write writes the checked lines of an import (Check) into sp in tx,
// counting what it stores in res. A turn stored identically is skipped; a
// different turn with its id is store.ErrConflict.
func Write(ctx context.Context, tx store.Tx, sp store.Space, lines []Line, now time.Time, res *Counts) error {
	head, err := tx.Lock(ctx, sp)
	if err != nil {
		return err
	}
	next := head.LastSeq + 1
	ev, err := newEventImport(ctx, tx, sp, lines)
	if err != nil {
		return err
	}
	for _, l := range lines {
		switch l.Kind {
		case "turn":
			if err := importTurn(ctx, tx, sp, *l.Turn, &next, now, res); err != nil {
				return err
			}
		case "annotation":
			if err := tx.PutAnnotation(ctx, sp, *l.Annotation); err != nil {
				return fmt.Errorf("annotation of %q: %w", l.Annotation.TurnID, err)
			}
			res.Annotations++
		case "event":
			if err := importEvent(ctx, tx, sp, ev, *l.Event, now); err != nil {
				return err
			}
			res.Events++
		case "link":
			if err := tx.PutLink(ctx, sp, *l.Link); err != nil {
				return fmt.Errorf("link %s->%s: %w", l.Link.Source, l.Link.Target, err)
			}
			res.Links++
		}
	}
	// Profile records last: they cite turns, which are all stored now.
	for _, l := range lines {
		if l.Kind != "profile" {
			continue
		}
		if err := tx.PutProfileRecord(ctx, sp, *l.Profile); err != nil {
			return fmt.Errorf("profile record %q: %w", l.Profile.ID, err)
		}
		if err := history.Append(ctx, tx, sp, "profile", l.Profile.ID, "import", "import", nil, l.Profile, now); err != nil {
			return err
		}
		res.Profiles++
	}
	return ev.keepMembers(ctx, tx, sp, now)
}

// importTurn stores turn t under sequence number *next (then advanced),
// or skips it when stored identically; a different turn with its id is
// ErrConflict.
func importTurn(ctx context.Context, tx store.Tx, sp store.Space, t store.Turn, next *int64, now time.Time, res *Counts) error {
	t.Space = sp
	if old, err := tx.GetTurn(ctx, sp, t.ID); err == nil {
		if !rules.SameTurn(old, t) {
			return fmt.Errorf("%w: turn %q", store.ErrConflict, t.ID)
		}
		res.Skipped++
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	t.Seq = *next
	*next++
	if t.RecordedAt.IsZero() {
		t.RecordedAt = now
	}
	if _, err := tx.PutTurn(ctx, t); err != nil {
		return fmt.Errorf("turn %q: %w", t.ID, err)
	}
	res.Turns++
	return nil
}

// importEvent stores event e, placed by ev, with its history entry.
func importEvent(ctx context.Context, tx store.Tx, sp store.Space, ev *eventImport, e store.Event, now time.Time) error {
	e = ev.place(e)
	e.Space = sp
	if old, ok := ev.replaced[e.ID]; ok && rules.EventText(old) != rules.EventText(e) {
		// The stored vector embeds the old text: the event goes with it,
		// so that the next load embeds the new text.
		if err := tx.DeleteEvent(ctx, sp, e.ID); err != nil {
			return fmt.Errorf("event %q: %w", e.ID, err)
		}
	}
	if err := tx.PutEvent(ctx, e); err != nil {
		return fmt.Errorf("event %q: %w", e.ID, err)
	}
	return history.Append(ctx, tx, sp, "event", e.ID, "import", "import", nil, e, now)
}

// eventImport decides where the events of an import go, so that an import
// never leaves a stored turn in no event: into another space, an event
// whose id is taken gets a fresh one; into the exported space itself (a
// restore), it replaces the stored event, which keeps the stored turns no
// other event holds afterwards (the root's Import).
type eventImport struct {
	stored   map[string]store.Event // the space's events before the import
	restore  bool                   // the export is of the space imported into
	last     int                    // highest event number stored or imported
	placed   map[string]store.Event // imported events by their id in the space
	replaced map[string]store.Event // stored events an imported one replaced
}

func newEventImport(ctx context.Context, tx store.Tx, sp store.Space, lines []Line) (*eventImport, error) {
	evs, err := tx.ListEvents(ctx, sp)
	if err != nil {
		return nil, err
	}
	ev := &eventImport{stored: make(map[string]store.Event, len(evs)), placed: map[string]store.Event{}, replaced: map[string]store.Event{}}
	for _, e := range evs {
		ev.stored[e.ID] = e
		ev.last = max(ev.last, rules.EventNumber(e.ID))
	}
	for _, l := range lines {
		switch {
		case l.Kind == "header" && l.Space != nil:
			ev.restore = *l.Space == sp
		case l.Kind == "event":
			ev.last = max(ev.last, rules.EventNumber(l.Event.ID))
		}
	}
	return ev, nil
}

// place returns imported event e with the id it takes in the space.
func (ev *eventImport) place(e store.Event) store.Event {
	if old, taken := ev.stored[e.ID]; taken {
		if ev.restore {
			ev.replaced[e.ID] = old
		} else {
			ev.last++
			e.ID = fmt.Sprintf("e%d", ev.last)
		}
	}
	ev.placed[e.ID] = e
	return e
}

// keepMembers puts back into each replacing event the stored turns its
// stored predecessor held that no event holds after the import.
func (ev *eventImport) keepMembers(ctx context.Context, tx store.Tx, sp store.Space, now time.Time) error {
	if len(ev.replaced) == 0 {
		return nil
	}
	held := map[string]bool{}
	for id, e := range ev.stored {
		if _, gone := ev.replaced[id]; !gone {
			for _, t := range e.TurnIDs {
				held[t] = true
			}
		}
	}
	for _, e := range ev.placed {
		for _, t := range e.TurnIDs {
			held[t] = true
		}
	}
	ids := make([]string, 0, len(ev.replaced))
	for id := range ev.replaced {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := ev.placed[id]
		before := e
		for _, t := range ev.replaced[id].TurnIDs {
			if !held[t] {
				e.TurnIDs = append(e.TurnIDs, t)
				held[t] = true
			}
		}
		if len(e.TurnIDs) == len(before.TurnIDs) {
			continue
		}
		e.Space = sp
		if err := tx.PutEvent(ctx, e); err != nil {
			return fmt.Errorf("event %q: %w", e.ID, err)
		}
		if err := history.Append(ctx, tx, sp, "event", e.ID, "update", "import", before, e, now); err != nil {
			return err
		}
	}
	return nil
}
