package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

const affSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"affiliations":{"type":"array","items":{"type":"string"}}},"required":["affiliations"]}`

type affiliation struct {
	Reasoning    string   `json:"reasoning"`
	Affiliations []string `json:"affiliations"`
}

// sleeps records the waits a client asked for instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newClient returns a client for base whose backoff sleeps are recorded,
// not slept.
func newClient(t *testing.T, base string, opts Options) (*Client, *sleeps) {
	t.Helper()
	opts.BaseURL = base
	if opts.Model == "" {
		opts.Model = "test-model"
	}
	if opts.APIKey == "" {
		opts.APIKey = "sk-secret-key"
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// What the clients learned of this server ends with the test: a later
	// test's server may get the same port (the state is the process's,
	// by endpoint and model), and must start from the modes' defaults.
	t.Cleanup(func() { learnedByEndpoint.Delete(c.endpoint + "\x00" + opts.Model) })
	s := &sleeps{}
	c.sleep = s.sleep
	return c, s
}

func schemaRequest() llm.Request {
	return llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "You group turns into events."},
			{Role: "user", Content: "Turn t7: we landed in Lisbon."},
		},
		Schema:     json.RawMessage(affSchema),
		SchemaName: "affiliate",
		Operation:  "affiliate",
		MaxTokens:  256,
	}
}

// checkNamed asserts that err names the endpoint and model and does not
// leak the API key.
func checkNamed(t *testing.T, err error, c *Client) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, c.Endpoint()) || !strings.Contains(msg, c.ModelName()) {
		t.Errorf("error %q does not name endpoint %s and model %s", msg, c.Endpoint(), c.ModelName())
	}
	if strings.Contains(msg, "sk-secret-key") {
		t.Errorf("error leaks the API key: %q", msg)
	}
	if _, ok := errors.AsType[*Error](err); !ok {
		t.Errorf("error %T is not an *openai.Error", err)
	}
}

func TestCompleteWireFormat(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{
		Content: `{"affiliations":["e1"]}`, Model: "test-model-2024", Usage: &llm.Usage{PromptTokens: 42, CompletionTokens: 7},
	}))
	seed := int64(11)
	c, _ := newClient(t, srv.BaseURL(), Options{Seed: &seed})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"affiliations":["e1"]}` || resp.Model != "test-model-2024" ||
		resp.Usage != (llm.Usage{PromptTokens: 42, CompletionTokens: 7}) || resp.Cached || resp.Latency <= 0 {
		t.Errorf("response = %+v", resp)
	}
	r := srv.Request(1)
	if r.Model != "test-model" || len(r.Messages) != 2 || r.Messages[0] != schemaRequest().Messages[0] {
		t.Errorf("request model/messages = %s %+v", r.Model, r.Messages)
	}
	if r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != 256 || r.Seed == nil || *r.Seed != 11 {
		t.Errorf("request sampling = temp %v max %d seed %v", r.Temperature, r.MaxTokens, r.Seed)
	}
	if r.Header.Get("Authorization") != "Bearer sk-secret-key" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", r.Header)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil {
		t.Fatal(err)
	}
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "affiliate" || string(rf.JSONSchema.Schema) != affSchema {
		t.Errorf("response_format = %s", r.ResponseFormat)
	}
	if strings.Contains(string(r.Body), "operation") || strings.Contains(string(r.Body), "Operation") {
		t.Errorf("operation leaked to the server: %s", r.Body)
	}
}

