package memcheck

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/jsonx"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

var (
	t1 = prompt.Turn{ID: "D1:3", Date: "8 May 2023", Speaker: "Caroline", Text: "I went to a LGBTQ support group yesterday and it was so powerful."}
	t2 = prompt.Turn{ID: "D1:4", Date: "8 May 2023", Speaker: "Melanie", Text: "Wow, that's cool, Caroline! What happened that was so awesome?"}
	t3 = prompt.Turn{ID: "D1:5", Date: "8 May 2023", Speaker: "Caroline", Text: "The transgender stories were so inspiring, I want to paint them."}
	ev = prompt.Event{ID: "e1", Title: "Caroline's support group visit", Summary: "Caroline attended an LGBTQ support group on 7 May 2023.",
		Keywords: []string{"support group", "LGBTQ"}, Tags: []string{"identity"},
		Facts: []prompt.Fact{{Time: "7 May 2023", Text: "Caroline went to a support group", TurnID: "D1:3"}}}
	ev2 = prompt.Event{ID: "e2", Title: "Melanie's pottery class"}
)

// fixtures are the prompts the shapes answer, rendered by the real
// templates.
var fixtures = map[string]any{
	prompt.BuildBatch:  prompt.BuildBatchData{Candidates: []prompt.Event{ev, ev2}, New: []prompt.Turn{t1, t2, t3}},
	prompt.EventUpdate: prompt.EventUpdateData{Event: ev, Window: []prompt.Turn{t1}, New: []prompt.Turn{t2, t3}},
	prompt.EventCheck:  prompt.EventUpdateData{Event: ev, New: []prompt.Turn{t3}},
	prompt.TurnNote:    prompt.TurnNoteData{Turn: t1},
	prompt.Affiliate:   prompt.AffiliateData{Last: &ev, Candidates: []prompt.Event{ev, ev2}, Turn: t2},
	prompt.Predict:     prompt.PredictData{Question: "What inspired Caroline?", Event: ev, Turns: []prompt.Turn{t1, t2, t3}, Max: 2},
	prompt.Filter:      prompt.FilterData{Question: "What inspired Caroline?", Turns: []prompt.Turn{t1, t2, t3}},
	prompt.Select: prompt.SelectData{Question: "What inspired Caroline?", Events: []prompt.SelectEvent{{Event: ev, Turns: []prompt.Turn{t1, t2}}},
		Turns: []prompt.Turn{t3}, Max: 3},
	prompt.Query: prompt.QueryData{Question: "When did Caroline go to the LGBTQ support group?"},
	// Temporal: the prompt quotes the example dates a junk shape copies.
	prompt.Answer:        prompt.AnswerData{Question: "When did Caroline go to the LGBTQ support group?", Temporal: true, Turns: []prompt.Turn{t1, t3}},
	prompt.ProfileDecide: prompt.ProfileDecideData{Event: ev, Entities: []string{"Caroline", "Melanie"}},
	prompt.ProfileUpdate: prompt.ProfileUpdateData{Person: prompt.KnownPerson{Name: "Caroline", Facts: []string{"home: Boston"}}, Event: ev, Turns: []prompt.Turn{t1, t2, t3}},
}

func render(t testing.TB, kind string) prompt.Prompt {
	t.Helper()
	p, err := prompt.Render(kind, fixtures[kind])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(p prompt.Prompt) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Schema: p.Schema, SchemaName: p.Name, Operation: p.Name}
}

// check decodes content as the engine does (tolerant JSON, schema) and
// runs the semantic check of kind. syntaxRepaired is true when the text
// was not valid JSON as sent.
func check(t testing.TB, kind, content string, p prompt.Prompt) (res Result, reply any, syntaxRepaired bool) {
	t.Helper()
	doc, err := jsonx.Parse(content, p.Schema)
	if err != nil {
		return Result{Verdict: Rejected, Problems: []Problem{{Kind: "invalid_json", Value: err.Error()}}}, nil, true
	}
	syntaxRepaired = !json.Valid([]byte(strings.TrimSpace(content)))
	caps := Caps{}
	switch d := fixtures[kind].(type) {
	case prompt.PredictData:
		caps.IDs = d.Max
	case prompt.SelectData:
		caps.IDs = d.Max
	}
	res, reply, err = Check(kind, doc, FromPrompt(p), caps)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return res, reply, syntaxRepaired
}

