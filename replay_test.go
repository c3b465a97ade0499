package higmem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/llm/openai"
)

// realCassette holds what a real server answered to TestRealServerReplay:
// llama-cpp-python 0.3.36 serving Gemma 3 270M (the base model, Q4_K_M,
// with a chat template added) started by scripts/local-llm.sh. Record it
// again after a prompt change with the server running:
//
//	LLAMACPP_RECORD_URL=http://127.0.0.1:8089/v1 go test -run TestRealServerReplay -timeout 2h .
const realCassette = "testdata/llamacpp-gemma3-270m-default.jsonl"

// realModel is the model name the cassette was keyed with.
const realModel = "gemma-3-270m"

// TestRealServerReplay builds memory in default mode from a real small
// model's recorded replies (no server needed: the cassette answers; see
// staleReplay for requests it does not hold) and asks questions. Whatever
// the model wrote, the invariants hold: every turn is in an event, every
// event has a title and a summary, nothing stored is junk, and what the
// model did not write is marked (a producer ending in +fallback) and
// counted (warnings, notes, rejected calls).
func TestRealServerReplay(t *testing.T) {
	recorded, save, stale := realServerModel(t)
	model := &requestCounter{inner: recorded}
	turns, questions := example(t)
	turns = turns[:8]
	ctx := t.Context()
	// The cassette was recorded before build_batch asked for the people's
	// profile facts: NoProfiles sends the build prompt it holds. Record it
	// again (with the real server) and drop NoProfiles.
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: model, Embedder: hashing.New(0),
		Ablations: higmem.Ablations{NoProfiles: os.Getenv("LLAMACPP_RECORD_URL") == ""}})
	res, err := m.Add(ctx, sp, turns)
	if err != nil {
		t.Fatal(err)
	}
	buildsUsed := 0
	for _, c := range res.Calls {
		if c.Operation == "build_batch" && c.Error == "" {
			buildsUsed++
		}
	}
	member, events, marked, rejected := checkStored(t, m, res)
	byModel := events - marked
	for _, tr := range turns {
		if !member[tr.ID] {
			t.Errorf("turn %s is in no event", tr.ID)
		}
	}
	if buildsUsed == 0 && byModel > 0 {
		t.Errorf("no build reply was used, yet %d events are not marked +fallback", byModel)
	}
	reqs, sent := model.take()
	t.Logf("%d events (%d summarised by the model), %d calls (%d HTTP requests, %d prompt tokens sent) for %d turns, %d rejected, warnings %q", events, byModel, len(res.Calls), reqs, sent, len(turns), rejected, res.Warnings)

	for _, q := range questions[:2] {
		ans, err := m.Ask(ctx, sp, q.Question, higmem.RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ans.Text == "" && ans.Note == "" {
			t.Errorf("%q: neither an answer nor a note saying why", q.Question)
		}
		if len(ans.Trace.Calls) > 3 || ans.Trace.Rounds > 2 {
			t.Errorf("%q: %d calls in %d rounds", q.Question, len(ans.Trace.Calls), ans.Trace.Rounds)
		}
		for _, id := range ans.IDs() {
			if !member[id] {
				t.Errorf("%q: evidence %q is no stored turn", q.Question, id)
			}
		}
		for _, c := range ans.Trace.Calls {
			if c.Operation == "select" && strings.HasPrefix(c.Check, "rejected") && (len(ans.Trace.Notes) == 0 || len(ans.IDs()) == 0) {
				t.Errorf("%q: the selection was rejected, yet notes %q and evidence %v", q.Question, ans.Trace.Notes, ans.IDs())
			}
		}
		tokens := 0
		for _, c := range ans.Trace.Calls {
			tokens += c.Usage.PromptTokens
		}
		reqs, sent := model.take()
		t.Logf("%q: %d calls (%d HTTP requests) in %d rounds, %d prompt tokens recorded, %d sent; answer %q, evidence %v, notes %q",
			q.Question, len(ans.Trace.Calls), reqs, ans.Trace.Rounds, tokens, sent, ans.Text, ans.IDs(), ans.Trace.Notes)
	}
	if stale != nil {
		exact, old, faults := stale.counts()
		t.Logf("cassette: %d requests answered as recorded, %d with a reply recorded for an earlier prompt of the operation, %d no-reply faults", exact, old, faults)
		if exact+old == 0 {
			t.Error("no request was answered from the cassette: the test saw no real output")
		}
	}
	save()
}

