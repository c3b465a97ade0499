package llmfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem/llm"
)

// ChatRequest is a decoded /v1/chat/completions request as an endpoint saw it.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []llm.Message   `json:"messages"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	Stop                []string        `json:"stop,omitempty"`

	// Header holds the HTTP request headers (Authorization and so on).
	Header http.Header `json:"-"`
	// Body is the raw request body.
	Body []byte `json:"-"`
}

// ResponseFormatType returns the "type" of response_format ("json_schema",
// "json_object"), or "" when none was sent.
func (r ChatRequest) ResponseFormatType() string {
	var rf struct {
		Type string `json:"type"`
	}
	if len(r.ResponseFormat) == 0 || json.Unmarshal(r.ResponseFormat, &rf) != nil {
		return ""
	}
	return rf.Type
}

// ResponseFormatSchema reports whether response_format carries a schema
// in llama-cpp-python's form {"type":"json_object","schema":S}.
func (r ChatRequest) ResponseFormatSchema() bool {
	var rf struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	return len(r.ResponseFormat) > 0 && json.Unmarshal(r.ResponseFormat, &rf) == nil &&
		rf.Type == "json_object" && len(rf.Schema) > 0
}

// Format names the structured-output form of the request as the client's
// modes do: "json_schema", "json_object_schema", "json_object" or "plain".
func (r ChatRequest) Format() string {
	switch t := r.ResponseFormatType(); {
	case t == "":
		return "plain"
	case t == "json_object" && r.ResponseFormatSchema():
		return "json_object_schema"
	default:
		return t
	}
}

// LastUser returns the content of the last user message.
func (r ChatRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Reply is what a Handler answers. The zero Reply is a 200 chat completion
// with empty content.
type Reply struct {
	// Content is the assistant message of a 200 reply.
	Content string
	// Status is the HTTP status; 0 means 200.
	Status int
	// Body, when not empty, is sent verbatim instead of a chat completion
	// (an error document, HTML, garbage).
	Body string
	// Header holds extra response headers, e.g. Retry-After.
	Header http.Header
	// Delay is waited before answering; the wait ends early when the
	// client goes away, so a slow reply never blocks the test's cleanup.
	Delay time.Duration
	// Usage is the usage to report; nil reports an estimate of the
	// request and reply sizes.
	Usage *llm.Usage
	// NoUsage omits the usage object, as some local servers do.
	NoUsage bool
	// NoChoices sends an empty choices array.
	NoChoices bool
	// NullContent sends "content": null.
	NullContent bool
	// FinishReason defaults to "stop".
	FinishReason string
	// Model is the model name to report; empty echoes the request's.
	Model string
	// Hangup closes the connection without any reply (a reset).
	Hangup bool
	// ToolCalls, when set, is the assistant message's "tool_calls" array,
	// sent verbatim (streamed: in one delta, each call with its index).
	ToolCalls json.RawMessage
	// ChunkDelay is waited between the chunks of a streamed reply (the
	// request has "stream": true); the stream stops when the client goes
	// away.
	ChunkDelay time.Duration
}

// Handler answers the n-th request (1-based) an endpoint receives.
type Handler func(n int, req *ChatRequest) Reply

// Endpoint is a fake OpenAI-compatible endpoint: an http.Handler serving
// POST /v1/chat/completions (also without the /v1 prefix) and GET
// /v1/models, answering with a Handler. NewEndpoint records every request;
// HTTPHandler keeps no record, so that a long-running fake does not grow.
type Endpoint struct {
	handler Handler
	record  bool

	mu       sync.Mutex // guards requests and served
	requests []ChatRequest
	served   int
}

// NewEndpoint returns an Endpoint answering with h that records every
// request.
func NewEndpoint(h Handler) *Endpoint { return &Endpoint{handler: h, record: true} }

// HTTPHandler returns h as an OpenAI-compatible endpoint for programs that
// serve a fake themselves, such as the eval command's --fake-llm
// scripted-http, which puts the real client and its HTTP requests in the
// loop. It keeps no record of the requests.
func HTTPHandler(h Handler) http.Handler { return &Endpoint{handler: h} }

// Calls returns how many chat requests the endpoint has recorded.
func (s *Endpoint) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests returns a copy of the chat requests recorded so far.
func (s *Endpoint) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

// Request returns the n-th recorded request (1-based).
func (s *Endpoint) Request(n int) ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.requests) {
		panic(fmt.Sprintf("llmfake: Request(%d) of %d", n, len(s.requests)))
	}
	return s.requests[n-1]
}

