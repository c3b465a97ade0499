package llmfake

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/profile"
)

// What the scripted fake states about people (build_batch's "people",
// profile_update's "facts"). It reads the turns shown as higmem's offline
// rules do (internal/profile), and adds a few readings the rules leave out
// because the change is implied rather than stated: a new home named by
// "my new flat in York", a job shown by "teaching", a breakup told as "my
// ex Raj", a pet that "lives with" someone else now, a plan that "won"
// over another one that "can wait". These are the fake's own patterns, not
// a model: they make default and paper mode's profile path run end to end
// and deterministically, and prove nothing about what a real model reads.

var (
	newHomeRE = regexp.MustCompile(`\b(?i:my|our) new (?i:flat|apartment|house|place|home|condo)\s+in\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)`)
	teachRE   = regexp.MustCompile(`(?i)\b(?:teaching|my students|my pupils)\b`)
	exRE      = regexp.MustCompile(`\b(?i:my) ex(?:-(?i:boyfriend|girlfriend|husband|wife|partner))?,?\s+([A-Z][\w'-]*)`)
	livesRE   = regexp.MustCompile(`\b([A-Z][\w'-]*) (?:lives|is living|stays|is staying) with (?i:my|our|a|the)\b`)
	wonRE     = regexp.MustCompile(`\b([A-Z][\w'-]*) won\b`)
	waitRE    = regexp.MustCompile(`\b([A-Z][\w'-]*) can wait\b`)
)

// known is what a prompt says memory knows now: entity -> "attribute:
// value" facts.
type known map[string][]string

// knownFacts reads the "- Name: a: b; c: d" lines below "What memory knows
// now about these people:" and the "Known now:" line of profile_update
// (about person).
func knownFacts(user, person string) known {
	k := known{}
	in := false
	for _, l := range strings.Split(user, "\n") {
		switch {
		case strings.HasPrefix(l, "What memory knows now about"):
			in = true
			continue
		case strings.HasPrefix(l, "Known now: ") && person != "":
			k[person] = strings.Split(strings.TrimPrefix(l, "Known now: "), "; ")
			continue
		}
		if !in {
			continue
		}
		name, facts, ok := strings.Cut(strings.TrimPrefix(l, "- "), ": ")
		if !strings.HasPrefix(l, "- ") || !ok {
			in = false
			continue
		}
		k[name] = strings.Split(facts, "; ")
	}
	return k
}

// current returns the values memory knows of entity's attribute.
func (k known) current(entity, attr string) []string {
	var out []string
	for _, f := range k[entity] {
		if a, v, ok := strings.Cut(f, ": "); ok && a == attr {
			out = append(out, v)
		}
	}
	return out
}

// fact is one statement of the fake.
type fact struct {
	entity, attribute, value string
	ended                    bool
	turns                    []string
}

func (f fact) json() map[string]any {
	m := map[string]any{"entity": f.entity, "attribute": f.attribute, "value": f.value, "turn_ids": f.turns}
	if f.ended {
		m["ended"] = true
	}
	return m
}

