// Package profile derives what a conversation says about each person from
// the text of its turns, by rules and without a model: where they live,
// their job and employer, their pets, their partner, their favourites and
// their plans. Every value points to the turns that state it and carries the
// time it became and stopped being true, on both clocks of a turn (when it
// was said and when it was stored). A newer contradicting statement closes
// the older value; it is never forgotten, so "true at time T" can still be
// answered.
//
// The rules read first-person statements ("I moved to Lisbon", "my dog
// Max") of the speaker, and a few statements about the people a speaker
// names by relation ("my sister Ana lives in Porto"). They prefer missing a
// fact to inventing one: questions, hypotheticals and negations are skipped,
// and places, companies and names must be capitalised.
//
// Build merges into the same profiles what a model stated (Statement, from
// the store's profile records): a stated value enters the history at the
// turn that states it, exactly as a rule's reading does, so that a newer
// contradicting value closes the older one whichever source either came
// from. Every value lists its producers ("rules", a model's producer).
//
// Derive and Build are pure functions of their input: deleting a turn (and
// the statements citing it) and deriving again forgets what only that turn
// said.
package profile

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/temporal"
)

// Turn is what the rules read of one turn.
type Turn struct {
	ID      string
	Seq     int64
	Speaker string
	Text    string
	// OccurredAt is when the turn was said (zero when unknown);
	// RecordedAt is when it was stored.
	OccurredAt, RecordedAt time.Time
}

// Attribute names.
const (
	// Home is the city or place the person lives in.
	Home = "home"
	// Hometown is where the person is from or grew up.
	Hometown = "hometown"
	// Job is the person's occupation ("nurse").
	Job = "job"
	// Employer is the organisation the person works at.
	Employer = "employer"
	// Pet holds one value per pet: "Max (dog)".
	Pet = "pet"
	// Partner is the person's partner, by name.
	Partner = "partner"
	// Relationship is the person's relationship status: dating, engaged,
	// married, single, divorced.
	Relationship = "relationship"
	// Favorite holds the person's favourites, one attribute per key
	// ("book", "food").
	Favorite = "favorite"
	// Plan holds the person's stated plans: "trip to Japan", "move to
	// Lisbon".
	Plan = "plan"
	// Relation is how a person named by a speaker relates to them:
	// "sister of Caroline".
	Relation = "relation"
)

// multi lists the attributes that hold several current values at once.
var multi = map[string]bool{Pet: true, Plan: true, Relation: true}

// Value is one value of an attribute over the time it held.
type Value struct {
	// Value is the value as stated ("Lisbon", "Max (dog)").
	Value string `json:"value"`
	// Evidence lists the ids of the turns that state the value, in
	// conversation order; the first one introduced it.
	Evidence []string `json:"evidence"`
	// ClosedBy is the id of the turn that ended the value (a move, a
	// breakup, a rename), empty while it holds.
	ClosedBy string `json:"closed_by,omitempty"`
	// ClosedByProducer names what read the closing turn so: RulesProducer
	// or a model's producer.
	ClosedByProducer string `json:"closed_by_producer,omitempty"`
	// ValidFrom and ValidTo bound the value in conversation time: when the
	// first evidence turn and the closing turn were said. Zero ValidFrom
	// is unknown (or a value only reported as past); zero ValidTo with an
	// empty ClosedBy means it still holds.
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
	// RecordedFrom and RecordedTo are the same bounds on the stored-at
	// clock: when the first evidence and the closing turn were stored.
	RecordedFrom time.Time `json:"recorded_from,omitzero"`
	RecordedTo   time.Time `json:"recorded_to,omitzero"`
	// Producers names what stated the value: "rules" (RulesProducer) for
	// the offline rules, a model's producer string for a Statement;
	// sorted, each once.
	Producers []string `json:"producers"`
}

// RulesProducer is the producer of the values the rules read.
const RulesProducer = "rules"

// Current reports whether the value still holds.
func (v Value) Current() bool { return v.ClosedBy == "" }

// ValidAt reports whether the value held at t in conversation time. A turn
// said without a known time counts at its stored-at time.
func (v Value) ValidAt(t time.Time) bool {
	from, to := v.ValidFrom, v.ValidTo
	if from.IsZero() {
		from = v.RecordedFrom
	}
	if v.ClosedBy != "" && to.IsZero() {
		to = v.RecordedTo
	}
	if !from.IsZero() && from.After(t) {
		return false
	}
	return v.ClosedBy == "" || to.After(t)
}

// RecordedAt reports whether the value held in memory as it stood at t on
// the stored-at clock.
func (v Value) RecordedAt(t time.Time) bool {
	if v.RecordedFrom.After(t) {
		return false
	}
	return v.ClosedBy == "" || v.RecordedTo.After(t)
}