// recheck runs the check again on a repaired reply: it must now be valid
// (a repair leaves nothing for a second pass to find).
func recheck(t *testing.T, kind string, reply any, p prompt.Prompt) Result {
	t.Helper()
	b, err := json.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := check(t, kind, string(b), p)
	return res
}

// Every junk shape seen from the real server is rejected or repaired,
// never stored as the model wrote it, and a repaired reply has nothing
// left to repair.
func TestJunkShapes(t *testing.T) {
	if len(llmtest.JunkShapes) < 20 {
		t.Fatalf("only %d junk shapes", len(llmtest.JunkShapes))
	}
	for _, shape := range llmtest.JunkShapes {
		t.Run(shape.Kind+"/"+shape.Name, func(t *testing.T) {
			p := render(t, shape.Kind)
			content := shape.Reply(request(p))
			res, reply, syntax := check(t, shape.Kind, content, p)
			if shape.Syntax != syntax {
				t.Errorf("syntax repaired = %v, want %v (content %s)", syntax, shape.Syntax, content)
			}
			if res.Verdict == Valid && !syntax {
				t.Fatalf("junk accepted as is: %s", content)
			}
			if shape.Want != "" && res.Count(shape.Want) == 0 {
				t.Errorf("want a %s problem, got %v", shape.Want, res)
			}
			if res.Verdict == Repaired {
				// Nothing junk is left; only the gaps the caller fills
				// (turns to place, titles to derive) may remain.
				for _, pr := range recheck(t, shape.Kind, reply, p).Problems {
					if pr.Kind != MissingID && pr.Kind != Empty {
						t.Errorf("repaired reply still has %v", pr)
					}
				}
			}
		})
	}
}

// Good replies (what a capable model writes, and the scripted fake's
// answers) pass untouched: the checks do not eat memory.
func TestGoodRepliesValid(t *testing.T) {
	good := map[string]string{
		prompt.BuildBatch: `{"turns":[
			{"id":"D1:3","keywords":["LGBTQ support group","powerful"],"tags":["identity"],"context":"Caroline went to an LGBTQ support group on 7 May 2023.","events":["e1"]},
			{"id":"D1:4","keywords":["support group"],"tags":["identity"],"context":"Melanie asks what happened at the group.","events":["e1"]},
			{"id":"D1:5","keywords":["transgender stories","painting"],"tags":["art","identity"],"context":"Caroline wants to paint the stories.","events":["e1","new:1"]}],
			"events":[{"id":"e1","summary":"Caroline attended an LGBTQ support group on 7 May 2023 and told Melanie the transgender stories inspired her to paint.",
			"keywords":["support group","LGBTQ","painting"],"tags":["identity","art"],
			"new_facts":[{"time":"8 May 2023","fact":"Caroline wants to paint the transgender stories","turn_id":"D1:5"}]},
			{"id":"new:1","title":"Caroline's painting project","summary":"Caroline plans to paint the transgender stories she heard.","keywords":["painting"],"tags":["art"],"new_facts":[]}]}`,
		prompt.EventUpdate: `{"summary":"Caroline attended an LGBTQ support group on 7 May 2023 and told Melanie the transgender stories inspired her to paint.",
			"keywords":["support group","LGBTQ","painting"],"tags":["identity","art"],
			"new_facts":[{"time":"8 May 2023","fact":"Caroline wants to paint the transgender stories","turn_id":"D1:5"}]}`,
		prompt.EventCheck:    `{"is_relevant":true,"keywords":["support group","transgender stories"],"tags":["identity"]}`,
		prompt.TurnNote:      `{"keywords":["LGBTQ","support group"],"tags":["identity","community"],"context":"Caroline went to an LGBTQ support group on 7 May 2023.","entities":["Caroline"]}`,
		prompt.Affiliate:     `{"affiliations":["e1"],"reasoning":"Melanie answers Caroline about the group."}`,
		prompt.Predict:       `{"turn_ids":["D1:5","D1:3"]}`,
		prompt.Filter:        `{"relevant_ids":["D1:5"]}`,
		prompt.Select:        `{"turn_ids":["D1:5","D1:3"]}`,
		prompt.Query:         `{"keyword_query":"Caroline LGBTQ support group","entities":["Caroline"],"temporal":true}`,
		prompt.Answer:        `{"answer":"Not mentioned in the conversation"}`,
		prompt.ProfileDecide: `{"update_decisions":[{"entity_name":"Caroline","should_update":true,"reasoning":"she goes to a support group"},{"entity_name":"Melanie","should_update":false}]}`,
		prompt.ProfileUpdate: `{"summary":"Caroline lives in Boston and goes to an LGBTQ support group [D1:3]; its stories inspire her to paint [D1:5].",
			"facts":[{"entity":"Caroline","attribute":"hobby","value":"painting","turn_ids":["D1:5"]}]}`,
	}
	for kind, content := range good {
		p := render(t, kind)
		if res, _, _ := check(t, kind, content, p); res.Verdict != Valid {
			t.Errorf("%s: good reply judged %v", kind, res)
		}
	}
	// The scripted fake's answers to the same prompts.
	fake := llmtest.NewScripted()
	for kind := range fixtures {
		p := render(t, kind)
		resp, err := fake.Complete(t.Context(), request(p))
		if err != nil {
			t.Fatal(err)
		}
		if res, _, _ := check(t, kind, resp.Content, p); res.Verdict == Rejected {
			t.Errorf("%s: scripted reply %s rejected: %v", kind, resp.Content, res)
		}
	}
}

