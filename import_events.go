package higmem

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/higmem/higmem/store"
)

// eventImport decides where the events of an import go, so that an import
// never leaves a stored turn in no event: into another space, an event
// whose id is taken gets a fresh one; into the exported space itself (a
// restore), it replaces the stored event, which keeps the stored turns no
// other event holds afterwards (see Import).
type eventImport struct {
	stored   map[string]store.Event // the space's events before the import
	restore  bool                   // the export is of the space imported into
	last     int                    // highest event number stored or imported
	placed   map[string]store.Event // imported events by their id in the space
	replaced map[string]store.Event // stored events an imported one replaced
}

func newEventImport(ctx context.Context, tx store.Tx, sp Space, lines []exportLine) (*eventImport, error) {
	evs, err := tx.ListEvents(ctx, sp)
	if err != nil {
		return nil, err
	}
	ev := &eventImport{stored: make(map[string]store.Event, len(evs)), placed: map[string]store.Event{}, replaced: map[string]store.Event{}}
	for _, e := range evs {
		ev.stored[e.ID] = e
		ev.last = max(ev.last, eventNumber(e.ID))
	}
	for _, l := range lines {
		switch {
		case l.Kind == "header" && l.Space != nil:
			ev.restore = *l.Space == sp
		case l.Kind == "event":
			ev.last = max(ev.last, eventNumber(l.Event.ID))
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
func (ev *eventImport) keepMembers(ctx context.Context, tx store.Tx, sp Space, now time.Time) error {
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
		if err := appendChange(ctx, tx, sp, "event", e.ID, "update", "import", before, e, now); err != nil {
			return err
		}
	}
	return nil
}
