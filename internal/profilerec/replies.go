package profilerec

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/store"
)

// FromPeople turns the people of a build reply into profile records made
// by producer at now. Facts citing no turn at finds are dropped (the prompt
// showed only the batch's turns).
func FromPeople(facts []prompt.PersonFact, at func(id string) (store.Turn, bool), producer string, now time.Time) []store.ProfileRecord {
	var out []store.ProfileRecord
	for _, f := range facts {
		var ids []string
		for _, id := range f.TurnIDs {
			if _, ok := at(id); ok {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		out = append(out, Record(f.Entity, f.Attribute, f.Value, f.Ended, ids, at, producer, now))
	}
	return out
}

// citeRE finds a citation "[turn id]" in a summary.
var citeRE = regexp.MustCompile(`\[([^\]\s][^\]]*)\]`)

// FromUpdate turns a profile_update reply about name into records: one
// per fact about name, and the summary, citing the turns its text names
// (all the turns shown when it names none).
func FromUpdate(name string, r prompt.ProfileUpdateReply, shown []store.Turn, at func(id string) (store.Turn, bool), producer string, now time.Time) []store.ProfileRecord {
	var out []store.ProfileRecord
	for _, f := range r.Facts {
		if profile.Key(f.Entity) != profile.Key(name) {
			continue // about someone else: their own update says it
		}
		out = append(out, Record(name, f.Attribute, f.Value, f.Ended, f.TurnIDs, at, producer, now))
	}
	var cited []string
	for _, m := range citeRE.FindAllStringSubmatch(r.Summary, -1) {
		for _, id := range strings.Split(m[1], ",") {
			id = strings.TrimSpace(id)
			if _, ok := at(id); ok && !slices.Contains(cited, id) {
				cited = append(cited, id)
			}
		}
	}
	if len(cited) == 0 {
		for _, t := range shown {
			cited = append(cited, t.ID)
		}
	}
	return append(out, Record(name, store.ProfileSummary, r.Summary, false, cited, at, producer, now))
}

// KnownFactsShown caps the current values a prompt shows of one person.
const KnownFactsShown = 12

// Known returns what the profiles ps say of entity now, as a prompt shows
// it, and its summary ("" when none).
func Known(ps []profile.Profile, entity string) (prompt.KnownPerson, string) {
	kp := prompt.KnownPerson{Name: entity}
	p, ok := profile.Find(ps, entity)
	if !ok {
		return kp, ""
	}
	for _, a := range p.Attributes {
		for _, v := range a.Current() {
			if len(kp.Facts) < KnownFactsShown {
				kp.Facts = append(kp.Facts, a.Label()+": "+v.Value)
			}
		}
	}
	summary := ""
	if p.Summary != nil {
		summary = p.Summary.Text
	}
	return kp, summary
}
