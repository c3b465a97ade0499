package higmem_test

import (
	"os"
	"path/filepath"
	"strings"
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
// model's recorded replies (no server needed: the cassette answers, and a
// request it does not hold fails the test) and asks questions. Whatever
// the model wrote, the invariants hold: every turn is in an event, every
// event has a title and a summary, nothing stored is junk, and what the
// model did not write is marked (a producer ending in +fallback) and
// counted (warnings, notes, rejected calls).
func TestRealServerReplay(t *testing.T) {
	model, save := realServerModel(t)
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
	updatesApplied := 0
	for _, c := range res.Calls {
		if c.Operation == "event_updates" && c.Error == "" {
			updatesApplied++
		}
	}
	member, events, marked, rejected := checkStored(t, m, res)
	byModel := events - marked
	for _, tr := range turns {
		if !member[tr.ID] {
			t.Errorf("turn %s is in no event", tr.ID)
		}
	}
	if updatesApplied == 0 && byModel > 0 {
		t.Errorf("no event update reply was used, yet %d events are not marked +fallback", byModel)
	}
	t.Logf("%d events (%d summarised by the model), %d calls for %d turns, %d rejected, warnings %q", events, byModel, len(res.Calls), len(turns), rejected, res.Warnings)

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
		t.Logf("%q: %d calls in %d rounds, %d prompt tokens; answer %q, evidence %v, notes %q",
			q.Question, len(ans.Trace.Calls), ans.Trace.Rounds, tokens, ans.Text, ans.IDs(), ans.Trace.Notes)
	}
	save()
}

// realServerModel returns the cassette's replay, or, with
// LLAMACPP_RECORD_URL set, a client of that server recording into it
// (save writes the cassette).
func realServerModel(t *testing.T) (llm.Model, func()) {
	t.Helper()
	path := filepath.FromSlash(realCassette)
	url := os.Getenv("LLAMACPP_RECORD_URL")
	if url == "" {
		m, err := cache.Replay(path, realModel)
		if err != nil {
			t.Fatal(err)
		}
		return m, func() {}
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
	save := func() {
		if err := cas.Save(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(save) // keep what was recorded even when the test fails
	return m, save
}
