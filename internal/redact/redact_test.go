package redact

import (
	"encoding/json"
	"testing"

	"github.com/higmem/higmem/store"
)

// TestTrace checks what counts as the text of a deleted turn: its words no
// remaining turn uses, and its opening verbatim; and that the quick byte
// test never says no where the full one says yes.
func TestTrace(t *testing.T) {
	gone := store.Turn{ID: "s1", Speaker: "Alice", Text: "My bank password is Hunter2 <not> \"quoted\", keep it."}
	rest := []store.Turn{gone,
		{ID: "b1", Speaker: "Bob", Text: "Which bank is it? Keep my password too."},
		{ID: "b2", Speaker: "Alice", Text: "It is the river bank, not the other one."},
	}
	tr := New(gone, rest)
	for _, w := range []string{"hunter2", "quoted"} {
		if !tr.words[w] {
			t.Errorf("words %v lack %q", tr.words, w)
		}
	}
	for _, w := range []string{"bank", "password", "keep", "alice", "my"} {
		if tr.words[w] {
			t.Errorf("words %v hold %q, which a remaining turn uses or is too short", tr.words, w)
		}
	}
	if tr.phrase != "my bank password is hunt" {
		t.Errorf("phrase %q", tr.phrase)
	}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Alice shared HUNTER2 with Bob", true},
		{"hunter2's", true},
		{"the password was 'quoted'", true},
		{"my bank password is hunted", true}, // the opening, verbatim
		{"Alice talks about her bank password", false},
		{"hunter", false},
	} {
		if got := tr.In(tc.text); got != tc.want {
			t.Errorf("In(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	bodies := []any{
		store.Event{ID: "e1", Title: "x", TurnIDs: []string{"b1", "s1"}},
		store.Event{ID: "e2", Summary: "line one\nHunter2 <b>"},
		store.Event{ID: "e3", Facts: []store.Fact{{Text: "a fact", TurnID: "s1"}}},
		store.Annotation{TurnID: "b1", Context: "Bob asks which bank"},
		store.Link{Source: "s1", Target: "b1", Relation: "answers"},
		store.Event{ID: "s1", Title: "an event whose id is the turn's"},
		map[string]string{"summary": "My bank password is hunter"},
	}
	want := []bool{true, true, true, false, true, false, true}
	for i, b := range bodies {
		raw, _ := json.Marshal(b)
		full := tr.InJSON(raw)
		if full != want[i] {
			t.Errorf("InJSON(%s) = %v, want %v", raw, full, want[i])
		}
		if full && !tr.MayHold(raw) {
			t.Errorf("MayHold(%s) = false although InJSON is true", raw)
		}
	}
}
