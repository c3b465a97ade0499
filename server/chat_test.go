package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// chatEnv is higmem serving a memory and proxying chat to a fake upstream,
// with an official OpenAI SDK client pointed at it.
type chatEnv struct {
	mem      *higmem.Memory
	srv      *Server
	ts       *httptest.Server
	upstream *llmtest.Server
	client   openai.Client
}

const upstreamKey = "sk-upstream-secret"

func newChatEnv(t *testing.T, h llmtest.Handler, opts Options) *chatEnv {
	t.Helper()
	e := &chatEnv{mem: newMem(t, higmem.Options{}), upstream: llmtest.NewServer(t, h)}
	opts.Chat.UpstreamURL = e.upstream.BaseURL()
	opts.Chat.UpstreamKey = upstreamKey
	e.srv, e.ts, _ = start(t, e.mem, opts)
	e.client = e.sdk(aliceKey)
	return e
}

// sdk is an OpenAI client with key and no retries (errors are asserted
// as they come).
func (e *chatEnv) sdk(key string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{option.WithBaseURL(e.ts.URL + "/v1"),
		option.WithAPIKey(key), option.WithMaxRetries(0)}, opts...)...)
}

// turns waits for the chat stores in flight and returns the space's turns.
func (e *chatEnv) turns(t *testing.T, sp higmem.Space) []higmem.Turn {
	t.Helper()
	e.srv.chat.stores.Wait()
	ts, err := e.mem.List(context.Background(), sp, higmem.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

var alice = higmem.Space{UserID: "alice"}

// upstreamMessages decodes the messages the upstream received in its n-th
// request, verbatim.
func upstreamMessages(t *testing.T, up *llmtest.Server, n int) []map[string]any {
	t.Helper()
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(up.Request(n).Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

// memoryOf returns the higmem system message of the n-th upstream request,
// or "".
func memoryOf(t *testing.T, up *llmtest.Server, n int) string {
	for _, m := range upstreamMessages(t, up, n) {
		if c, _ := m["content"].(string); m["role"] == "system" && strings.HasPrefix(c, "<higmem-memory>") {
			return c
		}
	}
	return ""
}

func TestChatNonStreaming(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("You live in Lisbon, Alice.")), Options{})
	ctx := context.Background()
	if _, err := e.mem.Add(ctx, alice, []higmem.TurnInput{{ID: "old-1", Speaker: "alice", Text: "I moved to Lisbon in May 2026.",
		OccurredAt: time.Date(2026, 5, 3, 10, 0, 0, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	var raw *http.Response
	resp, err := e.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are terse."),
			openai.UserMessage("Where did I move to?"),
		},
	}, option.WithJSONSet("x_vendor_knob", map[string]any{"keep": []int{1, 2}}), option.WithResponseInto(&raw),
		option.WithHeader(api.HeaderConversation, "conv-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "You live in Lisbon, Alice." {
		t.Errorf("reply %q", got)
	}
	if resp.ID != "chatcmpl-llmtest" || resp.Model != "gpt-test" || resp.Usage.TotalTokens == 0 {
		t.Errorf("reply shape changed: id %q model %q usage %+v", resp.ID, resp.Model, resp.Usage)
	}
	if raw.Header.Get(api.HeaderEvidence) != "1" || raw.Header.Get(api.HeaderConversationID) != "conv-1" || raw.Header.Get(api.HeaderWarning) != "" {
		t.Errorf("headers %v", raw.Header)
	}
	req := e.upstream.Request(1)
	if got := req.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream Authorization %q: want the upstream key, never the client's", got)
	}
	msgs := upstreamMessages(t, e.upstream, 1)
	if len(msgs) != 3 || msgs[0]["content"] != "You are terse." || msgs[2]["content"] != "Where did I move to?" {
		t.Fatalf("upstream messages %v", msgs)
	}
	mem := msgs[1]["content"].(string)
	for _, want := range []string{"<higmem-memory>", "[3 May 2026] ", "alice (old-1): I moved to Lisbon in May 2026.", "</higmem-memory>"} {
		if !strings.Contains(mem, want) {
			t.Errorf("memory message lacks %q:\n%s", want, mem)
		}
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	if string(body["x_vendor_knob"]) != `{"keep":[1,2]}` {
		t.Errorf("unknown field not passed through: %s", req.Body)
	}
	// The user message and the reply are stored in the conversation.
	ts := e.turns(t, alice)
	if len(ts) != 3 {
		t.Fatalf("%d turns, want 3: %+v", len(ts), ts)
	}
	for i, want := range []struct{ speaker, text, role string }{
		{"alice", "Where did I move to?", "user"}, {"assistant", "You live in Lisbon, Alice.", "assistant"}} {
		got := ts[i+1]
		if got.Speaker != want.speaker || got.Text != want.text || got.SessionID != "conv-1" || got.Metadata["role"] != want.role || got.OccurredAt.IsZero() {
			t.Errorf("turn %d: %+v", i+1, got)
		}
	}
}

func TestChatStreaming(t *testing.T) {
	reply := "Streaming works, one small piece after another, until the end."
	e := newChatEnv(t, llmtest.Always(llmtest.Text(reply)), Options{})
	ctx := context.Background()
	stream := e.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me something.")},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks < 10 || acc.Choices[0].Message.Content != reply || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("%d chunks, content %q, finish %q", chunks, acc.Choices[0].Message.Content, acc.Choices[0].FinishReason)
	}
	if !e.upstream.Request(1).Stream {
		t.Error("upstream request not streamed")
	}
	ts := e.turns(t, alice)
	if len(ts) != 2 || ts[0].Text != "Tell me something." || ts[1].Text != reply || ts[1].Metadata["partial"] != "" {
		t.Errorf("stored %+v", ts)
	}
}

// converse plays a conversation through the SDK: each request resends the
// last window messages of the history (0: all) and appends the reply.
func converse(t *testing.T, e *chatEnv, conv string, window int, users []string, history []openai.ChatCompletionMessageParamUnion) []openai.ChatCompletionMessageParamUnion {
	t.Helper()
	for _, u := range users {
		history = append(history, openai.UserMessage(u))
		send := history
		if window > 0 && len(send) > window {
			send = send[len(send)-window:]
		}
		resp, err := e.client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-test", Messages: send},
			option.WithHeader(api.HeaderConversation, conv))
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, resp.Choices[0].Message.ToParam())
		e.srv.chat.stores.Wait() // a person types slower than a store
	}
	return history
}

func TestChatResentHistoryAddsNothingTwice(t *testing.T) {
	e := newChatEnv(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Text("Reply to: " + req.LastUser())
	}, Options{})
	for _, tc := range []struct {
		conv   string
		window int
	}{{"full", 0}, {"windowed", 4}} {
		t.Run(tc.conv, func(t *testing.T) {
			sp := alice
			before := len(e.turns(t, sp))
			users := []string{"Hello there.", "How are you?", "Tell me a joke.", "Another one.", "Thanks, bye."}
			history := converse(t, e, tc.conv, tc.window, users, nil)
			got := e.turns(t, sp)[before:]
			if len(got) != 2*len(users) {
				t.Fatalf("%d turns stored for %d messages", len(got), 2*len(users))
			}
			for i, tu := range got {
				if tu.Metadata["position"] != fmt.Sprint(i) || tu.SessionID != tc.conv {
					t.Errorf("turn %d: position %s session %s", i, tu.Metadata["position"], tu.SessionID)
				}
			}
			// The same request again, and a retry of an old one: nothing new.
			for _, send := range [][]openai.ChatCompletionMessageParamUnion{history[:len(history)-1], history[:3]} {
				if _, err := e.client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: send},
					option.WithHeader(api.HeaderConversation, tc.conv)); err != nil {
					t.Fatal(err)
				}
			}
			if after := e.turns(t, sp)[before:]; len(after) != len(got) {
				t.Errorf("after resending: %d turns, want %d", len(after), len(got))
			}
		})
	}
}

