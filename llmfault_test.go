package higmem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// faultClient is the real client against srv, with a short request
// timeout and one retry, so that a server that never answers costs
// milliseconds.
func faultClient(t *testing.T, srv *llmtest.Server) *openai.Client {
	t.Helper()
	c, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "slow-model", MaxConcurrency: 1,
		RequestTimeout: 100 * time.Millisecond, MaxRetries: 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildCalls returns the build_batch calls of res.
func buildCalls(res *higmem.AddResult) []higmem.Call {
	var out []higmem.Call
	for _, c := range res.Calls {
		if c.Operation == prompt.BuildBatch {
			out = append(out, c)
		}
	}
	return out
}

// A build_batch call that runs out of its request timeout on every try
// (the real Ollama server, default settings, measured in issue 33) falls
// back offline and the ingest goes on: every turn is stored, in events
// marked +fallback, each fallback noted, and the failed call is in the
// record with its time, its requests and the prompt tokens the server
// read. On main the first timed-out batch ended Add with an error after
// storing nothing of it.
func TestBuildTimeoutFallsBackOffline(t *testing.T) {
	turns, _ := example(t)
	turns = turns[:6]
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Always(llmtest.Slow(time.Hour, llmtest.Text("{}"))))
			m := open(t, higmem.Options{Mode: mode, MemoryModel: faultClient(t, srv), Embedder: hashing.New(0), BatchSize: 3})
			res, err := m.Add(t.Context(), sp, turns)
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			if len(res.Added) != len(turns) {
				t.Fatalf("stored %d of %d turns", len(res.Added), len(turns))
			}
			member, events, marked, _ := checkStored(t, m, res)
			if len(member) != len(turns) || events == 0 || marked != events {
				t.Errorf("%d turns in events, %d events, %d marked +fallback: want all", len(member), events, marked)
			}
			if len(res.Calls) == 0 {
				t.Fatal("no call recorded")
			}
			for _, c := range res.Calls {
				if c.Error == "" || !strings.Contains(c.Error, "request timeout") {
					t.Errorf("call %s: error %q, want the timeout", c.Operation, c.Error)
				}
				if c.Requests != 2 || c.Latency < 200*time.Millisecond || c.Usage.PromptTokens == 0 || !c.Usage.Estimated {
					t.Errorf("call %s: %d requests, %v, usage %+v: want 2 timed-out requests, their time and estimated prompt tokens",
						c.Operation, c.Requests, c.Latency, c.Usage)
				}
			}
			noted := 0
			for _, w := range res.Warnings {
				if strings.Contains(w, "unusable") && strings.Contains(w, "request timeout") {
					noted++
				}
			}
			if noted == 0 {
				t.Errorf("no fallback warning names the timeout: %q", res.Warnings)
			}
		})
	}
}

// A build reply cut at its token budget is re-asked; when the re-ask runs
// out of its request timeout the cut reply, repaired, is used, and the
// call says all of it: reasked, truncated, an error naming the failed
// re-ask, both requests' tokens and time, and a warning. On main the call
// looked clean (no error, the re-ask's time and tokens lost).
func TestCutReplyReaskTimeoutRecorded(t *testing.T) {
	turns, _ := example(t)
	turns = turns[:3]
	srv := llmtest.NewServer(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		user := req.LastUser()
		if strings.HasPrefix(user, "Your previous reply was too long") {
			return llmtest.Slow(time.Hour, llmtest.Text("{}"))
		}
		ids := newTurnIDs(user)
		var b strings.Builder
		b.WriteString(`{"turns":[`)
		for i, id := range ids {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":"` + id + `","keywords":["pottery"],"tags":["hobby"],"context":"Priya talks about pottery.","events":["new:1"]}`)
		}
		b.WriteString(`],"events":[{"id":"new:1","title":"Priya's pottery","summary":"Priya took up pottery and `)
		return llmtest.Reply{Content: b.String(), FinishReason: "length"}
	})
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: faultClient(t, srv), Embedder: hashing.New(0), BatchSize: 3})
	res, err := m.Add(t.Context(), sp, turns)
	if err != nil {
		t.Fatal(err)
	}
	calls := buildCalls(res)
	if len(calls) != 1 {
		t.Fatalf("build calls %+v", calls)
	}
	c := calls[0]
	if !c.Reasked || !c.Truncated || !strings.Contains(c.Error, "re-ask failed") || !strings.Contains(c.Error, "request timeout") {
		t.Errorf("call %+v: want reasked, truncated and the failed re-ask named", c)
	}
	if c.Requests != 3 || c.Latency < 200*time.Millisecond || c.Usage.CompletionTokens == 0 || c.Usage.PromptTokens == 0 {
		t.Errorf("call: %d requests, %v, usage %+v: want the cut reply and two timed-out re-asks, with time and tokens", c.Requests, c.Latency, c.Usage)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "re-ask failed") {
		t.Errorf("no warning for the cut reply used: %q", res.Warnings)
	}
}
