package profile

import (
	"slices"
	"strings"
	"unicode"
)

// SummaryAttribute is the attribute of a Statement that carries a model's
// narrative of the person (Profile.Summary) rather than a value.
const SummaryAttribute = "summary"

// Statement is what a model stated about a person: one value of one
// attribute with the turns that state it (a stored profile record).
//
// How it merges with the rules' reading: a statement enters the history of
// its attribute at its earliest evidence turn (an Ended one, at its latest),
// like a rule's reading of that turn. A value equal to one already known
// (case, a "(kind)" suffix and a leading article aside) is the same value
// and gains the evidence and the producer; a new value of a single-valued
// attribute (home, job, partner, ...) closes the current one; an Ended
// statement closes the value it names. At one turn the rules' reading is
// applied first and the model's statements second; where the two read the
// same turn differently (another value of a single-valued attribute, or
// "ended" for a value the rules read as stated by that turn), the rules'
// reading holds and the model's value is kept, closed by that turn.
// Attributes a model names with its own key (not one the rules know) hold
// several values at once and close only by Ended.
type Statement struct {
	// Entity is the person, as named in the conversation; a speaker's
	// first name finds the speaker.
	Entity string
	// Attribute is the label: "home", "favorite book", a model's own
	// lower-case key ("hobby"), or SummaryAttribute.
	Attribute string
	// Value is the value as stated, or the summary's text.
	Value string
	// Ended says the turns state that the value no longer holds.
	Ended bool
	// Turns are the evidence turn ids.
	Turns []string
	// Producer names the model (and prompt version).
	Producer string
}

// Known lists the attribute names the rules know.
var Known = []string{Home, Hometown, Job, Employer, Pet, Partner, Relationship, Favorite, Plan, Relation}

// synonyms maps other names a model may give an attribute to the known
// names.
var synonyms = map[string]string{
	"city": Home, "home city": Home, "current city": Home, "residence": Home, "location": Home, "lives in": Home,
	"address": Home, "living in": Home,
	"origin": Hometown, "from": Hometown, "birthplace": Hometown, "home town": Hometown, "grew up in": Hometown,
	"occupation": Job, "profession": Job, "job title": Job, "work": Job, "role": Job, "career": Job,
	"company": Employer, "workplace": Employer, "works at": Employer, "employed by": Employer,
	"pets": Pet, "animal": Pet,
	"spouse": Partner, "boyfriend": Partner, "girlfriend": Partner, "husband": Partner, "wife": Partner,
	"fiance": Partner, "fiancee": Partner, "significant other": Partner,
	"relationship status": Relationship, "marital status": Relationship, "status": Relationship,
	"plans": Plan, "trip": Plan, "travel plan": Plan, "travel plans": Plan,
	"relationship to": Relation, "relative": Relation,
}

// Caps of a model's own attribute key.
const (
	maxKeyWords = 3
	maxKeyBytes = 32
)

// NormalizeLabel returns the label under which a model's attribute name is
// kept: a known attribute (synonyms mapped: "occupation" is "job",
// "favourite food" is "favorite food"), or the model's own key lower-cased
// with its words joined by single spaces. ok is false for a name that is
// no key: empty, more than three words or 32 bytes, or with characters
// other than letters, digits, spaces, '_' and '-'.
func NormalizeLabel(raw string) (string, bool) {
	s := strings.ToLower(strings.TrimSpace(raw))
	s = strings.NewReplacer("_", " ", "-", " ", "favourite", "favorite").Replace(s)
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ' ' {
			return "", false
		}
	}
	ws := strings.Fields(s)
	s = strings.Join(ws, " ")
	if len(ws) == 0 || len(ws) > maxKeyWords || len(s) > maxKeyBytes {
		return "", false
	}
	if n, ok := synonyms[s]; ok {
		return n, true
	}
	if ws[0] == Favorite {
		if len(ws) == 1 {
			return "", false // a favourite of what?
		}
		key := strings.Join(ws[1:], " ")
		if strings.HasSuffix(key, "s") && !strings.HasSuffix(key, "ss") && len(key) > 3 {
			key = strings.TrimSuffix(key, "s") // as the rules key "favorite books"
		}
		return Favorite + " " + key, true
	}
	return s, true
}

// splitLabel returns the attribute name and key of a normalised label.
func splitLabel(label string) (name, key string) {
	if k, ok := strings.CutPrefix(label, Favorite+" "); ok {
		return Favorite, k
	}
	return label, ""
}

// known reports whether name is an attribute the rules know.
func known(name string) bool { return slices.Contains(Known, name) }

