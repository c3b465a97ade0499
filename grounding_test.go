package higmem_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/memcheck"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
)

// groundingTally counts what memcheck's grounding (internal/memcheck,
// grounding.go) would take from records known to be good.
type groundingTally struct {
	records, summaries, titles, keywords, keywordsDropped, facts, factsDropped int
	examples                                                                   []string
}

func (g *groundingTally) note(s string) {
	if len(g.examples) < 8 {
		g.examples = append(g.examples, s)
	}
}

// judge runs the checks a model's record of ev would go through: the
// summary, keywords and facts as an update of the event over its turns,
// the title as a build reply's new event that its turns joined.
func (g *groundingTally) judge(t *testing.T, base prompt.Prompt, ev higmem.EventView) {
	t.Helper()
	e := ev.Event
	g.records++
	sh := eventShown(t, base, ev)
	var facts []prompt.FactReply
	for _, f := range e.Facts {
		facts = append(facts, prompt.FactReply{Time: f.Time, Fact: f.Text, TurnID: f.TurnID})
	}
	up := prompt.EventUpdateReply{Summary: e.Summary, Keywords: e.Keywords, NewFacts: facts}
	res := memcheck.EventUpdate(&up, sh, memcheck.Caps{Facts: len(facts) + 1, Keywords: len(e.Keywords) + 1})
	if res.Count(memcheck.Ungrounded)+res.Count(memcheck.RolePlay) > 0 {
		for _, p := range res.Problems {
			switch {
			case p.Field == "summary":
				g.summaries++
			case strings.HasPrefix(p.Field, "keywords"):
				g.keywordsDropped++
			case strings.HasPrefix(p.Field, "new_facts"):
				g.factsDropped++
			}
		}
		g.note(e.ID + ": " + res.String())
	}
	g.keywords += len(e.Keywords)
	g.facts += len(facts)

	var turns []prompt.Turn
	var items []prompt.BatchTurn
	for _, tr := range ev.Turns {
		turns = append(turns, prompt.Turn{ID: tr.ID, Date: "unknown date", Speaker: tr.Speaker, Text: tr.Text})
		items = append(items, prompt.BatchTurn{ID: tr.ID, Keywords: []string{"stand-in"}, Events: []string{"new:1"}})
	}
	p, err := prompt.Render(prompt.BuildBatch, prompt.BuildBatchData{New: turns})
	if err != nil {
		t.Fatal(err)
	}
	reply := prompt.BuildBatchReply{Turns: items, Events: []prompt.BatchEvent{{ID: "new:1", Title: e.Title,
		EventUpdateReply: prompt.EventUpdateReply{Summary: e.Summary}}}}
	res = memcheck.BuildBatch(&reply, memcheck.FromPrompt(p), memcheck.Caps{TitleChars: 200})
	for _, pr := range res.Problems {
		if pr.Field == "events[0].title" && (pr.Kind == memcheck.Ungrounded || pr.Kind == memcheck.RolePlay) {
			g.titles++
			g.note(e.ID + " title: " + pr.String())
		}
	}
}

