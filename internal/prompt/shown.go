package prompt

import "strings"

// Shown is what a rendered prompt shows, as internal/memcheck reads it
// from the prompt's lines: the ids of its turn lines ("[id] …") and of
// its event lines ("(event id) …"), in order. Render records it for the
// prompts it writes itself (select, direct.go), where it is certain to be
// what a reading of the text finds, so that the check of the reply need
// not read the whole prompt again; see Prompt.Shown.
//
// Its lists and set are shared by every copy of the Prompt: read only.
type Shown struct {
	// Turns are the ids of the turn lines in order, Events those of the
	// event lines (each nil when none).
	Turns, Events []string
	// TurnSet holds every id of Turns.
	TurnSet map[string]bool
	// system and user are the text Shown was recorded for.
	system, user string
}

// Shown returns what Render recorded p shows, or nil: when Render
// recorded nothing (not a select prompt of higmem's own Set, or one whose
// data a line reading could read otherwise: a value with a newline, an
// id with the bracket that closes it), or when p's System or User is not
// the text Render wrote. The lines of System are not part of it: a
// reader checks them itself.
func (p Prompt) Shown() *Shown {
	if s := p.shown; s != nil && s.user == p.User && s.system == p.System {
		return s
	}
	return nil
}

// shown returns the Shown of a select prompt written for d (user and
// system as Render returns them), with turnSet, the set of its turn ids
// when already built (else nil), or nil when a reading of the lines might
// find other ids than d's: a newline in any value (it would start a line
// writeUser did not write: seen as more newlines in user than writeUser
// writes itself), an empty id, a turn id with ']' or an event id with
// ')' (the line's id would end early), or an event line that ends at its
// id once trimmed (no title but space, no summary: not read as an event
// line).
func (d SelectData) shown(system, user string, turnSet map[string]bool) *Shown {
	// writeUser's own newlines: two before and one after the question,
	// four around each event's line plus one after each of its turns,
	// two before the search hits plus one after each, two around the
	// closing instruction, of which Render trims the last.
	lines := 3 + 2 - 1
	n := len(d.Turns)
	for i := range d.Events {
		lines += 4 + len(d.Events[i].Turns)
		n += len(d.Events[i].Turns)
	}
	if len(d.Turns) > 0 {
		lines += 2 + len(d.Turns)
	}
	if strings.Count(user, "\n") != lines {
		return nil
	}
	var turns []string
	if n > 0 {
		turns = make([]string, 0, n)
	}
	var events []string
	if len(d.Events) > 0 {
		events = make([]string, 0, len(d.Events))
	}
	for i := range d.Events {
		e := &d.Events[i].Event
		if !plainID(e.ID, ')') || e.Summary == "" && strings.TrimSpace(e.Title) == "" {
			return nil
		}
		events = append(events, e.ID)
		for j := range d.Events[i].Turns {
			id := d.Events[i].Turns[j].ID
			if !plainID(id, ']') {
				return nil
			}
			turns = append(turns, id)
		}
	}
	for j := range d.Turns {
		id := d.Turns[j].ID
		if !plainID(id, ']') {
			return nil
		}
		turns = append(turns, id)
	}
	if turnSet == nil {
		turnSet = make(map[string]bool, len(turns))
		for _, id := range turns {
			turnSet[id] = true
		}
	}
	return &Shown{Turns: turns, Events: events, TurnSet: turnSet, system: system, user: user}
}

// plainID reports whether id is not empty and does not hold end, the
// byte that closes it on its line.
func plainID(id string, end byte) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] == end {
			return false
		}
	}
	return true
}