func TestChatRecallsMessage3AtMessage30(t *testing.T) {
	e := newChatEnv(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Text(fmt.Sprintf("Noted (%d).", n))
	}, Options{})
	fact := "My sister Ingrid keeps honey bees on a farm near Tromsø."
	filler := []string{"What a nice morning.", "I need to buy groceries.", "Do you like jazz?", "The train was late again.",
		"I am reading a novel.", "Work was busy today.", "It might rain tomorrow.", "I cooked pasta tonight.",
		"My laptop is slow.", "The museum opens at ten.", "I should call the dentist.", "Football on TV later."}
	// Messages 1 (user), 2 (assistant), 3 (user: the fact), then the user
	// sends two messages in a row once, so that message 30 is the user's.
	history := converse(t, e, "long", 8, []string{"Hi!", fact}, nil)
	history = append(history, openai.UserMessage("One more thing before you answer."))
	history = converse(t, e, "long", 8, filler, history)
	if len(history) != 29 {
		t.Fatalf("history has %d messages, want 29", len(history))
	}
	converse(t, e, "long", 8, []string{"What does my sister keep on her farm?"}, history)
	n := e.upstream.Calls()
	sent := upstreamMessages(t, e.upstream, n)
	for _, m := range sent {
		if m["content"] == fact {
			t.Fatal("the window still holds message 3: the test proves nothing")
		}
	}
	if mem := memoryOf(t, e.upstream, n); !strings.Contains(mem, fact) {
		t.Errorf("message 30's memory lacks message 3:\n%s", mem)
	}
	ts := e.turns(t, alice)
	if len(ts) != 30+1 { // 30 messages and the last reply
		t.Errorf("%d turns stored, want 31", len(ts))
	}
	if ts[2].Text != fact || ts[2].Metadata["position"] != "2" {
		t.Errorf("message 3 stored as %+v", ts[2])
	}
}

