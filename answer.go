package higmem

import (
	"context"
	"strings"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
)

// NotMentioned is the answer given when memory does not hold the answer.
const NotMentioned = "Not mentioned in the conversation"

// Ask retrieves evidence for a question and has the answer model write an
// answer from it. The answer prompt is chosen by the system's own analysis
// of the question (temporal or not), never by any label.
//
// In offline mode there is no answer model: Ask returns the evidence with an
// empty Text and a Note saying that a written answer needs an LLM. When the
// LLM endpoint cannot be reached (llm.ErrUnavailable, llm.ErrRateLimited),
// Ask does not fail either: the evidence comes from the offline selection
// and the Note says why there is no answer.
func (m *Memory) Ask(ctx context.Context, sp Space, question string, ro RetrieveOptions) (*Answer, error) {
	rec := &recorder{}
	res, err := m.retrieve(ctx, sp, question, ro, rec)
	if err != nil {
		return nil, err
	}
	ans := &Answer{Result: *res}
	if m.opts.AnswerModel == nil {
		ans.Note = "no LLM configured: showing evidence only; set an LLM endpoint (see README) for written answers"
		return ans, nil
	}
	if down := rec.unreachable(); down != nil {
		ans.Note = "the LLM endpoint is unreachable: showing the evidence chosen by the offline rules, without a written answer (" + down.Error() + ")"
		return ans, nil
	}
	round := ans.Trace.Rounds + 1
	var r prompt.AnswerReply
	err = m.callModel(ctx, rec, llm.RoleAnswer, round, prompt.Answer, prompt.AnswerData{
		Question: res.Question,
		Turns:    evidenceTurns(res.Evidence),
		Temporal: res.Trace.Query.Temporal,
	}, &r)
	switch {
	case err == nil:
		ans.Text = strings.TrimSpace(r.Answer)
	case invalid(err):
		ans.Note = "the answer model's reply was unusable: " + err.Error()
	case llmDown(ctx, err):
		ans.Note = "the answer model is unreachable: showing the evidence without a written answer (" + err.Error() + ")"
	default:
		return nil, err
	}
	ans.Trace.Rounds = round
	ans.Trace.Calls = rec.calls
	return ans, nil
}

func evidenceTurns(ev []Evidence) []prompt.Turn {
	out := make([]prompt.Turn, len(ev))
	for i, e := range ev {
		out[i] = promptTurn(e.Turn)
		out[i].Note = strings.Join(e.Times, "; ")
	}
	return out
}
