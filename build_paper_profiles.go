package higmem

import (
	"context"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/parallel"
	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Paper mode's profile layer (Options.PaperProfiles), the reference's way:
// when the main event a turn joins is not the previous turn's, one
// profile_decide call on the previous event names the people whose profile
// it should update, then one profile_update call per person rewrites their
// summary and states attribute values. What the calls state is stored as
// profile records with the turn's batch.
//
// The previous turn's event is its newest (lastTurnEvent): the reference
// keeps the id of the last main event; higmem derives it from what is
// stored, so that a state loaded again from the store (another writer's
// commit, a restart) takes the same one.

// lastTurnEvent returns the newest event (highest number) of the space's
// last turn, and false when it has none. Caller holds st.mu.
func (st *spaceState) lastTurnEvent() (store.Event, bool) {
	if len(st.turns) == 0 {
		return store.Event{}, false
	}
	var best string
	for _, id := range st.eventsOf[st.turns[len(st.turns)-1].ID] {
		if best == "" || rules.EventNumber(id) >= rules.EventNumber(best) {
			best = id
		}
	}
	return st.event(best)
}

// Caps of the paper profile step.
const (
	// paperProfilePeople caps the people one decision lists.
	paperProfilePeople = 8
	// paperProfileTurns caps the event turns an update shows (the latest).
	paperProfileTurns = 24
)

// paperProfiles runs the profile step on event old (the previous turn's
// main event, as the state holds it) and adds what it states to b. Caller
// holds no lock.
func (m *Memory) paperProfiles(ctx context.Context, rec *recorder, b *batch, old store.Event) error {
	st := b.st
	st.mu.RLock()
	ps := st.profiles()
	var turns []store.Turn
	for _, id := range old.TurnIDs {
		if t, ok := st.turn(id); ok {
			turns = append(turns, t)
		}
	}
	st.mu.RUnlock()
	if len(turns) > paperProfileTurns {
		turns = turns[len(turns)-paperProfileTurns:]
	}
	var people []string
	for _, e := range old.Entities {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(people, e) && len(people) < paperProfilePeople {
			people = append(people, e)
		}
	}
	if len(people) == 0 || len(turns) == 0 {
		return nil
	}
	ev := rules.PromptEvent(old)
	var dec prompt.ProfileDecideReply
	err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.ProfileDecide, prompt.ProfileDecideData{Event: ev, Entities: people}, &dec)
	if fallible(ctx, err) {
		rec.note("event %s: profile decision reply unusable, no profile updated: %v", old.ID, err)
		return nil
	}
	if err != nil {
		return err
	}
	var chosen []string
	for _, d := range dec.UpdateDecisions {
		if !d.ShouldUpdate {
			continue
		}
		for _, p := range people {
			if profile.Key(p) == profile.Key(d.EntityName) && !slices.Contains(chosen, p) {
				chosen = append(chosen, p)
			}
		}
	}
	shown := promptTurns(turns)
	recs := make([][]store.ProfileRecord, len(chosen))
	err = parallel.Run(ctx, m.opts.Concurrency, len(chosen), func(ctx context.Context, i int) error {
		name := chosen[i]
		kp, summary := profilerec.Known(ps, name)
		var r prompt.ProfileUpdateReply
		err := m.callModel(ctx, rec, llm.RoleMemory, 0, prompt.ProfileUpdate,
			prompt.ProfileUpdateData{Person: kp, Summary: summary, Event: ev, Turns: shown}, &r)
		if fallible(ctx, err) {
			rec.note("event %s: profile update of %s unusable, profile kept: %v", old.ID, name, err)
			return nil
		}
		if err != nil {
			return err
		}
		recs[i] = profilerec.FromUpdate(name, r, turns, b.turnAt(turns), paperProducer, b.now)
		return nil
	})
	if err != nil {
		return err
	}
	for _, rs := range recs {
		b.profiles = append(b.profiles, rs...)
	}
	return nil
}

// turnAt returns a lookup of the turns ts and the batch's turns by id.
func (b *batch) turnAt(ts []store.Turn) func(id string) (store.Turn, bool) {
	return func(id string) (store.Turn, bool) {
		for _, set := range [][]store.Turn{ts, b.turns} {
			if i := slices.IndexFunc(set, func(t store.Turn) bool { return t.ID == id }); i >= 0 {
				return set[i], true
			}
		}
		return store.Turn{}, false
	}
}
