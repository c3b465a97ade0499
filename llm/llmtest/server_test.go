package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

const chatBody = `{"model":"m1","messages":[{"role":"system","content":"sys"},{"role":"user","content":"hello"}],"temperature":0,"seed":7,"response_format":{"type":"json_object"}}`

func TestServerRecordsAndReplies(t *testing.T) {
	s := NewServer(t, Sequence(Text("first"), RateLimited("3"), JSON(map[string]int{"n": 1})))
	resp, body := post(t, s.BaseURL()+"/chat/completions", chatBody)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var doc struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct{ Role, Content string }
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "m1" || len(doc.Choices) != 1 || doc.Choices[0].Message.Content != "first" ||
		doc.Choices[0].Message.Role != "assistant" || doc.Usage.PromptTokens == 0 {
		t.Errorf("completion = %s", body)
	}

	resp, body = post(t, s.URL+"/chat/completions", chatBody) // without /v1 too
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(body, "Rate limit") {
		t.Errorf("second reply: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	_, body = post(t, s.BaseURL()+"/chat/completions", chatBody)
	_, body4 := post(t, s.BaseURL()+"/chat/completions", chatBody)
	if !strings.Contains(body, `"content":"{\"n\":1}"`) || body4 != body {
		t.Errorf("third/fourth reply: %s / %s", body, body4)
	}

	if s.Calls() != 4 {
		t.Errorf("Calls = %d", s.Calls())
	}
	r := s.Request(1)
	if r.Model != "m1" || len(r.Messages) != 2 || r.LastUser() != "hello" || *r.Seed != 7 || *r.Temperature != 0 ||
		r.ResponseFormatType() != "json_object" || r.Header.Get("Authorization") != "Bearer sk-test" ||
		!bytes.Equal(r.Body, []byte(chatBody)) {
		t.Errorf("recorded request = %+v", r)
	}
	if len(s.Requests()) != 4 {
		t.Errorf("Requests = %d", len(s.Requests()))
	}
}

func TestServerShapes(t *testing.T) {
	tests := []struct {
		name   string
		reply  Reply
		status int
		want   string
	}{
		{"empty choices", EmptyChoices(), 200, `"choices":[]`},
		{"null content", Reply{NullContent: true}, 200, `"content":null`},
		{"no usage", Reply{Content: "x", NoUsage: true}, 200, `"finish_reason":"stop"`},
		{"garbage", Garbage(), 200, "<html>"},
		{"server error", ServerError(), 500, "server_error"},
		{"truncated", Reply{Content: `{"a": [1, 2`, FinishReason: "length"}, 200, `"finish_reason":"length"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(t, Always(tt.reply))
			resp, body := post(t, s.BaseURL()+"/chat/completions", chatBody)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("got %d %s; want %d containing %s", resp.StatusCode, body, tt.status, tt.want)
			}
			if tt.reply.NoUsage && strings.Contains(body, "usage") {
				t.Errorf("usage sent: %s", body)
			}
		})
	}
}

func TestServerRoutes(t *testing.T) {
	s := NewServer(t, Always(Text("x")))
	if resp, _ := post(t, s.URL+"/v1/embeddings", `{}`); resp.StatusCode != 404 {
		t.Errorf("unknown route: %d", resp.StatusCode)
	}
	if resp, _ := post(t, s.BaseURL()+"/chat/completions", `not json`); resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
	resp, err := http.Get(s.BaseURL() + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	if s.Calls() != 0 {
		t.Errorf("invalid requests were counted: %d", s.Calls())
	}
}

func TestRejectResponseFormat(t *testing.T) {
	s := NewServer(t, RejectResponseFormat(Always(Text("ok")), "json_schema"))
	resp, body := post(t, s.BaseURL()+"/chat/completions", `{"model":"m","messages":[],"response_format":{"type":"json_schema","json_schema":{}}}`)
	if resp.StatusCode != 400 || !strings.Contains(body, "response_format") {
		t.Errorf("json_schema: %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s.BaseURL()+"/chat/completions", chatBody) // json_object passes
	if resp.StatusCode != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("json_object: %d %s", resp.StatusCode, body)
	}
	all := NewServer(t, RejectResponseFormat(Always(Text("ok"))))
	if resp, _ := post(t, all.BaseURL()+"/chat/completions", chatBody); resp.StatusCode != 400 {
		t.Errorf("reject-all passed json_object: %d", resp.StatusCode)
	}
	if resp, _ := post(t, all.BaseURL()+"/chat/completions", `{"model":"m","messages":[]}`); resp.StatusCode != 200 {
		t.Errorf("reject-all refused a plain request: %d", resp.StatusCode)
	}
}

func TestSlowReplyAbandonedByClient(t *testing.T) {
	s := NewServer(t, Always(Slow(time.Hour, Text("late"))))
	client := &http.Client{Timeout: 50 * time.Millisecond}
	_, err := client.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(chatBody))
	if err == nil {
		t.Fatal("slow reply arrived")
	}
	// Cleanup (Close) must not wait an hour: the handler sees the client go.
}

func TestHangup(t *testing.T) {
	s := NewServer(t, Always(Reply{Hangup: true}))
	_, err := http.Post(s.BaseURL()+"/chat/completions", "application/json", strings.NewReader(chatBody))
	if err == nil {
		t.Fatal("hangup produced a response")
	}
}

func TestRefusedURL(t *testing.T) {
	u := RefusedURL(t)
	_, err := http.Post(u+"/chat/completions", "application/json", strings.NewReader(chatBody))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused", err)
	}
}

func TestRetryAfterFormats(t *testing.T) {
	if got := RetryAfterSeconds(90 * time.Second); got != "90" {
		t.Errorf("RetryAfterSeconds = %q", got)
	}
	d := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := RetryAfterDate(d); got != "Thu, 02 Jan 2025 03:04:05 GMT" {
		t.Errorf("RetryAfterDate = %q", got)
	}
}
