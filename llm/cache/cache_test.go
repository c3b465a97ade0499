package cache_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// counting is a fake model whose reply is derived from the request, so
// that distinct requests get distinct replies.
type counting struct {
	calls atomic.Int64
	fail  bool
}

func (m *counting) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	n := m.calls.Add(1)
	if m.fail {
		return llm.Response{}, fmt.Errorf("fake: %w", llm.ErrUnavailable)
	}
	last := req.Messages[len(req.Messages)-1].Content
	return llm.Response{
		Content: fmt.Sprintf(`{"echo":%q,"t":%v}`, last, req.Temperature),
		Model:   "fake-model",
		Usage:   llm.Usage{PromptTokens: 10, CompletionTokens: int(n)},
		Latency: time.Millisecond,
	}, nil
}

func requests() []llm.Request {
	var out []llm.Request
	for i := range 5 {
		out = append(out, llm.Request{
			Messages:  []llm.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: fmt.Sprintf("q%d", i)}},
			Schema:    json.RawMessage(`{"type":"object"}`),
			Operation: "answer",
		})
	}
	return out
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	// The store opens its database the same way: WAL and a busy timeout,
	// so that concurrent writers wait instead of failing.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// backends returns a fresh backend of each kind, plus a function that
// "restarts" it (same storage, new handle) to simulate a rerun.
func backends(t *testing.T) map[string]func() cache.Backend {
	mem := cache.NewMemory()
	path := filepath.Join(t.TempDir(), "cache.db")
	return map[string]func() cache.Backend{
		"memory": func() cache.Backend { return mem },
		"sqlite": func() cache.Backend {
			b, err := cache.OpenSQLite(t.Context(), openDB(t, path))
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

func TestSecondRunMakesNoCalls(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			inner := &counting{}
			first := cache.New(inner, open(), cache.Options{Model: "m"})
			var want []llm.Response
			for _, req := range requests() {
				resp, err := first.Complete(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Cached {
					t.Error("first run served from cache")
				}
				want = append(want, resp)
			}
			if got := first.Stats(); got != (cache.Stats{Misses: 5}) {
				t.Errorf("first run stats = %+v", got)
			}

			rerun := &counting{}
			second := cache.New(rerun, open(), cache.Options{Model: "m"})
			for i, req := range requests() {
				resp, err := second.Complete(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				w := want[i]
				if resp.Content != w.Content || resp.Model != w.Model || resp.Usage != w.Usage || !resp.Cached || resp.Latency != 0 {
					t.Errorf("rerun %d = %+v, want %+v cached", i, resp, w)
				}
			}
			if rerun.calls.Load() != 0 {
				t.Errorf("rerun made %d calls to the model", rerun.calls.Load())
			}
			if got := second.Stats(); got != (cache.Stats{Hits: 5}) {
				t.Errorf("rerun stats = %+v", got)
			}
		})
	}
}

func TestKey(t *testing.T) {
	seed := int64(1)
	base := llm.Request{
		Messages:    []llm.Message{{Role: "user", Content: "hi"}},
		Schema:      json.RawMessage(`{"type":"object","required":["a"]}`),
		Temperature: 0,
		MaxTokens:   100,
		Seed:        &seed,
		Operation:   "answer",
	}
	k := cache.Key("m", base)
	if len(k) != 64 {
		t.Fatalf("key %q is not a hex sha256", k)
	}
	same := base
	same.Operation = "other"
	same.SchemaName = "whatever"
	same.Schema = json.RawMessage("{\n  \"required\": [\"a\"],\n  \"type\": \"object\"\n}")
	if cache.Key("m", same) != k {
		t.Error("operation, schema name or schema formatting changed the key")
	}
	seed2 := int64(2)
	variants := map[string]func(r *llm.Request) string{
		"model":       func(r *llm.Request) string { return "m2" },
		"message":     func(r *llm.Request) string { r.Messages = []llm.Message{{Role: "user", Content: "hi!"}}; return "m" },
		"role":        func(r *llm.Request) string { r.Messages = []llm.Message{{Role: "system", Content: "hi"}}; return "m" },
		"schema":      func(r *llm.Request) string { r.Schema = json.RawMessage(`{"type":"array"}`); return "m" },
		"no schema":   func(r *llm.Request) string { r.Schema = nil; return "m" },
		"temperature": func(r *llm.Request) string { r.Temperature = 0.1; return "m" },
		"max tokens":  func(r *llm.Request) string { r.MaxTokens = 101; return "m" },
		"seed":        func(r *llm.Request) string { r.Seed = &seed2; return "m" },
		"no seed":     func(r *llm.Request) string { r.Seed = nil; return "m" },
	}
	seen := map[string]string{k: "base"}
	for name, f := range variants {
		r := base
		model := f(&r)
		key := cache.Key(model, r)
		if prev, dup := seen[key]; dup {
			t.Errorf("%s has the same key as %s", name, prev)
		}
		seen[key] = name
	}
	// Golden: the key format must not drift silently, or every stored cache
	// is invalidated.
	if got, want := cache.Key("gpt-4o-mini", llm.Request{Messages: []llm.Message{{Role: "user", Content: "hello"}}}),
		"68071123dd747e45105f78d7bb07d3d51fcabb8b64849890afe8b8b0525003f7"; got != want {
		t.Logf("golden key changed: %s (update the constant if intended)", got)
		t.Fail()
	}
}

func TestErrorsNotCached(t *testing.T) {
	b := cache.NewMemory()
	inner := &counting{fail: true}
	c := cache.New(inner, b, cache.Options{})
	for range 2 {
		if _, err := c.Complete(t.Context(), requests()[0]); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
	}
	if inner.calls.Load() != 2 || b.Len() != 0 || c.Stats().Misses != 2 {
		t.Errorf("calls %d entries %d stats %+v", inner.calls.Load(), b.Len(), c.Stats())
	}
}

// brokenBackend fails every operation.
type brokenBackend struct{}

func (brokenBackend) Get(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("disk on fire")
}
func (brokenBackend) Put(context.Context, string, []byte) error { return errors.New("disk on fire") }

func TestBrokenBackendDegradesToModel(t *testing.T) {
	inner := &counting{}
	c := cache.New(inner, brokenBackend{}, cache.Options{})
	resp, err := c.Complete(t.Context(), requests()[0])
	if err != nil || resp.Cached || inner.calls.Load() != 1 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if got := c.Stats(); got != (cache.Stats{Misses: 1, BackendErrors: 2}) {
		t.Errorf("stats = %+v", got)
	}
}

func TestCorruptEntryIgnored(t *testing.T) {
	b := cache.NewMemory()
	req := requests()[0]
	b.Put(t.Context(), cache.Key("m", req), []byte("not json"))
	inner := &counting{}
	c := cache.New(inner, b, cache.Options{Model: "m"})
	if resp, err := c.Complete(t.Context(), req); err != nil || resp.Cached {
		t.Fatalf("%+v, %v", resp, err)
	}
	if resp, err := c.Complete(t.Context(), req); err != nil || !resp.Cached {
		t.Fatalf("entry not rewritten: %+v, %v", resp, err)
	}
}

func TestModelNameFromInner(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Always(llmtest.Text("x")))
	client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "llama3.1:8b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cache.New(client, cache.NewMemory(), cache.Options{}).ModelName(); got != "llama3.1:8b" {
		t.Errorf("ModelName = %q", got)
	}
	if got := cache.New(client, cache.NewMemory(), cache.Options{Model: "x"}).ModelName(); got != "x" {
		t.Errorf("ModelName with option = %q", got)
	}
}

