package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/store"
)

func TestKeywordsOf(t *testing.T) {
	tests := []struct {
		text    string
		n       int
		exclude []string
		want    []string
	}{
		// "Biscuit" is a name (capitalised mid-sentence); then the longest
		// words, ties by position.
		{"Wow, I adopted a greyhound called Biscuit from the shelter!", 3, nil, []string{"adopted", "greyhound", "Biscuit"}},
		// "Thanks" and "Really" start sentences and are fillers; "Sweden"
		// mid-sentence is a name and ranks first.
		{"Thanks! Really. My grandma brought this necklace from Sweden.", 2, nil, []string{"necklace", "Sweden"}},
		{"Caroline, the painting for Melanie is done.", 5, []string{"caroline", "melanie"}, []string{"painting", "done"}},
		{"yeah yeah cool", 3, nil, nil},
	}
	for _, tt := range tests {
		if got := Keywords(tt.text, tt.n, NameSet(tt.exclude...)); !slices.Equal(got, tt.want) {
			t.Errorf("Keywords(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
		}
	}
}

func TestTopicTextDropsMediumWords(t *testing.T) {
	tr := store.Turn{Text: "Look at this!", Attachments: []store.Attachment{{Kind: "image", Caption: "a photo of a sunset over a lake"}}}
	got := TopicText(tr)
	if strings.Contains(got, "photo") || !strings.Contains(got, "sunset over a lake") || !strings.HasPrefix(got, "Look at this!") {
		t.Errorf("TopicText = %q", got)
	}
}

func TestEntitiesOf(t *testing.T) {
	got := Entities("Jonas and I visited the Museum of Modern Art. I'm tired, The end.", "Alice")
	want := []string{"Alice", "Jonas", "Museum of Modern Art"}
	if !slices.Equal(got, want) {
		t.Errorf("Entities = %q, want %q", got, want)
	}
}

func TestHasNumber(t *testing.T) {
	for text, want := range map[string]bool{
		"We have 3 kids":               true,
		"I ran twice this week":        true,
		"Three of us went":             true,
		"Nothing countable in here...": false,
	} {
		if got := HasNumber(text); got != want {
			t.Errorf("HasNumber(%q) = %v", text, got)
		}
	}
}
