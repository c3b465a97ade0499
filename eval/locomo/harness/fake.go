package harness

import (
	"fmt"

	"github.com/higmem/higmem/eval/amem/amemtest"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// FakeModel returns a fake model for runs without an endpoint. The only
// name is "scripted": llmtest.Scripted (every higmem prompt, the judge
// included) behind amemtest.Scripted (A-Mem's prompts), deterministic,
// with token counts estimated at 4 bytes per token. It counts calls and
// tokens; its answers measure nothing about quality. "real-junk" answers
// higmem's prompts with the junk shapes a small real model gave
// (llmtest.RealJunk), to see the fallbacks and warnings it causes.
func FakeModel(name string) (llm.Model, error) {
	switch name {
	case "scripted":
		return amemtest.Wrap(llmtest.NewScripted()), nil
	case "real-junk":
		return amemtest.Wrap(&llmtest.RealJunk{}), nil
	}
	return nil, fmt.Errorf("harness: unknown fake model %q (want scripted or real-junk)", name)
}