var weatherCalls = json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]`)

func TestChatToolCallsPassThrough(t *testing.T) {
	e := newChatEnv(t, llmtest.Sequence(
		llmtest.Reply{NullContent: true, ToolCalls: weatherCalls, FinishReason: "tool_calls"},
		llmtest.Reply{ToolCalls: weatherCalls, FinishReason: "tool_calls"},
		llmtest.Text("It is 3 °C in Oslo."),
	), Options{})
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Oslo?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
	}
	resp, err := e.client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Fatalf("tool calls %+v", calls)
	}
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(e.upstream.Request(1).Body, &body)
	if !strings.Contains(string(body.Tools), `"get_weather"`) {
		t.Errorf("tools not forwarded: %s", e.upstream.Request(1).Body)
	}
	// Streamed tool calls too.
	stream := e.client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if sc := acc.Choices[0].Message.ToolCalls; len(sc) != 1 || sc[0].Function.Arguments != `{"city":"Oslo"}` {
		t.Errorf("streamed tool calls %+v", sc)
	}
	// The tool's result goes back with the assistant's tool call, untouched.
	// The first exchange is stored in the background: wait for it, as a
	// tool's round trip would, so that this request has memory to add.
	e.srv.chat.stores.Wait()
	params.Messages = append(params.Messages, resp.Choices[0].Message.ToParam(), openai.ToolMessage(`{"temp_c":3}`, "call_1"))
	final, err := e.client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if final.Choices[0].Message.Content != "It is 3 °C in Oslo." {
		t.Errorf("final %q", final.Choices[0].Message.Content)
	}
	sent := upstreamMessages(t, e.upstream, 3)
	var roles []string
	for _, m := range sent {
		roles = append(roles, m["role"].(string))
	}
	last := sent[len(sent)-1]
	if want := []string{"system", "user", "assistant", "tool"}; !slices.Equal(roles, want) || last["tool_call_id"] != "call_1" || last["content"] != `{"temp_c":3}` {
		t.Errorf("upstream got roles %v, tool message %v", roles, last)
	}
	if tc, _ := sent[2]["tool_calls"].([]any); len(tc) != 1 {
		t.Errorf("assistant tool call not forwarded: %v", sent[2])
	}
	// Stored: the user's question once and the final answer; tool traffic
	// has no text to remember.
	var texts []string
	for _, tu := range e.turns(t, alice) {
		texts = append(texts, tu.Text)
	}
	if want := []string{"Weather in Oslo?", "It is 3 °C in Oslo."}; !slices.Equal(texts, want) {
		t.Errorf("stored %q, want %q", texts, want)
	}
}

func TestChatUpstreamErrorsSurface(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		code  int
	}{
		{"429", llmtest.RateLimited("7"), http.StatusTooManyRequests},
		{"500", llmtest.ServerError(), http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newChatEnv(t, llmtest.Always(tc.reply), Options{})
			for _, stream := range []bool{false, true} {
				params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello?")}}
				var err error
				if stream {
					s := e.client.Chat.Completions.NewStreaming(context.Background(), params)
					for s.Next() {
					}
					err = s.Err()
				} else {
					_, err = e.client.Chat.Completions.New(context.Background(), params)
				}
				var oe *openai.Error
				if !errors.As(err, &oe) || oe.StatusCode != tc.code || oe.Message != tc.reply.Body[strings.Index(tc.reply.Body, `"message":"`)+11:strings.Index(tc.reply.Body, `","param"`)] {
					t.Errorf("stream=%v: err %v", stream, err)
				}
				if tc.code == 429 && oe != nil && oe.Response.Header.Get("Retry-After") != "7" {
					t.Errorf("Retry-After %q", oe.Response.Header.Get("Retry-After"))
				}
			}
			if ts := e.turns(t, alice); len(ts) != 0 {
				t.Errorf("failed exchanges stored %d turns", len(ts))
			}
		})
	}
	// An upstream that cannot be reached is a 502.
	e := newChatEnv(t, llmtest.Always(llmtest.Text("x")), Options{})
	e.srv.chat.opts.UpstreamURL = llmtest.RefusedURL(t)
	_, err := e.client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello?")}})
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != http.StatusBadGateway || oe.Code != api.CodeUpstream {
		t.Errorf("refused upstream: %v", err)
	}
}

func TestChatClientDisconnectMidStreamStoresTurns(t *testing.T) {
	reply := strings.Repeat("word ", 200)
	e := newChatEnv(t, llmtest.Always(llmtest.Reply{Content: reply, ChunkDelay: 5 * time.Millisecond}), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := e.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say many words.")}},
		option.WithHeader(api.HeaderConversation, "cut"))
	got := ""
	for stream.Next() {
		got += stream.Current().Choices[0].Delta.Content
		if strings.Count(got, "word") >= 3 {
			cancel() // the user closes the tab
			break
		}
	}
	stream.Close()
	// Shutdown waits for the writes in flight: the store of this exchange.
	if err := e.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts, err := e.mem.List(context.Background(), alice, higmem.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Text != "Say many words." || ts[1].Metadata["partial"] != "true" || ts[1].SessionID != "cut" {
		t.Fatalf("stored %+v", ts)
	}
	if !strings.HasPrefix(reply, ts[1].Text) || len(ts[1].Text) < len(strings.TrimSpace(got)) || len(ts[1].Text) >= len(strings.TrimSpace(reply)) {
		t.Errorf("partial reply %q (client saw %q)", ts[1].Text, got)
	}
}

func TestChatMemoryFailureDoesNotBlock(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("Still here.")), Options{})
	e.mem.Close() // every memory operation now fails
	var raw *http.Response
	resp, err := e.client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello?")}}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Still here." || !strings.Contains(raw.Header.Get(api.HeaderWarning), "memory unavailable") {
		t.Errorf("reply %q, warning %q", resp.Choices[0].Message.Content, raw.Header.Get(api.HeaderWarning))
	}
	if memoryOf(t, e.upstream, 1) != "" {
		t.Error("memory message sent although memory failed")
	}
}

func TestChatRateLimitPerKey(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("ok")), Options{Chat: ChatOptions{RateLimit: 0.001, RateBurst: 2}})
	ask := func(c openai.Client) error {
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		return err
	}
	for i := range 2 {
		if err := ask(e.client); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	var oe *openai.Error
	if err := ask(e.client); !errors.As(err, &oe) || oe.StatusCode != http.StatusTooManyRequests || oe.Code != api.CodeRateLimited ||
		oe.Response.Header.Get("Retry-After") == "" {
		t.Fatalf("third request: %v", err)
	}
	if e.upstream.Calls() != 2 {
		t.Errorf("a limited request reached the upstream (%d calls)", e.upstream.Calls())
	}
	// Another key has its own bucket.
	if err := ask(e.sdk(bobKey)); err != nil {
		t.Errorf("bob: %v", err)
	}
}

func TestChatUsers(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("ok")), Options{})
	ask := func(c openai.Client, user string) error {
		p := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi " + user)}}
		if user != "" {
			p.User = openai.String(user)
		}
		_, err := c.Chat.Completions.New(context.Background(), p)
		return err
	}
	if err := ask(e.client, "someone-else"); err != nil { // alice's single user
		t.Fatal(err)
	}
	if err := ask(e.sdk(adminKey), "carol"); err != nil {
		t.Fatal(err)
	}
	var oe *openai.Error
	if err := ask(e.sdk(adminKey), ""); !errors.As(err, &oe) || oe.StatusCode != http.StatusBadRequest {
		t.Errorf("all-users key without user: %v", err)
	}
	if err := ask(e.sdk("hgm_wrong"), ""); !errors.As(err, &oe) || oe.StatusCode != http.StatusUnauthorized {
		t.Errorf("bad key: %v", err)
	}
	if ts := e.turns(t, alice); len(ts) != 2 || ts[0].Text != "hi someone-else" {
		t.Errorf("alice: %+v", ts)
	}
	if ts := e.turns(t, higmem.Space{UserID: "carol"}); len(ts) != 2 {
		t.Errorf("carol: %d turns", len(ts))
	}
}

func TestChatAgentHeaderAndNoAuth(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("ok")), Options{NoAuth: true})
	c := openai.NewClient(option.WithBaseURL(strings.Replace(e.ts.URL, "127.0.0.1", "localhost", 1)+"/v1"), option.WithAPIKey("unused"),
		option.WithMaxRetries(0), option.WithHeader(api.HeaderAgent, "coder"))
	if _, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
		t.Fatal(err)
	}
	if ts := e.turns(t, higmem.Space{UserID: "default", AgentID: "coder"}); len(ts) != 2 {
		t.Errorf("%d turns in default/coder", len(ts))
	}
	models, err := c.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "llmtest" {
		t.Errorf("models %+v, %v", models, err)
	}
}

func TestSpliceMessagesKeepsBytes(t *testing.T) {
	body := []byte(` { "model":"m", "zeta": [1, 2], "messages" : [ {"role":"system","content":"S"} , {"role":"user","content":"Q","extra":true} ], "alpha":{"x":null} }`)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	msgs := make([]chatMessage, len(req.Messages))
	for i, m := range req.Messages {
		_ = json.Unmarshal(m, &msgs[i])
	}
	out, err := spliceMessages(body, req.Messages, msgs, "MEM")
	if err != nil {
		t.Fatal(err)
	}
	want := ` { "model":"m", "zeta": [1, 2], "messages" : [{"role":"system","content":"S"},{"content":"MEM","role":"system"},{"role":"user","content":"Q","extra":true}], "alpha":{"x":null} }`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if got := string(withModel([]byte(`{"messages":[]}`), "gpt")); got != `{"model":"gpt","messages":[]}` {
		t.Errorf("withModel: %s", got)
	}
}

func TestAlignOffset(t *testing.T) {
	stored := map[int]string{0: "user\x00a", 1: "assistant\x00b", 2: "user\x00c", 3: "assistant\x00d"}
	for _, tc := range []struct {
		name  string
		items []chatItem
		want  int
	}{
		{"full history", []chatItem{{pos: 0, role: "user", text: "a"}, {pos: 1, role: "assistant", text: "b"}, {pos: 2, role: "user", text: "c"}}, 0},
		{"window", []chatItem{{pos: 0, role: "user", text: "c"}, {pos: 1, role: "assistant", text: "d"}, {pos: 2, role: "user", text: "e"}}, 2},
		{"edited", []chatItem{{pos: 0, role: "user", text: "a"}, {pos: 1, role: "assistant", text: "b"}, {pos: 2, role: "user", text: "C!"}}, 0},
		{"new", []chatItem{{pos: 0, role: "user", text: "z"}}, 0},
	} {
		if got := alignOffset(tc.items, stored); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRateLimiterRefills(t *testing.T) {
	now := time.Unix(0, 0)
	l := newRateLimiter(2, 2, func() time.Time { return now })
	for i, want := range []bool{true, true, false} {
		if ok, _ := l.allow("k"); ok != want {
			t.Fatalf("request %d: %v", i+1, ok)
		}
	}
	if _, wait := l.allow("k"); wait != 500*time.Millisecond {
		t.Errorf("wait %v", wait)
	}
	now = now.Add(time.Second)
	if ok, _ := l.allow("k"); !ok {
		t.Error("not refilled")
	}
}

// A stream longer than the server's read timeout is not cut (slow local
// models stream for minutes; the read timeout is there for slow requests):
// net/http lifts the deadline once the body is read, and this keeps it so.
func TestChatStreamOutlivesReadTimeout(t *testing.T) {
	reply := strings.Repeat("slow ", 12)
	up := llmtest.NewServer(t, llmtest.Always(llmtest.Reply{Content: reply, ChunkDelay: 40 * time.Millisecond}))
	mem := newMem(t, higmem.Options{})
	s := New(mem, Options{Keys: testKeys, Chat: ChatOptions{UpstreamURL: up.BaseURL()}})
	ts := httptest.NewUnstartedServer(s)
	ts.Config.ReadTimeout = 200 * time.Millisecond // the stream lasts about 600 ms
	ts.Start()
	t.Cleanup(func() { _ = s.Shutdown(context.Background()); ts.Close() })
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(aliceKey), option.WithMaxRetries(0))
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Take your time.")}})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Choices[0].Message.Content != reply {
		t.Fatalf("content %q, err %v", acc.Choices[0].Message.Content, err)
	}
}

// Memory slower than MemoryTimeout: the chat goes on without it.
func TestChatMemoryTimeout(t *testing.T) {
	var slow atomic.Bool
	release := make(chan struct{})
	scripted := llmtest.NewScripted()
	model := llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if slow.Load() {
			select { // a memory model that does not answer until the test ends
			case <-ctx.Done():
				return llm.Response{}, ctx.Err()
			case <-release:
				return llm.Response{}, errors.New("released")
			}
		}
		return scripted.Complete(ctx, req)
	})
	mem := newMem(t, higmem.Options{MemoryModel: model})
	if _, err := mem.Add(context.Background(), alice, []higmem.TurnInput{{Speaker: "alice", Text: "I moved to Lisbon in May."}}); err != nil {
		t.Fatal(err)
	}
	slow.Store(true)
	up := llmtest.NewServer(t, llmtest.Always(llmtest.Text("Hi.")))
	_, ts, _ := start(t, mem, Options{Chat: ChatOptions{UpstreamURL: up.BaseURL(), MemoryTimeout: 50 * time.Millisecond}})
	t.Cleanup(func() { close(release) }) // before the server's shutdown waits for the store
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(aliceKey), option.WithMaxRetries(0))
	var raw *http.Response
	resp, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Where did I move?")}}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "Hi." || !strings.Contains(raw.Header.Get(api.HeaderWarning), "longer than 50ms") {
		t.Errorf("reply %q, warning %q", resp.Choices[0].Message.Content, raw.Header.Get(api.HeaderWarning))
	}
}

func TestChatMemoryOffForwardsUntouched(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("ok")), Options{})
	if _, err := e.mem.Add(context.Background(), alice, []higmem.TurnInput{{Speaker: "alice", Text: "Secret plans for Friday."}}); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"m", "messages":[{"role":"user","content":"Friday plans?"}], "n": 1}`
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	req.Header.Set(api.HeaderMemory, "off")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || string(e.upstream.Request(1).Body) != body {
		t.Errorf("status %d, upstream got %s", resp.StatusCode, e.upstream.Request(1).Body)
	}
	if ts := e.turns(t, alice); len(ts) != 1 {
		t.Errorf("%d turns: memory off stored the exchange", len(ts))
	}
}

