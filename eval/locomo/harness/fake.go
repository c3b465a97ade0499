package harness

import (
	"fmt"

	"github.com/higmem/higmem/eval/amem/amemfake"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
)

// FakeModel returns a fake model for runs without an endpoint. The only
// name is "scripted": llmfake.Scripted (every higmem prompt, the judge
// included) behind amemfake.Scripted (A-Mem's prompts), deterministic,
// with token counts estimated at 4 bytes per token. It counts calls and
// tokens; its answers measure nothing about quality. "real-junk" answers
// higmem's prompts with the junk shapes a small real model gave
// (llmfake.RealJunk), to see the fallbacks and warnings it causes.
func FakeModel(name string) (llm.Model, error) {
	switch name {
	case "scripted":
		return amemfake.Wrap(llmfake.NewScripted()), nil
	case "real-junk":
		return amemfake.Wrap(&llmfake.RealJunk{}), nil
	}
	return nil, fmt.Errorf("harness: unknown fake model %q (want scripted or real-junk)", name)
}
