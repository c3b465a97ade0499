package harness

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem/internal/jsonx"
	"github.com/higmem/higmem/internal/memcheck"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
)

// tally counts, for the work of one build or one question, what the
// engine's call records cannot see: HTTP requests (retries, format
// downgrades and re-asks included) and corrective re-asks, per role and
// operation. It travels in the context, so concurrent questions keep
// their own counts.
type tally struct {
	mu   sync.Mutex
	byOp map[tallyKey]*tallyCount
}

type tallyKey struct {
	role llm.Role
	op   string
}

type tallyCount struct {
	// calls, errors and served count the calls the way the engine's call
	// records do, for work whose records are lost (a failed build).
	calls, errors      int
	served             llm.Usage
	latency            time.Duration
	requests, reasked  int
	prompt, completion int    // counted by the tokenizer
	content            [3]int // by memcheck verdict: valid, repaired, rejected
	unparsed           int
}

type tallyCtxKey struct{}

// withTally returns ctx carrying a new tally.
func withTally(ctx context.Context) (context.Context, *tally) {
	t := &tally{byOp: map[tallyKey]*tallyCount{}}
	return context.WithValue(ctx, tallyCtxKey{}, t), t
}

// take returns the counts so far as CallStats (Requests and Reasked only)
// and starts again from zero.
func (t *tally) take() []CallStat { return t.takeCalls(false) }

// takeAll is take with the calls, errors and tokens counted too: for work
// whose engine call records are lost (a build that failed).
func (t *tally) takeAll() []CallStat { return t.takeCalls(true) }

func (t *tally) takeCalls(all bool) []CallStat {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []CallStat
	for k, c := range t.byOp {
		st := CallStat{Role: k.role, Operation: k.op, Requests: c.requests, Reasked: c.reasked,
			CountedPrompt: c.prompt, CountedCompletion: c.completion,
			ContentValid: c.content[memcheck.Valid], ContentRepaired: c.content[memcheck.Repaired],
			ContentRejected: c.content[memcheck.Rejected], Unparsed: c.unparsed}
		if all {
			// As the engine counts them: a re-ask is part of its call.
			st.Calls, st.Errors = c.calls-c.reasked, c.errors
			st.Prompt, st.Completion = c.served.PromptTokens, c.served.CompletionTokens
			st.LatencyMS = ms(c.latency)
		}
		out = append(out, st)
	}
	t.byOp = map[tallyKey]*tallyCount{}
	sortStats(out)
	return out
}

// Tokenizer counts tokens with a real encoding (internal/bpe's o200k_base
// satisfies it).
type Tokenizer interface {
	Count(text string) int
	ChatTokens(roles, contents []string) int
}

// counted wraps a model of role so that every call is added to the tally
// of its context, if any, its tokens counted by tok when not nil.
func counted(role llm.Role, m llm.Model, tok Tokenizer) llm.Model {
	if m == nil {
		return nil
	}
	return &countedModel{role: role, inner: m, tok: tok}
}

type countedModel struct {
	role  llm.Role
	inner llm.Model
	tok   Tokenizer
}

func (c *countedModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := c.inner.Complete(ctx, req)
	took := time.Since(start)
	if t, ok := ctx.Value(tallyCtxKey{}).(*tally); ok {
		t.mu.Lock()
		k := tallyKey{c.role, req.Operation}
		n := t.byOp[k]
		if n == nil {
			n = &tallyCount{}
			t.byOp[k] = n
		}
		n.requests += resp.Requests
		n.calls++
		if err != nil {
			n.errors++
		}
		n.served = n.served.Add(resp.Usage)
		n.latency += took
		if isReask(req) {
			n.reasked++
		}
		t.mu.Unlock()
		if err == nil {
			if v, ok := judgeContent(req, resp.Content); ok {
				t.mu.Lock()
				if v < 0 {
					n.unparsed++
				} else {
					n.content[v]++
				}
				t.mu.Unlock()
			}
		}
		if c.tok != nil {
			roles, contents := make([]string, len(req.Messages)), make([]string, len(req.Messages))
			for i, m := range req.Messages {
				roles[i], contents[i] = m.Role, m.Content
			}
			p, q := c.tok.ChatTokens(roles, contents), 0
			if err == nil {
				q = c.tok.Count(resp.Content)
			}
			t.mu.Lock()
			n.prompt += p
			n.completion += q
			t.mu.Unlock()
		}
	}
	return resp, err
}

// ModelName forwards the inner model's name (llm/cache keys by it).
func (c *countedModel) ModelName() string {
	if n, ok := c.inner.(interface{ ModelName() string }); ok {
		return n.ModelName()
	}
	return ""
}

// judgeContent runs the semantic check of req's prompt kind on a reply:
// the verdict, -1 when no JSON fits the schema, ok false for kinds
// without a check.
func judgeContent(req llm.Request, content string) (v int, ok bool) {
	if len(req.Schema) == 0 {
		return 0, false
	}
	var p prompt.Prompt
	for _, m := range req.Messages {
		switch {
		case m.Role == "system" && p.System == "":
			p.System = m.Content
		case m.Role == "user" && p.User == "":
			p.User = m.Content
		}
	}
	doc, err := jsonx.Parse(content, req.Schema)
	if err != nil {
		return -1, true
	}
	res, _, err := memcheck.Check(req.SchemaName, doc, memcheck.FromPrompt(p), memcheck.Caps{})
	if err != nil {
		return 0, false
	}
	return int(res.Verdict), true
}

// isReask reports whether req is llm.CompleteJSON's second request: its
// last message is the correction or the ask for a shorter reply.
func isReask(req llm.Request) bool {
	if len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	return last.Role == "user" && (strings.HasPrefix(last.Content, "Your previous reply could not be used") ||
		strings.HasPrefix(last.Content, "Your previous reply was too long"))
}

// fallbackOps maps the phrases of the engine's fallback notes to the
// operation whose reply was unusable.
var fallbackOps = []struct{ phrase, op string }{
	{"annotation reply unusable", "turn_note"},
	{"affiliation reply unusable", "affiliate"},
	{"update reply unusable", "event_update"},
	{"check reply unusable", "event_check"},
	{"build reply unusable", "build_batch"},
	{"placed by offline segmentation", "build_batch"},
	{"query analysis unusable", "query"},
	{"predict call unusable", "predict"},
	{"filter call unusable", "filter"},
	{"select call unusable", "select"},
}

// fallbacks counts the notes that record a fallback, per memory-role
// operation ("other" for a fallback note of no known operation).
func fallbacks(notes []string) []CallStat {
	var out []CallStat
	for _, n := range notes {
		op := ""
		for _, f := range fallbackOps {
			if strings.Contains(n, f.phrase) {
				op = f.op
				break
			}
		}
		if op == "" {
			if !strings.Contains(n, "unusable") && !strings.Contains(n, "fall") {
				continue
			}
			op = "other"
		}
		out = mergeStats(out, []CallStat{{Role: llm.RoleMemory, Operation: op, FellBack: 1}})
	}
	return out
}
