package cache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// Record a real client's exchanges with a server, then replay them with
// no server at all: same contents, usage, finish reasons and request
// counts; anything not recorded is ErrCassetteMiss, never a network call.
func TestCassetteRecordReplay(t *testing.T) {
	srv := llmtest.NewLlamaCpp(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "long") {
			return llmtest.Text(strings.Repeat("word ", 100))
		}
		return llmtest.Text(`{"answer":"Sweden"}`)
	})
	client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "gemma-3-270m"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cassette.jsonl")
	rec, cas, err := Record(client, path, "gemma-3-270m")
	if err != nil {
		t.Fatal(err)
	}
	reqs := []llm.Request{
		{Messages: []llm.Message{{Role: "user", Content: "Where did Caroline move from?"}}, Schema: []byte(`{"type":"object"}`),
			SchemaName: "answer", Operation: "answer", MaxTokens: 32},
		{Messages: []llm.Message{{Role: "user", Content: "Say something long."}}, Operation: "chat", MaxTokens: 8},
	}
	var want []llm.Response
	for _, r := range reqs {
		resp, err := rec.Complete(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp)
	}
	if err := cas.Save(); err != nil {
		t.Fatal(err)
	}
	if want[0].Requests != 2 || !want[1].Truncated() {
		t.Fatalf("recorded %+v", want)
	}
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 2 || !strings.Contains(string(b), `"op":"answer"`) {
		t.Errorf("cassette file:\n%s", b)
	}

	srv2Calls := len(srv.Requests())
	play, err := Replay(path, "gemma-3-270m")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		got, err := play.Complete(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != want[i].Content || got.Usage != want[i].Usage || got.FinishReason != want[i].FinishReason ||
			got.Requests != want[i].Requests || !got.Cached {
			t.Errorf("replay %d = %+v, recorded %+v", i, got, want[i])
		}
	}
	other := reqs[0]
	other.Messages = []llm.Message{{Role: "user", Content: "A new prompt"}}
	if _, err := play.Complete(t.Context(), other); !errors.Is(err, ErrCassetteMiss) || !strings.Contains(err.Error(), "answer") {
		t.Errorf("miss: %v", err)
	}
	if len(srv.Requests()) != srv2Calls {
		t.Error("replay reached the server")
	}
}

func TestCassetteCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(path, []byte("{\"key\":\"k\",\"value\":{}}\nnot json\n"), 0o644)
	if _, err := OpenCassette(path); err == nil {
		t.Error("corrupt cassette opened")
	}
}
