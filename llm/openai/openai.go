// Package openai is an llm.Model for any server speaking the OpenAI
// /v1/chat/completions protocol: OpenAI itself, vLLM, Ollama, the llama.cpp
// server, LM Studio, LiteLLM and others.
//
// The client negotiates structured output: response_format json_schema,
// then {"type":"json_object","schema":S} (llama-cpp-python's form), then
// json_object, then a plain instruction in the system prompt. It moves down
// when a 4xx or 5xx reply names the format it sent, and remembers the
// outcome per endpoint and model for the life of the process, so clients of
// the same server (one per role) learn it once.
//
// Every request carries a completion budget (Request.MaxTokens, else
// Options.MaxTokens, else DefaultMaxTokens) and, for schema requests, stop
// sequences that cut runaway whitespace. A context-length refusal is
// reported as llm.ErrContextLength, never retried. The client retries rate
// limits, 5xx replies, timeouts and connection failures with exponential
// backoff and jitter, honouring Retry-After. Concurrency is limited per
// server (scheme, host and port), shared by every client of that server in
// the process, so MaxConcurrency 1 serves a one-slot server. When the
// context ends the connection is closed; with Options.Stream the server
// sees that and stops generating (llama-cpp-python does not notice a closed
// connection on a non-streamed request). Every final error wraps one of the
// llm sentinels (ErrRateLimited, ErrUnavailable, ErrRequest, ErrEmpty,
// ErrContextLength) and is an *Error naming the endpoint and model. There
// is no hidden timeout: deadlines come from the context.
//
// Decoding and repairing JSON replies is not done here: use llm.CompleteJSON
// on top of the client.
package openai

import (
	"bufio"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/httpx"
	"github.com/higmem/higmem/llm"
)

// Defaults for zero Options fields (the retry ones live in internal/httpx,
// shared with embed/openai).
const (
	DefaultMaxRetries     = httpx.DefaultMaxRetries
	DefaultMaxConcurrency = httpx.DefaultMaxConcurrency
	DefaultMinBackoff     = httpx.DefaultMinBackoff
	DefaultMaxBackoff     = httpx.DefaultMaxBackoff
	DefaultMaxRetryAfter  = httpx.DefaultMaxRetryAfter
	// DefaultMaxTokens is the completion budget of requests that set none.
	// Callers should set Request.MaxTokens per operation; this only bounds
	// a runaway reply (a small model looping on "new:1", "new:2", ...).
	DefaultMaxTokens = 1024
)

// DefaultJSONStop is the stop sequence added to schema requests when
// Options.Stop is nil: four newlines never occur in a JSON reply worth
// keeping, and grammar-constrained small models can emit white space
// forever.
var DefaultJSONStop = []string{"\n\n\n\n"}

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
	// MaxTokens is used for requests that set no MaxTokens; 0 means
	// DefaultMaxTokens, a negative value sends no limit (the server's
	// default, often unbounded).
	MaxTokens int
	// Stop is sent with schema requests besides the request's own stop
	// sequences; nil means DefaultJSONStop, an empty slice none.
	Stop []string
	// Seed is used for requests that set no Seed.
	Seed *int64
	// HTTPClient sends the requests; nil uses a client without timeout
	// (deadlines come from the context).
	HTTPClient *http.Client
	// RequestTimeout bounds each HTTP request, counted from when it got a
	// slot of the server (see MaxConcurrency), so time spent queued behind
	// other requests does not eat it; 0 means none. A request that runs
	// out of it is retried like any other transient failure (MaxRetries
	// times), so a call that only ever times out ends after at most
	// MaxCallTime: (MaxRetries+1)·RequestTimeout plus the backoffs between
	// (10m7.5s with a 2-minute timeout and the default retries). The
	// caller's context bounds the whole call.
	RequestTimeout time.Duration
	// Stream asks for server-sent events. The reply is the same, but a
	// server stops generating as soon as the client goes away (the context
	// ended), which frees a one-slot server at once. Servers that report no
	// usage in streams (llama-cpp-python) then get estimated token counts.
	Stream bool
	// MaxRetries is how many times a failed request is retried; 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// MaxConcurrency caps requests in flight to this server (scheme, host
	// and port) from every client in the process; 0 means
	// DefaultMaxConcurrency. Clients of one server asking for the same cap
	// share its slots (give every role the same value, as the CLI does).
	// Set it to the server's slots: 1 for llama-cpp-python and a default
	// llama.cpp server.
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
	// with a schema (default JSONSchema, i.e. negotiate from the top).
	// Servers known to lack json_schema can start lower and skip the
	// refused attempts; see ParseMode.
	Structured Mode
	// Logger receives retries, downgrades and truncation warnings; nil
	// discards them.
	Logger *slog.Logger
}

