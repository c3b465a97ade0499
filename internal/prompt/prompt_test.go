package prompt

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	t1 = Turn{ID: "D1:3", Date: "8 May 2023", Speaker: "Caroline", Text: "I went to a LGBTQ support group yesterday and it was so powerful."}
	t2 = Turn{ID: "D1:4", Date: "8 May 2023", Speaker: "Melanie", Text: "Wow, that's cool, Caroline! What happened that was so awesome?"}
	t3 = Turn{ID: "D1:5", Speaker: "Caroline", Text: "The transgender stories were so inspiring!"}
	ev = Event{ID: "e1", Title: "Caroline's support group visit", Summary: "Caroline attended an LGBTQ support group on 7 May 2023.",
		Keywords: []string{"support group", "LGBTQ"}, Tags: []string{"identity"},
		Facts: []Fact{{Time: "7 May 2023", Text: "Caroline went to a support group", TurnID: "D1:3"}}}
	ev2 = Event{ID: "e2", Title: "Melanie's pottery class"}
)

func withNote(t Turn, n string) Turn { t.Note = n; return t }

// cases renders every prompt with fixed data; the output is compared with
// testdata/<name>.golden.
var cases = []struct {
	file string
	name string
	data any
}{
	{"turn_note", TurnNote, TurnNoteData{Turn: t1}},
	{"turn_note_links", TurnNote, TurnNoteData{Turn: t2, Window: []Turn{t1}, Links: true}},
	{"affiliate", Affiliate, AffiliateData{Last: &ev, Candidates: []Event{ev, ev2}, Turn: t2}},
	{"affiliate_empty", Affiliate, AffiliateData{Turn: t1}},
	{"event_update", EventUpdate, EventUpdateData{Event: ev, Window: []Turn{t1}, New: []Turn{t2}}},
	{"event_update_batch", EventUpdate, EventUpdateData{Event: ev2, New: []Turn{t2, t3}}},
	{"event_check", EventCheck, EventUpdateData{Event: ev, New: []Turn{t3}}},
	{"build_batch", BuildBatch, BuildBatchData{Candidates: []Event{ev, ev2, {ID: "e3", Title: "Undated", Facts: []Fact{{Text: "Melanie runs", TurnID: "D1:1"}}}}, New: []Turn{t1, t2, t3}}},
	{"build_batch_empty", BuildBatch, BuildBatchData{New: []Turn{t1}}},
	{"build_batch_people", BuildBatch, BuildBatchData{Candidates: []Event{ev}, New: []Turn{t1, t2, t3}, AskPeople: true,
		People: []KnownPerson{{Name: "Caroline", Facts: []string{"home: Boston", "pet: Max (dog)"}}}}},
	{"query", Query, QueryData{Question: "When did Caroline go to the LGBTQ support group?"}},
	{"predict", Predict, PredictData{Question: "When did Caroline go to the LGBTQ support group?", Event: ev, Turns: []Turn{t1, t2}, Max: 8}},
	{"predict_part", Predict, PredictData{Question: "q?", Event: ev2, Turns: []Turn{t3}, Part: "2 of 3", Max: 4}},
	{"filter", Filter, FilterData{Question: "What inspired Caroline?", Turns: []Turn{t1, t3}}},
	{"select", Select, SelectData{Question: "What inspired Caroline?", Events: []SelectEvent{{Event: ev, Turns: []Turn{t1, t2}}, {Event: ev2, Turns: []Turn{t3}}}, Turns: []Turn{t2}, Max: 12}},
	{"select_events_only", Select, SelectData{Question: "q?", Events: []SelectEvent{{Event: ev2, Turns: []Turn{t3}}}, Max: 4}},
	{"answer", Answer, AnswerData{Question: "What inspired Caroline?", Turns: []Turn{t1, t3}}},
	{"answer_temporal", Answer, AnswerData{Question: "When did Caroline go to the LGBTQ support group?", Turns: []Turn{withNote(t1, "yesterday = 7 May 2023")}, Temporal: true}},
	{"answer_empty", Answer, AnswerData{Question: "What car does Caroline drive?"}},
	{"judge", Judge, JudgeData{Question: "When?", Gold: "7 May 2023", Answer: "May 7, 2023"}},
	{"profile_decide", ProfileDecide, ProfileDecideData{Event: ev, Entities: []string{"Caroline", "Melanie"}}},
	{"profile_update", ProfileUpdate, ProfileUpdateData{Person: KnownPerson{Name: "Caroline", Facts: []string{"home: Boston"}}, Event: ev, Turns: []Turn{t1, t3}}},
	{"profile_update_known", ProfileUpdate, ProfileUpdateData{Person: KnownPerson{Name: "Melanie"}, Summary: "Melanie paints [D1:2].", Event: ev2, Turns: []Turn{t2}}},
}