func TestOptionsOverrideRequest(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("hi")))
	temp, seed := 0.7, int64(3)
	c, _ := newClient(t, srv.BaseURL(), Options{Temperature: &temp, MaxTokens: 99, Seed: &seed})
	if _, err := c.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}, Temperature: 0.1}); err != nil {
		t.Fatal(err)
	}
	r := srv.Request(1)
	if *r.Temperature != 0.7 || r.MaxTokens != 99 || *r.Seed != 3 || r.ResponseFormat != nil {
		t.Errorf("request = temp %v max %d seed %v rf %s", *r.Temperature, r.MaxTokens, *r.Seed, r.ResponseFormat)
	}
	reqSeed := int64(5)
	c.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}, MaxTokens: 5, Seed: &reqSeed})
	if r := srv.Request(2); r.MaxTokens != 5 || *r.Seed != 5 {
		t.Errorf("request values did not win over defaults: max %d seed %d", r.MaxTokens, *r.Seed)
	}
}

// Bad case: garbage text. The client returns it; CompleteJSON re-asks once
// and then fails with ErrInvalidOutput.
func TestGarbageText(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("I'm sorry, as an AI I cannot group turns.")))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	var got affiliation
	_, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got)
	if !errors.Is(err, llm.ErrInvalidOutput) || !strings.Contains(err.Error(), "as an AI") {
		t.Fatalf("err = %v", err)
	}
	if srv.Calls() != 2 {
		t.Errorf("calls = %d, want 2 (one re-ask)", srv.Calls())
	}
	if fix := srv.Request(2).LastUser(); !strings.Contains(fix, "no JSON found") || !strings.Contains(fix, affSchema) {
		t.Errorf("correction = %q", fix)
	}
}

// Bad case: garbage text, then valid JSON after the correction.
func TestGarbageThenRepairedByReask(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Text("uh?"), llmtest.Text(`{"affiliations":["NEW_EVENT"]}`)))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got)
	if err != nil || len(got.Affiliations) != 1 || got.Affiliations[0] != "NEW_EVENT" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if srv.Calls() != 2 || resp.Usage.PromptTokens <= srv.Calls() {
		t.Errorf("calls = %d usage = %+v", srv.Calls(), resp.Usage)
	}
}

// Bad case: a 200 whose body is not a chat completion (proxy page). Retried,
// then ErrUnavailable.
func TestGarbageBody(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Garbage()))
	c, sl := newClient(t, srv.BaseURL(), Options{MaxRetries: 2})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "not a chat completion") {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if srv.Calls() != 3 || len(sl.all()) != 2 {
		t.Errorf("calls = %d sleeps = %v", srv.Calls(), sl.all())
	}
}

// Bad case: JSON in prose (and fences), decoded with one call.
func TestJSONInProse(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text(
		"Sure! Looking at the turn, it continues the trip.\n\n```json\n{\"reasoning\": \"trip\", \"affiliations\": [\"e3\"]}\n```\nHope this helps!")))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	var got affiliation
	if _, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Reasoning != "trip" || got.Affiliations[0] != "e3" || srv.Calls() != 1 {
		t.Errorf("got %+v after %d calls", got, srv.Calls())
	}
}

// Bad case: truncated JSON (finish_reason length), repaired without a
// re-ask by CompleteJSON over the real client.
func TestTruncatedJSONRepaired(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{
		Content:      `{"reasoning": "The new turn continues the Lisbon trip and also mentions the fli`,
		FinishReason: "length",
	}))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	req := schemaRequest()
	req.Schema = json.RawMessage(`{"type":"object","properties":{"reasoning":{"type":"string"},"affiliations":{"type":"array","items":{"type":"string"}}},"required":["reasoning"]}`)
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), c, req, &got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.Reasoning, "mentions the fli") || !resp.Truncated() {
		t.Errorf("got %+v (finish %q)", got, resp.FinishReason)
	}
	// A cut reply is re-asked once, differently: shorter asked, twice the
	// budget, temperature above 0, the cut reply left out.
	if srv.Calls() != 2 || resp.Requests != 2 {
		t.Fatalf("%d calls, %d requests counted", srv.Calls(), resp.Requests)
	}
	first, second := srv.Request(1), srv.Request(2)
	if second.MaxTokens != 2*first.MaxTokens || *second.Temperature < llm.TruncatedTemperature ||
		len(second.Messages) != len(first.Messages)+1 || second.Messages[len(second.Messages)-1].Role != "user" ||
		!strings.Contains(second.LastUser(), "too long") {
		t.Errorf("re-ask not different enough: first %s\nsecond %s", first.Body, second.Body)
	}

	// Truncated inside the array: closed at the last complete element.
	srv2 := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Content: `{"affiliations": ["e1", "e2", "e`, FinishReason: "length"}))
	c2, _ := newClient(t, srv2.BaseURL(), Options{})
	got = affiliation{}
	if _, err := llm.CompleteJSON(t.Context(), c2, schemaRequest(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Affiliations) != 3 || got.Affiliations[1] != "e2" {
		t.Errorf("got %+v", got)
	}
}

