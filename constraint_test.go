package higmem_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// newTurnIDs returns the ids of the turns a build_batch prompt shows as
// new.
func newTurnIDs(user string) []string {
	var ids []string
	in := false
	for _, l := range strings.Split(user, "\n") {
		switch {
		case strings.HasPrefix(l, "New turn"):
			in = true
		case in && strings.HasPrefix(l, "["):
			ids = append(ids, l[1:strings.Index(l, "]")])
		case in && strings.TrimSpace(l) != "":
			in = false
		}
	}
	return ids
}

// sentSchema decodes the schema a request sent (json_object+schema or
// json_schema), nil when it sent none.
func sentSchema(t *testing.T, r llmtest.ChatRequest) map[string]any {
	t.Helper()
	var rf struct {
		Schema     map[string]any `json:"schema"`
		JSONSchema struct {
			Strict *bool          `json:"strict"`
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil {
		t.Fatal(err)
	}
	if rf.JSONSchema.Strict != nil && *rf.JSONSchema.Strict {
		t.Error("json_schema sent with strict: the narrowed schema's keywords are outside OpenAI's strict subset")
	}
	if rf.Schema != nil {
		return rf.Schema
	}
	return rf.JSONSchema.Schema
}

// at is llmtest.SchemaAt.
var at = llmtest.SchemaAt

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// A model's intent for the example's prompts, as the real 270M model
// wrote them under the broad schema: every turn id ":{", the event
// labelled "events:1" (what the real server answered on main), with
// content that is memory. junkIDs false writes the ids right but breaks
// the narrowed bounds instead: a title two characters over its
// maxLength, an event id never shown, seven keywords where the prompt asks
// at most six.
func intent(junkIDs bool) llmtest.Handler {
	return func(_ int, req *llmtest.ChatRequest) llmtest.Reply {
		user := req.LastUser()
		for _, m := range req.Messages {
			if m.Role == "user" {
				user = m.Content // the first: a re-ask appends its correction
				break
			}
		}
		switch {
		case strings.HasPrefix(user, "Organise new conversation turns"):
			var turns []map[string]any
			for i, id := range newTurnIDs(user) {
				tid, evs := id, []string{"new:1"}
				// Each turn's own context and keywords (the semantic checks
				// drop what three turns say alike).
				kws := []string{"pottery class", fmt.Sprintf("visit %d", i)}
				if junkIDs {
					tid, evs = ":{", []string{"events:1"}
				} else {
					evs = append(evs, "e9")
					kws = []string{"pottery class", "Clayworks", "Elm Street", "bowl", "glaze", "studio", fmt.Sprintf("visit %d", i)}
				}
				turns = append(turns, map[string]any{"id": tid, "keywords": kws, "tags": []string{"hobby"},
					"context": fmt.Sprintf("Priya and Tom talk about her first pottery class, part %d.", i+1), "events": evs})
			}
			title, id := "Priya's first pottery class", "new:1"
			if junkIDs {
				id = "events:1"
			} else {
				// Two characters over the narrowed maxLength (60), within
				// the engine's cap (90): stored as written.
				title = "Priya's first pottery class at the Clayworks studio, Elm St.!!"
			}
			return llmtest.JSON(map[string]any{"turns": turns, "events": []any{map[string]any{"id": id, "title": title,
				"summary":  "Priya went to her first pottery class at the Clayworks studio on Elm Street and told Tom about it.",
				"keywords": []string{"pottery class", "Clayworks"}, "tags": []string{"hobby"}, "new_facts": []any{}}}})
		case strings.HasPrefix(user, "Pick the memory turns that answer"):
			ids := []string{"1", "2"}
			if !junkIDs {
				ids = []string{"S1:2", "D9:9"}
			}
			return llmtest.JSON(map[string]any{"turn_ids": ids})
		case strings.HasPrefix(user, "Answer a question about past"):
			return llmtest.JSON(map[string]any{"answer": "1 March 2024"})
		}
		return llmtest.Text("{}")
	}
}

// TestConstraintServers builds memory from the same model intent through
// the real client against two kinds of llama.cpp-like server: one that
// enforces the schema it is sent (as llama-cpp-python's grammar does) and
// one that does not (json_object mode, Ollama's JSON mode, OpenAI without
// strict). Every request carries the schema narrowed to its prompt: the
// batch's turn ids as an enum, one turn item per new turn. On the
// enforcing server the junk ids cannot be written, so the reply places
// every turn and its event carries the model's title and summary (before
// the narrowing the same intent was rejected whole and every turn fell
// back). On the other, a reply that breaks the narrowed bounds costs no
// re-ask (validation keeps the broad schema): the semantic checks repair
// it as before and what is left is stored.
func TestConstraintServers(t *testing.T) {
	turns, questions := example(t)
	turns = turns[:6]
	for _, grammar := range []bool{true, false} {
		t.Run(fmt.Sprintf("grammar=%v", grammar), func(t *testing.T) {
			ctx := t.Context()
			srv := llmtest.NewLlamaCpp(t, intent(grammar))
			srv.Grammar = grammar
			client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "gemma-3-270m", Structured: openai.JSONObjectSchema,
				MaxConcurrency: 1, RequestTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: client, Embedder: hashing.New(0), BatchSize: 6})
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != len(res.Calls) {
				t.Errorf("%d HTTP requests for %d calls: a reply was re-asked (calls %+v)", len(reqs), len(res.Calls), res.Calls)
			}
			var build *higmem.Call
			for i, c := range res.Calls {
				if c.Operation == prompt.BuildBatch {
					build = &res.Calls[i]
				}
			}
			if build == nil || build.Error != "" || !strings.HasPrefix(build.Check, "repaired") && build.Check != "" {
				t.Fatalf("build call %+v: want its reply used", build)
			}
			if !grammar {
				// The id outside the enum is dropped by the semantic
				// check; the seven keywords (over the narrowed six, within
				// the engine's cap of ten) are kept as written.
				if !strings.Contains(build.Check, `unknown_id turns[0].events[1] "e9"`) {
					t.Errorf("build check %q: want the id outside the enum repaired", build.Check)
				}
				anns, err := m.Annotations(ctx, sp, []string{turns[0].ID})
				if err != nil || len(anns) != 1 || len(anns[0].Keywords) != 7 {
					t.Errorf("annotation %+v (%v): want the seven keywords stored", anns, err)
				}
			}
			// The request carried the narrowed schema.
			s := sentSchema(t, reqs[0])
			ids := newTurnIDs(reqs[0].LastUser())
			if got := strs(at(s, "turns", "[]", "id")["enum"]); !slices.Equal(got, ids) || len(ids) != 6 {
				t.Errorf("turns[].id enum %v, want the batch's turn ids %v", got, ids)
			}
			if at(s, "turns")["minItems"] != float64(6) || at(s, "turns")["maxItems"] != float64(6) {
				t.Errorf("turns bounds %v %v, want exactly 6 items", at(s, "turns")["minItems"], at(s, "turns")["maxItems"])
			}
			if got := strs(at(s, "turns", "[]", "events", "[]")["enum"]); !slices.Equal(got, prompt.NewLabels(prompt.NewEvents(6))) {
				t.Errorf("turns[].events[] enum %v, want %v", got, prompt.NewLabels(prompt.NewEvents(6)))
			}
			if title := at(s, "events", "[]", "title"); title["maxLength"] != float64(60) {
				t.Errorf("events[].title %v, want maxLength 60", title)
			}

			member, events, marked, rejected := checkStored(t, m, res)
			for _, tr := range turns {
				if !member[tr.ID] {
					t.Errorf("turn %s is in no event", tr.ID)
				}
			}
			if rejected != 0 || marked != 0 || events == 0 {
				t.Errorf("%d events, %d marked +fallback, %d calls rejected: want the model's records stored (warnings %q)", events, marked, rejected, res.Warnings)
			}
			evs, err := m.Events(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				want := "Priya's first pottery class"
				if !grammar {
					want = "Priya's first pottery class at the Clayworks studio, Elm St.!!" // 62: over the bound sent, stored
				}
				if !strings.Contains(ev.Event.Summary, "pottery class") || ev.Event.Title != want {
					t.Errorf("event %s: title %q summary %q: want the model's, title %q", ev.Event.ID, ev.Event.Title, ev.Event.Summary, want)
				}
			}

			before := len(srv.Requests())
			ans, err := m.Ask(ctx, sp, questions[0].Question, higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(srv.Requests()) - before; got != len(ans.Trace.Calls) {
				t.Errorf("%d HTTP requests for %d calls of the question", got, len(ans.Trace.Calls))
			}
			for _, c := range ans.Trace.Calls {
				if c.Operation == prompt.Select && (c.Error != "" || !slices.Contains(ans.IDs(), "S1:2")) {
					t.Errorf("select call %+v, evidence %v: want the shown id kept, the unknown one dropped", c, ans.IDs())
				}
			}
			sel := sentSchema(t, srv.Requests()[before])
			if enum := strs(at(sel, "turn_ids", "[]")["enum"]); !slices.Contains(enum, "S1:2") || slices.Contains(enum, "D9:9") {
				t.Errorf("select sent turn_ids enum %v", enum)
			}
		})
	}
}

// The narrowed schemas go to OpenAI as json_schema without strict, so
// keywords its strict mode refuses (minLength, maxItems …) cannot break an
// OpenAI user: against a server that refuses them under strict, every
// request is answered in json_schema mode, none is refused or downgraded.
func TestConstraintOpenAIJSONSchema(t *testing.T) {
	turns, questions := example(t)
	ctx := t.Context()
	srv := llmtest.NewServer(t, llmtest.OpenAIStrictSchemas(llmtest.NewScripted().Handler()))
	client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "gpt-4o-mini"})
	if err != nil {
		t.Fatal(err)
	}
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: client, Embedder: hashing.New(0)})
	res, err := m.Add(ctx, sp, turns[:10])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	if _, err := m.Ask(ctx, sp, questions[0].Question, higmem.RetrieveOptions{}); err != nil {
		t.Fatal(err)
	}
	narrowed := 0
	for _, r := range srv.Requests() {
		if r.Format() != "json_schema" {
			t.Errorf("a %s request: the client moved off json_schema", r.Format())
		}
		if strings.Contains(string(r.ResponseFormat), `"maxItems"`) {
			narrowed++
		}
		sentSchema(t, r) // fails on strict
	}
	if narrowed == 0 {
		t.Error("no request carried a narrowed schema")
	}
	// The same server refuses a strict request with those keywords: the
	// mimic is not a pass-through.
	refused := llmtest.OpenAIStrictSchemas(llmtest.Always(llmtest.Text("{}")))(1, &llmtest.ChatRequest{ResponseFormat: json.RawMessage(
		`{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string","maxLength":3}},"required":["a"],"additionalProperties":false}}}`)})
	if refused.Status != 400 || !strings.Contains(refused.Body, "maxLength") {
		t.Errorf("strict request with maxLength: %+v", refused)
	}
}
