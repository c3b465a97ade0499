// Package openai is an llm.Model for any server speaking the OpenAI
// /v1/chat/completions protocol: OpenAI itself, vLLM, Ollama, the llama.cpp
// server, LM Studio, LiteLLM and others.
//
// The client negotiates structured output (response_format json_schema,
// then json_object, then a plain instruction in the system prompt), learning
// once per client what the server accepts. It retries rate limits, 5xx
// replies, timeouts and connection failures with exponential backoff and
// jitter, honouring Retry-After; it limits concurrent requests and,
// optionally, requests per minute. Every final error wraps one of the llm
// sentinels (ErrRateLimited, ErrUnavailable, ErrRequest, ErrEmpty) and is an
// *Error naming the endpoint and model. Deadlines come from the context.
//
// Decoding and repairing JSON replies is not done here: use llm.CompleteJSON
// on top of the client.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/httpx"
	"github.com/higmem/higmem/llm"
)

// Defaults for zero Options fields.
const (
	DefaultMaxRetries     = 4
	DefaultMaxConcurrency = 8
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxRetryAfter  = 2 * time.Minute
)

// maxBody caps how much of a response body is read.
const maxBody = 32 << 20

// Options configures a Client. The zero value of every field but BaseURL
// and Model has a sensible default.
type Options struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1" (Ollama). "/chat/completions" is appended;
	// a URL with no path gets "/v1/chat/completions"; a URL already ending
	// in "/chat/completions" is used as is.
	BaseURL string
	// APIKey is sent as a Bearer token when not empty.
	APIKey string
	// Model is the model name sent with every request.
	Model string
	// Temperature, when set, overrides every request's temperature.
	Temperature *float64
	// MaxTokens is used for requests that set no MaxTokens; 0 lets the
	// server decide.
	MaxTokens int
	// Seed is used for requests that set no Seed.
	Seed *int64
	// HTTPClient sends the requests; nil uses a client without timeout
	// (deadlines come from the context).
	HTTPClient *http.Client
	// MaxRetries is how many times a failed request is retried; 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// MaxConcurrency caps requests in flight from this client; 0 means
	// DefaultMaxConcurrency.
	MaxConcurrency int
	// RequestsPerMinute spaces requests evenly when positive.
	RequestsPerMinute int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries (defaults DefaultMinBackoff, DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter caps how long a server's Retry-After is honoured
	// (default DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// Structured is the first structured-output mode tried for requests
	// with a schema (default JSONSchema). Servers known to lack
	// response_format can start at Plain and skip the failed attempts.
	Structured Mode
	// Logger receives retries, downgrades and truncation warnings; nil
	// discards them.
	Logger *slog.Logger
}

// Mode is how a schema is conveyed to the server.
type Mode int32

// The structured-output modes, in the order they are tried.
const (
	// JSONSchema sends response_format {"type":"json_schema",...}.
	JSONSchema Mode = iota
	// JSONObject sends response_format {"type":"json_object"} and
	// describes the schema in the system prompt.
	JSONObject
	// Plain sends no response_format and describes the schema in the
	// system prompt.
	Plain
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case JSONSchema:
		return "json_schema"
	case JSONObject:
		return "json_object"
	case Plain:
		return "plain"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Client is an llm.Model talking to one OpenAI-compatible endpoint with
// one model. It is safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string // full chat completions URL
	shown    string // endpoint without credentials, for errors and logs
	http     *http.Client
	log      *slog.Logger
	sem      chan struct{}

	mode atomic.Int32 // current Mode for schema requests; only increases
	// Quirks learned from 400 replies.
	useMaxCompletionTokens atomic.Bool
	dropTemperature        atomic.Bool
	dropSeed               atomic.Bool

	rpmMu   sync.Mutex // guards rpmNext
	rpmNext time.Time  // earliest start of the next request

	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a client for opts. It fails when BaseURL is not a valid
// http(s) URL or Model is empty.
func New(opts Options) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: Options.Model is empty")
	}
	endpoint, err := chatURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	} else if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = DefaultMaxConcurrency
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = opts.MinBackoff
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	c := &Client{
		opts:     opts,
		endpoint: endpoint,
		shown:    redact(endpoint),
		http:     opts.HTTPClient,
		log:      opts.Logger,
		sem:      make(chan struct{}, opts.MaxConcurrency),
		sleep:    sleepCtx,
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.mode.Store(int32(min(max(opts.Structured, JSONSchema), Plain)))
	return c, nil
}

// chatURL turns a base URL into the chat completions URL.
func chatURL(base string) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return "", errors.New("openai: Options.BaseURL is empty")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("openai: invalid base URL %q: want http(s)://host[:port]/v1", base)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
	case p == "":
		p = "/v1/chat/completions"
	default:
		p += "/chat/completions"
	}
	u.Path = p
	return u.String(), nil
}

