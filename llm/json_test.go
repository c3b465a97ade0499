package llm_test

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
)

const affSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"affiliations":{"type":"array","items":{"type":"string"}}},"required":["affiliations"]}`

type affiliation struct {
	Reasoning    string   `json:"reasoning"`
	Affiliations []string `json:"affiliations"`
}

// replies is a fake model answering with a fixed list of replies (or
// errors) in order, recording every request.
type replies struct {
	mu    sync.Mutex
	out   []any // string or error
	calls []llm.Request
}

func (r *replies) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, req)
	if len(r.out) == 0 {
		return llm.Response{}, errors.New("fake: no more replies")
	}
	next := r.out[0]
	r.out = r.out[1:]
	if err, ok := next.(error); ok {
		return llm.Response{}, err
	}
	return llm.Response{
		Content: next.(string),
		Model:   "fake-1",
		Usage:   llm.Usage{PromptTokens: 10, CompletionTokens: 5},
		Latency: 3 * time.Millisecond,
	}, nil
}

func request() llm.Request {
	return llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "You group turns into events."},
			{Role: "user", Content: "Turn t7: ..."},
		},
		Schema:    json.RawMessage(affSchema),
		Operation: "affiliate",
	}
}

func TestCompleteJSONFirstReplyUsable(t *testing.T) {
	for _, reply := range []string{
		`{"reasoning":"same trip","affiliations":["e1"]}`,
		"Sure! Here it is:\n```json\n{\"reasoning\": \"same trip\", \"affiliations\": [\"e1\",],}\n```",
		`["e1"]`,
		`{"reasoning": "same trip", "affiliations": "e1"`,
	} {
		m := &replies{out: []any{reply}}
		var got affiliation
		resp, err := llm.CompleteJSON(t.Context(), m, request(), &got)
		if err != nil {
			t.Fatalf("reply %q: %v", reply, err)
		}
		if len(m.calls) != 1 {
			t.Errorf("reply %q: %d calls, want 1", reply, len(m.calls))
		}
		if len(got.Affiliations) != 1 || got.Affiliations[0] != "e1" {
			t.Errorf("reply %q: decoded %+v", reply, got)
		}
		if resp.Content != reply || resp.Usage.Total() != 15 {
			t.Errorf("reply %q: response %+v", reply, resp)
		}
	}
}

func TestCompleteJSONReasksOnce(t *testing.T) {
	m := &replies{out: []any{
		`{"reasoning": "I am not sure"}`,
		`{"affiliations": ["NEW_EVENT"]}`,
	}}
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), m, request(), &got)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 2 {
		t.Fatalf("%d calls, want 2", len(m.calls))
	}
	if len(got.Affiliations) != 1 || got.Affiliations[0] != "NEW_EVENT" {
		t.Errorf("decoded %+v", got)
	}
	// The re-ask carries the original messages, the bad reply and a
	// correction that names the problem and the schema.
	second := m.calls[1]
	if len(second.Messages) != 4 {
		t.Fatalf("re-ask has %d messages, want 4", len(second.Messages))
	}
	if second.Messages[0] != request().Messages[0] || second.Messages[1] != request().Messages[1] {
		t.Errorf("re-ask does not start with the original messages: %+v", second.Messages[:2])
	}
	if second.Messages[2].Role != "assistant" || second.Messages[2].Content != `{"reasoning": "I am not sure"}` {
		t.Errorf("re-ask assistant message = %+v", second.Messages[2])
	}
	fix := second.Messages[3]
	if fix.Role != "user" || !strings.Contains(fix.Content, `missing required key "affiliations"`) ||
		!strings.Contains(fix.Content, affSchema) || !strings.Contains(fix.Content, "only a JSON object") {
		t.Errorf("correction message = %q", fix.Content)
	}
	if second.Operation != "affiliate" || string(second.Schema) != affSchema {
		t.Errorf("re-ask request lost its fields: %+v", second)
	}
	// Usage and latency are summed over both calls.
	if resp.Usage != (llm.Usage{PromptTokens: 20, CompletionTokens: 10}) || resp.Latency != 6*time.Millisecond {
		t.Errorf("response usage/latency = %+v / %v", resp.Usage, resp.Latency)
	}
	if resp.Content != `{"affiliations": ["NEW_EVENT"]}` {
		t.Errorf("response content = %q", resp.Content)
	}
	// The caller's request is not modified.
	if len(request().Messages) != 2 {
		t.Fatal("request mutated")
	}
}

