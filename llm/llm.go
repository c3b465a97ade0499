// Package llm defines the one interface higmem uses to talk to a language
// model, plus the request and response types shared by every backend.
//
// A Model has a single method, Complete. Everything else — structured output
// negotiation, retries, caching, accounting — is layered on top by wrappers
// (llm/cache) or done inside a backend (llm/openai). Tests use llm/llmtest,
// which provides a scripted fake and an httptest OpenAI-compatible server.
//
// Structured output: a Request may carry a JSON Schema. Backends that support
// it pass it to the server; callers then decode the reply with CompleteJSON,
// which extracts JSON tolerantly, validates it against the schema, asks the
// model once more with a correction when the reply is unusable, and otherwise
// returns an error wrapping ErrInvalidOutput. A Request may also carry a
// Constraint: the schema narrowed to that one request (ids as enums,
// counts and lengths bounded), which backends send in place of Schema so
// that a server enforcing it (a grammar) cannot write outside it, while
// the reply is still validated against Schema (see Request.Constraint).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors. Backends wrap them with context (endpoint, model) using %w
// so callers can test with errors.Is.
var (
	// ErrInvalidOutput means the model replied, but not with the JSON asked
	// for, even after one corrective re-ask.
	ErrInvalidOutput = errors.New("llm: model output is not valid for the requested schema")
	// ErrRateLimited means the server kept answering 429 after all retries.
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrUnavailable means the endpoint could not be reached or kept failing
	// (connection refused, 5xx, timeouts) after all retries.
	ErrUnavailable = errors.New("llm: endpoint unavailable")
	// ErrRequest means the server rejected the request itself (a 4xx other
	// than 429): bad model name, bad key, context too long.
	ErrRequest = errors.New("llm: request rejected")
	// ErrEmpty means the server answered with no choices or empty content.
	ErrEmpty = errors.New("llm: empty response")
	// ErrContextLength means the server refused the request because the
	// prompt plus the completion budget do not fit in the model's context
	// window. It is not retried: the caller should shrink the prompt (fewer
	// turns or candidates) or lower MaxTokens and ask again.
	ErrContextLength = errors.New("llm: prompt exceeds the model's context window")
)

// Role names what a model is used for. Options map roles to models so that a
// cheap model can do memory work while a strong one writes answers.
type Role string

// The roles higmem uses.
const (
	RoleMemory Role = "memory" // annotation, event building, retrieval guidance
	RoleAnswer Role = "answer" // the final answer
	RoleJudge  Role = "judge"  // LLM-as-judge in evaluation
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Request is one chat completion request.
type Request struct {
	// Messages is the conversation, usually a system and a user message.
	Messages []Message
	// Schema is a JSON Schema (draft 2020-12 subset: type, properties,
	// required, items, enum) the reply must satisfy. Nil asks for free text.
	Schema json.RawMessage
	// Constraint, when set, is the schema sent to the server in place of
	// Schema: Schema narrowed for this one request (the ids its prompt
	// shows as enums, counts and string lengths bounded; see
	// internal/prompt's constrain.go). A server that enforces the schema
	// it is sent (llama.cpp's grammars) then cannot write outside it. The
	// reply is still validated against Schema alone: a server that does
	// not enforce schemas (json_object or plain mode, json_schema without
	// strict) may break a narrowed bound, and such a reply must reach the
	// caller's semantic checks, which repair or reject it, rather than fail
	// validation and be re-asked. A Constraint must therefore only narrow
	// Schema, never widen or change it. Ignored when Schema is empty.
	Constraint json.RawMessage
	// SchemaName names the schema for servers that want one (json_schema
	// response_format). It also identifies the prompt kind in fakes and logs.
	SchemaName string
	// Temperature is the sampling temperature; 0 is the default and is what
	// higmem uses for reproducible runs.
	Temperature float64
	// MaxTokens caps the completion. Callers set it per operation, from
	// what the reply can need (a list of ids needs far less than a batch of
	// annotations); 0 lets the backend use its default.
	MaxTokens int
	// Stop lists sequences at which the server stops generating (at most
	// four, OpenAI's limit). Backends may add their own to cut runaway
	// replies.
	Stop []string
	// Seed asks the server for deterministic sampling when it supports it.
	Seed *int64
	// Operation labels the call for accounting ("annotate", "affiliate",
	// "predict", "filter", "answer", ...). It is not sent to the server.
	Operation string
}

// SentSchema is the schema to send to the server: Constraint when set (and
// Schema is), else Schema.
func (r Request) SentSchema() json.RawMessage {
	if len(r.Schema) > 0 && len(r.Constraint) > 0 {
		return r.Constraint
	}
	return r.Schema
}

// Usage counts tokens of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Estimated is true when the server reported no usage and the counts
	// were estimated from the text.
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		Estimated:        u.Estimated || v.Estimated,
	}
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Response is the reply to a Request.
type Response struct {
	// Content is the text of the first choice.
	Content string
	// Model is the model that answered, as reported by the server.
	Model string
	// Usage counts the tokens of this call (summed over retries and re-asks
	// that reached the server).
	Usage Usage
	// Cached is true when the response came from a cache, not a server.
	Cached bool
	// Latency is the wall time the call took.
	Latency time.Duration
	// FinishReason is the server's finish_reason of the reply ("stop",
	// "length", ...); "length" means the reply was cut at MaxTokens.
	FinishReason string
	// Requests counts the HTTP requests the call made (retries, downgrades
	// of the structured-output mode and re-asks included); 0 for a reply
	// from a cache or a fake that makes none.
	Requests int
	// Reasked is set by CompleteJSON when it asked a second time, after an
	// unusable reply or one cut at the token limit; Usage, Latency and
	// Requests then cover both calls.
	Reasked bool
	// ReaskErr is set by CompleteJSON when its re-ask failed (a timeout,
	// say) and it returned the first reply, cut at the token limit and
	// repaired, instead: the reply is usable but degraded, and the
	// caller should say so.
	ReaskErr error
}

// Truncated reports whether the reply was cut at the token limit.
func (r Response) Truncated() bool { return r.FinishReason == "length" }

// Model is a chat completion model. Implementations must be safe for
// concurrent use and must honour ctx cancellation.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Forgetter is an optional capability of a Model: dropping what it keeps
// of past replies. The engine calls it after a turn is deleted with the
// words only that turn used (lower-case), so that no stored reply repeats
// them. llm/cache implements it, and Meter's wrapper forwards it.
type Forgetter interface {
	// Forget drops every kept reply that contains one of needles (ASCII
	// letters compared case-insensitively) and returns how many it
	// dropped.
	Forget(ctx context.Context, needles []string) (int, error)
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(ctx context.Context, req Request) (Response, error)

// Complete calls f(ctx, req).
func (f ModelFunc) Complete(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
