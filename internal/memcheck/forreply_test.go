package memcheck

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/jsonx"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
)

// sameIDs reports whether a and b show the same turn, event and new ids.
func sameIDs(a, b Shown) bool {
	return slices.Equal(a.Turns, b.Turns) && slices.Equal(a.Events, b.Events) && slices.Equal(a.New, b.New) &&
		reflect.DeepEqual(a.turns, b.turns) && reflect.DeepEqual(a.events, b.events)
}

// TestIDsFromPromptMatchesFromPrompt checks that the ids ForReply reads for
// the id-only checks are FromPrompt's: on every fixture prompt, and on
// prompts of random lines mixing turn and event lines with data, people
// and "New turn" sections.
func TestIDsFromPromptMatchesFromPrompt(t *testing.T) {
	for kind := range fixtures {
		p := render(t, kind)
		if got, want := idsFromPrompt(p), FromPrompt(p); !sameIDs(got, want) {
			t.Errorf("%s: ids %v %v %v; FromPrompt %v %v %v", kind, got.Turns, got.Events, got.New, want.Turns, want.Events, want.New)
		}
	}
	pieces := []string{"[D1:3] 8 May 2023 | Ann: hi", "  [D2:1] x", "[] y", "[a]b", "(event e1) Title :: sum", "(event ) t",
		"Keywords: a, b", "Tags: x", "Question: what?", "- (7 May) fact", "- [D3:3] 1 | B: known", "- plain",
		knownHeader + " Ann:", "Known now: x", "People in the event: Ann", "Current profile of Ann", "New turns:", "New turn:",
		"Earlier turns:", "Fact sheet:", "", "   ", "Instructions here.", "[D4:4] with : colon"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var sys, user []string
		for range rng.IntN(6) {
			sys = append(sys, pieces[rng.IntN(len(pieces))])
		}
		for range rng.IntN(20) {
			user = append(user, pieces[rng.IntN(len(pieces))])
		}
		p := prompt.Prompt{System: strings.Join(sys, "\n"), User: strings.Join(user, "\n")}
		if rng.IntN(4) == 0 {
			p.User += "\n"
		}
		if got, want := idsFromPrompt(p), FromPrompt(p); !sameIDs(got, want) {
			t.Fatalf("prompt %q:\nids %v %v %v\nFromPrompt %v %v %v", p.System+"\n"+p.User, got.Turns, got.Events, got.New, want.Turns, want.Events, want.New)
		}
	}
}

// TestForReplyChecksAlike checks that every reply (the junk shapes and
// good ones) gets the same result and repair with ForReply's Shown as with
// FromPrompt's, and that ForReply reads the ids alone only for the
// replies whose checks read nothing else.
func TestForReplyChecksAlike(t *testing.T) {
	replies := map[string][]string{
		prompt.Select:  {`{"turn_ids":["D1:3","D1:5","D1:3","D9:9"," D1:4 "]}`, `{"turn_ids":[]}`, `{"turn_ids":["x"]}`},
		prompt.Predict: {`{"turn_ids":["D1:4","D1:4","D1:3","D1:5"]}`, `{"turn_ids":["e1"]}`},
		prompt.Filter:  {`{"relevant_ids":["D1:5","nope","D1:3"]}`, `{"relevant_ids":[]}`},
	}
	for _, shape := range llmtest.JunkShapes {
		replies[shape.Kind] = append(replies[shape.Kind], shape.Reply(request(render(t, shape.Kind))))
	}
	for kind, contents := range replies {
		p := render(t, kind)
		caps := Caps{}
		switch d := fixtures[kind].(type) {
		case prompt.PredictData:
			caps.IDs = d.Max
		case prompt.SelectData:
			caps.IDs = d.Max
		}
		for _, content := range contents {
			doc, err := jsonx.Parse(content, p.Schema)
			if err != nil {
				continue
			}
			wantRes, wantReply, err := Check(kind, doc, FromPrompt(p), caps)
			if err != nil {
				t.Fatal(err)
			}
			reply := newReply(kind)
			if err := json.Unmarshal(doc, reply); err != nil {
				t.Fatal(err)
			}
			gotRes, _ := Reply(reply, ForReply(reply, p), caps)
			if !reflect.DeepEqual(gotRes, wantRes) || !reflect.DeepEqual(reply, wantReply) {
				t.Errorf("%s %s: ForReply %v %+v; FromPrompt %v %+v", kind, content, gotRes, reply, wantRes, wantReply)
			}
		}
		light := ForReply(newReply(kind), p).instr == nil
		if want := kind == prompt.Select || kind == prompt.Predict || kind == prompt.Filter; light != want {
			t.Errorf("%s: ForReply reads the ids alone = %v, want %v", kind, light, want)
		}
	}
}