func TestCompleteJSONInvalidTwice(t *testing.T) {
	m := &replies{out: []any{"I cannot help with that.", "Still no JSON, sorry."}}
	var got affiliation
	resp, err := llm.CompleteJSON(t.Context(), m, request(), &got)
	if !errors.Is(err, llm.ErrInvalidOutput) {
		t.Fatalf("err = %v, want ErrInvalidOutput", err)
	}
	for _, want := range []string{"affiliate", "no JSON found", `"Still no JSON, sorry."`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if len(m.calls) != 2 {
		t.Errorf("%d calls, want exactly 2", len(m.calls))
	}
	if resp.Usage.Total() != 30 {
		t.Errorf("usage = %+v, want both calls counted", resp.Usage)
	}
}

func TestCompleteJSONExcerptIsShort(t *testing.T) {
	long := strings.Repeat("blah ", 500)
	m := &replies{out: []any{long, long}}
	_, err := llm.CompleteJSON(t.Context(), m, request(), nil)
	if !errors.Is(err, llm.ErrInvalidOutput) {
		t.Fatalf("err = %v", err)
	}
	if len(err.Error()) > 600 || !strings.Contains(err.Error(), "…") {
		t.Errorf("error not shortened (%d bytes): %q", len(err.Error()), err)
	}
}

func TestCompleteJSONBackendErrorsNotReasked(t *testing.T) {
	for _, sentinel := range []error{llm.ErrUnavailable, llm.ErrRateLimited, llm.ErrRequest, llm.ErrEmpty, context.DeadlineExceeded} {
		m := &replies{out: []any{fmt.Errorf("openai: http://x model m: %w", sentinel)}}
		_, err := llm.CompleteJSON(t.Context(), m, request(), nil)
		if !errors.Is(err, sentinel) {
			t.Errorf("err = %v, want it to wrap %v", err, sentinel)
		}
		if errors.Is(err, llm.ErrInvalidOutput) {
			t.Errorf("backend error %v reported as invalid output", sentinel)
		}
		if len(m.calls) != 1 {
			t.Errorf("%v: %d calls, want 1", sentinel, len(m.calls))
		}
	}
}

func TestCompleteJSONReaskFails(t *testing.T) {
	m := &replies{out: []any{"garbage", fmt.Errorf("boom: %w", llm.ErrUnavailable)}}
	_, err := llm.CompleteJSON(t.Context(), m, request(), nil)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "re-ask") {
		t.Fatalf("err = %v", err)
	}
}

func TestCompleteJSONNilSchema(t *testing.T) {
	req := request()
	req.Schema = nil
	m := &replies{out: []any{`Result: {"x": [1, 2,]}`}}
	var got map[string][]int
	if _, err := llm.CompleteJSON(t.Context(), m, req, &got); err != nil {
		t.Fatal(err)
	}
	if len(got["x"]) != 2 {
		t.Errorf("decoded %v", got)
	}
	m = &replies{out: []any{"nothing", "still nothing"}}
	_, err := llm.CompleteJSON(t.Context(), m, req, &got)
	if !errors.Is(err, llm.ErrInvalidOutput) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(m.calls[1].Messages[3].Content, "only valid JSON") {
		t.Errorf("nil-schema correction = %q", m.calls[1].Messages[3].Content)
	}
}

func TestCompleteJSONGoTypeMismatch(t *testing.T) {
	// Valid for the schema but not for the caller's Go type: re-asked,
	// and the problem names the key.
	m := &replies{out: []any{`{"affiliations": ["e1"]}`, `{"affiliations": ["e1"]}`}}
	var got struct {
		Affiliations []int `json:"affiliations"`
	}
	_, err := llm.CompleteJSON(t.Context(), m, request(), &got)
	if !errors.Is(err, llm.ErrInvalidOutput) || !strings.Contains(err.Error(), "affiliations") {
		t.Fatalf("err = %v", err)
	}
}

func TestCompleteJSONCanceledContextNotReasked(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	m := &replies{out: []any{"garbage", `{"affiliations":[]}`}}
	fm := llm.ModelFunc(func(c context.Context, req llm.Request) (llm.Response, error) {
		defer cancel()
		return m.Complete(c, req)
	})
	_, err := llm.CompleteJSON(ctx, fm, request(), nil)
	if !errors.Is(err, context.Canceled) || len(m.calls) != 1 {
		t.Fatalf("err = %v, calls = %d", err, len(m.calls))
	}
}

func TestCorrection(t *testing.T) {
	got := llm.Correction(errors.New(`jsonx: $.ids[0]: expected integer, got string "x"`), json.RawMessage(`{"type":"object"}`))
	want := "Your previous reply could not be used: $.ids[0]: expected integer, got string \"x\".\n" +
		"Reply again with only a JSON object that matches this JSON Schema (all required keys, correct types), " +
		"with no explanations, no code fences and no text before or after it:\n{\"type\":\"object\"}"
	if got != want {
		t.Errorf("Correction =\n%s\nwant\n%s", got, want)
	}
}

// CompleteJSON decodes into v as json.Unmarshal does: a zero v gets the
// reply, a v that holds something keeps what the reply does not set (the
// reply is merged into it), and the first reply's value is not shared
// with a later call's.
func TestCompleteJSONDecodesLikeUnmarshal(t *testing.T) {
	reply := `{"affiliations":["e1","e2"]}`
	for _, start := range []affiliation{{}, {Reasoning: "kept"}, {Affiliations: []string{"x", "y", "z"}}} {
		m := &replies{out: []any{reply}}
		got := start
		got.Affiliations = append([]string(nil), start.Affiliations...)
		if len(start.Affiliations) == 0 {
			got.Affiliations = nil
		}
		if _, err := llm.CompleteJSON(t.Context(), m, request(), &got); err != nil {
			t.Fatal(err)
		}
		want := start
		want.Affiliations = append([]string(nil), start.Affiliations...)
		if len(start.Affiliations) == 0 {
			want.Affiliations = nil
		}
		if err := json.Unmarshal([]byte(reply), &want); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("from %+v: decoded %+v, json.Unmarshal gives %+v", start, got, want)
		}
	}
}
