package openai

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/llm"
)

// learned is what the client learned from an endpoint's refusals: the
// structured-output mode that works and the parameters to leave out. It is
// shared by every client of one endpoint and model in the process (see
// learnedFor), so the memory, answer and judge clients of one server pay
// for a refused format once, not three times.
type learned struct {
	mode atomic.Int32 // current Mode for schema requests; only increases

	useMaxCompletionTokens atomic.Bool
	dropTemperature        atomic.Bool
	dropSeed               atomic.Bool
	dropStop               atomic.Bool
	dropStreamOptions      atomic.Bool
}

// quirks is a snapshot of the parameters a learned endpoint wants changed.
type quirks struct {
	useMaxCompletionTokens, dropTemperature, dropSeed, dropStop, dropStreamOptions bool
}

// learnedByEndpoint maps endpoint+"\x00"+model to its *learned.
var learnedByEndpoint sync.Map

// learnedFor returns the shared state of an endpoint and model.
func learnedFor(endpoint, model string) *learned {
	v, _ := learnedByEndpoint.LoadOrStore(endpoint+"\x00"+model, &learned{})
	return v.(*learned)
}

// atLeast moves the mode down to m unless it is already lower.
func (l *learned) atLeast(m Mode) {
	for {
		cur := l.mode.Load()
		if cur >= int32(m) || l.mode.CompareAndSwap(cur, int32(m)) {
			return
		}
	}
}

func (l *learned) quirks() quirks {
	return quirks{
		useMaxCompletionTokens: l.useMaxCompletionTokens.Load(),
		dropTemperature:        l.dropTemperature.Load(),
		dropSeed:               l.dropSeed.Load(),
		dropStop:               l.dropStop.Load(),
		dropStreamOptions:      l.dropStreamOptions.Load(),
	}
}

// learn sets flag and reports whether it was not set before.
func learn(flag *atomic.Bool) bool { return flag.CompareAndSwap(false, true) }

// adapt changes what the client sends after a refusal (status >= 400, not
// 429) whose body names a parameter or the structured-output format. It
// reports whether anything changed, in which case the request is resent at
// once.
//
// Parameter quirks are learned from 4xx replies only. A refused format is
// learned from 4xx and 5xx alike: llama-cpp-python answers json_schema with
// a 500 whose message is the validation error naming response_format.
func (c *Client) adapt(req llm.Request, mode Mode, status int, body string) bool {
	b := strings.ToLower(body)
	l := c.learned
	if status < 500 {
		switch {
		case strings.Contains(b, "max_completion_tokens") && c.budget(req) > 0 && learn(&l.useMaxCompletionTokens):
			c.log.Info("llm: server wants max_completion_tokens", "endpoint", c.shown, "model", c.opts.Model)
			return true
		case strings.Contains(b, "temperature") && !l.dropTemperature.Load() &&
			containsAny(b, "unsupported", "not support", "does not support", "only the default", "invalid") &&
			learn(&l.dropTemperature):
			c.log.Info("llm: server refuses temperature; not sending it", "endpoint", c.shown, "model", c.opts.Model)
			return true
		case strings.Contains(b, "seed") && !strings.Contains(b, "response_format") && !l.dropSeed.Load() &&
			containsAny(b, "unsupported", "not support", "unknown", "unrecognized", "extra") && learn(&l.dropSeed):
			c.log.Info("llm: server refuses seed; not sending it", "endpoint", c.shown, "model", c.opts.Model)
			return true
		case strings.Contains(b, "stream_options") && c.opts.Stream && learn(&l.dropStreamOptions):
			c.log.Info("llm: server refuses stream_options; not sending it", "endpoint", c.shown, "model", c.opts.Model)
			return true
		case strings.Contains(b, "'stop'") || strings.Contains(b, `"stop"`) || strings.Contains(b, "parameter: stop") ||
			strings.Contains(b, "stop sequence"):
			if containsAny(b, "unsupported", "not support", "unknown", "unrecognized", "extra", "invalid") && learn(&l.dropStop) {
				c.log.Info("llm: server refuses stop sequences; not sending them", "endpoint", c.shown, "model", c.opts.Model)
				return true
			}
		}
	}
	if len(req.Schema) == 0 || mode >= Plain {
		return false
	}
	// The refusal must be about structured output: named, or (4xx only) a
	// generic unknown-field complaint that names no other parameter. A
	// context length or bad model error must not downgrade the client.
	named := containsAny(b, "response_format", "json_schema", "json_object", "grammar")
	if status < 500 {
		named = named || strings.Contains(b, "schema")
	}
	generic := status < 500 && containsAny(b, "unknown parameter", "unrecognized", "extra inputs", "extra_forbidden",
		"unsupported parameter", "not supported") && !containsAny(b, "context", "token", "model", "temperature", "seed", "stop")
	if named || generic {
		next := mode + 1
		if l.mode.CompareAndSwap(int32(mode), int32(next)) {
			c.log.Warn("llm: server refused structured output; downgrading", "endpoint", c.shown, "model", c.opts.Model,
				"status", status, "from", mode, "to", next)
		}
		return true
	}
	return false
}

// contextPhrases are what servers say when a prompt does not fit: OpenAI
// and vLLM ("maximum context length", code context_length_exceeded),
// llama-cpp-python ("Requested tokens (n) exceed context window of m",
// rewritten to OpenAI's text), llama-server ("exceeds the available context
// size", exceed_context_size_error), others naming n_ctx.
var contextPhrases = []string{
	"maximum context length", "context_length_exceeded", "context length", "context window",
	"context size", "exceed_context", "n_ctx", "prompt is too long", "too many tokens in the prompt",
}

// contextLength reports whether an error body says the prompt plus the
// completion budget do not fit in the model's context.
func contextLength(body string) bool {
	return containsAny(strings.ToLower(body), contextPhrases...)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
