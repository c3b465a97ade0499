package higmem_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/memcheck"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
)

// instructions is one Shown holding the instructions of every prompt
// (each rendered with no data) and no ids: a stored text copied from any
// of them is junk.
func instructions(t *testing.T) memcheck.Shown {
	t.Helper()
	return memcheck.FromPrompt(instructionPrompt(t))
}

// instructionPrompt is the prompt instructions reads: every prompt's
// instructions, rendered with no data.
func instructionPrompt(t *testing.T) prompt.Prompt {
	t.Helper()
	var sys, user []string
	for name, data := range map[string]any{
		prompt.TurnNote: prompt.TurnNoteData{}, prompt.Affiliate: prompt.AffiliateData{},
		prompt.EventUpdate: prompt.EventUpdateData{}, prompt.EventCheck: prompt.EventUpdateData{},
		prompt.BuildBatch: prompt.BuildBatchData{}, prompt.Query: prompt.QueryData{},
		prompt.Predict: prompt.PredictData{}, prompt.Filter: prompt.FilterData{}, prompt.Answer: prompt.AnswerData{},
		prompt.Select: prompt.SelectData{},
	} {
		p, err := prompt.Render(name, data)
		if err != nil {
			t.Fatal(err)
		}
		sys, user = append(sys, p.System), append(user, p.User)
	}
	return prompt.Prompt{System: strings.Join(sys, "\n"), User: strings.Join(user, "\n")}
}

// eventShown is what a stored event's record is judged against: every
// prompt's instructions (a text copied from them is junk) and the event's
// own turns (its names, dates and words must come from them), as an
// update prompt shows them.
func eventShown(t *testing.T, base prompt.Prompt, ev higmem.EventView) memcheck.Shown {
	t.Helper()
	var turns []prompt.Turn
	for _, tr := range ev.Turns {
		date := "unknown date"
		if !tr.OccurredAt.IsZero() {
			date = tr.OccurredAt.Format("2 January 2006")
		}
		turns = append(turns, prompt.Turn{ID: tr.ID, Date: date, Speaker: tr.Speaker, Text: tr.Text})
	}
	p, err := prompt.Render(prompt.EventUpdate, prompt.EventUpdateData{Event: prompt.Event{ID: ev.Event.ID}, New: turns})
	if err != nil {
		t.Fatal(err)
	}
	base.User += "\n" + p.User
	return memcheck.FromPrompt(base)
}

// storedJunk returns what memcheck finds in an event as stored: its title,
// summary, keywords, tags and facts judged as if a model had just written
// them ("" when all is memory).
func storedJunk(sh memcheck.Shown, e store.Event) string {
	var facts []prompt.FactReply
	for _, f := range e.Facts {
		facts = append(facts, prompt.FactReply{Time: f.Time, Fact: f.Text})
	}
	up := prompt.EventUpdateReply{Summary: e.Summary, Keywords: e.Keywords, Tags: e.Tags, NewFacts: facts}
	if res := memcheck.EventUpdate(&up, sh, memcheck.Caps{Facts: len(facts) + 1}); res.Verdict != memcheck.Valid {
		return res.String()
	}
	title := prompt.BuildBatchReply{
		Turns:  []prompt.BatchTurn{{ID: "t", Events: []string{"new:1"}}},
		Events: []prompt.BatchEvent{{ID: "new:1", Title: e.Title, EventUpdateReply: prompt.EventUpdateReply{Summary: "A stand-in summary of the event."}}},
	}
	tsh := memcheck.NewShown([]string{"t"}, nil, []string{"t"}, "")
	if res := memcheck.BuildBatch(&title, tsh, memcheck.Caps{TitleChars: 200}); res.Verdict != memcheck.Valid {
		return "title: " + res.String()
	}
	return ""
}

// checkStored checks what an Add stored and returned: a rejected reply
// is flagged on its call and has its fallback warning, every event is
// titled, summarised and free of junk. It returns the turns that are in
// some event, the number of events, how many are marked +fallback and how
// many calls were rejected.
func checkStored(t *testing.T, m *higmem.Memory, res *higmem.AddResult) (member map[string]bool, events, marked, rejected int) {
	t.Helper()
	for _, c := range res.Calls {
		if strings.HasPrefix(c.Check, "rejected") {
			rejected++
			if c.Error == "" {
				t.Errorf("call %+v: rejected reply without an error", c)
			}
		}
	}
	fellBack := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, "unusable") || strings.Contains(w, "offline segmentation") {
			fellBack++
		}
	}
	if fellBack < rejected {
		t.Errorf("%d fallback warnings for %d rejected replies: %q", fellBack, rejected, res.Warnings)
	}
	base := instructionPrompt(t)
	evs, err := m.Events(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	member = map[string]bool{}
	for _, ev := range evs {
		e := ev.Event
		if e.Title == "" || e.Summary == "" {
			t.Errorf("event %s has title %q summary %q", e.ID, e.Title, e.Summary)
		}
		// Offline construction's records are its rules' own (offline
		// mode's memory, placed there when no model reply could be
		// had), not a model's reply.
		if why := storedJunk(eventShown(t, base, ev), e); why != "" && !strings.HasPrefix(e.Producer, "offline:") {
			t.Errorf("event %s stored junk (%s): %+v", e.ID, why, e)
		}
		if strings.HasSuffix(e.Producer, "+fallback") {
			marked++
		}
		for _, tr := range ev.Turns {
			member[tr.ID] = true
		}
	}
	return member, len(evs), marked, rejected
}