// Attribute is one attribute of an entity with the history of its values.
type Attribute struct {
	// Name is one of the attribute names (Home, Job, ...).
	Name string `json:"name"`
	// Key qualifies a Favorite ("book"); empty otherwise.
	Key string `json:"key,omitempty"`
	// Values is the history, in the order values were stated; the
	// current ones have Current() true.
	Values []Value `json:"values"`
}

// Label returns the attribute's name with its key: "favorite book".
func (a Attribute) Label() string {
	if a.Key == "" {
		return a.Name
	}
	return a.Name + " " + a.Key
}

// Current returns the values that still hold.
func (a Attribute) Current() []Value {
	var out []Value
	for _, v := range a.Values {
		if v.Current() {
			out = append(out, v)
		}
	}
	return out
}

// ValidAt returns the values that held at t in conversation time.
func (a Attribute) ValidAt(t time.Time) []Value {
	var out []Value
	for _, v := range a.Values {
		if v.ValidAt(t) {
			out = append(out, v)
		}
	}
	return out
}

// Profile is what the turns say about one entity.
type Profile struct {
	// Entity is the person's name as first seen (a speaker's name, or a
	// name a speaker used).
	Entity string `json:"entity"`
	// Speaker is true when the entity speaks in the conversation.
	Speaker bool `json:"speaker"`
	// Attributes are sorted by label.
	Attributes []Attribute `json:"attributes"`
	// Summary, when a model wrote one (paper mode's profile layer), is a
	// narrative of the person citing turns as [turn id].
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is a model's narrative of a person.
type Summary struct {
	Text string `json:"text"`
	// Evidence lists the turns the text cites.
	Evidence []string `json:"evidence"`
	Producer string   `json:"producer,omitempty"`
}

// Attribute returns the attribute with the given label ("home",
// "favorite book") and whether the profile has it.
func (p *Profile) Attribute(label string) (Attribute, bool) {
	for _, a := range p.Attributes {
		if a.Label() == label {
			return a, true
		}
	}
	return Attribute{}, false
}

// Key returns the lookup key of an entity name: trimmed and lower-cased.
func Key(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// Derive returns the profiles the turns support, sorted by entity (speakers
// first). Turns are read in conversation order: by OccurredAt (unknown
// times last), then Seq. Every speaker gets a profile, even an empty one.
func Derive(turns []Turn) []Profile { return Build(turns, nil) }

// Build returns the profiles the turns support by rules merged with what
// the statements say (see Statement). It is Derive when stmts is empty.
func Build(turns []Turn, stmts []Statement) []Profile {
	_, ps := Start(turns, stmts)
	return ps
}

// compareTurns orders turns as the rules read them: by OccurredAt (unknown
// times last), then Seq.
func compareTurns(a, b Turn) int {
	return temporal.Compare(temporal.Key{At: a.OccurredAt, Seq: int(a.Seq)}, temporal.Key{At: b.OccurredAt, Seq: int(b.Seq)})
}

// read applies the rules, then the statements scheduled at it, to each of
// ts (in conversation order).
func (d *deriver) read(ts []Turn, at map[string][]Statement) {
	for _, t := range ts {
		// The rules' reading of a turn comes first (it sees what memory
		// held before the turn, whatever a model said of the turn), the
		// model's statements second; where they disagree about the turn,
		// the rules' reading holds (see Statement).
		d.by = RulesProducer
		d.turn(t)
		for _, s := range at[t.ID] {
			d.state(s, t)
		}
	}
}

// entity is a profile under construction.
type entity struct {
	d       *deriver
	name    string
	speaker bool
	attrs   map[string]*Attribute // by label
	summary *Summary
}

type deriver struct {
	ents map[string]*entity
	// by is the producer of what is being applied: RulesProducer, or a
	// statement's producer.
	by string
	// pos orders turn ids in conversation order (see schedule).
	pos map[string]int
}

func (d *deriver) entity(name string, speaker bool) *entity {
	k := Key(name)
	e := d.ents[k]
	if e == nil {
		e = &entity{d: d, name: strings.TrimSpace(name), attrs: map[string]*Attribute{}}
		d.ents[k] = e
	}
	e.speaker = e.speaker || speaker
	return e
}

func (d *deriver) profiles() []Profile {
	out := make([]Profile, 0, len(d.ents))
	for _, e := range d.ents {
		// Deep copies: a Derivation goes on changing its entities.
		p := Profile{Entity: e.name, Speaker: e.speaker, Attributes: []Attribute{}}
		if e.summary != nil {
			s := *e.summary
			s.Evidence = slices.Clone(s.Evidence)
			p.Summary = &s
		}
		for _, a := range e.attrs {
			c := Attribute{Name: a.Name, Key: a.Key, Values: make([]Value, len(a.Values))}
			for i, v := range a.Values {
				v.Evidence = slices.Clone(v.Evidence)
				// Statements add evidence out of turn order.
				slices.SortStableFunc(v.Evidence, func(x, y string) int { return d.pos[x] - d.pos[y] })
				v.Producers = slices.Clone(v.Producers)
				c.Values[i] = v
			}
			p.Attributes = append(p.Attributes, c)
		}
		slices.SortFunc(p.Attributes, func(a, b Attribute) int { return cmp.Compare(a.Label(), b.Label()) })
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Profile) int {
		if a.Speaker != b.Speaker {
			if a.Speaker {
				return -1
			}
			return 1
		}
		return cmp.Compare(Key(a.Entity), Key(b.Entity))
	})
	return out
}

// attr returns the entity's attribute, creating it.
func (e *entity) attr(name, key string) *Attribute {
	a := Attribute{Name: name, Key: key}
	l := a.Label()
	p := e.attrs[l]
	if p == nil {
		p = &a
		e.attrs[l] = p
	}
	return p
}

// same compares values loosely: case and surrounding space do not matter.
func same(a, b string) bool { return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) }

