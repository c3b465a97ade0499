// Package spacecheck checks the invariants that concurrent writers must
// leave in a stored space, for the tests of the engine, the CLI and the
// server that run many writers at once.
package spacecheck

import (
	"context"
	"fmt"

	"github.com/higmem/higmem/store"
)

// Want says what a space must hold.
type Want struct {
	// Turns is how many turns; negative means any number.
	Turns int
	// Dense asks for Seq 1..n exactly (no deletes happened); otherwise Seq
	// must only be unique.
	Dense bool
	// InEvent asks for every turn to be in at least one event (the
	// default and offline modes place every turn).
	InEvent bool
}

// Check reads space sp from s and reports every broken invariant: the turn
// count, unique (and dense) Seq, events listing turns that are not
// stored, empty events, turns in no event, and event ids used twice.
func Check(ctx context.Context, s store.Reader, sp store.Space, w Want) []error {
	var errs []error
	ts, err := s.ListTurns(ctx, sp, store.TurnQuery{})
	if err != nil {
		return []error{err}
	}
	if w.Turns >= 0 && len(ts) != w.Turns {
		errs = append(errs, fmt.Errorf("%d turns stored, want %d", len(ts), w.Turns))
	}
	ids := make(map[string]bool, len(ts))
	for i, t := range ts {
		switch {
		case w.Dense && t.Seq != int64(i+1):
			errs = append(errs, fmt.Errorf("turn %d (%s) has Seq %d, want %d: Seq not dense", i, t.ID, t.Seq, i+1))
		case i > 0 && t.Seq == ts[i-1].Seq:
			errs = append(errs, fmt.Errorf("turns %s and %s share Seq %d", ts[i-1].ID, t.ID, t.Seq))
		}
		ids[t.ID] = true
	}
	evs, err := s.ListEvents(ctx, sp)
	if err != nil {
		return append(errs, err)
	}
	inEvent := map[string]bool{}
	seen := map[string]bool{}
	for _, e := range evs {
		if seen[e.ID] {
			errs = append(errs, fmt.Errorf("event id %s used twice", e.ID))
		}
		seen[e.ID] = true
		if len(e.TurnIDs) == 0 {
			errs = append(errs, fmt.Errorf("event %s has no turn", e.ID))
		}
		for _, id := range e.TurnIDs {
			if !ids[id] {
				errs = append(errs, fmt.Errorf("event %s lists turn %s, which is not stored", e.ID, id))
			}
			inEvent[id] = true
		}
	}
	if w.InEvent {
		for _, t := range ts {
			if !inEvent[t.ID] {
				errs = append(errs, fmt.Errorf("turn %s (seq %d) is in no event", t.ID, t.Seq))
			}
		}
	}
	return errs
}
