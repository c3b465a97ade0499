package llmfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// LlamaCpp mimics how llama-cpp-python's OpenAI-compatible server (0.3.x)
// behaves, as seen from a client, so that a client's negotiation is tested
// against the real quirks rather than an idealised server:
//
//   - response_format {"type":"json_schema"} is answered with HTTP 500 and
//     the pydantic validation error (the server only knows "text" and
//     "json_object"); {"type":"json_object","schema":S} is accepted;
//   - one slot: requests are served one at a time, the others queue;
//   - a non-streamed request keeps generating after the client has gone
//     away (the slot stays busy for the whole generation); a streamed one
//     stops at the next token;
//   - the reply is cut at max_tokens with finish_reason "length" (about
//     four characters per token), and at the first stop sequence;
//   - a prompt that does not fit n_ctx is refused with 400 and OpenAI's
//     "maximum context length" message;
//   - streams report no usage;
//   - with Grammar set, the schema of {"type":"json_object","schema":S}
//     constrains what the model writes (see Conform), as the real server's
//     grammar does.
//
// Generate says what the model would write, whole; the fake cuts it.
type LlamaCpp struct {
	// NCtx is the context window in (estimated) tokens; 0 means 8192.
	NCtx int
	// PerToken is how long generating one token takes (0: no wait).
	PerToken time.Duration
	// Grammar makes the fake enforce the schema a request sends, as
	// llama-cpp-python does: the generated text is conformed to it
	// (Conform) before it is cut and sent. Without it the fake writes
	// whatever the handler says, as a server in json_object mode without
	// a schema, or one that ignores schemas, does.
	Grammar bool

	gen Handler

	lock sync.Mutex // the single slot

	mu        sync.Mutex // guards what follows
	requests  []ChatRequest
	inFlight  int
	maxFlight int
	generated int // tokens generated, including those nobody read
	abandoned int // generations that ran on after the client left
}

// NewLlamaCpp returns a LlamaCpp (an http.Handler) whose model writes
// what gen returns (its Content; Status and Body replies are sent as they
// are).
func NewLlamaCpp(gen Handler) *LlamaCpp { return &LlamaCpp{gen: gen} }

// Requests returns the requests received so far, in order.
func (s *LlamaCpp) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

// MaxInFlight is the most requests that were inside the server at once
// (queued for the slot or generating).
func (s *LlamaCpp) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxFlight
}

// Generated counts the tokens generated, read or not.
func (s *LlamaCpp) Generated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generated
}

// Abandoned counts generations that ran to their end although the client
// had gone away.
func (s *LlamaCpp) Abandoned() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// pydanticFormatError is what llama-cpp-python 0.3.36 answers (with status
// 500) to response_format json_schema, as recorded from the real server
// (the traceback's file path shortened).
const pydanticFormatError = "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), " +
	"'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n" +
	"  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions"

// ServeHTTP answers one request as the real server would.
func (s *LlamaCpp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSuffix(r.URL.Path, "/") == "/v1/models" {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"gemma-3-270m","object":"model","owned_by":"me"}]}`)
		return
	}
	if strings.TrimSuffix(r.URL.Path, "/") != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "not_found", "Not Found")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusUnprocessableEntity, "invalid_request_error", err.Error())
		return
	}
	req.Header, req.Body = r.Header.Clone(), body
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.inFlight++
	s.maxFlight = max(s.maxFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	if req.ResponseFormatType() == "json_schema" {
		writeError(w, http.StatusInternalServerError, "internal_server_error", pydanticFormatError)
		return
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(m.Content)/4 + 4
	}
	nctx := s.NCtx
	if nctx == 0 {
		nctx = 8192
	}
	budget := req.MaxTokens
	if budget <= 0 || prompt+budget > nctx {
		budget = max(nctx-prompt, 0)
	}
	if prompt+req.MaxTokens > nctx {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). "+
				"Please reduce the length of the messages or completion.", nctx, prompt+req.MaxTokens, prompt, req.MaxTokens))
		return
	}

	// The slot: one generation at a time. A client that gave up while
	// queued is dropped before it starts.
	s.lock.Lock()
	defer s.lock.Unlock()
	if r.Context().Err() != nil {
		return
	}
	rep := s.gen(n, &req)
	if rep.Status != 0 && rep.Status != http.StatusOK || rep.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(max(rep.Status, http.StatusOK))
		io.WriteString(w, rep.Body)
		return
	}
	text, finish := rep.Content, "stop"
	if s.Grammar && req.ResponseFormatSchema() {
		var rf struct {
			Schema json.RawMessage `json:"schema"`
		}
		_ = json.Unmarshal(req.ResponseFormat, &rf)
		text = Conform(text, rf.Schema)
	}
	for _, stop := range req.Stop {
		if i := strings.Index(text, stop); stop != "" && i >= 0 {
			text = text[:i]
		}
	}
	tokens := splitTokens(text)
	if len(tokens) > budget {
		tokens, finish = tokens[:budget], "length"
	}
	if req.Stream {
		s.stream(w, r, &req, tokens, finish)
		return
	}
	// Not streamed: the generation runs to its end whether or not anyone
	// is still listening.
	gone := false
	for range tokens {
		s.tick()
		gone = gone || r.Context().Err() != nil
	}
	if gone {
		s.mu.Lock()
		s.abandoned++
		s.mu.Unlock()
		return
	}
	content := strings.Join(tokens, "")
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(completion(&req, Reply{Content: content, FinishReason: finish,
		Model: "gemma-3-270m"}))
}

// tick generates one token.
func (s *LlamaCpp) tick() {
	if s.PerToken > 0 {
		time.Sleep(s.PerToken)
	}
	s.mu.Lock()
	s.generated++
	s.mu.Unlock()
}

// stream sends tokens as server-sent events, stopping when the client
// goes away; the chunks carry no usage.
func (s *LlamaCpp) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, tokens []string, finish string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any) bool {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": "gemma-3-270m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		_, err := fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if fl != nil {
			fl.Flush()
		}
		return err == nil && r.Context().Err() == nil
	}
	if !send(map[string]any{"role": "assistant"}, nil) {
		return
	}
	for _, tok := range tokens {
		s.tick()
		if !send(map[string]any{"content": tok}, nil) {
			return // disconnected: generation stops
		}
	}
	send(map[string]any{}, finish)
	fmt.Fprint(w, "data: [DONE]\r\n\r\n")
}

// splitTokens cuts text into pseudo-tokens of four bytes (the last may be
// shorter), never inside a UTF-8 sequence.
func splitTokens(text string) []string {
	var out []string
	for len(text) > 0 {
		n := min(4, len(text))
		for n < len(text) && text[n]&0xC0 == 0x80 {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
