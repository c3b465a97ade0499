package memcheck

import (
	"testing"

	"github.com/higmem/higmem/internal/prompt"
)

// Good records written the ways a model may write them (paraphrase,
// stemming, case, possessives, abbreviations, dates in other forms, a
// month worked out from "last month") pass the grounding checks; records
// of people, dates or things the turns never mention, or in the model's
// own voice, do not.
func TestGroundingParaphrase(t *testing.T) {
	p := render(t, prompt.EventUpdate) // event e1 (Caroline's support group) over turns D1:3 to D1:5
	s := FromPrompt(p)
	good := []string{
		"Caroline went to an LGBTQ support group on 7 May 2023 and found the transgender stories inspiring.",
		"On May 7, 2023 Caroline attended a support meeting for LGBTQ people; Melanie asked her about it.",
		"caroline's support group visit was powerful, and the stories inspired her to paint.",
		"Caroline, inspired by transgender stories she heard at the group, wants to start painting.",
		"On 2023-05-07 Caroline visited the LGBTQ group; Melanie thought it was cool.",
		"In early May 2023 Caroline told Melanie about a powerful support group.",
		"Caroline attended the support group in April or May 2023.", // a month beside one the turns name
		"Caroline (at the support group) heard transgender stories; Melanie was curious about it.",
	}
	for _, g := range good {
		r := prompt.EventUpdateReply{Summary: g, Keywords: []string{"support groups", "Transgender Stories", "painting"}}
		if res := EventUpdate(&r, s, Caps{}); res.Verdict == Rejected || res.Count(Ungrounded)+res.Count(RolePlay) > 0 {
			t.Errorf("good record %q: %v", g, res)
		}
	}
	bad := map[string]string{
		"Mike Johnson and David Brito planned a fundraiser at the community center.": Ungrounded,
		"Caroline went to the support group in 1998.":                                Ungrounded,
		"Caroline went to the support group in November 2023.":                       Ungrounded,
		"The team launched a new product line for the autumn market.":                Ungrounded,
		"I am a greyhound dog. I love to run.":                                       RolePlay,
		"I'm Caroline and I went to a support group.":                                RolePlay,
	}
	for b, want := range bad {
		r := prompt.EventUpdateReply{Summary: b}
		if res := EventUpdate(&r, s, Caps{}); res.Verdict != Rejected || res.Count(want) == 0 {
			t.Errorf("bad record %q: %v, want rejected as %s", b, res, want)
		}
	}
	// The previous record supports its own words: "Caroline's support
	// group visit" and its facts may be restated.
	r := prompt.EventUpdateReply{Summary: "Caroline's support group visit, as recorded, continues.", Keywords: []string{"LGBTQ", "mike_johnson_david_brito"}}
	res := EventUpdate(&r, s, Caps{})
	if res.Verdict != Repaired || len(r.Keywords) != 1 || r.Keywords[0] != "LGBTQ" || res.Count(Ungrounded) != 1 {
		t.Errorf("keywords %q: %v, want the joined names dropped", r.Keywords, res)
	}
}

// A title is grounded in the turns that joined its event, not in the
// whole batch; an id is never a title.
func TestGroundingTitles(t *testing.T) {
	p := render(t, prompt.BuildBatch) // new turns D1:3 (Caroline), D1:4 (Melanie), D1:5 (Caroline)
	for title, want := range map[string]string{
		"Caroline's support group":        "",
		"LGBTQ support group, St. Louis?": Ungrounded,
		"D1:4":                            JunkTitle,
		"S1:4":                            JunkTitle,
		"[D3:7]":                          JunkTitle,
		"I went to a support group":       RolePlay,
	} {
		r := prompt.BuildBatchReply{Turns: []prompt.BatchTurn{{ID: "D1:3", Keywords: []string{"support group"}, Events: []string{"new:1"}}},
			Events: []prompt.BatchEvent{{ID: "new:1", Title: title, EventUpdateReply: prompt.EventUpdateReply{Summary: "Caroline went to a support group."}}}}
		res := BuildBatch(&r, FromPrompt(p), Caps{})
		got := ""
		for _, pr := range res.Problems {
			if pr.Field == "events[0].title" {
				got = pr.Kind
			}
		}
		if got != want {
			t.Errorf("title %q: %v, want %q", title, res, want)
		}
	}
}

// A turn note whose context only names the conversation says nothing:
// Gemma 3 270M through Ollama, in paper mode, wrote the context "the
// conversation" for turn after turn, and with no event summary from the
// model the annotation's context stood in as the event's summary
// (testdata/ollama-gemma3-270m-paper.jsonl). A context about something in
// the conversation is kept.
func TestTurnNoteContextOfTheConversationVacuous(t *testing.T) {
	p := render(t, prompt.TurnNote)
	for ctx, want := range map[string]int{
		"the conversation":   1,
		"The conversations.": 1,
		"Caroline tells Melanie about the LGBTQ support group in their conversation.": 0,
	} {
		r := prompt.TurnNoteReply{Keywords: []string{"support group"}, Context: ctx}
		res := TurnNote(&r, FromPrompt(p), Caps{})
		if res.Count(Vacuous) != want || (want == 1) != (r.Context == "") {
			t.Errorf("context %q: %v (kept %q), want %d vacuous", ctx, res, r.Context, want)
		}
	}
}