// valueKey is how statement values are matched with known ones: lower
// case, without a "(kind)" suffix or a leading article, words joined by
// single spaces.
func valueKey(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if i := strings.Index(v, " ("); i > 0 && strings.HasSuffix(v, ")") {
		v = v[:i]
	}
	ws := strings.Fields(v)
	if len(ws) > 1 && (ws[0] == "the" || ws[0] == "a" || ws[0] == "an") {
		ws = ws[1:]
	}
	return strings.Join(ws, " ")
}

// schedule returns the statements to apply at each turn id, each with only
// the evidence turns that exist (those in d.pos), in conversation order.
// Statements citing no existing turn are dropped.
func (d *deriver) schedule(stmts []Statement) map[string][]Statement {
	if len(stmts) == 0 {
		return nil
	}
	at := map[string][]Statement{}
	for _, s := range stmts {
		var ev []string
		for _, id := range s.Turns {
			if _, ok := d.pos[id]; ok && !slices.Contains(ev, id) {
				ev = append(ev, id)
			}
		}
		if len(ev) == 0 || strings.TrimSpace(s.Entity) == "" {
			continue
		}
		slices.SortFunc(ev, func(a, b string) int { return d.pos[a] - d.pos[b] })
		s.Turns = ev
		when := ev[0]
		if s.Ended || s.Attribute == SummaryAttribute {
			when = ev[len(ev)-1]
		}
		at[when] = append(at[when], s)
	}
	return at
}

// resolve returns the entity a statement names: a known one by name, else
// the one speaker whose first name it is, else a new person.
func (d *deriver) resolve(name string) *entity {
	k := Key(name)
	if e, ok := d.ents[k]; ok {
		return e
	}
	var first *entity
	n := 0
	for ek, e := range d.ents {
		if f, _, ok := strings.Cut(ek, " "); ok && f == k && e.speaker {
			first = e
			n++
		}
	}
	if n == 1 {
		return first
	}
	return d.entity(name, false)
}

// state applies statement s at turn t (the turn schedule chose).
func (d *deriver) state(s Statement, t Turn) {
	d.by = s.Producer
	if d.by == "" {
		d.by = "model"
	}
	e := d.resolve(s.Entity)
	value := strings.TrimSpace(s.Value)
	if value == "" {
		return
	}
	if s.Attribute == SummaryAttribute {
		e.summary = &Summary{Text: value, Evidence: s.Turns, Producer: d.by}
		return
	}
	label, ok := NormalizeLabel(s.Attribute)
	if !ok {
		return
	}
	name, key := splitLabel(label)
	// The same value as one known (the rules may write "Max (dog)" for a
	// model's "Max") is that value.
	a := e.attr(name, key)
	vk := valueKey(value)
	for i := len(a.Values) - 1; i >= 0; i-- {
		if valueKey(a.Values[i].Value) == vk {
			value = a.Values[i].Value
			break
		}
	}
	// The rules' reading of this very turn holds.
	for _, v := range a.Values {
		if !v.Current() || v.Evidence[0] != t.ID || !slices.Contains(v.Producers, RulesProducer) {
			continue
		}
		if s.Ended && v.Value == value {
			return // the rules read the turn as stating it
		}
		if !s.Ended && !multi[name] && known(name) && !same(v.Value, value) {
			nv := Value{Value: value, Evidence: s.Turns, ValidFrom: t.OccurredAt, RecordedFrom: t.RecordedAt, Producers: []string{d.by}}
			closeValue(&nv, t, RulesProducer)
			a.Values = append(a.Values, nv)
			return
		}
	}
	if s.Ended {
		e.past(name, key, value, t)
		return
	}
	if !known(name) {
		// A model's own key: values add up; only Ended closes them.
		e.setMulti(name, key, value, t)
	} else {
		// As the rules do, a pet's old name after a rename is a memory,
		// not the pet again.
		e.set(name, key, value, t, name != Pet)
	}
	// The other evidence turns back the same value.
	for i := range a.Values {
		v := &a.Values[i]
		if v.Current() && v.Value == value {
			for _, id := range s.Turns[1:] {
				if !slices.Contains(v.Evidence, id) {
					v.Evidence = append(v.Evidence, id)
				}
			}
		}
	}
}

// setMulti is set for an attribute that holds several values at once.
func (e *entity) setMulti(name, key, value string, t Turn) {
	a := e.attr(name, key)
	for i := range a.Values {
		if v := &a.Values[i]; v.Current() && same(v.Value, value) {
			if !slices.Contains(v.Evidence, t.ID) {
				v.Evidence = append(v.Evidence, t.ID)
			}
			v.addProducer(e.d.by)
			return
		}
	}
	a.Values = append(a.Values, Value{Value: value, Evidence: []string{t.ID}, ValidFrom: t.OccurredAt, RecordedFrom: t.RecordedAt,
		Producers: []string{e.d.by}})
}