// redact drops credentials from a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	u.User = nil
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "key") || strings.Contains(strings.ToLower(k), "token") {
			q.Set(k, "REDACTED")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ModelName returns the configured model name (llm/cache uses it in keys).
func (c *Client) ModelName() string { return c.opts.Model }

// Endpoint returns the chat completions URL, without credentials.
func (c *Client) Endpoint() string { return c.shown }

// Mode returns the structured-output mode currently used for schemas.
func (c *Client) Mode() Mode { return Mode(c.mode.Load()) }

// Error is the error a Client returns. It wraps Kind (an llm sentinel) and
// Cause (the transport or context error, if any), so both errors.Is(err,
// llm.ErrRateLimited) and errors.Is(err, context.DeadlineExceeded) work.
type Error struct {
	Endpoint string // chat completions URL, without credentials
	Model    string
	Status   int    // last HTTP status, 0 when no reply arrived
	Message  string // the server's error message or a description
	Attempts int    // requests sent
	Kind     error  // llm.ErrRateLimited, ErrUnavailable, ErrRequest or ErrEmpty
	Cause    error  // underlying error, may be nil
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai: %s (model %s): %v", e.Endpoint, e.Model, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Cause != nil && (e.Message == "" || !strings.Contains(e.Message, e.Cause.Error())) {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns Kind and Cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

// Wire types.
type (
	chatRequest struct {
		Model               string          `json:"model"`
		Messages            []llm.Message   `json:"messages"`
		Temperature         *float64        `json:"temperature,omitempty"`
		MaxTokens           int             `json:"max_tokens,omitempty"`
		MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
		Seed                *int64          `json:"seed,omitempty"`
		ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
		Stream              bool            `json:"stream"`
	}
	chatResponse struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Error *apiError `json:"error"`
	}
	apiError struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   string          `json:"param"`
		Code    json.RawMessage `json:"code"`
	}
)

// attemptResult is the outcome of one HTTP exchange.
type attemptResult struct {
	resp       llm.Response
	err        *Error        // nil on success
	retryable  bool          // worth retrying
	retryAfter time.Duration // server-requested wait, 0 if none
	body       string        // error body, for downgrade detection
}

// Complete sends req and returns the first choice's content.
func (c *Client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	attempts := 0
	emptyRetried := false
	var last *Error
	for retry := 0; ; {
		mode := Mode(c.mode.Load())
		body, err := c.encode(req, mode)
		if err != nil {
			return llm.Response{}, err
		}
		attempts++
		res := c.attempt(ctx, body, req)
		if res.err == nil {
			res.resp.Latency = time.Since(start)
			return res.resp, nil
		}
		last = res.err
		last.Attempts = attempts

		// A 400 about a parameter: adapt the request and resend at once.
		if last.Status >= 400 && last.Status < 500 && last.Status != 429 && c.adapt(req, mode, res.body) {
			continue
		}
		if !res.retryable || retry >= c.opts.MaxRetries || ctx.Err() != nil {
			break
		}
		if errors.Is(last.Kind, llm.ErrEmpty) {
			if emptyRetried {
				break
			}
			emptyRetried = true
		}
		wait := httpx.Backoff(retry, c.opts.MinBackoff, c.opts.MaxBackoff)
		if res.retryAfter > 0 {
			wait = min(res.retryAfter, c.opts.MaxRetryAfter)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			c.log.Warn("llm: not retrying, deadline too close", "endpoint", c.shown, "model", c.opts.Model, "wait", wait, "error", last)
			break
		}
		c.log.Warn("llm: retrying", "endpoint", c.shown, "model", c.opts.Model, "attempt", attempts, "wait", wait, "error", last)
		if err := c.sleep(ctx, wait); err != nil {
			last.Cause = errors.Join(last.Cause, err)
			break
		}
		retry++
	}
	if last.Cause == nil && ctx.Err() != nil {
		last.Cause = ctx.Err()
	}
	return llm.Response{Latency: time.Since(start)}, last
}