// Mode is how a schema is conveyed to the server.
type Mode int32

// The structured-output modes, in the order they are tried.
const (
	// JSONSchema sends response_format {"type":"json_schema",...}
	// (OpenAI, vLLM, Ollama, llama.cpp's llama-server).
	JSONSchema Mode = iota
	// JSONObjectSchema sends response_format {"type":"json_object",
	// "schema":S}, the form llama-cpp-python and some hosted servers
	// constrain with; the schema is not repeated in the prompt.
	JSONObjectSchema
	// JSONObject sends response_format {"type":"json_object"} and
	// describes the schema in the system prompt.
	JSONObject
	// Plain sends no response_format and describes the schema in the
	// system prompt.
	Plain
)

// modeNames are the names String and ParseMode use.
var modeNames = []string{"json_schema", "json_object_schema", "json_object", "plain"}

// String names the mode.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode reads a mode name: "auto" (or "") and "json_schema" start the
// negotiation at the top; "json_object_schema", "json_object" and "plain"
// start lower. The client still moves down from there when refused.
func ParseMode(s string) (Mode, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "auto":
		return JSONSchema, nil
	default:
		for i, n := range modeNames {
			if v == n {
				return Mode(i), nil
			}
		}
	}
	return 0, fmt.Errorf("openai: unknown structured-output mode %q (want auto, %s)", s, strings.Join(modeNames, ", "))
}