// TestRealJunkNeverStored builds memory through the root API from a model
// that answers every prompt with the junk shapes recorded from a real
// 270M model (llmtest.RealJunk, in turn per prompt kind): nothing it wrote
// that is junk may be stored, every turn still lands in an event, the
// rejected replies are flagged on their calls and noted as fallbacks, and
// events whose summary is not the model's are marked in their producer.
func TestRealJunkNeverStored(t *testing.T) {
	turns, _ := example(t)
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			m := open(t, higmem.Options{Mode: mode, MemoryModel: &llmtest.RealJunk{}, Embedder: hashing.New(0), BatchSize: 6})
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Added) != len(turns) {
				t.Fatalf("added %d of %d", len(res.Added), len(turns))
			}
			member, _, marked, rejected := checkStored(t, m, res)
			repaired := 0
			for _, c := range res.Calls {
				if strings.HasPrefix(c.Check, "repaired") {
					repaired++
				}
			}
			if rejected == 0 || repaired == 0 {
				t.Errorf("%d calls rejected, %d repaired: want both (every reply is a junk shape)", rejected, repaired)
			}
			for _, tr := range turns {
				if !member[tr.ID] {
					t.Errorf("turn %s is in no event", tr.ID)
				}
			}
			if marked == 0 {
				t.Errorf("no event marked as a fallback although summaries were rejected")
			}
			anns, err := m.Annotations(ctx, sp, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range anns {
				for _, k := range append(append([]string{}, a.Keywords...), a.Tags...) {
					if k == "time" || k == "fact" || k == "keywords" || k == "tags" || strings.TrimSpace(k) == "" {
						t.Errorf("annotation of %s stored the junk keyword %q", a.TurnID, k)
					}
				}
				if strings.Contains(a.Context, "one sentence saying") || strings.Contains(a.Context, `"keywords"`) {
					t.Errorf("annotation of %s stored the junk context %q", a.TurnID, a.Context)
				}
			}

			// Questions: junk predictions, filters and answers never reach
			// the evidence or the answer as written.
			for _, q := range []string{"What did Priya make in pottery class?", "When did Sam start running?", "Where did they travel?"} {
				ans, err := m.Ask(ctx, sp, q, higmem.RetrieveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(ans.Text, "a short phrase") || strings.HasPrefix(strings.TrimSpace(ans.Text), "{") {
					t.Errorf("%q: junk answer %q used", q, ans.Text)
				}
				// The temporal question's answer prompt quotes example
				// dates; RealJunk answers it with the first (the
				// copied-example shape), which must not be the answer.
				if strings.HasPrefix(q, "When") {
					copied := false
					for _, c := range ans.Trace.Calls {
						copied = copied || c.Operation == "answer" && strings.HasPrefix(c.Check, "rejected: copied_instructions") &&
							!strings.Contains(c.Check, "a short phrase") // not the other shape's instructions
					}
					if !copied || ans.Text != "" {
						t.Errorf("%q: answer %q, calls %+v: want the copied example rejected", q, ans.Text, ans.Trace.Calls)
					}
				}
				for _, id := range ans.IDs() {
					if !member[id] {
						t.Errorf("%q: evidence %q is no stored turn", q, id)
					}
				}
			}
		})
	}
}

// inventsIDs answers select prompts with ids that were never shown, and
// everything else like the scripted model.
type inventsIDs struct{ inner *llmtest.Scripted }

func (m inventsIDs) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.SchemaName == prompt.Select {
		return llm.Response{Content: `{"turn_ids":["key1","key2","D99:1"]}`}, nil
	}
	return m.inner.Complete(ctx, req)
}

// A select reply that names no shown turn is unusable: the search hits
// stand in as evidence, and the trace says so.
func TestUnusableSelectionFallsBackToSearch(t *testing.T) {
	ctx := t.Context()
	turns, questions := example(t)
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: inventsIDs{llmtest.NewScripted()}, Embedder: hashing.New(0)})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, questions[0].Question, higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	search := res.Trace.Stage("search")
	if len(search) == 0 || len(res.Evidence) == 0 {
		t.Fatalf("search %v, evidence %v", search, res.IDs())
	}
	for _, id := range res.Trace.Stage("selected") {
		if !slices.Contains(res.Trace.Stage("shown"), id) {
			t.Errorf("selected %q was not shown", id)
		}
	}
	if !slices.Contains(res.IDs(), search[0]) {
		t.Errorf("evidence %v lacks the best search hit %s", res.IDs(), search[0])
	}
	noted := false
	for _, n := range res.Trace.Notes {
		noted = noted || strings.Contains(n, "select call unusable")
	}
	if !noted {
		t.Errorf("notes %q do not say the selection was unusable", res.Trace.Notes)
	}
}