// set states value for the attribute at turn t: a current equal value gets
// t as more evidence; otherwise the value opens, and for a single-valued
// attribute every other current value closes at t. Without reopen, a value
// that held once and was closed is not opened again (a pet's old name
// mentioned after a rename is a memory, not a new pet).
func (e *entity) set(name, key, value string, t Turn, reopen bool) {
	a := e.attr(name, key)
	for i := range a.Values {
		v := &a.Values[i]
		if !same(v.Value, value) {
			continue
		}
		if v.Current() {
			if !slices.Contains(v.Evidence, t.ID) {
				v.Evidence = append(v.Evidence, t.ID)
			}
			if e.d.by == RulesProducer && !slices.Contains(v.Producers, RulesProducer) {
				v.Value = value // the rules' wording of a model's value
			}
			v.addProducer(e.d.by)
			return
		}
		if !reopen {
			return
		}
	}
	if !multi[name] {
		for i := range a.Values {
			if a.Values[i].Current() {
				closeValue(&a.Values[i], t, e.d.by)
			}
		}
	}
	a.Values = append(a.Values, Value{Value: value, Evidence: []string{t.ID}, ValidFrom: t.OccurredAt, RecordedFrom: t.RecordedAt,
		Producers: []string{e.d.by}})
}

// addProducer records that p states the value too.
func (v *Value) addProducer(p string) {
	if i, found := slices.BinarySearch(v.Producers, p); !found {
		v.Producers = slices.Insert(v.Producers, i, p)
	}
}

// close ends the current values of the attribute that match accepts (every
// current value when match is nil) at turn t, and reports how many closed.
func (e *entity) close(name, key string, t Turn, match func(string) bool) int {
	a, ok := e.attrs[Attribute{Name: name, Key: key}.Label()]
	if !ok {
		return 0
	}
	n := 0
	for i := range a.Values {
		v := &a.Values[i]
		if v.Current() && (match == nil || match(v.Value)) {
			closeValue(v, t, e.d.by)
			n++
		}
	}
	return n
}

// past records a value reported as no longer holding ("I used to live in
// Porto"): a current equal value closes at t; otherwise a value known only
// as past is added, closed at t, with no start.
func (e *entity) past(name, key, value string, t Turn) {
	if e.close(name, key, t, func(v string) bool { return same(v, value) }) > 0 {
		return
	}
	a := e.attr(name, key)
	for i := range a.Values {
		if v := &a.Values[i]; !v.Current() && same(v.Value, value) {
			v.addProducer(e.d.by)
			return
		}
	}
	v := Value{Value: value, Evidence: []string{t.ID}, Producers: []string{e.d.by}}
	closeValue(&v, t, e.d.by)
	a.Values = append(a.Values, v)
}

// current returns the current values of an attribute.
func (e *entity) current(name, key string) []string {
	a, ok := e.attrs[Attribute{Name: name, Key: key}.Label()]
	if !ok {
		return nil
	}
	var out []string
	for _, v := range a.Values {
		if v.Current() {
			out = append(out, v.Value)
		}
	}
	return out
}

func closeValue(v *Value, t Turn, by string) {
	v.ClosedBy = t.ID
	v.ClosedByProducer = by
	v.ValidTo = t.OccurredAt
	v.RecordedTo = t.RecordedAt
}
