package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// The client against a fake with llama-cpp-python's quirks: json_schema is
// a 500 naming response_format, so the client moves to json_object with the
// schema (not to json_object without it, and without backoff), remembers
// it, and shares what it learned with another client of the same endpoint.
func TestLlamaCppNegotiatesOn500(t *testing.T) {
	srv := llmtest.NewLlamaCpp(t, llmtest.Always(llmtest.Text(`{"affiliations":["e1"]}`)))
	c, sl := newClient(t, srv.BaseURL(), Options{})
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), c, schemaRequest(), &got)
	if err != nil {
		t.Fatal(err)
	}
	if got.Affiliations[0] != "e1" || c.Mode() != JSONObjectSchema || resp.Requests != 2 || len(sl.all()) != 0 {
		t.Fatalf("got %+v, mode %v, %d requests, waits %v", got, c.Mode(), resp.Requests, sl.all())
	}
	reqs := srv.Requests()
	if reqs[0].Format() != "json_schema" || reqs[1].Format() != "json_object_schema" {
		t.Errorf("formats %s, %s", reqs[0].Format(), reqs[1].Format())
	}
	var rf struct {
		Schema json.RawMessage `json:"schema"`
	}
	json.Unmarshal(reqs[1].ResponseFormat, &rf)
	if string(rf.Schema) != affSchema {
		t.Errorf("schema sent %s", rf.Schema)
	}
	// A second client of the endpoint (another role) starts where the
	// first one ended.
	c2, _ := newClient(t, srv.BaseURL(), Options{})
	resp, err = c2.Complete(t.Context(), schemaRequest())
	if err != nil || resp.Requests != 1 || srv.Requests()[2].Format() != "json_object_schema" {
		t.Errorf("second client: err %v, %d requests, format %s", err, resp.Requests, srv.Requests()[2].Format())
	}
}

// A 5xx that does not name the format is retried, not downgraded.
func TestPlain500NotDowngrade(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.ServerError(), llmtest.Text(`{"affiliations":[]}`)))
	c, sl := newClient(t, srv.BaseURL(), Options{})
	resp, err := c.Complete(t.Context(), schemaRequest())
	if err != nil || c.Mode() != JSONSchema || resp.Requests != 2 || len(sl.all()) != 1 {
		t.Errorf("err %v, mode %v, %d requests, waits %v", err, c.Mode(), resp.Requests, sl.all())
	}
}

// A looping model is cut at the budget; the re-ask is different (twice the
// budget, temperature above 0, asks for less) and its short reply is used.
func TestLlamaCppRunawayCutAndReaskedDifferently(t *testing.T) {
	loop := `{"affiliations":["new:1"`
	for i := 2; i < 300; i++ {
		loop += fmt.Sprintf(`,"new:%d"`, i)
	}
	srv := llmtest.NewLlamaCpp(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "too long") {
			return llmtest.Text(`{"affiliations":["e1"]}`)
		}
		return llmtest.Text(loop)
	})
	c, _ := newClient(t, srv.BaseURL(), Options{Structured: JSONObjectSchema})
	req := schemaRequest()
	req.MaxTokens = 64
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), c, req, &got)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Affiliations) != 1 || got.Affiliations[0] != "e1" || resp.Truncated() || resp.Requests != 2 {
		t.Fatalf("got %+v, finish %q, %d requests", got, resp.FinishReason, resp.Requests)
	}
	r1, r2 := srv.Requests()[0], srv.Requests()[1]
	if r1.MaxTokens != 64 || r2.MaxTokens != 128 || *r1.Temperature != 0 || *r2.Temperature < llm.TruncatedTemperature {
		t.Errorf("budgets %d, %d; temperatures %v, %v", r1.MaxTokens, r2.MaxTokens, *r1.Temperature, *r2.Temperature)
	}
	if string(r1.Body) == string(r2.Body) {
		t.Error("re-ask identical to the cut request")
	}
}