// Bad case: wrong types. Safe ones are coerced; unsafe ones re-asked.
func TestWrongTypes(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"reasoning": 5, "affiliations": "e9"}`)))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	var got affiliation
	if _, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Reasoning != "5" || len(got.Affiliations) != 1 || got.Affiliations[0] != "e9" || srv.Calls() != 1 {
		t.Errorf("got %+v after %d calls", got, srv.Calls())
	}

	srv2 := llmtest.NewServer(t, llmtest.Sequence(
		llmtest.Text(`{"affiliations": {"event": "e9"}}`),
		llmtest.Text(`{"affiliations": ["e9"]}`)))
	c2, _ := newClient(t, srv2.BaseURL(), Options{})
	got = affiliation{}
	if _, err := llm.CompleteJSON(t.Context(), c2, schemaRequest(), &got); err != nil {
		t.Fatal(err)
	}
	if srv2.Calls() != 2 || !strings.Contains(srv2.Request(2).LastUser(), "$.affiliations: expected array, got object") {
		t.Errorf("calls = %d, correction %q", srv2.Calls(), srv2.Request(2).LastUser())
	}
	// The re-ask carries the bad reply as the assistant's turn.
	if m := srv2.Request(2).Messages; len(m) != 4 || m[2].Role != "assistant" || m[2].Content != `{"affiliations": {"event": "e9"}}` {
		t.Errorf("re-ask messages = %+v", m)
	}
}

// Bad case: missing keys, re-asked; missing twice → ErrInvalidOutput.
func TestMissingKeys(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"reasoning": "it is new"}`)))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	_, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), nil)
	if !errors.Is(err, llm.ErrInvalidOutput) || !strings.Contains(err.Error(), `missing required key "affiliations"`) {
		t.Fatalf("err = %v", err)
	}
	if srv.Calls() != 2 {
		t.Errorf("calls = %d", srv.Calls())
	}
}

// Bad case: empty choices. Retried once, then ErrEmpty.
func TestEmptyChoices(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.EmptyChoices()))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrEmpty) || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if srv.Calls() != 2 {
		t.Errorf("calls = %d, want 2", srv.Calls())
	}
	// CompleteJSON does not re-ask after a backend error.
	_, err = llm.CompleteJSON(t.Context(), c, schemaRequest(), nil)
	if !errors.Is(err, llm.ErrEmpty) || errors.Is(err, llm.ErrInvalidOutput) || srv.Calls() != 4 {
		t.Errorf("CompleteJSON err = %v after %d calls", err, srv.Calls())
	}

	// Empty once, then fine.
	srv2 := llmtest.NewServer(t, llmtest.Sequence(llmtest.Reply{NullContent: true}, llmtest.Text("ok")))
	c2, _ := newClient(t, srv2.BaseURL(), Options{})
	if resp, err := c2.Complete(t.Context(), schemaRequest()); err != nil || resp.Content != "ok" {
		t.Errorf("after empty: %+v, %v", resp, err)
	}
}