// The end-to-end promise: an eval rerun against an OpenAI-compatible
// server through a SQLite cache makes zero HTTP calls and returns the same
// bytes — including CompleteJSON's corrective re-ask.
func TestRerunZeroHTTPCalls(t *testing.T) {
	srv := llmtest.NewServer(t, func(n int, r *llmtest.ChatRequest) llmtest.Reply {
		if len(r.Messages) > 2 { // the corrective re-ask
			return llmtest.Text(`{"answer": "fixed"}`)
		}
		if r.LastUser() == "q0" {
			return llmtest.Text(`{"reply": "wrong key"}`)
		}
		return llmtest.Text(`{"answer": "` + r.LastUser() + `"}`)
	})
	path := filepath.Join(t.TempDir(), "higmem.db")
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)

	run := func() ([]string, cache.Stats) {
		backend, err := cache.OpenSQLite(t.Context(), openDB(t, path))
		if err != nil {
			t.Fatal(err)
		}
		client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "m", Structured: openai.Plain})
		if err != nil {
			t.Fatal(err)
		}
		c := cache.New(client, backend, cache.Options{})
		var out []string
		var wg sync.WaitGroup
		out = make([]string, 4)
		for i := range 4 {
			wg.Go(func() {
				var v struct{ Answer string }
				req := llm.Request{
					Messages: []llm.Message{{Role: "system", Content: "s"}, {Role: "user", Content: fmt.Sprintf("q%d", i)}},
					Schema:   schema,
				}
				if _, err := llm.CompleteJSON(t.Context(), c, req, &v); err != nil {
					t.Error(err)
				}
				out[i] = v.Answer
			})
		}
		wg.Wait()
		return out, c.Stats()
	}
	first, st1 := run()
	calls := srv.Calls()
	if calls != 5 || st1 != (cache.Stats{Misses: 5}) {
		t.Fatalf("first run: %d HTTP calls, stats %+v", calls, st1)
	}
	second, st2 := run()
	if srv.Calls() != calls {
		t.Errorf("rerun made %d HTTP calls", srv.Calls()-calls)
	}
	if st2.Hits != 5 || st2.Misses != 0 {
		t.Errorf("rerun stats %+v", st2)
	}
	if fmt.Sprint(first) != fmt.Sprint(second) || first[0] != "fixed" || first[3] != "q3" {
		t.Errorf("answers differ: %v vs %v", first, second)
	}
}

