package llm_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/higmem/higmem/llm"
)

// fixedModel answers every request with the same usage, failing when the
// operation is "fail" and reporting a cache hit when it is "cached".
func fixedModel(name string) llm.Model {
	return llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		switch req.Operation {
		case "fail":
			return llm.Response{}, llm.ErrUnavailable
		case "cached":
			return llm.Response{Content: "{}", Model: name, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10}, Cached: true}, nil
		}
		return llm.Response{Content: "{}", Model: name, Usage: llm.Usage{PromptTokens: 1000, CompletionTokens: 100}}, nil
	})
}

func TestMeter(t *testing.T) {
	m := llm.NewMeter(llm.Prices{
		"cheap":  {Prompt: 0.15, Completion: 0.60},
		"strong": {Prompt: 2.50, Completion: 10},
	})
	memory := m.Wrap(llm.RoleMemory, "cheap", fixedModel("cheap-2024-07-18"))
	answer := m.Wrap(llm.RoleAnswer, "strong", fixedModel("strong"))

	ctx := t.Context()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			memory.Complete(ctx, llm.Request{Operation: "annotate"})
			memory.Complete(ctx, llm.Request{Operation: "affiliate"})
		})
	}
	wg.Wait()
	answer.Complete(ctx, llm.Request{Operation: "answer"})
	answer.Complete(ctx, llm.Request{Operation: "cached"})
	if _, err := answer.Complete(ctx, llm.Request{Operation: "fail"}); !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("wrapped model changed the error: %v", err)
	}

	rows := m.Snapshot()
	type key struct {
		role      llm.Role
		op, model string
		calls     int
		errs      int
		cached    int
		prompt    int
	}
	want := []key{
		{llm.RoleAnswer, "answer", "strong", 1, 0, 0, 1000},
		{llm.RoleAnswer, "cached", "strong", 1, 0, 1, 0},
		{llm.RoleAnswer, "fail", "strong", 1, 1, 0, 0},
		{llm.RoleMemory, "affiliate", "cheap-2024-07-18", 50, 0, 0, 50000},
		{llm.RoleMemory, "annotate", "cheap-2024-07-18", 50, 0, 0, 50000},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, r := range rows {
		got := key{r.Role, r.Operation, r.Model, r.Calls, r.Errors, r.Cached, r.Usage.PromptTokens}
		if got != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got, want[i])
		}
	}
	// 50 annotate calls on the dated cheap model, priced by prefix:
	// 50 × (1000 × 0.15 + 100 × 0.60) / 1e6.
	if c := rows[4].Cost; math.Abs(c-50*(1000*0.15+100*0.60)/1e6) > 1e-12 {
		t.Errorf("annotate cost = %v", c)
	}
	if c := rows[0].Cost; math.Abs(c-(1000*2.5+100*10)/1e6) > 1e-12 {
		t.Errorf("answer cost = %v", c)
	}
	if rows[1].Cost != 0 {
		t.Errorf("cached call cost %v, want 0", rows[1].Cost)
	}
	total := m.Total()
	if total.Calls != 103 || total.Errors != 1 || total.Cached != 1 || total.Usage.PromptTokens != 101000 {
		t.Errorf("total = %+v", total)
	}
	wantCost := 100*(1000*0.15+100*0.60)/1e6 + (1000*2.5+100*10)/1e6
	if math.Abs(m.Cost()-wantCost) > 1e-12 {
		t.Errorf("Cost = %v, want %v", m.Cost(), wantCost)
	}

	// Repricing applies to past calls; Reset forgets them.
	m.SetPrice("strong", llm.Price{})
	if c := m.Snapshot()[0].Cost; c != 0 {
		t.Errorf("after SetPrice answer cost = %v", c)
	}
	m.Reset()
	if len(m.Snapshot()) != 0 || m.Cost() != 0 {
		t.Error("Reset kept rows")
	}
}

func TestMeterModelName(t *testing.T) {
	m := llm.NewMeter(nil)
	type namer interface{ ModelName() string }
	if got := m.Wrap(llm.RoleMemory, "x", fixedModel("y")).(namer).ModelName(); got != "x" {
		t.Errorf("ModelName = %q", got)
	}
	inner := m.Wrap(llm.RoleMemory, "inner-name", fixedModel("y"))
	if got := m.Wrap(llm.RoleAnswer, "", inner).(namer).ModelName(); got != "inner-name" {
		t.Errorf("ModelName from inner = %q", got)
	}
	// A failed call is recorded under the wrapper's name.
	m.Wrap(llm.RoleJudge, "judge-m", fixedModel("")).Complete(t.Context(), llm.Request{Operation: "fail"})
	if rows := m.Snapshot(); len(rows) != 1 || rows[0].Model != "judge-m" || rows[0].Errors != 1 {
		t.Errorf("rows = %+v", rows)
	}
}

func TestPricesLookup(t *testing.T) {
	p := llm.Prices{"gpt-4o": {Prompt: 2.5}, "gpt-4o-mini": {Prompt: 0.15}}
	for model, want := range map[string]float64{
		"gpt-4o": 2.5, "gpt-4o-2024-08-06": 2.5, "gpt-4o-mini": 0.15, "gpt-4o-mini-2024-07-18": 0.15, "llama3": 0,
	} {
		got, ok := p.Lookup(model)
		if got.Prompt != want || ok != (want != 0) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", model, got, ok, want)
		}
	}
	if c := p.Cost("llama3", llm.Usage{PromptTokens: 1e6}); c != 0 {
		t.Errorf("unknown model cost %v", c)
	}
}