// Client is an llm.Model talking to one OpenAI-compatible endpoint with
// one model. It is safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string // full chat completions URL
	shown    string // endpoint without credentials, for errors and logs
	http     *http.Client
	log      *slog.Logger
	slots    *httpx.Slots // shared by every client of the server
	learned  *learned     // shared by every client of the endpoint and model
	maxTok   int          // default completion budget, 0 for none
	stop     []string     // stop sequences of schema requests

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
		slots:    httpx.ServerSlots(endpoint, opts.MaxConcurrency),
		learned:  learnedFor(endpoint, opts.Model),
		maxTok:   opts.MaxTokens,
		stop:     opts.Stop,
		sleep:    sleepCtx,
	}
	switch {
	case c.maxTok == 0:
		c.maxTok = DefaultMaxTokens
	case c.maxTok < 0:
		c.maxTok = 0
	}
	if c.stop == nil {
		c.stop = DefaultJSONStop
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.learned.atLeast(min(max(opts.Structured, JSONSchema), Plain))
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

// MaxCallTime is the longest one Complete can take when every request
// runs out of Options.RequestTimeout: (MaxRetries+1) timeouts plus the
// longest backoffs between them (see httpx.MaxCallTime), not counting time
// queued for a slot. 0 means unbounded (no RequestTimeout): only the
// caller's context bounds a call.
func (c *Client) MaxCallTime() time.Duration {
	return httpx.MaxCallTime(c.opts.RequestTimeout, c.opts.MaxRetries, c.opts.MinBackoff, c.opts.MaxBackoff)
}

// Mode returns the structured-output mode currently used for schemas.
func (c *Client) Mode() Mode { return Mode(c.learned.mode.Load()) }

// Error is the error a Client returns. It wraps Kind (an llm sentinel) and
// Cause (the transport or context error, if any), so both errors.Is(err,
// llm.ErrRateLimited) and errors.Is(err, context.DeadlineExceeded) work.
type Error struct {
	Endpoint string // chat completions URL, without credentials
	Model    string
	Status   int    // last HTTP status, 0 when no reply arrived
	Message  string // the server's error message or a description
	Attempts int    // requests sent
	Kind     error  // llm.ErrRateLimited, ErrUnavailable, ErrRequest, ErrEmpty or ErrContextLength
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

// Unwrap returns Kind and Cause. A context-length refusal also unwraps to
// llm.ErrRequest: it is a rejected request.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Kind == llm.ErrContextLength {
		errs = append(errs, llm.ErrRequest)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
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
		Stop                []string        `json:"stop,omitempty"`
		ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
		Stream              bool            `json:"stream"`
		StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	}
	choice struct {
		Message message `json:"message"`
		// Delta is a streamed chunk's part of the message.
		Delta        message `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	message struct {
		Content *string `json:"content"`
		Refusal string  `json:"refusal"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatResponse struct {
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   *struct {
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
	// timedOut is set when the request reached the server and ran out of
	// RequestTimeout: the server spent work on it, counted as estimated
	// prompt tokens.
	timedOut bool
}

// Complete sends req and returns the first choice's content.
func (c *Client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	attempts := 0
	emptyRetried := false
	// spent is what requests without a reply cost (timeouts: the server
	// read the prompt), estimated, added to the call's usage.
	var spent llm.Usage
	var last *Error
	for retry := 0; ; {
		mode := c.Mode()
		body, err := c.encode(req, mode)
		if err != nil {
			return llm.Response{}, err
		}
		attempts++
		res := c.attempt(ctx, body, req)
		if res.err == nil {
			res.resp.Latency = time.Since(start)
			res.resp.Requests = attempts
			if res.resp.Truncated() && res.resp.Usage.Estimated && c.budget(req) > 0 {
				// A reply cut at the budget is exactly that long.
				res.resp.Usage.CompletionTokens = c.budget(req)
			}
			if res.resp.Truncated() {
				c.log.Warn("llm: reply truncated at max tokens", "endpoint", c.shown, "model", c.opts.Model,
					"operation", req.Operation, "max_tokens", c.budget(req))
			}
			if spent.Total() > 0 {
				res.resp.Usage = res.resp.Usage.Add(spent)
			}
			return res.resp, nil
		}
		last = res.err
		last.Attempts = attempts
		if res.timedOut {
			u := estimateUsage(req.Messages, "")
			spent = spent.Add(llm.Usage{PromptTokens: u.PromptTokens, Estimated: true})
		}

		if last.Status >= 400 && last.Status != 429 {
			if contextLength(res.body) {
				last.Kind = llm.ErrContextLength
				break
			}
			// A reply naming a parameter or the structured-output format:
			// adapt the request and resend at once.
			if c.adapt(req, mode, last.Status, res.body) {
				continue
			}
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
	return llm.Response{Latency: time.Since(start), Requests: attempts, Usage: spent}, last
}

// budget is the completion budget of req, 0 for none.
func (c *Client) budget(req llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return c.maxTok
}

// encode builds the request body for mode.
func (c *Client) encode(req llm.Request, mode Mode) ([]byte, error) {
	q := c.learned.quirks()
	cr := chatRequest{Model: c.opts.Model, Messages: req.Messages}
	temp := req.Temperature
	if c.opts.Temperature != nil {
		temp = *c.opts.Temperature
	}
	if !q.dropTemperature {
		cr.Temperature = &temp
	}
	if q.useMaxCompletionTokens {
		cr.MaxCompletionTokens = c.budget(req)
	} else {
		cr.MaxTokens = c.budget(req)
	}
	cr.Seed = req.Seed
	if cr.Seed == nil {
		cr.Seed = c.opts.Seed
	}
	if q.dropSeed {
		cr.Seed = nil
	}
	if !q.dropStop {
		cr.Stop = req.Stop
		if len(req.Schema) > 0 {
			cr.Stop = mergeStop(req.Stop, c.stop)
		}
	}
	if c.opts.Stream {
		cr.Stream = true
		if !q.dropStreamOptions {
			cr.StreamOptions = &streamOptions{IncludeUsage: true}
		}
	}
	if len(req.Schema) > 0 {
		switch mode {
		case JSONSchema:
			name := schemaName(req.SchemaName)
			rf, err := json.Marshal(map[string]any{
				"type": "json_schema",
				"json_schema": map[string]any{
					"name":   name,
					"schema": req.SentSchema(),
					"strict": false,
				},
			})
			if err != nil {
				return nil, fmt.Errorf("openai: encoding schema %s: %w", name, err)
			}
			cr.ResponseFormat = rf
		case JSONObjectSchema:
			rf, err := json.Marshal(map[string]any{"type": "json_object", "schema": req.SentSchema()})
			if err != nil {
				return nil, fmt.Errorf("openai: encoding schema %s: %w", req.SchemaName, err)
			}
			cr.ResponseFormat = rf
		case JSONObject:
			cr.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
			cr.Messages = withSchemaInstruction(req.Messages, req.SentSchema())
		default:
			cr.Messages = withSchemaInstruction(req.Messages, req.SentSchema())
		}
	}
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	return body, nil
}

// mergeStop appends extra stop sequences to a request's own, without
// duplicates and within OpenAI's limit of four.
func mergeStop(own, extra []string) []string {
	out := append([]string(nil), own...)
	for _, s := range extra {
		if len(out) == 4 {
			break
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
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

// attempt sends one request, waiting for the rate limiter and a slot of
// the server first.
func (c *Client) attempt(ctx context.Context, body []byte, req llm.Request) (res attemptResult) {
	fail := func(kind error, status int, msg string, cause error, retryable bool) attemptResult {
		return attemptResult{
			err:       &Error{Endpoint: c.shown, Model: c.opts.Model, Status: status, Message: msg, Kind: kind, Cause: cause},
			retryable: retryable,
		}
	}
	if err := c.waitRPM(ctx); err != nil {
		return fail(llm.ErrUnavailable, 0, "waiting for the requests-per-minute limit", err, false)
	}
	if err := c.slots.Acquire(ctx); err != nil {
		return fail(llm.ErrUnavailable, 0, "waiting for a concurrency slot", err, false)
	}
	defer c.slots.Release()
	if c.opts.RequestTimeout > 0 {
		parent := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.RequestTimeout)
		defer cancel()
		defer func() {
			if res.err != nil && parent.Err() == nil && ctx.Err() != nil {
				// Only this request's own deadline ran out: retried like
				// any transient failure, within MaxCallTime.
				res = fail(llm.ErrUnavailable, res.err.Status,
					fmt.Sprintf("no reply within the request timeout of %v (a call ends after at most %v: %d requests and their backoffs)",
						c.opts.RequestTimeout, c.MaxCallTime(), c.opts.MaxRetries+1),
					context.DeadlineExceeded, true)
				res.timedOut = true
			}
		}()
	}

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fail(llm.ErrRequest, 0, "building request", err, false)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opts.Stream {
		hreq.Header.Set("Accept", "text/event-stream, application/json")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	// When ctx ends, the transport closes the connection: the server sees
	// the client go away (and stops a streamed generation).
	hresp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fail(llm.ErrUnavailable, 0, "", ctx.Err(), false)
		}
		return fail(llm.ErrUnavailable, 0, "", unwrapURL(err), transient(err))
	}
	defer hresp.Body.Close()

	if hresp.StatusCode == http.StatusOK && strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		cr, err := readStream(hresp.Body)
		if err != nil {
			if ctx.Err() != nil {
				return fail(llm.ErrUnavailable, hresp.StatusCode, "reading stream", ctx.Err(), false)
			}
			return fail(llm.ErrUnavailable, hresp.StatusCode, "reading stream", unwrapURL(err), true)
		}
		return c.reply(cr, hresp.StatusCode, req, fail)
	}
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
	return c.reply(&cr, hresp.StatusCode, req, fail)
}

// reply turns a decoded completion (whole or assembled from a stream) into
// the attempt's result.
func (c *Client) reply(cr *chatResponse, status int, req llm.Request,
	fail func(kind error, status int, msg string, cause error, retryable bool) attemptResult) attemptResult {
	if cr.Error != nil {
		return fail(llm.ErrUnavailable, status, "error in response: "+cr.Error.Message, nil, true)
	}
	if len(cr.Choices) == 0 {
		return fail(llm.ErrEmpty, status, "no choices in response", nil, true)
	}
	ch := cr.Choices[0]
	finish := ""
	if ch.FinishReason != nil {
		finish = *ch.FinishReason
	}
	if ch.Message.Content == nil || strings.TrimSpace(*ch.Message.Content) == "" {
		msg := "empty content"
		if ch.Message.Refusal != "" {
			msg = "model refused: " + httpx.Snippet(ch.Message.Refusal)
		}
		if finish != "" {
			msg += " (finish_reason " + finish + ")"
		}
		return fail(llm.ErrEmpty, status, msg, nil, ch.Message.Refusal == "")
	}
	content := stripThink(*ch.Message.Content)
	resp := llm.Response{Content: content, Model: cr.Model, FinishReason: finish}
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

// readStream assembles a server-sent-events chat completion into one
// response: the deltas' content concatenated, the last finish_reason, and
// the usage of the final chunk when the server sends one.
func readStream(r io.Reader) (*chatResponse, error) {
	out := &chatResponse{}
	var content, refusal strings.Builder
	var finish *string
	sc := bufio.NewScanner(io.LimitReader(r, maxBody))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	chunks := 0
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments (": ping"), event names, blank separators
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var ch chatResponse
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, fmt.Errorf("stream chunk is not JSON: %s", httpx.Snippet(data))
		}
		chunks++
		if ch.Error != nil {
			out.Error = ch.Error
			return out, nil
		}
		if ch.Model != "" {
			out.Model = ch.Model
		}
		if ch.Usage != nil {
			out.Usage = ch.Usage
		}
		if len(ch.Choices) > 0 {
			d := ch.Choices[0]
			if d.Delta.Content != nil {
				content.WriteString(*d.Delta.Content)
			}
			if d.Message.Content != nil { // servers that send whole messages
				content.WriteString(*d.Message.Content)
			}
			refusal.WriteString(d.Delta.Refusal)
			if d.FinishReason != nil && *d.FinishReason != "" {
				finish = d.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if chunks == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	text := content.String()
	out.Choices = make([]choice, 1)
	out.Choices[0].Message.Content = &text
	out.Choices[0].Message.Refusal = refusal.String()
	out.Choices[0].FinishReason = finish
	return out, nil
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