func TestChatBadRequests(t *testing.T) {
	e := newChatEnv(t, llmtest.Always(llmtest.Text("ok")), Options{MaxUploadBytes: 1 << 10})
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"not JSON", `{"model":`, 400, api.CodeInvalidJSON},
		{"no messages", `{"model":"m","messages":[]}`, 400, api.CodeInvalidRequest},
		{"bad message", `{"model":"m","messages":[42]}`, 400, api.CodeInvalidRequest},
		{"too large", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<10) + `"}]}`, 413, api.CodeBodyTooLarge},
	} {
		req, _ := http.NewRequest("POST", e.ts.URL+"/v1/chat/completions", strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+aliceKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error struct{ Code, Message, Type string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != tc.status || got.Error.Code != tc.code || got.Error.Message == "" || got.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %+v", tc.name, resp.StatusCode, got)
		}
	}
	if e.upstream.Calls() != 0 {
		t.Errorf("bad requests reached the upstream")
	}
	// Without an upstream the chat routes say how to configure one.
	_, ts, _ := start(t, e.mem, Options{})
	var oe *openai.Error
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(aliceKey), option.WithMaxRetries(0))
	_, err := c.Models.List(context.Background())
	if !errors.As(err, &oe) || oe.StatusCode != http.StatusNotImplemented || !strings.Contains(oe.Message, "--chat-upstream") {
		t.Errorf("no upstream: %v", err)
	}
}