// TestGroundingGoodRecords measures the false rejects of the grounding
// checks on records known to be good: the offline construction's records
// (its rules quote and summarise the turns, so every name, date and word
// is in them) of the shipped example conversation, the FriendsQA scene in
// testdata and, when the dev data is here, the first two sessions of every
// LoCoMo conversation. A record is counted rejected when its summary or
// title would be; keywords and facts are counted when dropped. The rates
// are logged (BENCHMARKS.md records them); the test fails above 1% of
// summaries or titles, 5% of keywords or facts.
func TestGroundingGoodRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("builds several conversations")
	}
	base := instructionPrompt(t)
	var g groundingTally
	measure := func(name string, turns []higmem.TurnInput) {
		m := open(t, higmem.Options{Mode: higmem.ModeOffline, Embedder: hashing.New(0)})
		if _, err := m.Add(t.Context(), sp, turns); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		evs, err := m.Events(t.Context(), sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			g.judge(t, base, ev)
		}
	}
	turns, _ := example(t)
	measure("example", turns)
	measure("friendsqa", loadConversation(t, "testdata/friendsqa/s01e21-scene1.json").Turns)
	data := filepath.Join(*dataDir, "locomo_dev.json")
	if *dataDir == "" {
		data = "../shared/data/locomo_dev.json"
		if _, err := os.Stat(data); err != nil {
			data = "../../shared/data/locomo_dev.json"
		}
	}
	// Without the dev data (CI has none) the in-repo conversations give 16
	// records; with it, well over a hundred.
	least := 10
	if samples, err := locomo.Load(data); err == nil {
		least = 100
		for _, s := range samples {
			var in []higmem.TurnInput
			for _, sess := range s.Sessions[:min(2, len(s.Sessions))] {
				for _, tr := range sess.Turns {
					in = append(in, higmem.TurnInput{ID: tr.DiaID, SessionID: strconv.Itoa(sess.N), Speaker: tr.Speaker,
						Text: tr.Text, Time: sess.DateTime})
				}
			}
			measure(s.ID, in)
		}
	} else {
		t.Logf("LoCoMo dev data not found (%v): measured on the example and FriendsQA only", err)
	}
	rate := func(n, of int) float64 {
		if of == 0 {
			return 0
		}
		return 100 * float64(n) / float64(of)
	}
	t.Logf("good records: %d; summaries rejected %d (%.2f%%), titles rejected %d (%.2f%%), keywords dropped %d of %d (%.2f%%), facts dropped %d of %d (%.2f%%)",
		g.records, g.summaries, rate(g.summaries, g.records), g.titles, rate(g.titles, g.records),
		g.keywordsDropped, g.keywords, rate(g.keywordsDropped, g.keywords), g.factsDropped, g.facts, rate(g.factsDropped, g.facts))
	for _, e := range g.examples {
		t.Logf("  %s", e)
	}
	if g.records < least {
		t.Fatalf("only %d records measured, want at least %d", g.records, least)
	}
	if rate(g.summaries, g.records) > 1 || rate(g.titles, g.records) > 1 || rate(g.keywordsDropped, g.keywords) > 5 || rate(g.factsDropped, g.facts) > 5 {
		t.Errorf("grounding rejects good records")
	}
}

// A worse record never replaces a better one: an event whose summary the
// offline rules wrote (the first batch's reply was unusable) keeps it
// when a later reply rewrites the event as the model speaking for itself
// ("I am a greyhound dog…", which the real Ollama server wrote over a good
// summary and main stored).
func TestRolePlayNeverReplacesRecord(t *testing.T) {
	turns, _ := example(t)
	first, second := turns[:3], turns[3:6]
	var showed bool
	model := llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		user := req.Messages[len(req.Messages)-1].Content
		if req.Operation != prompt.BuildBatch {
			return llm.Response{Content: `{}`}, nil
		}
		ids := newTurnIDs(user)
		if !strings.Contains(user, "(event e1)") {
			return llm.Response{Content: `{"turns":[],"events":[]}`}, nil // unusable: offline fallback
		}
		showed = true
		var items []string
		for _, id := range ids {
			items = append(items, `{"id":"`+id+`","keywords":["pottery"],"tags":["hobby"],"context":"","events":["e1"]}`)
		}
		return llm.Response{Content: `{"turns":[` + strings.Join(items, ",") + `],"events":[{"id":"e1","summary":"I am a greyhound dog, and I am very happy to be here with you.","keywords":["greyhound"],"tags":[],"new_facts":[]}]}`}, nil
	})
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: model, Embedder: hashing.New(0), BatchSize: 3, KEvent: 5})
	if _, err := m.Add(t.Context(), sp, first); err != nil {
		t.Fatal(err)
	}
	before, err := m.Events(t.Context(), sp)
	if err != nil || len(before) == 0 {
		t.Fatalf("%d events (%v)", len(before), err)
	}
	res, err := m.Add(t.Context(), sp, second)
	if err != nil {
		t.Fatal(err)
	}
	if !showed {
		t.Fatal("the second batch's prompt did not show event e1: the test does not test")
	}
	after, err := m.Events(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range after {
		if strings.Contains(ev.Event.Summary, "greyhound dog") {
			t.Errorf("event %s stored the role-play record %q (was %q)", ev.Event.ID, ev.Event.Summary, before[0].Event.Summary)
		}
		if ev.Event.ID == "e1" && ev.Event.Summary == "" {
			t.Errorf("event e1 lost its summary")
		}
	}
	if !strings.Contains(strings.Join(callChecks(res), "\n"), memcheck.RolePlay) {
		t.Errorf("no call says role_play: %q", callChecks(res))
	}
}

func callChecks(res *higmem.AddResult) []string {
	var out []string
	for _, c := range res.Calls {
		out = append(out, c.Check)
	}
	return out
}
