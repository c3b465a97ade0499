package higmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// recorder collects the LLM calls of one operation. Safe for concurrent use.
type recorder struct {
	mu    sync.Mutex // guards calls and notes
	calls []Call
	notes []string
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

// callModel renders a prompt, sends it to the model of the given role, decodes the
// JSON reply into out and records the call.
func (m *Memory) callModel(ctx context.Context, rec *recorder, role llm.Role, round int, name string, data, out any) error {
	p, err := prompt.Render(name, data)
	if err != nil {
		return err
	}
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
		SchemaName: p.Name,
		Operation:  p.Name,
	}
	start := time.Now()
	resp, err := llm.CompleteJSON(ctx, model, req, out)
	c := Call{Role: role, Operation: name, Round: round, Usage: resp.Usage, Latency: resp.Latency, Cached: resp.Cached}
	if c.Latency == 0 && !resp.Cached {
		c.Latency = time.Since(start)
	}
	if err != nil {
		c.Error = err.Error()
	}
	rec.add(c)
	if err != nil {
		return fmt.Errorf("higmem: %s call: %w", name, err)
	}
	return nil
}

// appendChange records a change of a derived record in the history.
func appendChange(ctx context.Context, tx store.Tx, sp store.Space, kind, id, action, actor string, before, after any, at time.Time) error {
	c := store.Change{Kind: kind, ID: id, Action: action, Actor: actor, At: at}
	if before != nil {
		b, err := json.Marshal(before)
		if err != nil {
			return err
		}
		c.Before = b
	}
	if after != nil {
		b, err := json.Marshal(after)
		if err != nil {
			return err
		}
		c.After = b
	}
	return tx.AppendHistory(ctx, sp, c)
}
