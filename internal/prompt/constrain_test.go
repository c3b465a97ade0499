package prompt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/higmem/higmem/internal/jsonx"
	"github.com/higmem/higmem/llm/llmtest"
)

// narrowing are the keywords a constraint may add to a reply schema.
var narrowing = []string{"enum", "minItems", "maxItems", "minLength", "maxLength"}

// without returns a decoded schema without the keys drop names, at every
// level.
func without(v any, drop func(key string) bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if !drop(k) {
				out[k] = without(val, drop)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = without(val, drop)
		}
		return out
	}
	return v
}

// added reports whether key is one a constraint adds (or extends:
// required).
func added(key string) bool { return slices.Contains(narrowing, key) || key == "required" }

// requiredOf collects every "required" list by its path.
func requiredOf(v any, path string, out map[string][]any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if r, ok := m["required"].([]any); ok {
		out[path] = r
	}
	for k, val := range m {
		requiredOf(val, path+"/"+k, out)
	}
}

// Every constraint only narrows its schema: without the keywords it may
// add, it is the schema itself, and each key the broad schema requires is
// still required. So an instance of the constraint is an instance of the schema,
// and a reply from a server that enforces the constraint never fails
// validation.
func TestConstraintOnlyNarrows(t *testing.T) {
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p, err := Render(c.name, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Constraint) == 0 {
				t.Fatal("no constraint")
			}
			var broad, narrow any
			if err := json.Unmarshal(p.Schema, &broad); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p.Constraint, &narrow); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(without(broad, added), without(narrow, added)) {
				t.Errorf("constraint is not the schema narrowed:\nschema     %s\nconstraint %s", p.Schema, p.Constraint)
			}
			rb, rn := map[string][]any{}, map[string][]any{}
			requiredOf(broad, "", rb)
			requiredOf(narrow, "", rn)
			for path, req := range rb {
				for _, k := range req {
					if !slices.Contains(rn[path], k) {
						t.Errorf("%s: %v required by the schema, not by the constraint", path, k)
					}
				}
			}
			if _, err := jsonx.Validate(json.RawMessage(`{}`), p.Constraint); err == nil && len(rn[""]) > 0 {
				t.Error("jsonx accepts {} for a constraint with required keys")
			}
		})
	}
}

// The ids a constraint admits are exactly those its prompt shows.
func TestConstraintIDs(t *testing.T) {
	at := func(t *testing.T, c json.RawMessage, path ...string) map[string]any {
		t.Helper()
		var s map[string]any
		if err := json.Unmarshal(c, &s); err != nil {
			t.Fatal(err)
		}
		return llmtest.SchemaAt(s, path...)
	}
	enum := func(s map[string]any) []string {
		var out []string
		for _, v := range s["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	render := func(t *testing.T, name string, data any) json.RawMessage {
		t.Helper()
		p, err := Render(name, data)
		if err != nil {
			t.Fatal(err)
		}
		return p.Constraint
	}

	bb := render(t, BuildBatch, BuildBatchData{Candidates: []Event{ev, ev2}, New: []Turn{t1, t2, t3}, AskPeople: true})
	if got := enum(at(t, bb, "turns", "[]", "id")); !slices.Equal(got, []string{"D1:3", "D1:4", "D1:5"}) {
		t.Errorf("build_batch turns[].id %v", got)
	}
	if turns := at(t, bb, "turns"); turns["minItems"] != float64(3) || turns["maxItems"] != float64(3) {
		t.Errorf("build_batch turns: %v..%v items, want exactly 3", turns["minItems"], turns["maxItems"])
	}
	labels := []string{"e1", "e2", "new:1", "new:2"}
	for _, path := range [][]string{{"turns", "[]", "events", "[]"}, {"events", "[]", "id"}} {
		if got := enum(at(t, bb, path...)); !slices.Equal(got, labels) {
			t.Errorf("build_batch %v: %v, want %v", path, got, labels)
		}
	}
	for _, path := range [][]string{{"events", "[]", "new_facts", "[]", "turn_id"}, {"people", "[]", "turn_ids", "[]"}} {
		if got := enum(at(t, bb, path...)); !slices.Equal(got, []string{"D1:3", "D1:4", "D1:5"}) {
			t.Errorf("build_batch %v: %v", path, got)
		}
	}

	sel := render(t, Select, SelectData{Question: "q?", Events: []SelectEvent{{Event: ev, Turns: []Turn{t1, t2}}}, Turns: []Turn{t2, t3}, Max: 2})
	if got, s := enum(at(t, sel, "turn_ids", "[]")), at(t, sel, "turn_ids"); !slices.Equal(got, []string{"D1:3", "D1:4", "D1:5"}) || s["maxItems"] != float64(2) {
		t.Errorf("select turn_ids: %v, at most %v", got, s["maxItems"])
	}
	pr := render(t, Predict, PredictData{Question: "q?", Event: ev, Turns: []Turn{t1, t2, t3}, Max: 8})
	if got, s := enum(at(t, pr, "turn_ids", "[]")), at(t, pr, "turn_ids"); len(got) != 3 || s["maxItems"] != float64(3) {
		t.Errorf("predict turn_ids: %v, at most %v (want the 3 shown)", got, s["maxItems"])
	}
	fi := render(t, Filter, FilterData{Question: "q?", Turns: []Turn{t3}})
	if got := enum(at(t, fi, "relevant_ids", "[]")); !slices.Equal(got, []string{"D1:5"}) {
		t.Errorf("filter relevant_ids: %v", got)
	}
	af := render(t, Affiliate, AffiliateData{Last: &Event{ID: "e7"}, Candidates: []Event{ev, ev2}, Turn: t1})
	if got := enum(at(t, af, "affiliations", "[]")); !slices.Equal(got, []string{"e1", "e2", "e7", "NEW"}) {
		t.Errorf("affiliate affiliations: %v", got)
	}
	eu := render(t, EventUpdate, EventUpdateData{Event: ev, Window: []Turn{t1}, New: []Turn{t2}})
	if got := enum(at(t, eu, "new_facts", "[]", "turn_id")); !slices.Equal(got, []string{"D1:4"}) {
		t.Errorf("event_update new_facts[].turn_id: %v", got)
	}
	tn := render(t, TurnNote, TurnNoteData{Turn: t2, Window: []Turn{t1}, Links: true})
	if got := enum(at(t, tn, "links", "[]", "target")); !slices.Equal(got, []string{"D1:3"}) {
		t.Errorf("turn_note links[].target: %v", got)
	}
	pd := render(t, ProfileDecide, ProfileDecideData{Event: ev, Entities: []string{"Caroline", "Melanie"}})
	if got, s := enum(at(t, pd, "update_decisions", "[]", "entity_name")), at(t, pd, "update_decisions"); len(got) != 2 || s["minItems"] != float64(2) {
		t.Errorf("profile_decide: %v, %v items", got, s["minItems"])
	}

	// Nothing shown, nothing admitted: the list is bounded to zero items
	// rather than given an empty enum (which no value satisfies, and which
	// grammar converters reject).
	empty := render(t, Filter, FilterData{Question: "q?"})
	if s := at(t, empty, "relevant_ids"); s["maxItems"] != float64(0) || at(t, empty, "relevant_ids", "[]")["enum"] != nil {
		t.Errorf("filter with no turns: %v", s)
	}
}

func TestNewEvents(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 6: 2, 7: 3, 16: 6, 18: 6, 40: 14} {
		if got := NewEvents(n); got != want {
			t.Errorf("NewEvents(%d) = %d, want %d", n, got, want)
		}
	}
}

