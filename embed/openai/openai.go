// Package openai is an embed.Embedder for any OpenAI-compatible
// embeddings endpoint (POST {BaseURL}/embeddings): OpenAI itself, Ollama,
// vLLM, LiteLLM and others.
//
// Texts are sent in batches of Options.BatchSize, one request at a time,
// each holding a slot of the server shared with llm/openai's clients of the
// same server (see MaxConcurrency). Requests answered with 429 or a 5xx
// status, and requests that fail in transport, are retried with exponential
// backoff and jitter, honouring a Retry-After header; other 4xx answers are
// not retried. Failures are returned as *Error, naming the endpoint and the
// model. There is no hidden timeout: deadlines come from the context (and
// Options.RequestTimeout, when set).
//
// The retry and concurrency options have the names and meanings of
// llm/openai's: MaxRetries, MinBackoff, MaxBackoff, MaxRetryAfter,
// MaxConcurrency, RequestTimeout, HTTPClient.
//
//	e, err := openai.New(openai.Options{
//		BaseURL: "http://localhost:11434/v1", // Ollama
//		Model:   "nomic-embed-text",
//	})
//	vecs, err := e.Embed(ctx, []string{"hello"})
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/httpx"
)

// Defaults for the zero values of Options (the retry ones live in
// internal/httpx, shared with llm/openai).
const (
	DefaultBatchSize      = 128
	DefaultMaxRetries     = httpx.DefaultMaxRetries
	DefaultMinBackoff     = httpx.DefaultMinBackoff
	DefaultMaxBackoff     = httpx.DefaultMaxBackoff
	DefaultMaxRetryAfter  = httpx.DefaultMaxRetryAfter
	DefaultMaxConcurrency = httpx.DefaultMaxConcurrency
)

// maxResponseBytes bounds the body read from the server.
const maxResponseBytes = 512 << 20

// ErrBadResponse is wrapped by an *Error when the server's answer cannot be
// used: invalid JSON, the wrong number of vectors, bad indices, or vectors
// of the wrong size.
var ErrBadResponse = errors.New("openai: malformed embeddings response")

// Options configures New.
type Options struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434/v1"; requests go to BaseURL + "/embeddings".
	// A URL with no path gets "/v1". Required.
	BaseURL string
	// APIKey, if set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Model is the embedding model name. Required.
	Model string
	// Dim is the expected vector size. Zero means learn it from the first
	// response; afterwards every vector must have that size.
	Dim int
	// SendDimensions sends Dim as the "dimensions" request field (OpenAI
	// text-embedding-3 models can shorten their vectors). Off by default,
	// since many compatible servers reject the field.
	SendDimensions bool
	// BatchSize is the number of texts per request; zero means
	// DefaultBatchSize.
	BatchSize int
	// HTTPClient sends the requests; nil uses a client without timeout
	// (deadlines come from the context).
	HTTPClient *http.Client
	// RequestTimeout bounds each HTTP request, counted from when it got a
	// slot of the server; 0 means none. A request that runs out of it is
	// not retried.
	RequestTimeout time.Duration
	// MaxRetries is the number of retries after the first attempt of a
	// request; zero means DefaultMaxRetries and a negative value none.
	MaxRetries int
	// MinBackoff is the first backoff delay, doubled on each retry and
	// jittered; zero means DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff caps the exponential backoff; zero means
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxRetryAfter caps how long a server's Retry-After is honoured; zero
	// means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// MaxConcurrency caps requests in flight to this server from every
	// client in the process (llm/openai's included); 0 means
	// DefaultMaxConcurrency. Clients of one server asking for the same cap
	// share its slots.
	MaxConcurrency int
}

// Embedder embeds texts through an OpenAI-compatible endpoint. It is safe
// for concurrent use.
type Embedder struct {
	opts     Options
	endpoint string
	client   *http.Client
	slots    *httpx.Slots
	dim      atomic.Int64
}

var _ embed.Embedder = (*Embedder)(nil)

// New checks opts and returns an Embedder. It makes no request.
func New(opts Options) (*Embedder, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: Options.Model is empty")
	}
	if opts.BaseURL == "" {
		return nil, errors.New("openai: Options.BaseURL is empty")
	}
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: Options.BaseURL %q is not an http(s) URL", opts.BaseURL)
	}
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.Path += "/embeddings"
	if opts.Dim < 0 {
		return nil, fmt.Errorf("openai: Options.Dim %d is negative", opts.Dim)
	}
	if opts.SendDimensions && opts.Dim == 0 {
		return nil, errors.New("openai: Options.SendDimensions needs Options.Dim")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.MinBackoff)
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.MaxConcurrency <= 0 {
		opts.MaxConcurrency = DefaultMaxConcurrency
	}
	e := &Embedder{opts: opts, endpoint: u.String(), client: opts.HTTPClient,
		slots: httpx.ServerSlots(u.String(), opts.MaxConcurrency)}
	if e.client == nil {
		e.client = &http.Client{}
	}
	e.dim.Store(int64(opts.Dim))
	return e, nil
}

