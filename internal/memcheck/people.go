package memcheck

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/textnorm"
)

// What a model states about people (prompt.PersonFact) must be about a
// person the prompt showed, under an attribute the engine can keep, with a
// value that says something, backed by turns the prompt showed.

// Caps of the facts about people.
const (
	// valueChars caps a fact's value: values are short ("Lisbon").
	valueChars = 80
	// peoplePerTurn caps the facts of a reply per new turn shown.
	peoplePerTurn = 3
)

var (
	// speakerRE finds the speaker of a turn line.
	speakerRE = regexp.MustCompile(`^\[[^\]]+\] [^|]*\| ([^:]+): (.*)$`)
	// listedRE finds the people a prompt lists: "People in the event: A,
	// B", "- Name: home: Porto" (what memory knows), "what memory knows
	// about Name from".
	listedRE = regexp.MustCompile(`^(?:People in the event: (.+)|- ([^:]+): .+|Update what memory knows about (.+) from an event.*)$`)
)

// knownHeader starts the block of what memory knows about people (the
// prompt package's people_known template); its "- Name: facts" lines are
// data.
const knownHeader = "What memory knows now about"

// peopleData reports whether a prompt line is data about people rather than
// an instruction: the known block's header, a person's known values or
// current summary, the people listed for a decision.
func peopleData(line string) bool {
	for _, p := range []string{knownHeader, "Known now: ", "People in the event: ", "Current profile of "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// addNames adds to names the words of line that may name a person.
func addNames(names map[string]bool, line string) {
	add := func(s string, capitalisedOnly bool) {
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '-' }) {
			w = strings.Trim(w, "'-")
			r := []rune(w)
			if len(r) < 2 || capitalisedOnly && !unicode.IsUpper(r[0]) {
				continue
			}
			if k := strings.ToLower(w); !textnorm.IsStop(k) && !metaWords[k] {
				names[k] = true
			}
		}
	}
	if m := speakerRE.FindStringSubmatch(line); m != nil {
		add(m[1], false)
		add(m[2], true)
		return
	}
	if m := listedRE.FindStringSubmatch(line); m != nil {
		add(m[1]+" "+m[2]+" "+m[3], false)
	}
}

// named reports whether every word of entity may name a person the prompt
// showed.
func (s Shown) named(entity string) bool {
	ws := strings.FieldsFunc(strings.ToLower(entity), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' && r != '-' })
	if len(ws) == 0 || len(ws) > 4 {
		return false
	}
	for _, w := range ws {
		if !s.names[strings.Trim(w, "'-")] {
			return false
		}
	}
	return true
}

// people cleans facts about people: an entity the prompt named (a speaker,
// a capitalised name in a turn, a person it listed), an attribute
// profile.NormalizeLabel keeps (normalised in place), a value that is not
// junk (cut to valueChars), at least one turn id the prompt showed (others
// dropped), once each, at most max.
func (res *result) people(s Shown, field string, in []prompt.PersonFact, max int) []prompt.PersonFact {
	out := make([]prompt.PersonFact, 0, len(in))
	seen := map[string]bool{}
	for i, f := range in {
		fi := fmt.Sprintf("%s[%d]", field, i)
		f.Entity = strings.TrimSpace(f.Entity)
		if !s.named(f.Entity) {
			res.fix(UnknownID, fi+".entity", f.Entity)
			continue
		}
		label, ok := profile.NormalizeLabel(f.Attribute)
		if !ok {
			res.fix(JunkText, fi+".attribute", f.Attribute)
			continue
		}
		f.Attribute = label
		v := strings.TrimSpace(f.Value)
		switch {
		case v == "":
			res.fix(Empty, fi+".value", "")
			continue
		case !hasLetter(v) || jsonish(v) || vacuous(v) || s.copied(v):
			res.fix(JunkText, fi+".value", f.Value)
			continue
		}
		if c := cut(v, valueChars); c != v {
			res.fix(OverCap, fi+".value", v)
			v = c
		}
		f.Value = v
		f.TurnIDs = res.ids(fi+".turn_ids", f.TurnIDs, s.turns, 0)
		if len(f.TurnIDs) == 0 {
			res.fix(Empty, fi+".turn_ids", "")
			continue
		}
		key := strings.ToLower(f.Entity + "\x00" + f.Attribute + "\x00" + f.Value + "\x00" + fmt.Sprint(f.Ended))
		if seen[key] {
			res.fix(Duplicate, fi, f.Value)
			continue
		}
		if len(out) == max {
			res.fix(OverCap, fi, f.Value)
			continue
		}
		seen[key] = true
		out = append(out, f)
	}
	return out
}

// ProfileDecide checks a profile_decide reply: decisions only about the
// people the prompt listed, once each.
func ProfileDecide(r *prompt.ProfileDecideReply, s Shown, caps Caps) Result {
	var res result
	kept := r.UpdateDecisions[:0]
	seen := map[string]bool{}
	for i, d := range r.UpdateDecisions {
		f := fmt.Sprintf("update_decisions[%d].entity_name", i)
		d.EntityName = strings.TrimSpace(d.EntityName)
		k := strings.ToLower(d.EntityName)
		switch {
		case !s.named(d.EntityName):
			res.fix(UnknownID, f, d.EntityName)
		case seen[k]:
			res.fix(Duplicate, f, d.EntityName)
		default:
			seen[k] = true
			kept = append(kept, d)
		}
	}
	r.UpdateDecisions = kept
	return res.Result
}

// ProfileUpdate checks a profile_update reply: a real summary (else
// rejected) and clean facts (see people), at most peoplePerTurn per turn
// shown.
func ProfileUpdate(r *prompt.ProfileUpdateReply, s Shown, caps Caps) Result {
	c := caps.withDefaults()
	var res result
	r.Summary = res.summary(s, r.Summary, c.TextChars)
	r.Facts = res.people(s, "facts", r.Facts, peoplePerTurn*max(1, len(s.Turns)))
	return res.Result
}
