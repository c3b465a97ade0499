package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/httpx"
)

// fakeServer is an OpenAI-compatible embeddings endpoint. Each input text
// "t<k>" (or any text) gets a deterministic vector derived from the text, so
// tests can check order. handle may override the answer of call n (1-based);
// returning false falls through to the normal answer.
type fakeServer struct {
	t      *testing.T
	dim    int
	calls  atomic.Int64
	mu     sync.Mutex
	inputs [][]string
	handle func(n int, w http.ResponseWriter, req request) bool
}

func (f *fakeServer) vector(text string) []float32 {
	v := make([]float32, f.dim)
	for i := range v {
		v[i] = float32(len(text)+1) * float32(i+1)
	}
	v[0] = float32(text[0])
	return v
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		http.Error(w, `{"error":{"message":"bad key `+got+`"}}`, http.StatusUnauthorized)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input)
	f.mu.Unlock()
	if f.handle != nil && f.handle(n, w, req) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	// Answer in reverse order: clients must use "index".
	for i := len(req.Input) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, item{"embedding", i, f.vector(req.Input[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func newTestEmbedder(t *testing.T, f *fakeServer, opts Options) *Embedder {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL + "/v1"
	opts.APIKey = "sk-test"
	if opts.Model == "" {
		opts.Model = "text-embedding-3-small"
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = time.Millisecond
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(ss))
	}
	return out
}

func checkVectors(t *testing.T, f *fakeServer, texts []string, got [][]float32) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		if text == "" {
			text = " "
		}
		want := unit(f.vector(text))
		for d := range want {
			if math.Abs(float64(got[i][d]-want[d])) > 1e-6 {
				t.Fatalf("text %d %q: v[%d] = %v, want %v", i, text, d, got[i][d], want[d])
			}
		}
	}
}

func TestEmbedSuccessLearnsDim(t *testing.T) {
	f := &fakeServer{t: t, dim: 5}
	e := newTestEmbedder(t, f, Options{})
	if e.Dim() != 0 {
		t.Errorf("Dim before any request = %d, want 0", e.Dim())
	}
	texts := []string{"alpha", "b", ""}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, f, texts, got)
	if e.Dim() != 5 {
		t.Errorf("Dim after a response = %d, want 5", e.Dim())
	}
	if e.ID() != "openai:text-embedding-3-small" {
		t.Errorf("ID = %q", e.ID())
	}
	if f.inputs[0][2] != " " {
		t.Errorf("empty text sent as %q, want \" \"", f.inputs[0][2])
	}
	if got, err := e.Embed(context.Background(), nil); err != nil || len(got) != 0 || f.calls.Load() != 1 {
		t.Errorf("Embed(nil) = %v, %v after %d calls; want no request", got, err, f.calls.Load())
	}
}

func TestEmbedBatchingKeepsOrder(t *testing.T) {
	f := &fakeServer{t: t, dim: 3}
	e := newTestEmbedder(t, f, Options{BatchSize: 3})
	var texts []string
	for i := 0; i < 10; i++ {
		texts = append(texts, fmt.Sprintf("%c%s", 'a'+i, strings.Repeat("x", i)))
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, f, texts, got)
	if n := f.calls.Load(); n != 4 {
		t.Errorf("%d requests for 10 texts in batches of 3, want 4", n)
	}
	var sizes []int
	for _, in := range f.inputs {
		sizes = append(sizes, len(in))
	}
	if fmt.Sprint(sizes) != "[3 3 3 1]" {
		t.Errorf("batch sizes %v, want [3 3 3 1]", sizes)
	}
}

