package harness

import (
	"context"
	"errors"
	"strings"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
)

// Judge grades an answer against the gold answer with the LLM-judge prompt
// (internal/prompt "judge": generous on wording, dates in any format). Run
// numbers the repetition: each run sends its own seed, so the responses of
// repeated runs are cached separately. An unusable reply gives a Verdict
// with Error set and a nil error; a failing endpoint gives an error.
func Judge(ctx context.Context, model llm.Model, question, gold, answer string, run int) (Verdict, error) {
	p, err := prompt.Render(prompt.Judge, prompt.JudgeData{Question: question, Gold: gold, Answer: answer})
	if err != nil {
		return Verdict{}, err
	}
	seed := int64(run)
	req := llm.Request{
		Messages:   []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Schema:     p.Schema,
		Constraint: p.Constraint,
		SchemaName: p.Name,
		Operation:  p.Name,
		Seed:       &seed,
		MaxTokens:  prompt.MaxTokens(prompt.Judge, 1),
	}
	var r prompt.JudgeReply
	resp, err := llm.CompleteJSON(ctx, model, req, &r)
	v := Verdict{Run: run, Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens, Cached: resp.Cached}
	switch {
	case err == nil:
		label := strings.ToUpper(strings.TrimSpace(r.Label))
		switch label {
		case "CORRECT":
			v.Correct = true
		case "WRONG":
		default:
			v.Error = "judge label " + label
		}
	case errors.Is(err, llm.ErrInvalidOutput):
		v.Error = err.Error()
	default:
		return v, err
	}
	return v, nil
}