// adapt changes what the client sends after a 4xx whose body names a
// parameter the server refuses. It reports whether anything changed.
func (c *Client) adapt(req llm.Request, mode Mode, body string) bool {
	b := strings.ToLower(body)
	switch {
	case strings.Contains(b, "max_completion_tokens") && (req.MaxTokens > 0 || c.opts.MaxTokens > 0) &&
		!c.useMaxCompletionTokens.Load():
		c.useMaxCompletionTokens.Store(true)
		c.log.Info("llm: server wants max_completion_tokens", "endpoint", c.shown, "model", c.opts.Model)
		return true
	case strings.Contains(b, "temperature") && !c.dropTemperature.Load() &&
		containsAny(b, "unsupported", "not support", "does not support", "only the default", "invalid"):
		c.dropTemperature.Store(true)
		c.log.Info("llm: server refuses temperature; not sending it", "endpoint", c.shown, "model", c.opts.Model)
		return true
	case strings.Contains(b, "seed") && !strings.Contains(b, "response_format") && !c.dropSeed.Load() &&
		containsAny(b, "unsupported", "not support", "unknown", "unrecognized", "extra"):
		c.dropSeed.Store(true)
		c.log.Info("llm: server refuses seed; not sending it", "endpoint", c.shown, "model", c.opts.Model)
		return true
	}
	if len(req.Schema) == 0 || mode >= Plain {
		return false
	}
	// The refusal must be about structured output: named, or a generic
	// unknown-field complaint that names no other parameter. A context
	// length or bad model error must not downgrade the client.
	named := containsAny(b, "response_format", "json_schema", "json_object", "schema", "grammar")
	generic := containsAny(b, "unknown parameter", "unrecognized", "extra inputs", "extra_forbidden",
		"unsupported parameter", "not supported") && !containsAny(b, "context", "token", "model", "temperature", "seed")
	if named || generic {
		next := mode + 1
		if c.mode.CompareAndSwap(int32(mode), int32(next)) {
			c.log.Warn("llm: server refused structured output; downgrading", "endpoint", c.shown, "model", c.opts.Model, "from", mode, "to", next)
		}
		return true
	}
	return false
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// encode builds the request body for mode.
func (c *Client) encode(req llm.Request, mode Mode) ([]byte, error) {
	cr := chatRequest{Model: c.opts.Model, Messages: req.Messages}
	temp := req.Temperature
	if c.opts.Temperature != nil {
		temp = *c.opts.Temperature
	}
	if !c.dropTemperature.Load() {
		cr.Temperature = &temp
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = c.opts.MaxTokens
	}
	if c.useMaxCompletionTokens.Load() {
		cr.MaxCompletionTokens = maxTokens
	} else {
		cr.MaxTokens = maxTokens
	}
	cr.Seed = req.Seed
	if cr.Seed == nil {
		cr.Seed = c.opts.Seed
	}
	if c.dropSeed.Load() {
		cr.Seed = nil
	}
	if len(req.Schema) > 0 {
		switch mode {
		case JSONSchema:
			name := schemaName(req.SchemaName)
			rf, err := json.Marshal(map[string]any{
				"type": "json_schema",
				"json_schema": map[string]any{
					"name":   name,
					"schema": json.RawMessage(req.Schema),
					"strict": false,
				},
			})
			if err != nil {
				return nil, fmt.Errorf("openai: encoding schema %s: %w", name, err)
			}
			cr.ResponseFormat = rf
		case JSONObject:
			cr.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
			cr.Messages = withSchemaInstruction(req.Messages, req.Schema)
		default:
			cr.Messages = withSchemaInstruction(req.Messages, req.Schema)
		}
	}
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	return body, nil
}

// schemaName makes a name OpenAI accepts (^[a-zA-Z0-9_-]{1,64}$).
func schemaName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "reply"
	}
	return b.String()
}

// SchemaInstruction is the text added to the system prompt when the server
// cannot be given the schema through response_format.
func SchemaInstruction(schema json.RawMessage) string {
	return "Reply with only a JSON object that matches this JSON Schema, with no code fences and no text before or after it:\n" + string(schema)
}

// withSchemaInstruction returns messages with the schema instruction
// appended to the first system message (or in a new one in front).
func withSchemaInstruction(msgs []llm.Message, schema json.RawMessage) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+1)
	instr := SchemaInstruction(schema)
	done := false
	for _, m := range msgs {
		if !done && m.Role == "system" {
			m.Content = strings.TrimRight(m.Content, "\n") + "\n\n" + instr
			done = true
		}
		out = append(out, m)
	}
	if !done {
		out = append([]llm.Message{{Role: "system", Content: instr}}, out...)
	}
	return out
}

