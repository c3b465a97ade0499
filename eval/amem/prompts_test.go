package amem

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

var goldenCases = []struct {
	file string
	name string
	data any
}{
	{"note", PromptNote, NoteData{Content: NoteContent("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.")}},
	{"evolve", PromptEvolve, EvolveData{
		Content:  NoteContent("Melanie", "Wow, that's cool, Caroline! What happened that was so awesome?"),
		Context:  "Melanie reacts to Caroline's support group visit.",
		Keywords: []string{"support group", "reaction"},
		Neighbours: []Neighbour{
			{Index: 0, Time: "1:56 pm on 8 May, 2023", Content: NoteContent("Caroline", "I went to a LGBTQ support group yesterday."),
				Context: "Caroline describes a support group.", Keywords: []string{"LGBTQ", "support group"}, Tags: []string{"identity", "community"}},
			{Index: 3, Time: "1:56 pm on 8 May, 2023", Content: NoteContent("Caroline", "The stories were inspiring."),
				Context: "General", Keywords: nil, Tags: nil},
		},
	}},
	{"evolve_first", PromptEvolve, EvolveData{Content: NoteContent("Caroline", "Hey Mel!"), Context: "A greeting.", Keywords: []string{"greeting"}}},
	{"query", PromptQuery, QueryData{Question: "When did Caroline go to the LGBTQ support group?"}},
	{"answer", PromptAnswer, AnswerData{Question: "What inspired Caroline?", Context: RenderContext([]Entry{
		{Note: Note{ID: "D1:3", Content: NoteContent("Caroline", "The stories were inspiring."), Time: "1:56 pm on 8 May, 2023",
			Keywords: []string{"stories", "inspiring"}, Context: "Caroline found the stories inspiring.", Tags: []string{"identity"}}},
	})}},
	{"answer_temporal", PromptAnswer, AnswerData{Question: "When did Caroline go to the support group?", Temporal: true}},
}

// TestGolden pins the rendered prompts; run with -update after an intended
// change and bump PromptVersion.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.file, func(t *testing.T) {
			p, err := Render(c.name, c.data)
			if err != nil {
				t.Fatal(err)
			}
			got := "SYSTEM:\n" + p.System + "\n\nUSER:\n" + p.User + "\n"
			path := filepath.Join("testdata", c.file+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("prompt %s changed (run go test -update and bump PromptVersion):\n--- got\n%s\n--- want\n%s", c.name, got, want)
			}
			if !json.Valid(p.Schema) {
				t.Errorf("schema of %s is not valid JSON", c.name)
			}
		})
	}
}

// TestAnswerPromptNeverOffersTrap checks that the answer prompt has no
// category-5 style two-option form: it offers no answer to choose from.
func TestAnswerPromptNeverOffersTrap(t *testing.T) {
	for _, temporal := range []bool{false, true} {
		p, err := Render(PromptAnswer, AnswerData{Question: "What car does Ann drive?", Temporal: temporal})
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"(a)", "(b)", "Not mentioned", "option"} {
			if strings.Contains(p.User, bad) {
				t.Errorf("answer prompt (temporal=%v) contains %q", temporal, bad)
			}
		}
	}
}

func TestRenderUnknown(t *testing.T) {
	if _, err := Render("nope", nil); err == nil {
		t.Fatal("want an error for an unknown prompt")
	}
}
