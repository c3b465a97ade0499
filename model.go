package higmem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/higmem/higmem/internal/memcheck"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/llm"
)

// Calling the model: callModel renders a prompt, sends it, checks the reply
// (internal/memcheck) and records the call in the operation's recorder,
// which also notes fallbacks and whether the model was reachable.

// recorder collects the LLM calls of one operation. Safe for concurrent use.
type recorder struct {
	mu    sync.Mutex // guards calls, notes and downErr
	calls []Call
	notes []string
	// downErr is the first error that showed the model unreachable
	// (llmDown); later stages skip the model.
	downErr error
}

// down records that the model could not be reached, with a note.
func (r *recorder) down(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.downErr == nil {
		r.downErr = err
		r.notes = append(r.notes, "LLM unreachable, evidence chosen by the offline rules: "+err.Error())
	}
}

// unreachable returns the error recorded by down, or nil.
func (r *recorder) unreachable() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downErr
}

// llmDown reports whether err means the model endpoint cannot be reached
// (down, failing, rate limited after every retry) while the caller's
// context is still live: retrieval then falls back to the offline rules
// and Ask returns the evidence with a note instead of failing.
func llmDown(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && (errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRateLimited))
}

func (r *recorder) add(c Call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *recorder) note(format string, args ...any) {
	r.mu.Lock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// invalid reports whether err means the model answered but its reply was
// unusable, so a documented fallback applies. Other errors (the endpoint is
// down, the context ended) abort the operation.
func invalid(err error) bool { return errors.Is(err, llm.ErrInvalidOutput) }

// fallible reports whether a construction step may fall back after err: the
// reply was unusable, or the model could not answer (down, or timing out
// after every retry) while the caller's context is live. One failing batch
// then costs its model records, not the ingest; a cancelled context still
// aborts.
func fallible(ctx context.Context, err error) bool { return invalid(err) || llmDown(ctx, err) }

// callModel renders a prompt, sends it to the model of the given role with
// the operation's completion budget (prompt.MaxTokens), decodes the JSON
// reply into out, runs the semantic check of internal/memcheck on it and
// records the call. A reply the check repairs is used repaired (the call
// records what was fixed); one it rejects is an error wrapping
// llm.ErrInvalidOutput, so that the caller's documented fallback applies
// and nothing of the reply is stored.
func (m *Memory) callModel(ctx context.Context, rec *recorder, role llm.Role, round int, name string, data, out any) error {
	p, err := prompt.Render(name, data)
	if err != nil {
		return err
	}
	caps := prompt.CapsOf(data)
	model := m.opts.MemoryModel
	if role == llm.RoleAnswer {
		model = m.opts.AnswerModel
	}
	req := llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: p.System},
			{Role: "user", Content: p.User},
		},
		Schema:     p.Schema,
		Constraint: p.Constraint,
		SchemaName: p.Name,
		Operation:  p.Name,
		MaxTokens:  prompt.MaxTokens(name, caps.Items),
	}
	start := time.Now()
	resp, err := llm.CompleteJSON(ctx, model, req, out)
	c := Call{Role: role, Operation: name, Round: round, Usage: resp.Usage, Latency: resp.Latency, Cached: resp.Cached,
		Requests: resp.Requests, Reasked: resp.Reasked}
	if c.Latency == 0 && !resp.Cached {
		c.Latency = time.Since(start)
	}
	if err == nil && resp.ReaskErr != nil {
		// The reply cut at its budget is used, repaired: say so.
		c.Truncated = true
		c.Error = "reply cut at its token budget and repaired; its re-ask failed: " + resp.ReaskErr.Error()
	}
	if err == nil {
		res, _ := memcheck.Reply(out, memcheck.ForReply(out, p), memcheck.Caps{
			Keywords: rules.MaxEventKeywords, Tags: rules.MaxEventTags, TitleChars: rules.MaxTitleLen, IDs: caps.IDs})
		if res.Verdict != memcheck.Valid {
			c.Check = res.String()
		}
		if res.Verdict == memcheck.Rejected {
			err = fmt.Errorf("%w: %s: not memory (%s)", llm.ErrInvalidOutput, name, res)
		}
	}
	if err != nil {
		c.Error = err.Error()
	}
	rec.add(c)
	if c.Truncated {
		rec.note("%s: %s", name, c.Error)
	}
	if err != nil {
		return wrapf(err, "%s call", name)
	}
	return nil
}