// Constraints from the decoded-schema cache are those of a schema decoded
// afresh for every call, byte for byte, whatever was constrained before:
// every case twice, forwards and backwards (a constraint that wrote into
// the cached schema would show in the next one).
func TestConstraintSchemaCache(t *testing.T) {
	fresh := func(schema string, data any) []byte {
		v, err := jsonx.DecodeOrdered([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		data.(constrainer).constrain(node{v.(*jsonx.Object)})
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	order := append(slices.Clone(cases), cases...)
	for i := range cases {
		order = append(order, cases[len(cases)-1-i])
	}
	for _, c := range order {
		p, err := Render(c.name, c.data)
		if err != nil {
			t.Fatal(err)
		}
		if want := fresh(string(p.Schema), c.data); string(p.Constraint) != string(want) {
			t.Fatalf("%s: constraint\n%s\nwant (schema decoded afresh)\n%s", c.file, p.Constraint, want)
		}
	}
}

// The select constraint is the reply schema with turn_ids narrowed as
// idList narrows the events' turn ids followed by the loose turns' not
// among them: at most Max (and at most that list's length, duplicates
// across events counted), each id shown once in the enum, in order. Checked
// on random layouts with ids repeated within and across events and loose
// turns, and with none at all.
func TestSelectConstraintMatchesIDList(t *testing.T) {
	reference := func(d SelectData) json.RawMessage {
		var ids []string
		for _, e := range d.Events {
			ids = append(ids, turnIDs(e.Turns)...)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		for _, tr := range d.Turns {
			if !seen[tr.ID] {
				seen[tr.ID] = true
				ids = append(ids, tr.ID)
			}
		}
		root, err := decodedSchema(defaultSet.Schemas[Select])
		if err != nil {
			t.Fatal(err)
		}
		idList(node{root}.prop("turn_ids"), ids, d.Max)
		b, err := root.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r := rand.New(rand.NewPCG(8, 9))
	turn := func() Turn { return Turn{ID: fmt.Sprintf("D%d:%d", r.IntN(2), r.IntN(4)), Speaker: "Ann", Text: "hi"} }
	for range 3000 {
		d := SelectData{Question: "q?", Max: r.IntN(6)}
		for range r.IntN(4) {
			var se SelectEvent
			se.Event = Event{ID: "e1", Title: "t"}
			for range r.IntN(4) {
				se.Turns = append(se.Turns, turn())
			}
			d.Events = append(d.Events, se)
		}
		for range r.IntN(4) {
			d.Turns = append(d.Turns, turn())
		}
		p, err := Render(Select, d)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(d); string(p.Constraint) != string(want) {
			t.Fatalf("%+v:\nconstraint %s\nreference  %s", d, p.Constraint, want)
		}
	}
}