// Bad case: 429 with Retry-After, in seconds and as an HTTP date.
func TestRateLimitRetryAfter(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimited("7"), llmtest.Text("ok")))
	c, sl := newClient(t, srv.BaseURL(), Options{})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || resp.Content != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := sl.all(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits = %v, want [7s]", got)
	}

	at := time.Now().Add(90 * time.Second)
	srv2 := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimited(llmtest.RetryAfterDate(at)), llmtest.Text("ok")))
	c2, sl2 := newClient(t, srv2.BaseURL(), Options{})
	if _, err := c2.Complete(t.Context(), schemaRequest()); err != nil {
		t.Fatal(err)
	}
	if got := sl2.all(); len(got) != 1 || got[0] < 80*time.Second || got[0] > 91*time.Second {
		t.Errorf("waits = %v, want about 90s", got)
	}

	// Retry-After is capped by MaxRetryAfter.
	srv3 := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimited("3600"), llmtest.Text("ok")))
	c3, sl3 := newClient(t, srv3.BaseURL(), Options{MaxRetryAfter: 5 * time.Second})
	if _, err := c3.Complete(t.Context(), schemaRequest()); err != nil {
		t.Fatal(err)
	}
	if got := sl3.all(); len(got) != 1 || got[0] != 5*time.Second {
		t.Errorf("waits = %v, want [5s]", got)
	}
}

// Bad case: 429 forever → ErrRateLimited after all retries.
func TestRateLimitedForever(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.RateLimited("")))
	c, sl := newClient(t, srv.BaseURL(), Options{MaxRetries: 3})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "status 429") || !strings.Contains(err.Error(), "after 4 attempts") {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if srv.Calls() != 4 || len(sl.all()) != 3 {
		t.Errorf("calls = %d waits = %v", srv.Calls(), sl.all())
	}
	// A Retry-After beyond the context deadline is not waited for.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv2 := llmtest.NewServer(t, llmtest.Always(llmtest.RateLimited("600")))
	c2, sl2 := newClient(t, srv2.BaseURL(), Options{MaxRetryAfter: time.Hour})
	if _, err := c2.Complete(ctx, schemaRequest()); !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v", err)
	}
	if srv2.Calls() != 1 || len(sl2.all()) != 0 {
		t.Errorf("calls = %d waits = %v, want no wait past the deadline", srv2.Calls(), sl2.all())
	}
}

// Bad case: a 500 storm → exponential backoff with jitter, then
// ErrUnavailable; a storm that ends → success.
func TestServerErrorStorm(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.ServerError()))
	c, sl := newClient(t, srv.BaseURL(), Options{MaxRetries: 5, MinBackoff: time.Second, MaxBackoff: 8 * time.Second})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "status 500") {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if srv.Calls() != 6 {
		t.Errorf("calls = %d, want 6", srv.Calls())
	}
	waits := sl.all()
	caps := []time.Duration{1, 2, 4, 8, 8}
	if len(waits) != len(caps) {
		t.Fatalf("waits = %v", waits)
	}
	for i, w := range waits {
		hi := caps[i] * time.Second
		if w < hi/2 || w > hi {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, w, hi/2, hi)
		}
	}

	for _, code := range []int{502, 503, 504} {
		srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Status(code, "busy"), llmtest.Status(code, "busy"), llmtest.Text("ok")))
		c, _ := newClient(t, srv.BaseURL(), Options{})
		if resp, err := c.Complete(t.Context(), schemaRequest()); err != nil || resp.Content != "ok" || srv.Calls() != 3 {
			t.Errorf("%d storm: %+v, %v after %d calls", code, resp, err, srv.Calls())
		}
	}
}

// Bad case: a reply slower than the caller's deadline: no retry, an error
// wrapping both ErrUnavailable and context.DeadlineExceeded.
func TestSlowPastDeadline(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Hour, llmtest.Text("late"))))
	c, sl := newClient(t, srv.BaseURL(), Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, schemaRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if srv.Calls() != 1 || len(sl.all()) != 0 {
		t.Errorf("calls = %d waits = %v", srv.Calls(), sl.all())
	}
}

