package memcheck

import (
	"slices"
	"testing"

	"github.com/higmem/higmem/internal/prompt"
)

// What a model states about people is kept only about people the prompt
// showed, under an attribute the engine keeps, with a value that says
// something, backed by turns the prompt showed.
func TestPeopleFacts(t *testing.T) {
	p := render(t, prompt.ProfileUpdate)
	res, reply, _ := check(t, prompt.ProfileUpdate, `{"summary":"Caroline goes to an LGBTQ support group [D1:3].","facts":[
		{"entity":"Caroline","attribute":"Occupation","value":"painter","turn_ids":["D1:5","D9:9"]},
		{"entity":"caroline","attribute":"favourite_activity","value":"support group","turn_ids":["D1:3"]},
		{"entity":"Bob","attribute":"home","value":"Paris","turn_ids":["D1:3"]},
		{"entity":"the user","attribute":"home","value":"Paris","turn_ids":["D1:3"]},
		{"entity":"Caroline","attribute":"what she likes to do on weekends","value":"paint","turn_ids":["D1:5"]},
		{"entity":"Caroline","attribute":"home","value":"}, {","turn_ids":["D1:5"]},
		{"entity":"Caroline","attribute":"home","value":"unknown","turn_ids":["D1:5"]},
		{"entity":"Caroline","attribute":"home","value":"Boston","turn_ids":["D9:9"]},
		{"entity":"Caroline","attribute":"job","value":"painter","turn_ids":["D1:5"]},
		{"entity":"Melanie","attribute":"home","value":"Boston","ended":true,"turn_ids":["D1:4"]}]}`, p)
	r := reply.(*prompt.ProfileUpdateReply)
	var got []string
	for _, f := range r.Facts {
		s := f.Entity + "." + f.Attribute + "=" + f.Value
		if f.Ended {
			s += " ended"
		}
		for _, id := range f.TurnIDs {
			s += " " + id
		}
		got = append(got, s)
	}
	want := []string{"Caroline.job=painter D1:5", "caroline.favorite activity=support group D1:3", "Melanie.home=Boston ended D1:4"}
	if !slices.Equal(got, want) {
		t.Errorf("facts kept:\n got %q\nwant %q", got, want)
	}
	if res.Verdict != Repaired || res.Count(UnknownID) != 4 || res.Count(JunkText) != 3 || res.Count(Duplicate) != 1 || res.Count(Empty) != 1 {
		t.Errorf("result %v", res)
	}
	if res, _, _ := check(t, prompt.ProfileUpdate, `{"summary":"} ]","facts":[]}`, p); res.Verdict != Rejected {
		t.Errorf("junk summary: %v", res)
	}
}

func TestProfileDecide(t *testing.T) {
	p := render(t, prompt.ProfileDecide)
	res, reply, _ := check(t, prompt.ProfileDecide, `{"update_decisions":[{"entity_name":"Caroline","should_update":true},
		{"entity_name":"Zed","should_update":true},{"entity_name":"caroline","should_update":false},{"entity_name":"Melanie","should_update":false}]}`, p)
	r := reply.(*prompt.ProfileDecideReply)
	var names []string
	for _, d := range r.UpdateDecisions {
		names = append(names, d.EntityName)
	}
	if !slices.Equal(names, []string{"Caroline", "Melanie"}) || res.Count(UnknownID) != 1 || res.Count(Duplicate) != 1 {
		t.Errorf("decisions %q, %v", names, res)
	}
}
