package prompt

import (
	"math/rand/v2"
	"testing"
)

// TestSelectConstraintDirect checks that the select constraint written
// from its template is the general path's, byte for byte: on the bench's
// select data, the golden cases and random data (ids repeated under
// events and among the search hits, ids needing escapes, every kind of
// maximum), and that the template was found at all.
func TestSelectConstraintDirect(t *testing.T) {
	if !selectTemplate().ok {
		t.Fatal("no template found for the select constraint")
	}
	_, data := benchSelects(t)
	for _, c := range cases {
		if d, ok := c.data.(SelectData); ok {
			data = append(data, d)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	ids := []string{"D1:3", "D1:4", "", "a\"b", "<&>", "é", "\u2028", "x\ny", "D10:12"}
	turns := func() []Turn {
		var ts []Turn
		for range r.IntN(6) {
			ts = append(ts, Turn{ID: ids[r.IntN(len(ids))]})
		}
		return ts
	}
	for range 3000 {
		d := SelectData{Turns: turns(), Max: r.IntN(14) - 3}
		for range r.IntN(4) {
			d.Events = append(d.Events, SelectEvent{Turns: turns()})
		}
		data = append(data, d)
	}
	direct := 0
	for i, d := range data {
		got, err := constrain(schemas[Select], d)
		want, werr := constrainGeneral(schemas[Select], d)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("case %d: %#v\ndirect  %s (%v)\ngeneral %s (%v)", i, d, got, err, want, werr)
		}
		if _, ok := d.directConstraint(schemas[Select]); ok {
			direct++
		}
	}
	if direct < len(data)/2 {
		t.Errorf("%d of %d constraints written directly", direct, len(data))
	}
	// Another schema under the same name goes the general way.
	other := `{"type":"object","properties":{"turn_ids":{"type":"array","items":{"type":"string"}},"why":{"type":"string"}},"required":["turn_ids"]}`
	if _, ok := data[0].directConstraint(other); ok {
		t.Error("a constraint of another schema written from the select template")
	}
}

// TestDeriveTemplate checks that a template is found only where the
// general path's text has the two holes: not for a schema whose list has
// no items (no enum is set), and, for a schema with more in it, one that
// writes the general path's text.
func TestDeriveTemplate(t *testing.T) {
	if deriveTemplate(`{"type":"object","properties":{"turn_ids":{"type":"array"}},"required":["turn_ids"]}`).ok {
		t.Error("a template found for a list without items")
	}
	if deriveTemplate(`{"type":"object","properties":{"turn_ids":{"type":"array","items":{"type":"string"},"minItems":1}}}`).ok {
		t.Error("a template found for a schema whose text has another 1")
	}
	wide := `{"type":"object","properties":{"why":{"type":"string"},"turn_ids":{"type":"array","items":{"type":"string"}}},"required":["why","turn_ids"]}`
	tm := deriveTemplate(wide)
	if !tm.ok {
		t.Fatal("no template for a wider schema")
	}
	d := SelectData{Events: []SelectEvent{{Turns: []Turn{{ID: "b"}, {ID: "c"}}}}, Turns: []Turn{{ID: "c"}, {ID: "d"}}, Max: 2}
	got, _ := d.constraintFrom(tm)
	want, err := constrainGeneral(wide, d)
	if err != nil || string(got) != string(want) {
		t.Errorf("template %s, general %s (%v)", got, want, err)
	}
}
