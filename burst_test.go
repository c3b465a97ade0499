package higmem

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
)

// burstAroundOne is 40 messages by Ann, one by Bob (id "b", the only turn
// about a puppy), then 40 more by Ann, all in one session: a burst of one
// speaker around the other's single message.
func burstAroundOne(annText string) []TurnInput {
	topics := []string{"gardening", "the weather", "football", "cooking pasta", "my commute", "the new phone", "a movie", "holidays"}
	ann := func(i int) TurnInput {
		return TurnInput{ID: fmt.Sprint("a", i), Speaker: "Ann", Text: fmt.Sprintf(annText, i, topics[i%len(topics)]), Time: "2023-04-01T10:00:00Z"}
	}
	var turns []TurnInput
	for i := range 40 {
		turns = append(turns, ann(i))
	}
	turns = append(turns, TurnInput{ID: "b", Speaker: "Bob", Text: "I adopted a golden retriever puppy named Biscuit.", Time: "2023-04-01T10:00:00Z"})
	for i := 40; i < 80; i++ {
		turns = append(turns, ann(i))
	}
	return turns
}

// TestMostRelevantTurnIsEvidence (issue 32 (2)): offline, the turn search
// ranks first is always in the evidence, whatever the context score makes
// of the burst around it (its neighbours' runs and the length prior lift
// Ann's messages above Bob's), and it survives MaxEvidence and a token
// budget that keep fewer turns; K stays what the stopping rule chose.
func TestMostRelevantTurnIsEvidence(t *testing.T) {
	ctx := context.Background()
	sp := Space{UserID: "u"}
	for _, annText := range []string{
		"Ann message %d about %s and other things.",
		"Ann talks about her dog and %d walks in %s.",
		"My puppy did %d funny things during %s.",
	} {
		for _, emb := range []bool{false, true} {
			o := Options{}
			if emb {
				o.Embedder = hashing.New(256)
			}
			m, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Add(ctx, sp, burstAroundOne(annText)); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"What is the name of Bob's puppy?", "What is the name of the puppy?", "Which dog did someone adopt?"} {
				for _, ro := range []RetrieveOptions{{}, {MaxEvidence: 1}, {MaxEvidence: 3}, {EvidenceTokens: 40}} {
					res, err := m.Retrieve(ctx, sp, q, ro)
					if err != nil {
						t.Fatal(err)
					}
					search := res.Trace.Stage("search")
					name := fmt.Sprintf("%.12q embedder %v, %q, max evidence %d, tokens %d", annText, emb, q, ro.MaxEvidence, ro.EvidenceTokens)
					if len(search) == 0 || search[0] != "b" {
						t.Fatalf("%s: search %v, want Bob's turn first (test setup)", name, search)
					}
					ids := res.IDs()
					if !slices.Contains(ids, "b") {
						t.Errorf("%s: the most relevant turn is not evidence: %v (notes %v)", name, ids, res.Trace.Notes)
					}
					if ro.MaxEvidence == 0 && ro.EvidenceTokens == 0 && (len(ids) < 6 || len(ids) > 9) {
						t.Errorf("%s: K %d, want the stopping rule's 6 to 9", name, len(ids))
					}
					if ro.MaxEvidence > 0 && len(ids) > ro.MaxEvidence {
						t.Errorf("%s: %d turns over MaxEvidence", name, len(ids))
					}
				}
			}
			m.Close()
		}
	}
}

// TestMostRelevantTurnNoteOnlyWhenMoved: where the selection already holds
// the most relevant turn (alternating speakers, no burst), nothing is
// moved and no note is written.
func TestMostRelevantTurnNoteOnlyWhenMoved(t *testing.T) {
	ctx := context.Background()
	m, err := Open(ctx, Options{Embedder: hashing.New(256)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "u"}
	var turns []TurnInput
	for i := range 40 {
		turns = append(turns, TurnInput{ID: fmt.Sprint("t", i), Speaker: []string{"Ann", "Bob"}[i%2],
			Text: fmt.Sprintf("Message %d about gardening and the weather.", i), Time: "2023-04-01T10:00:00Z"})
	}
	turns[21].Text = "I adopted a golden retriever puppy named Biscuit."
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "What is the name of Bob's puppy?", RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.IDs(), "t21") || slices.ContainsFunc(res.Trace.Notes, func(n string) bool { return strings.Contains(n, "most relevant turn") }) {
		t.Errorf("evidence %v, notes %v", res.IDs(), res.Trace.Notes)
	}
}
