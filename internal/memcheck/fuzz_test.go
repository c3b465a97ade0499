package memcheck

import (
	"encoding/json"
	"testing"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
)

// seeds adds the junk shapes of kind as fuzz seeds.
func seeds(f *testing.F, kind string) prompt.Prompt {
	p := render(f, kind)
	for _, s := range llmtest.JunkShapes {
		if s.Kind == kind && !s.Syntax {
			f.Add(s.Reply(request(p)))
		}
	}
	return p
}

// allowedLeft are the problems a second pass may still report: gaps the
// caller fills, never junk.
func allowedLeft(r Result) bool {
	for _, p := range r.Problems {
		if p.Kind != MissingID && p.Kind != Empty {
			return false
		}
	}
	return r.Verdict != Rejected || len(r.Problems) > 0
}

func FuzzBuildBatch(f *testing.F) {
	p := seeds(f, prompt.BuildBatch)
	s := FromPrompt(p)
	f.Fuzz(func(t *testing.T, content string) {
		var r prompt.BuildBatchReply
		if json.Unmarshal([]byte(content), &r) != nil {
			return
		}
		res := BuildBatch(&r, s, Caps{})
		if res.Verdict == Rejected {
			return
		}
		shown := set(s.New)
		labels := map[string]bool{}
		joined := map[string]bool{}
		seen := map[string]bool{}
		for _, it := range r.Turns {
			if !shown[it.ID] || seen[it.ID] {
				t.Fatalf("turn id %q kept (shown %v, twice %v)", it.ID, shown[it.ID], seen[it.ID])
			}
			seen[it.ID] = true
			if len(it.Events) > 3 {
				t.Fatalf("%d events for %s", len(it.Events), it.ID)
			}
			for _, e := range it.Events {
				joined[e] = true
				if newLabel.MatchString(e) {
					labels[e] = true
				} else if !s.events[e] {
					t.Fatalf("event %q neither shown nor a label", e)
				}
			}
		}
		if len(labels) > len(s.New) {
			t.Fatalf("%d new events for %d turns", len(labels), len(s.New))
		}
		recorded := map[string]bool{}
		for _, e := range r.Events {
			if !joined[e.ID] || recorded[e.ID] {
				t.Fatalf("record of %q kept (joined %v, twice %v)", e.ID, joined[e.ID], recorded[e.ID])
			}
			recorded[e.ID] = true
			if e.Title != "" && (s.junkTitle(e.Title) != "" || !labels[e.ID]) {
				t.Fatalf("title %q kept for %s", e.Title, e.ID)
			}
			if e.Summary != "" && s.junkText(e.Summary) != "" {
				t.Fatalf("junk summary kept: %q", e.Summary)
			}
			for _, k := range e.Keywords {
				if vacuous(k) || jsonish(k) {
					t.Fatalf("junk keyword kept: %q", k)
				}
			}
		}
		b, _ := json.Marshal(&r)
		var again prompt.BuildBatchReply
		json.Unmarshal(b, &again)
		if res2 := BuildBatch(&again, s, Caps{}); !allowedLeft(res2) {
			t.Fatalf("second pass found %v in %s", res2, b)
		}
	})
}

func FuzzEventUpdate(f *testing.F) {
	p := seeds(f, prompt.EventUpdate)
	s := FromPrompt(p)
	f.Fuzz(func(t *testing.T, content string) {
		var r prompt.EventUpdateReply
		if json.Unmarshal([]byte(content), &r) != nil {
			return
		}
		res := EventUpdate(&r, s, Caps{})
		if res.Verdict == Rejected {
			return
		}
		if s.junkText(r.Summary) != "" || len(r.NewFacts) > 8 || len(r.Keywords) > 10 {
			t.Fatalf("kept summary %q, %d facts, %d keywords", r.Summary, len(r.NewFacts), len(r.Keywords))
		}
		for _, fct := range r.NewFacts {
			if s.junkText(fct.Fact) != "" || (fct.TurnID != "" && !s.turns[fct.TurnID]) {
				t.Fatalf("kept fact %+v", fct)
			}
		}
		b, _ := json.Marshal(&r)
		var again prompt.EventUpdateReply
		json.Unmarshal(b, &again)
		if res2 := EventUpdate(&again, s, Caps{}); !allowedLeft(res2) {
			t.Fatalf("second pass found %v in %s", res2, b)
		}
	})
}