func TestSQLiteBackend(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "c.db"))
	b, err := cache.OpenSQLite(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.OpenSQLite(t.Context(), db); err != nil {
		t.Fatalf("second open: %v", err)
	}
	if _, ok, err := b.Get(t.Context(), "k"); ok || err != nil {
		t.Fatalf("empty get: %v %v", ok, err)
	}
	b.Put(t.Context(), "k", []byte("v1"))
	b.Put(t.Context(), "k", []byte("v2"))
	v, ok, err := b.Get(t.Context(), "k")
	if !ok || err != nil || string(v) != "v2" {
		t.Fatalf("get = %q %v %v", v, ok, err)
	}
	if n, _ := b.Len(t.Context()); n != 1 {
		t.Errorf("Len = %d", n)
	}
	if err := b.Clear(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Len(t.Context()); n != 0 {
		t.Errorf("Len after Clear = %d", n)
	}
	if _, err := cache.OpenSQLite(t.Context(), nil); err == nil {
		t.Error("nil db accepted")
	}
	db.Close()
	if _, _, err := b.Get(t.Context(), "k"); err == nil {
		t.Error("get on closed db succeeded")
	}
}

// testForget checks that Cache.Forget drops exactly the entries whose
// reply holds a needle (any case), and that a forgotten reply is asked
// again.
func testForget(t *testing.T, b cache.Backend) {
	t.Helper()
	ctx := t.Context()
	calls := 0
	inner := llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		calls++
		return llm.Response{Content: "reply to " + req.Messages[0].Content}, nil
	})
	c := cache.New(inner, b, cache.Options{Model: "m"})
	ask := func(s string) {
		t.Helper()
		if _, err := c.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: s}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"my password is Hunter2", "hiking trip", "bank hunter2 again", "tent"} {
		ask(s)
	}
	// More needles than one statement takes (the SQLite backend batches).
	needles := []string{""}
	for i := range 450 {
		needles = append(needles, fmt.Sprintf("absent%d", i))
	}
	n, err := c.Forget(ctx, append(needles, "hunter2"))
	if err != nil || n != 2 {
		t.Fatalf("Forget = %d, %v; want 2 entries dropped", n, err)
	}
	if n, err := c.Forget(ctx, []string{"hunter2"}); err != nil || n != 0 {
		t.Fatalf("second Forget = %d, %v; want 0", n, err)
	}
	calls = 0
	for _, s := range []string{"hiking trip", "tent", "my password is Hunter2"} {
		ask(s)
	}
	if calls != 1 {
		t.Errorf("after Forget: %d calls reached the model, want 1 (only the forgotten reply)", calls)
	}
}

func TestForget(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) { testForget(t, open()) })
	}
}
