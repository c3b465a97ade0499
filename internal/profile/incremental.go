package profile

import (
	"slices"
	"strconv"
	"strings"
)

// Derivation is a derivation that later turns can extend: a space whose
// turns are appended reads only the new turns (Extend) instead of every
// turn again (Build), with the same result. A Derivation is not safe for
// concurrent use.
type Derivation struct {
	d *deriver
	// n is how many turns it read; last is the last in conversation order.
	n    int
	last Turn
	// applied holds the keys of the statements applied.
	applied map[string]bool
}

// Start derives the profiles of turns and statements as Build does, and
// returns the derivation to extend.
func Start(turns []Turn, stmts []Statement) (*Derivation, []Profile) {
	ts := slices.Clone(turns)
	slices.SortStableFunc(ts, compareTurns)
	d := &deriver{ents: map[string]*entity{}, by: RulesProducer, pos: make(map[string]int, len(ts))}
	for i, t := range ts {
		d.pos[t.ID] = i
		if strings.TrimSpace(t.Speaker) != "" {
			d.entity(t.Speaker, true)
		}
	}
	x := &Derivation{d: d, n: len(ts), applied: make(map[string]bool, len(stmts))}
	if len(ts) > 0 {
		x.last = ts[len(ts)-1]
	}
	for _, s := range stmts {
		x.applied[statementKey(s)] = true
	}
	d.read(ts, d.schedule(stmts))
	return x, d.profiles()
}

// Read reports how many turns the derivation has read.
func (x *Derivation) Read() int { return x.n }

// Extend reads turns that come after every turn read so far (in
// conversation order), with stmts, every statement now (those applied
// before included), and returns the profiles, which Build would return for
// all the turns and stmts. It returns false, changing nothing, when it
// cannot: a turn would come earlier, a new speaker appears (earlier turns
// may name them), a statement applied before is gone or changed, or a new
// statement belongs to a turn read before. The caller then uses Start.
func (x *Derivation) Extend(turns []Turn, stmts []Statement) ([]Profile, bool) {
	ts := slices.Clone(turns)
	slices.SortStableFunc(ts, compareTurns)
	if len(ts) > 0 && x.n > 0 && compareTurns(ts[0], x.last) <= 0 {
		return nil, false
	}
	for _, t := range ts {
		if _, dup := x.d.pos[t.ID]; dup {
			return nil, false
		}
		if strings.TrimSpace(t.Speaker) == "" {
			continue
		}
		if e, ok := x.d.ents[Key(t.Speaker)]; !ok || !e.speaker {
			return nil, false
		}
	}
	keys := make(map[string]bool, len(stmts))
	var fresh []Statement
	for _, s := range stmts {
		k := statementKey(s)
		keys[k] = true
		if !x.applied[k] {
			fresh = append(fresh, s)
		}
	}
	for k := range x.applied {
		if !keys[k] {
			return nil, false
		}
	}
	// Where each new statement goes: a new turn, or it cannot extend.
	pos := make(map[string]int, len(x.d.pos)+len(ts))
	for id, i := range x.d.pos {
		pos[id] = i
	}
	for i, t := range ts {
		pos[t.ID] = x.n + i
	}
	probe := &deriver{pos: pos}
	at := probe.schedule(fresh)
	scheduled := 0
	for _, t := range ts {
		scheduled += len(at[t.ID])
	}
	if scheduled != countAll(at) {
		return nil, false
	}
	x.d.pos = pos
	x.d.read(ts, at)
	x.n += len(ts)
	if len(ts) > 0 {
		x.last = ts[len(ts)-1]
	}
	for k := range keys {
		x.applied[k] = true
	}
	return x.d.profiles(), true
}

// countAll counts the statements of a schedule.
func countAll(at map[string][]Statement) int {
	n := 0
	for _, ss := range at {
		n += len(ss)
	}
	return n
}

// statementKey identifies a statement by everything it says.
func statementKey(s Statement) string {
	return strings.Join([]string{s.Entity, s.Attribute, s.Value, strconv.FormatBool(s.Ended), strings.Join(s.Turns, "\x01"), s.Producer}, "\x00")
}