// peopleFacts returns what the fake states about people from turns ts,
// given what memory knows.
func peopleFacts(ts []line, k known) []fact {
	pts := make([]profile.Turn, len(ts))
	for i, t := range ts {
		pts[i] = profile.Turn{ID: t.id, Seq: int64(i + 1), Speaker: t.speaker, Text: t.text}
	}
	var out []fact
	add := func(f fact) {
		if !slices.ContainsFunc(out, func(g fact) bool {
			return g.entity == f.entity && g.attribute == f.attribute && strings.EqualFold(g.value, f.value) && g.ended == f.ended
		}) {
			out = append(out, f)
		}
	}
	for _, p := range profile.Derive(pts) {
		for _, a := range p.Attributes {
			opened := map[string]bool{} // turns that opened a value of a
			for _, v := range a.Values {
				if !v.ValidFrom.IsZero() || v.Evidence[0] != v.ClosedBy {
					opened[v.Evidence[0]] = true
				}
			}
			for _, v := range a.Values {
				pastOnly := v.ClosedBy != "" && v.Evidence[0] == v.ClosedBy
				if !pastOnly {
					add(fact{p.Entity, a.Label(), v.Value, false, v.Evidence[:1]})
				}
				// Ended by a turn that states no new value: a move out, a
				// breakup, a lost pet.
				if v.ClosedBy != "" && !opened[v.ClosedBy] {
					add(fact{p.Entity, a.Label(), v.Value, true, []string{v.ClosedBy}})
				}
			}
		}
	}
	pets := func(speaker string) []string {
		cur := k.current(speaker, "pet")
		for _, f := range out {
			if f.entity == speaker && f.attribute == "pet" && !f.ended {
				cur = append(cur, f.value)
			}
		}
		return cur
	}
	for _, t := range ts {
		id := []string{t.id}
		if m := newHomeRE.FindStringSubmatch(t.text); m != nil {
			add(fact{t.speaker, "home", m[1], false, id})
		}
		if teachRE.MatchString(t.text) {
			add(fact{t.speaker, "job", "teacher", false, id})
		}
		if m := exRE.FindStringSubmatch(t.text); m != nil {
			add(fact{t.speaker, "partner", m[1], true, id})
		}
		if m := livesRE.FindStringSubmatch(t.text); m != nil {
			for _, pet := range pets(t.speaker) {
				if strings.HasPrefix(pet, m[1]+" (") || pet == m[1] {
					add(fact{t.speaker, "pet", pet, true, id})
				}
			}
		}
		if m := wonRE.FindStringSubmatch(t.text); m != nil && hasTrip(t.speaker, k, out) {
			// "Turkey won": of the trips weighed, this one.
			add(fact{t.speaker, "plan", "trip to " + m[1], false, id})
		}
		if m := waitRE.FindStringSubmatch(t.text); m != nil {
			add(fact{t.speaker, "plan", "trip to " + m[1], true, id})
		}
	}
	return out
}

// hasTrip reports whether speaker plans a trip, as memory knows or as
// facts say.
func hasTrip(speaker string, k known, facts []fact) bool {
	isTrip := func(p string) bool { return strings.HasPrefix(p, "trip to ") }
	return slices.ContainsFunc(k.current(speaker, "plan"), isTrip) ||
		slices.ContainsFunc(facts, func(f fact) bool { return f.entity == speaker && !f.ended && isTrip(f.value) })
}

// peopleJSON renders facts for a reply; never nil.
func peopleJSON(fs []fact) []map[string]any {
	out := []map[string]any{}
	for _, f := range fs {
		out = append(out, f.json())
	}
	return out
}

// profileDecide answers profile_decide: update every person listed whom
// the event's title or summary names.
func (p parsed) profileDecide() map[string]any {
	var names []string
	for _, l := range strings.Split(p.raw, "\n") {
		if s, ok := strings.CutPrefix(l, "People in the event: "); ok {
			names = strings.Split(s, ", ")
		}
	}
	var text string
	for _, evs := range p.events {
		for _, e := range evs {
			text += " " + e.text
		}
	}
	out := []map[string]any{}
	for _, n := range names {
		out = append(out, map[string]any{"entity_name": n, "should_update": strings.Contains(text, n), "reasoning": "named in the event"})
	}
	return map[string]any{"update_decisions": out}
}

var personRE = regexp.MustCompile(`(?m)^Update what memory knows about (.+) from an event`)

// profileUpdate answers profile_update: the facts peopleFacts states about
// the person from the event's turns, and a summary listing them with their
// turns.
func (p parsed) profileUpdate() map[string]any {
	user := p.raw
	person := ""
	if m := personRE.FindStringSubmatch(user); m != nil {
		person = m[1]
	}
	ts := p.turnsIn("Turns of the event")
	var mine []fact
	for _, f := range peopleFacts(ts, knownFacts(user, person)) {
		if f.entity == person {
			mine = append(mine, f)
		}
	}
	var parts []string
	for _, f := range mine {
		verb := "is"
		if f.ended {
			verb = "is no longer"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s [%s]", f.attribute, verb, f.value, f.turns[0]))
	}
	summary := fmt.Sprintf("%s took part in this conversation", person)
	if len(ts) > 0 {
		summary += " [" + ts[0].id + "]"
	}
	if len(parts) > 0 {
		summary = person + ": " + strings.Join(parts, "; ")
	}
	return map[string]any{"summary": summary + ".", "facts": peopleJSON(mine)}
}
