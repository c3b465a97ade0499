package llm

import (
	"context"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"

	"github.com/higmem/higmem/internal/prompt"
)

// fixed is a model that always replies with the same content.
type fixed string

func (f fixed) Complete(ctx context.Context, req Request) (Response, error) {
	return Response{Content: string(f), Model: "fixed"}, nil
}

// BenchmarkCompleteJSONSelect measures CompleteJSON's work on the bench's
// select replies (the model itself costs nothing here).
func BenchmarkCompleteJSONSelect(b *testing.B) {
	calls := prompttest.BenchSelects(b)
	reqs := make([]Request, len(calls))
	for i, c := range calls {
		reqs[i] = Request{Messages: []Message{{Role: "system", Content: c.System}, {Role: "user", Content: c.User}},
			Schema: selectSchema(b), SchemaName: prompt.Select, Operation: prompt.Select}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := calls[i%len(calls)]
		var out prompt.SelectReply
		if _, err := CompleteJSON(b.Context(), fixed(c.Reply), reqs[i%len(calls)], &out); err != nil || len(out.TurnIDs) == 0 {
			b.Fatal(err)
		}
	}
}
