package higmem

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// userAssistantChat returns a user–assistant chat of n sessions: in each,
// the user states one fact in a short message and the assistant answers
// with a long reply that elaborates on pets, adoption and names, as chat
// assistants do, so that every reply matches a question about the user's
// dog better, word for word, than the one short message that answers it.
func userAssistantChat(n int) []TurnInput {
	facts := []string{
		"I adopted a dog from the shelter last week and named him Biscuit.",
		"My sister is moving to Lisbon in the spring for her new job.",
		"I started training for a half marathon in October.",
		"We repainted the kitchen a pale green over the weekend.",
		"I finally finished reading that long history of Byzantium.",
	}
	filler := "Adopting a dog is a big step, and choosing a name for a new dog is part of the fun. " +
		"Many people who adopt a dog from a shelter find the first weeks an adjustment for the dog and for them. " +
		"A dog you adopted will need a routine: walks, meals and rest at the same times each day. " +
		"Names matter too: a short name is easier for a dog to learn than a long one. " +
		"If you adopted an older dog, be patient; a new home takes time. " +
		"Let me know if you want tips on training, feeding or choosing toys for a dog. "
	var out []TurnInput
	for s := range n {
		sess := fmt.Sprint(s + 1)
		fact := facts[s%len(facts)]
		if s%len(facts) == 0 && s != 0 {
			fact = fmt.Sprintf("Today I bought a new bike, my old one was stolen in session %d.", s)
		}
		out = append(out,
			TurnInput{ID: fmt.Sprintf("u%d", s), SessionID: sess, Speaker: "User", Text: fact},
			TurnInput{ID: fmt.Sprintf("a%d", s), SessionID: sess, Speaker: "Assistant",
				Text: "Thanks for sharing that. " + strings.Repeat(filler, 2) + "Anything else on your mind today?"})
	}
	return out
}

// TestOfflineUserAssistantFindsUserFact: in a chat of short user facts and
// long assistant replies, offline mode adapts to the shape and selects the
// user's message that answers the question, within the evidence budget,
// rather than the long replies that only share its words.
func TestOfflineUserAssistantFindsUserFact(t *testing.T) {
	ctx := t.Context()
	m, err := Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "ua"}
	if _, err := m.Add(ctx, sp, userAssistantChat(30)); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "What name did I give the dog I adopted?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.IDs(), "u0") {
		t.Errorf("evidence %v lacks u0, the user's message that names the dog", res.IDs())
	}
}