func TestEmbedRetriesAfter429(t *testing.T) {
	f := &fakeServer{t: t, dim: 4}
	f.handle = func(n int, w http.ResponseWriter, _ request) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`, http.StatusTooManyRequests)
			return true
		}
		return false
	}
	e := newTestEmbedder(t, f, Options{})
	got, err := e.Embed(context.Background(), []string{"hi"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, f, []string{"hi"}, got)
	if n := f.calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (429, then success)", n)
	}
}

func TestEmbedServerErrorStorm(t *testing.T) {
	f := &fakeServer{t: t, dim: 4}
	f.handle = func(n int, w http.ResponseWriter, _ request) bool {
		http.Error(w, `{"error":"model is loading"}`, http.StatusServiceUnavailable)
		return true
	}
	e := newTestEmbedder(t, f, Options{MaxRetries: 3, Model: "nomic-embed-text"})
	_, err := e.Embed(context.Background(), []string{"hi"})
	var ferr *Error
	if !errors.As(err, &ferr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if ferr.StatusCode != 503 || ferr.Attempts != 4 || ferr.Message != "model is loading" || !ferr.Retryable() {
		t.Errorf("error = %+v, want 503 after 4 attempts with the server's message", ferr)
	}
	if n := f.calls.Load(); n != 4 {
		t.Errorf("%d requests, want 1 + 3 retries", n)
	}
	for _, want := range []string{e.Endpoint(), `"nomic-embed-text"`, "HTTP 503", "after 4 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestEmbedNoRetryOn4xx(t *testing.T) {
	f := &fakeServer{t: t, dim: 4}
	f.handle = func(n int, w http.ResponseWriter, _ request) bool {
		http.Error(w, `{"error":{"message":"'$.input' is invalid"}}`, http.StatusBadRequest)
		return true
	}
	e := newTestEmbedder(t, f, Options{})
	_, err := e.Embed(context.Background(), []string{"hi"})
	var ferr *Error
	if !errors.As(err, &ferr) || ferr.StatusCode != 400 || ferr.Retryable() || !strings.Contains(ferr.Message, "is invalid") {
		t.Fatalf("err = %v, want a non-retryable 400 with the server's message", err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestEmbedBadResponses(t *testing.T) {
	tests := []struct {
		name string
		body string
		opts Options
	}{
		{"bad json", `{"data": [`, Options{}},
		{"wrong count", `{"data":[{"index":0,"embedding":[1,2]}]}`, Options{}},
		{"repeated index", `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`, Options{}},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,2]},{"index":2,"embedding":[1,2]}]}`, Options{}},
		{"sizes differ", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`, Options{}},
		{"not the configured dim", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`, Options{Dim: 3}},
		{"zero vector", `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[1,2]}]}`, Options{}},
		{"empty vector", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1,2]}]}`, Options{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServer{t: t, dim: 2}
			f.handle = func(n int, w http.ResponseWriter, _ request) bool {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tc.body))
				return true
			}
			e := newTestEmbedder(t, f, tc.opts)
			_, err := e.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("err = %v, want ErrBadResponse", err)
			}
			if n := f.calls.Load(); n != 1 {
				t.Errorf("%d requests, want 1 (no retry)", n)
			}
		})
	}
}

func TestEmbedTransportErrorRetried(t *testing.T) {
	f := &fakeServer{t: t, dim: 2}
	f.handle = func(n int, w http.ResponseWriter, _ request) bool {
		if n <= 2 {
			// Drop the connection without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		}
		return false
	}
	e := newTestEmbedder(t, f, Options{})
	got, err := e.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, f, []string{"x"}, got)
	if n := f.calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestEmbedCancelledDuringBackoff(t *testing.T) {
	f := &fakeServer{t: t, dim: 2}
	f.handle = func(n int, w http.ResponseWriter, _ request) bool {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return true
	}
	// Cancel once the client has read the 429 (its body closed), so that
	// the cancellation lands in the backoff rather than in the request.
	read := make(chan struct{}, 1)
	client := &http.Client{Transport: closeSignal{http.DefaultTransport, read}}
	e := newTestEmbedder(t, f, Options{MaxRetryAfter: time.Hour, HTTPClient: client})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-read
		cancel()
	}()
	_, err := e.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var ferr *Error
	if !errors.As(err, &ferr) || ferr.StatusCode != 429 {
		t.Errorf("err = %#v, want an *Error recording the 429", err)
	}
}

func TestSendDimensionsAndWrongKey(t *testing.T) {
	f := &fakeServer{t: t, dim: 3}
	var sent int
	f.handle = func(n int, w http.ResponseWriter, req request) bool {
		sent = req.Dimensions
		return false
	}
	e := newTestEmbedder(t, f, Options{Dim: 3, SendDimensions: true})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if sent != 3 || e.ID() != "openai:text-embedding-3-small:3" || e.Dim() != 3 {
		t.Errorf("dimensions sent %d, ID %q, Dim %d", sent, e.ID(), e.Dim())
	}

	e2, err := New(Options{BaseURL: e.opts.BaseURL, Model: "m", APIKey: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e2.Embed(context.Background(), []string{"x"})
	var ferr *Error
	if !errors.As(err, &ferr) || ferr.StatusCode != 401 || ferr.Message != "bad key Bearer wrong" {
		t.Errorf("err = %v, want a 401 with the server's message", err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
		url  string
	}{
		{"no model", Options{BaseURL: "http://h/v1"}, false, ""},
		{"no url", Options{Model: "m"}, false, ""},
		{"bad scheme", Options{Model: "m", BaseURL: "ftp://h/v1"}, false, ""},
		{"negative dim", Options{Model: "m", BaseURL: "http://h/v1", Dim: -1}, false, ""},
		{"dimensions without dim", Options{Model: "m", BaseURL: "http://h/v1", SendDimensions: true}, false, ""},
		{"v1 root", Options{Model: "m", BaseURL: "http://h:11434/v1/"}, true, "http://h:11434/v1/embeddings"},
		{"bare host gets v1", Options{Model: "m", BaseURL: "https://h"}, true, "https://h/v1/embeddings"},
		{"other prefix kept", Options{Model: "m", BaseURL: "http://h/openai/v1"}, true, "http://h/openai/v1/embeddings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("New(%+v) err = %v, want ok=%v", tc.opts, err, tc.ok)
			}
			if tc.ok && e.Endpoint() != tc.url {
				t.Errorf("Endpoint = %q, want %q", e.Endpoint(), tc.url)
			}
		})
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	e, err := New(Options{Model: "m", BaseURL: "http://h/v1", MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, MaxRetryAfter: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 40; attempt++ {
		full := min(100*time.Millisecond<<min(attempt-1, 30), time.Second)
		for i := 0; i < 20; i++ {
			d := e.backoff(attempt, -1)
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
	if d := e.backoff(1, 5*time.Second); d != 2*time.Second {
		t.Errorf("Retry-After 5s capped to %v, want 2s", d)
	}
	if d := e.backoff(3, 250*time.Millisecond); d != 250*time.Millisecond {
		t.Errorf("Retry-After 250ms gave %v", d)
	}
}

// No hidden timeout: without an HTTPClient, deadlines come only from the
// context and RequestTimeout; the slots are the server's, shared.
func TestNoHiddenTimeout(t *testing.T) {
	e, err := New(Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1", MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.client.Timeout != 0 {
		t.Errorf("default client has a %v timeout", e.client.Timeout)
	}
	if e.slots != httpx.ServerSlots("http://127.0.0.1:1/anything", 2) || e.slots.Cap() != 2 {
		t.Errorf("embedder does not share the server's slots")
	}
}

// closeSignal is a RoundTripper whose responses send on read when their
// body is closed.
type closeSignal struct {
	http.RoundTripper
	read chan<- struct{}
}

func (c closeSignal) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(req)
	if err == nil {
		resp.Body = signalBody{resp.Body, c.read}
	}
	return resp, err
}

// signalBody is a response body that signals when it is closed.
type signalBody struct {
	io.ReadCloser
	read chan<- struct{}
}

func (b signalBody) Close() error {
	err := b.ReadCloser.Close()
	select {
	case b.read <- struct{}{}:
	default:
	}
	return err
}