// requestCounter counts the HTTP requests behind the responses of inner
// (as recorded: a replayed response carries its original count), and the
// size of the prompts sent (4 bytes per token: a reply recorded for an
// earlier prompt carries that prompt's usage).
type requestCounter struct {
	inner  llm.Model
	mu     sync.Mutex
	n      int
	tokens int
}

func (c *requestCounter) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := c.inner.Complete(ctx, req)
	c.mu.Lock()
	c.n += max(resp.Requests, 1)
	for _, m := range req.Messages {
		c.tokens += (len(m.Content) + 3) / 4
	}
	c.mu.Unlock()
	return resp, err
}

// take returns the requests counted, and the prompt tokens sent, since
// the last take.
func (c *requestCounter) take() (requests, tokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	requests, tokens = c.n, c.tokens
	c.n, c.tokens = 0, 0
	return requests, tokens
}

// realServerModel returns the cassette's replay, or, with
// LLAMACPP_RECORD_URL set, a client of that server recording into it
// (save writes the cassette; stale is nil then).
func realServerModel(t *testing.T) (m llm.Model, save func(), stale *staleReplay) {
	t.Helper()
	path := filepath.FromSlash(realCassette)
	url := os.Getenv("LLAMACPP_RECORD_URL")
	if url == "" {
		cas, err := cache.OpenCassette(path)
		if err != nil {
			t.Fatal(err)
		}
		stale, err = newStaleReplay(path)
		if err != nil {
			t.Fatal(err)
		}
		stale.cache = cache.New(stale, cas, cache.Options{Model: realModel})
		return stale.cache, func() {}, stale
	}
	client, err := openai.New(openai.Options{BaseURL: url, Model: realModel, Structured: openai.JSONObjectSchema,
		MaxConcurrency: 1, Stream: true, RequestTimeout: 20 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	m, cas, err := cache.Record(client, path, realModel)
	if err != nil {
		t.Fatal(err)
	}
	save = func() {
		if err := cas.Save(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(save) // keep what was recorded even when the test fails
	return m, save, nil
}

// staleReplay answers the requests a cassette does not hold, which are
// those whose prompt changed since the recording (the cache in front of it
// answers the others exactly). The real model's reply to the same
// operation's earlier prompt stands in, the operation's recorded replies
// taken in turn: real, messy output still reaches the engine, whose
// invariants do not depend on the prompt's wording. An operation with no
// recorded reply is a "no reply recorded" fault, an unusable reply
// (llm.ErrInvalidOutput), which the engine must handle by its fallbacks.
// Record the cassette again against the server to replay exactly.
type staleReplay struct {
	byOp  map[string][]llm.Response
	cache *cache.Cache // the cassette's cache in front of it

	mu          sync.Mutex
	next        map[string]int
	old, faults int
}

func newStaleReplay(path string) (*staleReplay, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &staleReplay{byOp: map[string][]llm.Response{}, next: map[string]int{}}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Op    string `json:"op"`
			Value struct {
				Content      string    `json:"content"`
				Model        string    `json:"model"`
				Usage        llm.Usage `json:"usage"`
				FinishReason string    `json:"finish_reason"`
				Requests     int       `json:"requests"`
			} `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			return nil, err
		}
		v := l.Value
		s.byOp[l.Op] = append(s.byOp[l.Op], llm.Response{Content: v.Content, Model: v.Model, Usage: v.Usage, FinishReason: v.FinishReason, Requests: v.Requests})
	}
	return s, nil
}

// Complete answers a request the cassette missed.
func (s *staleReplay) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.byOp[req.Operation]
	if len(rs) == 0 {
		s.faults++
		return llm.Response{}, fmt.Errorf("%w: no reply recorded for %s", llm.ErrInvalidOutput, req.Operation)
	}
	s.old++
	r := rs[s.next[req.Operation]%len(rs)]
	s.next[req.Operation]++
	return r, nil
}

// counts returns how many requests were answered as recorded (the
// cassette's hits), with a reply to an earlier prompt, and with a fault.
func (s *staleReplay) counts() (exact, old, faults int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.cache.Stats().Hits), s.old, s.faults
}