// Bad case: the client's own HTTP timeout (not the caller's deadline) is a
// transient failure and is retried.
func TestTransportTimeoutRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Slow(time.Hour, llmtest.Text("late")), llmtest.Text("ok")))
	c, sl := newClient(t, srv.BaseURL(), Options{HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || resp.Content != "ok" || srv.Calls() != 2 || len(sl.all()) != 1 {
		t.Fatalf("%+v, %v after %d calls", resp, err, srv.Calls())
	}
}

// Bad case: the request runs out of Options.RequestTimeout (the server
// is slow, not gone): retried like any transient failure, and the call's
// usage counts the timed-out request's prompt (estimated) besides the
// reply's. On main a timed-out request was never retried, so one slow
// build_batch call aborted a whole ingest.
func TestRequestTimeoutRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Slow(time.Hour, llmtest.Text("late")), llmtest.Text(`{"answer":"ok"}`)))
	c, sl := newClient(t, srv.BaseURL(), Options{RequestTimeout: 50 * time.Millisecond})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || srv.Calls() != 2 || resp.Requests != 2 || len(sl.all()) != 1 {
		t.Fatalf("%+v, %v after %d calls", resp, err, srv.Calls())
	}
	plain := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"answer":"ok"}`)))
	p, _ := newClient(t, plain.BaseURL(), Options{})
	alone, err := p.Complete(t.Context(), schemaRequest())
	if err != nil {
		t.Fatal(err)
	}
	one := estimateUsage(schemaRequest().Messages, "").PromptTokens
	if resp.Usage.PromptTokens != alone.Usage.PromptTokens+one || !resp.Usage.Estimated {
		t.Errorf("usage %+v: want the reply's %d prompt tokens plus the timed-out request's %d (estimated)", resp.Usage, alone.Usage.PromptTokens, one)
	}
	if got, want := c.MaxCallTime(), 5*50*time.Millisecond+(500+1000+2000+4000)*time.Millisecond; got != want {
		t.Errorf("MaxCallTime = %v, want %v", got, want)
	}
}

// Bad case: connection refused → retried, then ErrUnavailable wrapping
// ECONNREFUSED.
func TestConnectionRefused(t *testing.T) {
	c, sl := newClient(t, llmtest.RefusedURL(t), Options{MaxRetries: 2})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrUnavailable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v", err)
	}
	checkNamed(t, err, c)
	if len(sl.all()) != 2 {
		t.Errorf("waits = %v, want 2 retries", sl.all())
	}
}

// Bad case: connection reset mid-request → retried.
func TestConnectionReset(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Reply{Hangup: true}, llmtest.Text("ok")))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || resp.Content != "ok" || srv.Calls() != 2 {
		t.Fatalf("%+v, %v after %d calls", resp, err, srv.Calls())
	}
}

// Bad case: a server that rejects response_format. The client steps down
// json_schema → json_object → plain, remembers it, and the plain request
// carries the schema in the system prompt.
func TestRejectResponseFormatDowngrade(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.RejectResponseFormat(llmtest.Always(llmtest.Text(`{"affiliations":["e1"]}`))))
	c, sl := newClient(t, srv.BaseURL(), Options{MaxRetries: -1})
	var got affiliation
	if _, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Affiliations[0] != "e1" || c.Mode() != Plain {
		t.Errorf("got %+v mode %v", got, c.Mode())
	}
	formats := []string{}
	for _, r := range srv.Requests() {
		formats = append(formats, r.Format())
	}
	if strings.Join(formats, ",") != "json_schema,json_object_schema,json_object,plain" {
		t.Errorf("response_format sequence = %q", formats)
	}
	if len(sl.all()) != 0 {
		t.Errorf("downgrades waited: %v", sl.all())
	}
	plain := srv.Request(4)
	if len(plain.Messages) != 2 || !strings.Contains(plain.Messages[0].Content, "You group turns into events.") ||
		!strings.Contains(plain.Messages[0].Content, SchemaInstruction(json.RawMessage(affSchema))) {
		t.Errorf("plain request messages = %+v", plain.Messages)
	}
	// Remembered: the next call goes straight to plain.
	if _, err := c.Complete(t.Context(), schemaRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 5 || srv.Request(5).ResponseFormatType() != "" {
		t.Errorf("calls = %d, last rf %q", srv.Calls(), srv.Request(5).ResponseFormatType())
	}
	// Requests without a schema never send response_format.
	c.Complete(t.Context(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	if r := srv.Request(6); r.ResponseFormat != nil || len(r.Messages) != 1 {
		t.Errorf("schema-less request = %+v", r)
	}

	// A server that only lacks json_schema stops at json_object with the
	// schema in response_format, and the prompt is not lengthened.
	srv2 := llmtest.NewServer(t, llmtest.RejectResponseFormat(llmtest.Always(llmtest.Text(`{"affiliations":[]}`)), "json_schema"))
	c2, _ := newClient(t, srv2.BaseURL(), Options{})
	req := schemaRequest()
	req.Messages = req.Messages[1:]
	if _, err := c2.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if c2.Mode() != JSONObjectSchema || srv2.Calls() != 2 {
		t.Errorf("mode %v after %d calls", c2.Mode(), srv2.Calls())
	}
	if m := srv2.Request(2).Messages; len(m) != 1 || m[0] != req.Messages[0] {
		t.Errorf("json_object_schema messages = %+v", m)
	}

	// One that also lacks the schema form stops at json_object, which gets
	// the instruction (in a new system message when there was none).
	srv3 := llmtest.NewServer(t, llmtest.RejectResponseFormat(llmtest.Always(llmtest.Text(`{"affiliations":[]}`)), "json_schema", "json_object_schema"))
	c3, _ := newClient(t, srv3.BaseURL(), Options{})
	if _, err := c3.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if c3.Mode() != JSONObject || srv3.Calls() != 3 {
		t.Errorf("mode %v after %d calls", c3.Mode(), srv3.Calls())
	}
	if m := srv3.Request(3).Messages; len(m) != 2 || m[0].Role != "system" || !strings.Contains(m[0].Content, affSchema) {
		t.Errorf("json_object messages = %+v", m)
	}
}

func TestStartInPlainMode(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("{}")))
	c, _ := newClient(t, srv.BaseURL(), Options{Structured: Plain})
	c.Complete(t.Context(), schemaRequest())
	if srv.Request(1).ResponseFormat != nil {
		t.Error("Plain mode sent response_format")
	}
}

// Other 4xx: no retry, ErrRequest with the server's message.
func TestClientErrorsNotRetried(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 413, 422} {
		srv := llmtest.NewServer(t, llmtest.Always(llmtest.Status(code, "The model `nope` does not exist")))
		c, sl := newClient(t, srv.BaseURL(), Options{})
		_, err := c.Complete(t.Context(), schemaRequest())
		if !errors.Is(err, llm.ErrRequest) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%d: err = %v", code, err)
			continue
		}
		checkNamed(t, err, c)
		if srv.Calls() != 1 || len(sl.all()) != 0 {
			t.Errorf("%d: calls = %d waits = %v", code, srv.Calls(), sl.all())
		}
		if e, _ := errors.AsType[*Error](err); e.Status != code {
			t.Errorf("%d: Error.Status = %d", code, e.Status)
		}
	}
}

// Servers that want max_completion_tokens or refuse temperature/seed are
// adapted to once.
func TestParameterQuirks(t *testing.T) {
	h := func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		switch {
		case r.MaxTokens > 0:
			return llmtest.Status(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
		case r.Temperature != nil:
			return llmtest.Status(400, "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.")
		}
		return llmtest.Text("ok")
	}
	srv := llmtest.NewServer(t, h)
	c, _ := newClient(t, srv.BaseURL(), Options{})
	if resp, err := c.Complete(t.Context(), schemaRequest()); err != nil || resp.Content != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if srv.Calls() != 3 || srv.Request(3).MaxCompletionTokens != 256 || c.Mode() != JSONSchema {
		t.Errorf("calls %d, last %+v, mode %v", srv.Calls(), srv.Request(3), c.Mode())
	}
	c.Complete(t.Context(), schemaRequest())
	if srv.Calls() != 4 {
		t.Errorf("quirks not remembered: %d calls", srv.Calls())
	}
}

// Usage missing from the reply is estimated at about 4 characters a token.
func TestUsageEstimated(t *testing.T) {
	content := strings.Repeat("abcd", 25)
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Content: content, NoUsage: true}))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("x", 400)}}}
	resp, err := c.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.CompletionTokens != 25 || resp.Usage.PromptTokens != 3+4+100 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.Model != "test-model" {
		t.Errorf("model = %q, want the configured name when the server sends none", resp.Model)
	}
}

func TestRefusalNotRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Body: `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	_, err := c.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, llm.ErrEmpty) || !strings.Contains(err.Error(), "refused") || srv.Calls() != 1 {
		t.Fatalf("err = %v after %d calls", err, srv.Calls())
	}
}

func TestErrorInOKBodyRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Reply{Body: `{"error":{"message":"model overloaded"}}`}, llmtest.Text("ok")))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	if resp, err := c.Complete(t.Context(), schemaRequest()); err != nil || resp.Content != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
}

func TestThinkBlockStripped(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("<think>\nThe user wants {json}.\n</think>\n\nParis")))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || resp.Content != "Paris" {
		t.Fatalf("%q, %v", resp.Content, err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var inFlight, peak atomic.Int32
	h := func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		cur := inFlight.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond) // let others pile up if the limit leaked
		inFlight.Add(-1)
		return llmtest.Text("ok")
	}
	srv := llmtest.NewServer(t, h)
	c, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: 2})
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			if _, err := c.Complete(t.Context(), schemaRequest()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak in flight = %d, want ≤ 2", p)
	}
	if srv.Calls() != 12 {
		t.Errorf("calls = %d", srv.Calls())
	}
}

func TestRequestsPerMinute(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("ok")))
	c, sl := newClient(t, srv.BaseURL(), Options{RequestsPerMinute: 60})
	for range 4 {
		if _, err := c.Complete(t.Context(), schemaRequest()); err != nil {
			t.Fatal(err)
		}
	}
	// The first request goes at once; each later one is spaced a second
	// after the previous slot (the fake sleep does not advance the clock,
	// so the waits accumulate: about 1s, 2s, 3s).
	waits := sl.all()
	if len(waits) != 3 {
		t.Fatalf("waits = %v", waits)
	}
	for i, w := range waits {
		want := time.Duration(i+1) * time.Second
		if w > want || w < want-500*time.Millisecond {
			t.Errorf("wait %d = %v, want about %v", i, w, want)
		}
	}
}