// attempt sends one request, waiting for the rate limiter and a
// concurrency slot first.
func (c *Client) attempt(ctx context.Context, body []byte, req llm.Request) attemptResult {
	fail := func(kind error, status int, msg string, cause error, retryable bool) attemptResult {
		return attemptResult{
			err:       &Error{Endpoint: c.shown, Model: c.opts.Model, Status: status, Message: msg, Kind: kind, Cause: cause},
			retryable: retryable,
		}
	}
	if err := c.waitRPM(ctx); err != nil {
		return fail(llm.ErrUnavailable, 0, "waiting for the requests-per-minute limit", err, false)
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return fail(llm.ErrUnavailable, 0, "waiting for a concurrency slot", ctx.Err(), false)
	}
	defer func() { <-c.sem }()

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fail(llm.ErrRequest, 0, "building request", err, false)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fail(llm.ErrUnavailable, 0, "", ctx.Err(), false)
		}
		return fail(llm.ErrUnavailable, 0, "", unwrapURL(err), transient(err))
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return fail(llm.ErrUnavailable, hresp.StatusCode, "reading response", ctx.Err(), false)
		}
		return fail(llm.ErrUnavailable, hresp.StatusCode, "reading response", unwrapURL(err), true)
	}

	if hresp.StatusCode != http.StatusOK {
		msg := httpx.ErrorMessage(data)
		r := fail(llm.ErrUnavailable, hresp.StatusCode, msg, nil, false)
		r.body = string(data)
		switch s := hresp.StatusCode; {
		case s == http.StatusTooManyRequests:
			r.err.Kind, r.retryable = llm.ErrRateLimited, true
		case s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooEarly || s >= 500:
			r.retryable = true
		case s >= 400:
			r.err.Kind = llm.ErrRequest
		default: // 1xx/3xx that the client did not follow
			r.err.Message = "unexpected status: " + msg
		}
		if r.retryable {
			r.retryAfter, _ = httpx.RetryAfter(hresp.Header.Get("Retry-After"), time.Now())
		}
		return r
	}

	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		// A proxy's HTML page or a cut-off body: the server is not well.
		return fail(llm.ErrUnavailable, hresp.StatusCode, "response is not a chat completion: "+httpx.Snippet(string(data)), nil, true)
	}
	if cr.Error != nil {
		return fail(llm.ErrUnavailable, hresp.StatusCode, "error in response: "+cr.Error.Message, nil, true)
	}
	if len(cr.Choices) == 0 {
		return fail(llm.ErrEmpty, hresp.StatusCode, "no choices in response", nil, true)
	}
	ch := cr.Choices[0]
	if ch.Message.Content == nil || strings.TrimSpace(*ch.Message.Content) == "" {
		msg := "empty content"
		if ch.Message.Refusal != "" {
			msg = "model refused: " + httpx.Snippet(ch.Message.Refusal)
		}
		if ch.FinishReason != "" {
			msg += " (finish_reason " + ch.FinishReason + ")"
		}
		return fail(llm.ErrEmpty, hresp.StatusCode, msg, nil, ch.Message.Refusal == "")
	}
	content := stripThink(*ch.Message.Content)
	if ch.FinishReason == "length" {
		c.log.Warn("llm: reply truncated at max tokens", "endpoint", c.shown, "model", c.opts.Model, "operation", req.Operation)
	}
	resp := llm.Response{Content: content, Model: cr.Model}
	if resp.Model == "" {
		resp.Model = c.opts.Model
	}
	if cr.Usage != nil && (cr.Usage.PromptTokens > 0 || cr.Usage.CompletionTokens > 0) {
		resp.Usage = llm.Usage{PromptTokens: cr.Usage.PromptTokens, CompletionTokens: cr.Usage.CompletionTokens}
	} else {
		resp.Usage = estimateUsage(req.Messages, *ch.Message.Content)
	}
	return attemptResult{resp: resp}
}

// stripThink removes a leading <think>…</think> block that reasoning
// models served through chat templates put before the answer.
func stripThink(s string) string {
	t := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(t, "<think>") {
		return s
	}
	end := strings.Index(t, "</think>")
	if end < 0 {
		return s
	}
	rest := strings.TrimSpace(t[end+len("</think>"):])
	if rest == "" {
		return s
	}
	return rest
}

// estimateUsage counts about four characters per token, plus a few tokens
// of overhead per message, for servers that report no usage.
func estimateUsage(msgs []llm.Message, content string) llm.Usage {
	prompt := 3
	for _, m := range msgs {
		prompt += 4 + (utf8.RuneCountInString(m.Content)+3)/4
	}
	return llm.Usage{
		PromptTokens:     prompt,
		CompletionTokens: (utf8.RuneCountInString(content) + 3) / 4,
		Estimated:        true,
	}
}

// unwrapURL drops the *url.Error wrapper, whose text repeats the URL.
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// transient reports whether a transport error is worth retrying:
// timeouts, refused or reset connections, unexpected EOFs.
func transient(err error) bool {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	return false
}

// waitRPM blocks until the requests-per-minute limiter lets a request go.
func (c *Client) waitRPM(ctx context.Context) error {
	if c.opts.RequestsPerMinute <= 0 {
		return nil
	}
	interval := time.Minute / time.Duration(c.opts.RequestsPerMinute)
	c.rpmMu.Lock()
	now := time.Now()
	at := c.rpmNext
	if at.Before(now) {
		at = now
	}
	c.rpmNext = at.Add(interval)
	c.rpmMu.Unlock()
	if d := at.Sub(now); d > 0 {
		return c.sleep(ctx, d)
	}
	return nil
}

// sleepCtx waits for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
