package prompt

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// viaTemplates renders name's prompts for data by the templates alone.
func viaTemplates(t *testing.T, name string, data any) (system, user string) {
	t.Helper()
	var sys, u strings.Builder
	if err := tmpl.ExecuteTemplate(&sys, "system.tmpl", nil); err != nil {
		t.Fatal(err)
	}
	if err := tmpl.ExecuteTemplate(&u, name+".tmpl", data); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(sys.String()), strings.TrimSpace(u.String())
}

// randText is a short random string, sometimes empty, sometimes with the
// characters the templates and the trimming could treat apart.
func randText(r *rand.Rand) string {
	parts := []string{"", " ", "\n", "Caroline", "D1:3", "e12", "8 May 2023", "{{.ID}}", "[x]", "(event e1)", " :: ", "ü", "%d", "\t", "<b>&amp;"}
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func randTurn(r *rand.Rand) Turn {
	return Turn{ID: randText(r), Date: randText(r), Speaker: randText(r), Text: randText(r), Note: randText(r)}
}

func randTurns(r *rand.Rand) []Turn {
	var ts []Turn
	for range r.IntN(4) {
		ts = append(ts, randTurn(r))
	}
	return ts
}

// TestDirectMatchesTemplates checks that the prompts written without
// text/template are the templates' text: the golden cases and random data.
func TestDirectMatchesTemplates(t *testing.T) {
	var data []SelectData
	for _, c := range cases {
		if d, ok := c.data.(SelectData); ok {
			data = append(data, d)
		}
	}
	if len(data) < 2 {
		t.Fatalf("%d select cases", len(data))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		d := SelectData{Question: randText(r), Turns: randTurns(r), Max: r.IntN(40) - 5}
		for range r.IntN(4) {
			e := Event{ID: randText(r), Title: randText(r), Summary: randText(r), Keywords: []string{randText(r)}}
			d.Events = append(d.Events, SelectEvent{Event: e, Turns: randTurns(r)})
		}
		data = append(data, d)
	}
	for i, d := range data {
		p, err := Render(Select, d)
		if err != nil {
			t.Fatal(err)
		}
		sys, user := viaTemplates(t, Select, d)
		if p.System != sys || p.User != user {
			t.Fatalf("case %d: %#v\ndirect system %q\ntemplate     %q\ndirect user %q\ntemplate    %q", i, d, p.System, sys, p.User, user)
		}
	}
}

// TestDirectOnlyHigmemSet checks that another Set's templates run even
// for data that writes itself.
func TestDirectOnlyHigmemSet(t *testing.T) {
	other := &Set{Prefix: "other", Templates: tmpl, Schemas: schemas}
	if _, _, ok, _ := other.direct(Select, SelectData{}); !ok {
		t.Fatal("higmem's templates under another Set: not written directly")
	}
	clone, err := tmpl.Clone()
	if err != nil {
		t.Fatal(err)
	}
	other = &Set{Prefix: "other", Templates: clone, Schemas: schemas}
	if _, _, ok, _ := other.direct(Select, SelectData{}); ok {
		t.Error("another Set's templates were bypassed")
	}
	if _, _, ok, _ := defaultSet.direct(Filter, FilterData{}); ok {
		t.Error("filter data written directly")
	}
}

// TestSelectConstraintDedup checks the select constraint's enum: each id
// shown once, in the order first shown, whether it repeats under the
// events or among the search hits (the cap counts an id repeated under
// two events twice, as it always did).
func TestSelectConstraintDedup(t *testing.T) {
	a, b, c := Turn{ID: "a"}, Turn{ID: "b"}, Turn{ID: "c"}
	d := SelectData{Question: "q?", Max: 10, Events: []SelectEvent{{Event: ev, Turns: []Turn{b, a}}, {Event: ev2, Turns: []Turn{a, c}}},
		Turns: []Turn{c, b, Turn{ID: "d"}, Turn{ID: "d"}}}
	p, err := Render(Select, d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(p.Constraint), `"enum":["b","a","c","d"]`) || !strings.Contains(string(p.Constraint), `"maxItems":5`) {
		t.Errorf("constraint %s", p.Constraint)
	}
}