// Dim reports the vector size: Options.Dim, else the size learned from the
// first response, else 0 before any response.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// ID is "openai:<model>", with ":<dim>" appended when SendDimensions
// shortens the vectors.
func (e *Embedder) ID() string {
	if e.opts.SendDimensions {
		return "openai:" + e.opts.Model + ":" + strconv.Itoa(e.opts.Dim)
	}
	return "openai:" + e.opts.Model
}

// Endpoint reports the URL requests are sent to.
func (e *Embedder) Endpoint() string { return e.endpoint }

// Embed returns one L2-normalised vector per text, in input order. Empty
// texts are sent as " " (OpenAI rejects empty inputs).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		batch := texts[start:min(start+e.opts.BatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// Error describes a failed embeddings request.
type Error struct {
	Endpoint   string // the URL requested
	Model      string
	StatusCode int    // the last HTTP status, 0 if none was received
	Message    string // the server's error message, or a description
	Attempts   int    // requests made, retries included
	Err        error  // the underlying error, if any (ErrBadResponse, a transport error, ctx.Err())
}

// Error describes the failure with the endpoint, model, status and attempts.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai: embeddings request to %s (model %q) failed", e.Endpoint, e.Model)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the failure was one Embed retries (429, 5xx or
// a transport error).
func (e *Error) Retryable() bool {
	if e.StatusCode != 0 {
		return retryableStatus(e.StatusCode)
	}
	return e.Err != nil && !errors.Is(e.Err, ErrBadResponse) &&
		!errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded)
}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	req := request{Model: e.opts.Model, Input: make([]string, len(texts)), EncodingFormat: "float"}
	for i, t := range texts {
		if t == "" {
			t = " "
		}
		req.Input[i] = t
	}
	if e.opts.SendDimensions {
		req.Dimensions = e.opts.Dim
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, e.fail(0, 0, "encoding request", err)
	}
	for attempt := 1; ; attempt++ {
		status, retryAfter, respBody, err := e.post(ctx, body)
		if err == nil && status == http.StatusOK {
			vecs, err := e.decode(respBody, len(texts))
			if err != nil {
				return nil, e.fail(status, attempt, "", err)
			}
			return vecs, nil
		}
		var ferr *Error
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, e.fail(0, attempt, "", ctxErr)
			}
			ferr = e.fail(0, attempt, "", err)
		} else {
			ferr = e.fail(status, attempt, httpx.ErrorMessage(respBody), nil)
		}
		if !ferr.Retryable() || attempt > e.opts.MaxRetries {
			return nil, ferr
		}
		delay := e.backoff(attempt, retryAfter)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			ferr.Err = ctx.Err()
			return nil, ferr
		case <-t.C:
		}
	}
}

func (e *Embedder) fail(status, attempts int, msg string, err error) *Error {
	return &Error{Endpoint: e.endpoint, Model: e.opts.Model, StatusCode: status, Message: msg, Attempts: attempts, Err: err}
}

// post sends one request. It returns the status, the Retry-After delay (-1
// when absent) and the body.
func (e *Embedder) post(ctx context.Context, body []byte) (int, time.Duration, []byte, error) {
	if err := e.slots.Acquire(ctx); err != nil {
		return 0, -1, nil, err
	}
	defer e.slots.Release()
	if e.opts.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.opts.RequestTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, -1, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "higmem")
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, -1, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return 0, -1, nil, err
	}
	ra, ok := httpx.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if !ok {
		ra = -1
	}
	return resp.StatusCode, ra, b, nil
}

// backoff returns the wait before retry number attempt (1-based):
// Retry-After when the server sent it (capped at MaxRetryAfter), else
// MinBackoff·2^(attempt-1) capped at MaxBackoff, with jitter in [½, 1].
func (e *Embedder) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return min(retryAfter, e.opts.MaxRetryAfter)
	}
	return httpx.Backoff(attempt-1, e.opts.MinBackoff, e.opts.MaxBackoff)
}

// decode checks a response and returns its vectors in input order,
// L2-normalised.
func (e *Embedder) decode(body []byte, n int) ([][]float32, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, fmt.Errorf("%w: bad or repeated index %d", ErrBadResponse, i)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty vector at index %d", ErrBadResponse, i)
		}
		want := int(e.dim.Load())
		if want == 0 {
			e.dim.CompareAndSwap(0, int64(len(d.Embedding)))
			want = int(e.dim.Load())
		}
		if len(d.Embedding) != want {
			return nil, fmt.Errorf("%w: vector of size %d at index %d, want %d", ErrBadResponse, len(d.Embedding), i, want)
		}
		if !normalize(d.Embedding) {
			return nil, fmt.Errorf("%w: vector at index %d is zero or not finite", ErrBadResponse, i)
		}
		out[i] = d.Embedding
	}
	return out, nil
}

// normalize scales v to unit length. It reports false for a zero or
// non-finite vector.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