// With no budget in the request, the client's default is sent: a runaway
// reply can never run to the end of the context.
func TestDefaultMaxTokensAndStop(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{"affiliations":[]}`)))
	c, _ := newClient(t, srv.BaseURL(), Options{})
	req := schemaRequest()
	req.MaxTokens = 0
	c.Complete(t.Context(), req)
	c.Complete(t.Context(), llm.Request{Messages: req.Messages, Stop: []string{"\n"}})
	r1, r2 := srv.Request(1), srv.Request(2)
	if r1.MaxTokens != DefaultMaxTokens || strings.Join(r1.Stop, "|") != strings.Join(DefaultJSONStop, "|") {
		t.Errorf("schema request: max_tokens %d, stop %q", r1.MaxTokens, r1.Stop)
	}
	if strings.Join(r2.Stop, "|") != "\n" {
		t.Errorf("text request stop %q", r2.Stop)
	}
	srv2 := llmtest.NewServer(t, llmtest.Always(llmtest.Text(`{}`)))
	c2, _ := newClient(t, srv2.BaseURL(), Options{MaxTokens: -1, Stop: []string{}})
	c2.Complete(t.Context(), req)
	if r := srv2.Request(1); r.MaxTokens != 0 || r.Stop != nil {
		t.Errorf("unbounded client sent max_tokens %d, stop %q", r.MaxTokens, r.Stop)
	}
}

// A prompt too long for n_ctx is ErrContextLength, not retried and not
// a downgrade.
func TestLlamaCppContextLength(t *testing.T) {
	srv := llmtest.NewLlamaCpp(t, llmtest.Always(llmtest.Text(`{}`)))
	srv.NCtx = 100
	c, _ := newClient(t, srv.BaseURL(), Options{Structured: JSONObjectSchema})
	req := schemaRequest()
	req.Messages[1].Content = strings.Repeat("word ", 200)
	resp, err := c.Complete(t.Context(), req)
	if !errors.Is(err, llm.ErrContextLength) || !errors.Is(err, llm.ErrRequest) || resp.Requests != 1 || c.Mode() != JSONObjectSchema {
		t.Errorf("err %v, %d requests, mode %v", err, resp.Requests, c.Mode())
	}
}

// Concurrency is per server: two clients (two roles) with cap 1 never have
// two requests inside a one-slot server; with the default cap they queue
// there.
func TestOneSlotSharedAcrossClients(t *testing.T) {
	for _, tc := range []struct {
		cap, wantMax int
	}{{1, 1}, {0, 6}} {
		var srv *llmtest.LlamaCpp
		srv = llmtest.NewLlamaCpp(t, func(n int, _ *llmtest.ChatRequest) llmtest.Reply {
			// With room for all six, the first generation waits until
			// all six are inside the server, so the count is exact.
			for tc.cap == 0 && n == 1 && srv.MaxInFlight() < tc.wantMax {
				time.Sleep(time.Millisecond)
			}
			return llmtest.Text(`{"affiliations":[]}`)
		})
		a, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: tc.cap, Structured: JSONObjectSchema})
		b, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: tc.cap, Structured: JSONObjectSchema, Model: "other"})
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := a
				if i%2 == 1 {
					c = b
				}
				if _, err := c.Complete(t.Context(), schemaRequest()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got := srv.MaxInFlight(); got != tc.wantMax {
			t.Errorf("cap %d: %d requests in the server at once, want %d", tc.cap, got, tc.wantMax)
		}
		if a.slots != b.slots {
			t.Error("clients of one server do not share slots")
		}
	}
}

// When the context ends, a streamed generation stops on the server; a
// non-streamed one runs on and keeps the slot (llama-cpp-python's
// behaviour), which is why Stream exists.
func TestCancelStopsStreamedGeneration(t *testing.T) {
	long := `{"reasoning":"` + strings.Repeat("la ", 2000) + `","affiliations":[]}`
	for _, stream := range []bool{true, false} {
		srv := llmtest.NewLlamaCpp(t, llmtest.Always(llmtest.Text(long)))
		srv.PerToken = 200 * time.Microsecond
		c, _ := newClient(t, srv.BaseURL(), Options{Stream: stream, MaxConcurrency: 1, Structured: JSONObjectSchema, MaxRetries: -1})
		req := schemaRequest()
		req.MaxTokens = 4000
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			// Cancel once the server has generated a little.
			for srv.Generated() < 20 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := c.Complete(ctx, req)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stream %v: err %v", stream, err)
		}
		// The next request gets the slot only when the first generation
		// has ended.
		if _, err := c.Complete(t.Context(), llm.Request{Messages: req.Messages, MaxTokens: 1}); err != nil {
			t.Fatal(err)
		}
		full := len(long) / 4
		if stream && (srv.Abandoned() != 0 || srv.Generated() >= full) {
			t.Errorf("streamed: %d abandoned, %d of %d tokens generated", srv.Abandoned(), srv.Generated(), full)
		}
		if !stream && srv.Abandoned() != 1 {
			t.Errorf("not streamed: %d abandoned generations", srv.Abandoned())
		}
	}
}

// A streamed reply is assembled into the same content, finish reason and
// (estimated, since the stream has none) usage.
func TestStreamAssembled(t *testing.T) {
	srv := llmtest.NewLlamaCpp(t, llmtest.Always(llmtest.Text(`{"affiliations":["e1","e2"]} and then some`)))
	c, _ := newClient(t, srv.BaseURL(), Options{Stream: true, Structured: JSONObjectSchema})
	req := schemaRequest()
	req.MaxTokens = 8 // 32 bytes in the fake
	resp, err := c.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"affiliations":["e1","e2"]} and` || resp.FinishReason != "length" || !resp.Usage.Estimated || resp.Model != "gemma-3-270m" ||
		resp.Usage.CompletionTokens != 8 { // cut at the budget: exactly that long
		t.Errorf("got %+v", resp)
	}
	if r := srv.Requests()[0]; !r.Stream {
		t.Error("stream not requested")
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": JSONSchema, "auto": JSONSchema, "json_schema": JSONSchema,
		"JSON_OBJECT_SCHEMA": JSONObjectSchema, "json_object": JSONObject, "plain": Plain} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseMode("xml"); err == nil {
		t.Error("ParseMode(xml) accepted")
	}
	for m := JSONSchema; m <= Plain; m++ {
		if got, _ := ParseMode(m.String()); got != m {
			t.Errorf("round trip of %v", m)
		}
	}
}