func TestChatURL(t *testing.T) {
	tests := map[string]string{
		"https://api.openai.com/v1":                      "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1/":                     "https://api.openai.com/v1/chat/completions",
		"http://localhost:11434":                         "http://localhost:11434/v1/chat/completions",
		"http://localhost:8000/v1/chat/completions":      "http://localhost:8000/v1/chat/completions",
		"http://proxy/openai/deployments/x":              "http://proxy/openai/deployments/x/chat/completions",
		"  http://127.0.0.1:1234/v1  ":                   "http://127.0.0.1:1234/v1/chat/completions",
		"https://user:pass@host/v1?api-version=2024-1-1": "https://user:pass@host/v1/chat/completions?api-version=2024-1-1",
	}
	for in, want := range tests {
		got, err := chatURL(in)
		if err != nil || got != want {
			t.Errorf("chatURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "localhost:11434", "ftp://x/v1", "http://"} {
		if _, err := chatURL(bad); err == nil {
			t.Errorf("chatURL(%q) accepted", bad)
		}
	}
	if _, err := New(Options{BaseURL: "http://x/v1"}); err == nil {
		t.Error("New accepted an empty model")
	}
	c, err := New(Options{BaseURL: "https://user:pass@host/v1?key=abc", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Endpoint(), "pass") || strings.Contains(c.Endpoint(), "abc") {
		t.Errorf("Endpoint leaks credentials: %s", c.Endpoint())
	}
}

func TestSchemaName(t *testing.T) {
	for in, want := range map[string]string{"": "reply", "affiliate": "affiliate", "turn note/v2": "turn_note_v2", strings.Repeat("a", 80): strings.Repeat("a", 64)} {
		if got := schemaName(in); got != want {
			t.Errorf("schemaName(%q) = %q", in, got)
		}
	}
}

func TestCanceledWhileWaitingForSlot(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Hour, llmtest.Text("late"))))
	c, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, schemaRequest())
		done <- err
	}()
	// Wait until the first request holds the slot and reached the server.
	for srv.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx2, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if _, err := c.Complete(ctx2, schemaRequest()); !errors.Is(err, context.Canceled) {
		t.Errorf("second call err = %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("first call err = %v", err)
	}
}