func TestFromPrompt(t *testing.T) {
	s := FromPrompt(render(t, prompt.EventUpdate))
	if !slices.Equal(s.Turns, []string{"D1:3", "D1:4", "D1:5"}) || !slices.Equal(s.New, []string{"D1:4", "D1:5"}) ||
		!slices.Equal(s.Events, []string{"e1"}) {
		t.Errorf("shown %+v", s)
	}
	// Data is not instructions: a turn's text is not "copied".
	if s.copied(t1.Text) || !s.copied("2 to 3 sentences covering the whole event") {
		t.Error("copy detection confuses data and instructions")
	}
}

func TestRunawayCapped(t *testing.T) {
	p := render(t, prompt.BuildBatch)
	shape := llmtest.JunkShapes[slices.IndexFunc(llmtest.JunkShapes, func(s llmtest.JunkShape) bool { return strings.HasPrefix(s.Name, "runaway") })]
	_, reply, _ := check(t, prompt.BuildBatch, shape.Reply(request(p)), p)
	r := reply.(*prompt.BuildBatchReply)
	labels := map[string]bool{}
	for _, it := range r.Turns {
		for _, e := range it.Events {
			labels[e] = true
		}
	}
	if len(labels) > 3 || len(r.Events) > 3 {
		t.Errorf("%d new events, %d records for 3 turns", len(labels), len(r.Events))
	}
	for _, it := range r.Turns {
		if len(it.Events) > 3 {
			t.Errorf("turn %s joins %d events", it.ID, len(it.Events))
		}
	}
}

func TestRejectedWhenNothingLeft(t *testing.T) {
	p := render(t, prompt.BuildBatch)
	res, _, _ := check(t, prompt.BuildBatch, `{"turns":[{"id":"X1","events":["new:1"]}],"events":[]}`, p)
	if res.Verdict != Rejected {
		t.Errorf("batch with no shown turn: %v", res)
	}
	p = render(t, prompt.Affiliate)
	if res, _, _ := check(t, prompt.Affiliate, `{"affiliations":["e9"]}`, p); res.Verdict != Rejected {
		t.Errorf("affiliation to unknown events only: %v", res)
	}
	// NEW beside a real event: the real one.
	var r prompt.AffiliateReply
	json.Unmarshal([]byte(`{"affiliations":["new","e2"]}`), &r)
	if res := Affiliate(&r, FromPrompt(p), Caps{}); res.Verdict != Repaired || !slices.Equal(r.Affiliations, []string{"e2"}) {
		t.Errorf("NEW+e2: %v %v", res, r.Affiliations)
	}
}