// build_batch's reply schema holds "people" only when the prompt asks for
// them, so that a prompt without them is the same request as before.
func TestBuildBatchPeopleSchema(t *testing.T) {
	plain, err := Render(BuildBatch, BuildBatchData{New: []Turn{t1}})
	if err != nil {
		t.Fatal(err)
	}
	asked, err := Render(BuildBatch, BuildBatchData{New: []Turn{t1}, AskPeople: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.Schema) != schemas[BuildBatch] || strings.Contains(string(plain.Schema), "people") {
		t.Errorf("schema without people: %s", plain.Schema)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(asked.Schema, &s); err != nil || s.Properties["people"] == nil || s.Properties["turns"] == nil ||
		len(s.Required) != 1 || s.Required[0] != "turns" {
		t.Errorf("schema asking for people: %s (%v)", asked.Schema, err)
	}
}

func TestGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p, err := Render(c.name, c.data)
			if err != nil {
				t.Fatal(err)
			}
			got := "SYSTEM:\n" + p.System + "\n\nUSER:\n" + p.User + "\n"
			golden(t, filepath.Join("testdata", c.file+".golden"), got)
			// What the request sends in place of the schema (constrain.go).
			golden(t, filepath.Join("testdata", c.file+".constraint.json"), string(p.Constraint)+"\n")
			if strings.Contains(p.User, "<no value>") {
				t.Errorf("template printed <no value>:\n%s", p.User)
			}
		})
	}
}

// golden compares got with the file at path, or writes it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/prompt -update)", err)
	}
	if got != string(want) {
		t.Errorf("rendered prompt differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestSchemasAreValidJSON(t *testing.T) {
	for name, s := range schemas {
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Errorf("schema %s: %v", name, err)
			continue
		}
		if v["type"] != "object" || v["required"] == nil {
			t.Errorf("schema %s: want an object schema with required keys", name)
		}
		// Every prompt with a schema must also have a template.
		if tmpl.Lookup(name+".tmpl") == nil {
			t.Errorf("schema %s has no template", name)
		}
	}
}

func TestRenderUnknown(t *testing.T) {
	if _, err := Render("nope", nil); err == nil {
		t.Fatal("want error for unknown prompt")
	}
}

// Every prompt has a budget, and a complete reply in the schema fits it
// with room to spare (4 bytes per token, a pessimistic count for JSON).
func TestMaxTokens(t *testing.T) {
	full := map[string]struct {
		reply string
		n     int
	}{
		BuildBatch: {`{"turns":[{"id":"D12:34","keywords":["support group","LGBTQ","powerful"],"tags":["identity"],"context":"Caroline went to an LGBTQ support group on 7 May 2023.","events":["new:1"]}],` +
			`"events":[{"id":"new:1","title":"Caroline's support group visit","summary":"Caroline attended an LGBTQ support group on 7 May 2023 and told Melanie the transgender stories inspired her.","keywords":["support group","LGBTQ","transgender stories"],"tags":["identity"],"new_facts":[{"time":"7 May 2023","fact":"Caroline went to an LGBTQ support group","turn_id":"D12:34"}]}]}`, 1},
		EventUpdate: {`{"summary":"Caroline attended an LGBTQ support group on 7 May 2023 and told Melanie the transgender stories inspired her. She plans to paint them and to keep going to the group.","keywords":["support group","LGBTQ","transgender stories","painting","Melanie"],"tags":["identity","art"],"new_facts":[{"time":"8 May 2023","fact":"Caroline wants to paint the transgender stories","turn_id":"D1:5"}]}`, 1},
		Predict:     {`{"turn_ids":["D12:34","D12:35","D12:36"]}`, 3},
		Select:      {`{"turn_ids":["D12:34","D12:35","D12:36","D12:37","D12:38","D12:39","D12:40","D12:41","D12:42","D12:43","D12:44","D12:45","D12:46","D12:47","D12:48","D12:49","D12:50","D12:51","D12:52","D12:53"]}`, 60},
		Answer:      {`{"answer":"Not mentioned in the conversation"}`, 1},
		Judge:       {`{"label":"CORRECT","reasoning":"The answer names the same date in another format."}`, 1},
	}
	for _, name := range []string{TurnNote, Affiliate, EventUpdate, EventCheck, BuildBatch, Query, Predict, Filter, Select, Answer, Judge} {
		if MaxTokens(name, 1) <= 0 {
			t.Errorf("%s has no budget", name)
		}
	}
	for name, c := range full {
		if need := (len(c.reply) + 3) / 4; 2*need > MaxTokens(name, c.n)+need/2 {
			t.Errorf("%s: a %d-token reply leaves too little room in %d", name, need, MaxTokens(name, c.n))
		}
	}
	if MaxTokens(BuildBatch, 10) <= MaxTokens(BuildBatch, 2) || MaxTokens("nothing", 3) != 0 {
		t.Error("budgets do not grow with the batch, or an unknown prompt has one")
	}
}

// The query prompt asks only for what retrieval reads: no time range
// (nothing filtered candidates by it; the rules' time analysis does).
func TestQueryAsksNoTimeRange(t *testing.T) {
	p, err := Render(Query, QueryData{Question: "What did Caroline do in May 2023?"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.User, "time_range") || strings.Contains(string(p.Schema), "time_range") {
		t.Errorf("query prompt still asks for a time range:\n%s\n%s", p.User, p.Schema)
	}
}

// build_batch's schema is its sections: "turns" required, "events"
// optional, so that a reply without records still places its turns, and
// one more optional section is one more entry.
func TestBuildBatchSections(t *testing.T) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal([]byte(schemas[BuildBatch]), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Properties) != len(buildBatchSections) || len(s.Required) != 1 || s.Required[0] != "turns" || s.Properties["events"] == nil {
		t.Errorf("schema %s", schemas[BuildBatch])
	}
}