// RequestTimeout counts from the slot: a request queued behind a slow one
// still gets its whole timeout, and one that runs out is retried.
func TestRequestTimeoutFromSlot(t *testing.T) {
	release := make(chan struct{})
	srv := llmtest.NewLlamaCpp(t, func(n int, _ *llmtest.ChatRequest) llmtest.Reply {
		if n == 1 {
			<-release // the first request holds the slot until told
		}
		return llmtest.Text(`{"affiliations":[]}`)
	})
	// a holds the only slot; b (another role, same server) queues behind
	// it for longer than its own request timeout and still succeeds.
	a, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: 1, Structured: JSONObjectSchema})
	b, _ := newClient(t, srv.BaseURL(), Options{MaxConcurrency: 1, Structured: JSONObjectSchema, Model: "b",
		RequestTimeout: 50 * time.Millisecond})
	first := make(chan error, 1)
	go func() {
		_, err := a.Complete(t.Context(), schemaRequest())
		first <- err
	}()
	for a.slots.InUse() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() {
		_, err := b.Complete(t.Context(), schemaRequest())
		second <- err
	}()
	time.Sleep(150 * time.Millisecond) // b waits three timeouts in the queue
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatalf("queued request timed out: %v", err)
	}

	// A server that never answers: the request times out, is retried
	// MaxRetries times, and the error states the call's total deadline.
	hang := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Hour, llmtest.Text("{}"))))
	h, sl := newClient(t, hang.BaseURL(), Options{RequestTimeout: 20 * time.Millisecond, MaxRetries: 2})
	resp, err := h.Complete(t.Context(), schemaRequest())
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, llm.ErrUnavailable) || resp.Requests != 3 || hang.Calls() != 3 || len(sl.all()) != 2 {
		t.Errorf("err %v, %d requests, %d server calls, waits %v", err, resp.Requests, hang.Calls(), sl.all())
	}
	if want := h.MaxCallTime().String(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error does not state the total deadline %s: %v", want, err)
	}
	// Three requests the server read and never answered: their prompts are
	// counted (estimated), not lost.
	if one := estimateUsage(schemaRequest().Messages, "").PromptTokens; resp.Usage.PromptTokens != 3*one || !resp.Usage.Estimated {
		t.Errorf("usage of the timed-out call %+v, want 3×%d estimated prompt tokens", resp.Usage, one)
	}
}

// Without a budget in the request, the re-ask after a cut reply still gets
// a higher one: twice the length of the cut reply (the client's default).
func TestReaskRaisesDefaultBudget(t *testing.T) {
	srv := llmtest.NewLlamaCpp(t, llmtest.Always(llmtest.Text(`{"affiliations":["`+strings.Repeat("e1", 400)+`"]}`)))
	c, _ := newClient(t, srv.BaseURL(), Options{Structured: JSONObjectSchema, MaxTokens: 50})
	req := schemaRequest()
	req.MaxTokens = 0
	llm.CompleteJSON(t.Context(), c, req, &affiliation{})
	r := srv.Requests()
	if len(r) != 2 || r[0].MaxTokens != 50 || r[1].MaxTokens < 100 {
		t.Errorf("budgets %d then %d (%d requests)", r[0].MaxTokens, r[len(r)-1].MaxTokens, len(r))
	}
}
