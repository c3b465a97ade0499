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
// find other ids than d's: a newline in any value (the question, an
// event's id, title or summary, a turn's id, date, speaker, text or
// note: it would start a line writeUser did not write), an empty id, a
// turn id with ']' or an event id with ')' (the line's id would end
// early), or an event line that ends at its id once trimmed (no title
// but space, no summary: not read as an event line).
func (d SelectData) shown(system, user string, turnSet map[string]bool) *Shown {
	if strings.IndexByte(d.Question, '\n') >= 0 {
		return nil
	}
	n := len(d.Turns)
	for i := range d.Events {
		n += len(d.Events[i].Turns)
	}
	var turns []string
	if n > 0 {
		turns = make([]string, 0, n)
	}
	var events []string
	for i := range d.Events {
		e := &d.Events[i].Event
		if e.ID == "" || strings.IndexByte(e.ID, ')') >= 0 || hasNewline(e.ID, e.Title, e.Summary) ||
			e.Summary == "" && strings.TrimSpace(e.Title) == "" {
			return nil
		}
		events = append(events, e.ID)
		for j := range d.Events[i].Turns {
			t := &d.Events[i].Turns[j]
			if !plainTurn(t) {
				return nil
			}
			turns = append(turns, t.ID)
		}
	}
	for j := range d.Turns {
		t := &d.Turns[j]
		if !plainTurn(t) {
			return nil
		}
		turns = append(turns, t.ID)
	}
	if turnSet == nil {
		turnSet = make(map[string]bool, len(turns))
		for _, id := range turns {
			turnSet[id] = true
		}
	}
	return &Shown{Turns: turns, Events: events, TurnSet: turnSet, system: system, user: user}
}

// plainTurn reports whether t's line reads as a turn line of t's id.
func plainTurn(t *Turn) bool {
	return t.ID != "" && strings.IndexByte(t.ID, ']') < 0 && !hasNewline(t.ID, t.Date, t.Speaker, t.Text, t.Note)
}

// hasNewline reports whether any of ss holds a newline.
func hasNewline(ss ...string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, '\n') >= 0 {
			return true
		}
	}
	return false
}