// A 400 that is not about response_format must not downgrade the client.
func TestUnrelated400DoesNotDowngrade(t *testing.T) {
	for _, msg := range []string{
		"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
		"The model `gpt-9` does not exist or you do not have access to it.",
		"Invalid API key provided.",
	} {
		srv := llmtest.NewServer(t, llmtest.Always(llmtest.Status(400, msg)))
		c, _ := newClient(t, srv.BaseURL(), Options{})
		_, err := c.Complete(t.Context(), schemaRequest())
		if !errors.Is(err, llm.ErrRequest) || srv.Calls() != 1 || c.Mode() != JSONSchema ||
			errors.Is(err, llm.ErrContextLength) != strings.Contains(msg, "context") {
			t.Errorf("%q: err %v, %d calls, mode %v", msg, err, srv.Calls(), c.Mode())
		}
	}
}

// A request's Constraint is what the server is sent, in every structured
// mode (the response_format's schema, or the instruction in the system
// prompt); the reply is validated against the broad Schema, so a reply
// outside the narrowed enum is no reason for a re-ask.
func TestConstraintSentInEveryMode(t *testing.T) {
	narrowed := `{"type":"object","properties":{"reasoning":{"type":"string","maxLength":80},` +
		`"affiliations":{"type":"array","items":{"type":"string","enum":["e1","NEW"]},"minItems":1,"maxItems":3}},"required":["reasoning","affiliations"]}`
	for _, mode := range []Mode{JSONSchema, JSONObjectSchema, JSONObject, Plain} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"reasoning":"x","affiliations":["e9"]}`)))
			c, _ := newClient(t, srv.BaseURL(), Options{Structured: mode})
			req := schemaRequest()
			req.Constraint = json.RawMessage(narrowed)
			var out struct{ Affiliations []string }
			if _, err := llm.CompleteJSON(t.Context(), c, req, &out); err != nil {
				t.Fatal(err)
			}
			if srv.Calls() != 1 || len(out.Affiliations) != 1 || out.Affiliations[0] != "e9" {
				t.Errorf("%d requests, affiliations %v: want one request and the reply as written", srv.Calls(), out.Affiliations)
			}
			r := srv.Request(1)
			sent := string(r.ResponseFormat)
			if mode >= JSONObject {
				sent = r.Messages[0].Content
			}
			if !strings.Contains(sent, `"enum":["e1","NEW"]`) || !strings.Contains(sent, `"maxItems":3`) {
				t.Errorf("the narrowed schema was not sent: %s", sent)
			}
		})
	}
}