// The events section of a build_batch reply keeps the records of the
// events the turns joined: a junk summary drops the record but a new
// event's real title, a second record of one event and records of events
// nobody joined (or never shown) are dropped, an event joined without a
// record is missing; facts are capped by the turns that joined.
func TestBuildBatchEventRecords(t *testing.T) {
	p := render(t, prompt.BuildBatch)
	turns := `"turns":[{"id":"D1:3","keywords":["support group"],"context":"Caroline went to a support group.","events":["e1"]},
		{"id":"D1:4","keywords":["support group"],"context":"Melanie asks about the group.","events":["e1","new:1"]},
		{"id":"D1:5","keywords":["painting"],"context":"Caroline wants to paint.","events":["new:2"]}]`
	facts := `[{"fact":"Caroline painted one"},{"fact":"Caroline painted two"},{"fact":"Caroline painted three"},{"fact":"Caroline painted four"},{"fact":"Caroline painted five"}]`
	res, reply, _ := check(t, prompt.BuildBatch, `{`+turns+`,"events":[
		{"id":"e1","summary":"Caroline told Melanie about the LGBTQ support group she attended.","keywords":["support group"],"title":"Ignored"},
		{"id":"new:1","title":"Melanie's questions","summary":"}, "},
		{"id":"e1","summary":"Again, a second record."},
		{"id":"e2","summary":"Melanie's pottery class went on."},
		{"id":"e9","summary":"An event never shown."},
		{"id":"NEW:2","title":"Caroline's painting plans","summary":"Caroline wants to paint the stories she heard.","new_facts":`+facts+`}]}`, p)
	r := reply.(*prompt.BuildBatchReply)
	if res.Verdict != Repaired || res.Count(JunkText) != 1 || res.Count(Duplicate) != 1 || res.Count(Unused) != 1 || res.Count(UnknownID) != 1 || res.Count(OverCap) != 1 {
		t.Errorf("got %v", res)
	}
	if len(r.Events) != 3 || r.Events[0].ID != "e1" || r.Events[0].Title != "" || r.Events[1].ID != "new:1" || r.Events[1].Summary != "" ||
		r.Events[1].Title != "Melanie's questions" || r.Events[2].ID != "new:2" || len(r.Events[2].NewFacts) != 4 {
		t.Errorf("records %+v", r.Events)
	}
	// No events section: the turns are used, each event is missing.
	res, reply, _ = check(t, prompt.BuildBatch, `{`+turns+`}`, p)
	if res.Verdict != Repaired || res.Count(MissingID) != 3 || len(reply.(*prompt.BuildBatchReply).Turns) != 3 {
		t.Errorf("no records: %v", res)
	}
	// Records alone place no turn.
	if res, _, _ := check(t, prompt.BuildBatch, `{"turns":[],"events":[{"id":"e1","summary":"Caroline told Melanie about the group."}]}`, p); res.Verdict != Rejected {
		t.Errorf("records without turns: %v", res)
	}
}

func TestCheckDispatch(t *testing.T) {
	p := render(t, prompt.Predict)
	res, reply, err := Check(prompt.Predict, []byte(`{"turn_ids":["D1:3","D9:9","D1:3"]}`), FromPrompt(p), Caps{})
	if err != nil || res.Verdict != Repaired || !slices.Equal(reply.(*prompt.PredictReply).TurnIDs, []string{"D1:3"}) {
		t.Errorf("%v %v %v", res, reply, err)
	}
	if _, _, err := Check("judge", []byte(`{}`), Shown{}, Caps{}); err == nil {
		t.Error("judge has no check")
	}
}

// Conversations carry "[Image: …]" captions and turn ids in brackets: an
// answer or a summary quoting them is prose, not JSON (the scripted fake's
// answers to LoCoMo's captioned turns were rejected until this held).
func TestBracketsAreProse(t *testing.T) {
	p := render(t, prompt.Answer)
	for _, a := range []string{"[Image: a photo of a lake at sunrise] Melanie painted it", "She said so in [D1:3]."} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, FromPrompt(p), Caps{}); res.Verdict != Valid {
			t.Errorf("answer %q: %v", a, res)
		}
	}
	for _, a := range []string{`["D1:3"]`, `[1, 2]`, `{"answer": ""}`} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, FromPrompt(p), Caps{}); res.Verdict != Rejected {
			t.Errorf("answer %q: %v, want rejected", a, res)
		}
	}
}