// ServeHTTP answers one request.
func (s *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if path == "/v1/models" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"llmtest","object":"model","created":1700000000,"owned_by":"llmtest"}]}`)
		return
	}
	if path != "/v1/chat/completions" && path != "/chat/completions" {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error())
		return
	}
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not a chat request: "+err.Error())
		return
	}
	req.Header = r.Header.Clone()
	req.Body = body
	s.mu.Lock()
	s.served++
	n := s.served
	if s.record {
		s.requests = append(s.requests, req)
	}
	s.mu.Unlock()

	rep := s.handler(n, &req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rep.Hangup {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) // RST rather than FIN
				}
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	if req.Stream && status == http.StatusOK {
		streamCompletion(w, r, &req, rep)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(completion(&req, rep))
}

// streamCompletion sends rep as OpenAI's server-sent events: a role
// chunk, the content in pieces of about four bytes, the tool calls, a
// finish chunk and [DONE].
func streamCompletion(w http.ResponseWriter, r *http.Request, req *ChatRequest, rep Reply) {
	model := rep.Model
	if model == "" {
		model = req.Model
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) bool {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		_, err := fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
		return err == nil && r.Context().Err() == nil
	}
	wait := func() bool {
		if rep.ChunkDelay <= 0 {
			return true
		}
		t := time.NewTimer(rep.ChunkDelay)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, tok := range splitTokens(rep.Content) {
		if !wait() || !send(map[string]any{"content": tok}, nil) {
			return
		}
	}
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		if err := json.Unmarshal(rep.ToolCalls, &calls); err != nil {
			panic("llmfake: ToolCalls: " + err.Error())
		}
		for i, c := range calls {
			c["index"] = i
		}
		if !wait() || !send(map[string]any{"tool_calls": calls}, nil) {
			return
		}
	}
	if !wait() || !send(map[string]any{}, finish) {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// completion builds a chat completion document for rep.
func completion(req *ChatRequest, rep Reply) map[string]any {
	model := rep.Model
	if model == "" {
		model = req.Model
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
	}
	var content any = rep.Content
	if rep.NullContent {
		content = nil
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"] = rep.ToolCalls
	}
	choices := []any{map[string]any{
		"index":         0,
		"message":       msg,
		"finish_reason": finish,
	}}
	if rep.NoChoices {
		choices = []any{}
	}
	doc := map[string]any{
		"id":      "chatcmpl-llmtest",
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   model,
		"choices": choices,
	}
	if !rep.NoUsage {
		u := rep.Usage
		if u == nil {
			prompt := 0
			for _, m := range req.Messages {
				prompt += len(m.Content)/4 + 4
			}
			u = &llm.Usage{PromptTokens: prompt, CompletionTokens: len(rep.Content)/4 + 1}
		}
		doc["usage"] = map[string]any{
			"prompt_tokens":     u.PromptTokens,
			"completion_tokens": u.CompletionTokens,
			"total_tokens":      u.PromptTokens + u.CompletionTokens,
		}
	}
	return doc
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, errorBody(typ, msg, ""))
}

// errorBody is an OpenAI-style error document.
func errorBody(typ, msg, param string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": param, "code": nil}})
	return string(b)
}

// Text is a 200 reply with content.
func Text(content string) Reply { return Reply{Content: content} }

// JSON is a 200 reply whose content is v marshalled.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmfake: JSON: " + err.Error())
	}
	return Reply{Content: string(b)}
}

// Status is a reply with an HTTP status and an OpenAI-style error body
// carrying msg.
func Status(code int, msg string) Reply {
	typ := "invalid_request_error"
	switch {
	case code == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case code >= 500:
		typ = "server_error"
	}
	return Reply{Status: code, Body: errorBody(typ, msg, "")}
}

// RateLimited is a 429 reply with a Retry-After header (seconds or an HTTP
// date; empty sends none).
func RateLimited(retryAfter string) Reply {
	r := Status(http.StatusTooManyRequests, "Rate limit reached, please try again later")
	if retryAfter != "" {
		r.Header = http.Header{"Retry-After": {retryAfter}}
	}
	return r
}

// ServerError is a 500 reply.
func ServerError() Reply { return Status(http.StatusInternalServerError, "internal server error") }

// Garbage is a 200 reply whose body is not JSON at all (a proxy's page).
func Garbage() Reply {
	return Reply{Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}
}

// EmptyChoices is a 200 reply with an empty choices array.
func EmptyChoices() Reply { return Reply{NoChoices: true} }

// Slow delays r by d.
func Slow(d time.Duration, r Reply) Reply {
	r.Delay = d
	return r
}

// Sequence answers the n-th request with replies[n-1]; once they run out
// the last one repeats.
func Sequence(replies ...Reply) Handler {
	if len(replies) == 0 {
		panic("llmfake: Sequence needs at least one reply")
	}
	return func(n int, _ *ChatRequest) Reply {
		return replies[min(n, len(replies))-1]
	}
}

// Always answers every request with r.
func Always(r Reply) Handler { return func(int, *ChatRequest) Reply { return r } }

// RejectResponseFormat answers 400, as servers without structured output
// do, to requests whose format (see ChatRequest.Format: "json_schema",
// "json_object_schema", "json_object") is one of types (any format when
// none are given), and passes the others to next.
func RejectResponseFormat(next Handler, types ...string) Handler {
	return func(n int, req *ChatRequest) Reply {
		t := req.ResponseFormatType()
		if t == "" {
			return next(n, req)
		}
		f := req.Format()
		reject := len(types) == 0
		for _, x := range types {
			reject = reject || x == f
		}
		if !reject {
			return next(n, req)
		}
		return Reply{Status: http.StatusBadRequest, Body: errorBody("invalid_request_error",
			"Unsupported value: 'response_format."+t+"' is not supported with this model.", "response_format")}
	}
}
