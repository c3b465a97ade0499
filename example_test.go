package higmem_test

import (
	"context"
	"fmt"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/llm/llmtest"
)

// The zero Options give an in-memory, offline memory: no model, no network.
func Example() {
	ctx := context.Background()
	m, err := higmem.Open(ctx, higmem.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	sp := higmem.Space{UserID: "alice"}
	_, err = m.Add(ctx, sp, []higmem.TurnInput{
		{ID: "1", Speaker: "alice", Text: "I adopted a greyhound called Biscuit two days ago!", Time: "2024-04-06T10:02:00Z"},
		{ID: "2", Speaker: "bob", Text: "Greyhounds are such gentle dogs.", Time: "2024-04-06T10:03:00Z"},
		{ID: "3", Speaker: "alice", Text: "My pottery class starts again on Friday.", Time: "2024-04-06T10:04:00Z"},
	})
	if err != nil {
		panic(err)
	}
	res, err := m.Retrieve(ctx, sp, "What is the name of Alice's dog?", higmem.RetrieveOptions{MaxEvidence: 2})
	if err != nil {
		panic(err)
	}
	for _, e := range res.Evidence {
		fmt.Printf("[%s] %s | %s: %s %v\n", e.Turn.ID, e.Date, e.Turn.Speaker, e.Turn.Text, e.Times)
	}
	// Output:
	// [1] 6 April 2024 | alice: I adopted a greyhound called Biscuit two days ago! [two days ago = 4 April 2024]
	// [2] 6 April 2024 | bob: Greyhounds are such gentle dogs. []
}

// With a model, Ask writes an answer from the evidence. Here the model is
// the scripted fake used in tests; any llm.Model works, such as an
// llm/openai client.
func ExampleMemory_Ask() {
	ctx := context.Background()
	m, err := higmem.Open(ctx, higmem.Options{MemoryModel: llmtest.NewScripted()})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	sp := higmem.Space{UserID: "alice"}
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{
		{ID: "1", Speaker: "alice", Text: "My neighbour Jonas looks after Biscuit when I travel.", Time: "2024-05-25"},
	}); err != nil {
		panic(err)
	}
	ans, err := m.Ask(ctx, sp, "Who looks after Biscuit?", higmem.RetrieveOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(ans.Trace.Mode, ans.Trace.Rounds, "rounds")
	fmt.Println(ans.IDs())
	// Output:
	// default 2 rounds
	// [1]
}