// A select reply of only ids that were not shown is rejected; an empty one
// is an answer.
func TestSelectOnlyUnknownRejected(t *testing.T) {
	p := render(t, prompt.Select)
	if res, _, _ := check(t, prompt.Select, `{"turn_ids":["key1","D9:9"]}`, p); res.Verdict != Rejected {
		t.Errorf("only unknown ids: %v", res)
	}
	if res, _, _ := check(t, prompt.Select, `{"turn_ids":[]}`, p); res.Verdict != Valid {
		t.Errorf("empty selection: %v", res)
	}
	if res, _, _ := check(t, prompt.Select, `{"turn_ids":["key1","D1:3"]}`, p); res.Verdict != Repaired {
		t.Errorf("one shown id: %v", res)
	}
}

// An answer that equals one of the answer prompt's quoted examples is an
// answer, not instructions read back: when answer.tmpl quoted two LoCoMo
// gold dates as examples, memcheck rejected the correct answers as
// copied_instructions. The examples are read from the rendered prompt, so
// the test holds whatever they are; instructions that are not examples are
// still caught.
//
// But an example about turns of other years is the example copied: SmolLM2
// and Gemma 3 270M (through Ollama, testdata/ollama-*.jsonl) answered
// "14 March 2021" and "the week before 2 October 2019" about turns of 2024.
func TestAnswerEqualToExampleIsAnAnswer(t *testing.T) {
	p, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: "When did Caroline go?", Temporal: true, Turns: []prompt.Turn{t1}})
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile(`e\.g\. "([^"]+)" or "([^"]+)"`).FindStringSubmatch(p.User)
	if examples == nil {
		t.Fatalf("the temporal instruction quotes no examples:\n%s", p.User)
	}
	for _, a := range examples[1:] {
		// Turns of the example's years (the year after, for a date worked
		// out from "last week"): the example may be the answer.
		var turns []prompt.Turn
		for _, y := range regexp.MustCompile(`(19|20)\d\d`).FindAllString(a, -1) {
			n, _ := strconv.Atoi(y)
			turns = append(turns, prompt.Turn{ID: "D1:1", Date: "3 January " + strconv.Itoa(n+1), Speaker: "Caroline", Text: "I went to the support group last week."})
		}
		near, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: "When did Caroline go?", Temporal: true, Turns: turns})
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{a, strings.ToLower(a), a + "."} {
			r := prompt.AnswerReply{Answer: form}
			if res := Answer(&r, FromPrompt(near), Caps{}); res.Verdict != Valid {
				t.Errorf("answer %q (an example of the prompt, turns of its years): %v", form, res)
			}
			far := prompt.Turn{ID: "D1:1", Date: "2 March 2024", Speaker: "Priya", Text: "Yesterday I went to my first pottery class."}
			pf, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: "When did Priya go?", Temporal: true, Turns: []prompt.Turn{far}})
			if err != nil {
				t.Fatal(err)
			}
			if res := Answer(&r, FromPrompt(pf), Caps{}); regexp.MustCompile(`\d{4}`).MatchString(a) && res.Count(Copied) != 1 {
				t.Errorf("answer %q about a turn of 2024: %v, want copied_instructions", form, res)
			}
		}
	}
	for _, a := range []string{"a short phrase, using words from the memory where possible", "answer with the absolute date"} {
		r := prompt.AnswerReply{Answer: a}
		if res := Answer(&r, FromPrompt(p), Caps{}); res.Count(Copied) != 1 {
			t.Errorf("answer %q: %v, want copied_instructions", a, res)
		}
	}
}

// An id list's problems name each item as "field[i]", its place in the
// reply: unknown, repeated and over-the-cap ids alike.
func TestIDProblemsNameTheItem(t *testing.T) {
	var res result
	shown := map[string]bool{"a": true, "b": true, "c": true}
	got := res.ids("turn_ids", []string{"a", "x", " a ", "b", "c", "zz"}, shown, 2)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("kept %v", got)
	}
	want := []Problem{{UnknownID, "turn_ids[1]", "x"}, {Duplicate, "turn_ids[2]", "a"}, {OverCap, "turn_ids[4]", "c"}, {UnknownID, "turn_ids[5]", "zz"}}
	if !slices.Equal(res.Problems, want) {
		t.Errorf("problems %v, want %v", res.Problems, want)
	}
	for _, i := range []int{0, 7, 12, 305} {
		if got, want := itemName("relevant_ids", i), "relevant_ids["+strconv.Itoa(i)+"]"; got != want {
			t.Errorf("itemName = %q, want %q", got, want)
		}
	}
}
