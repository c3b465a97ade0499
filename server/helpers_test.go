package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
)

// Test keys: alice may use "alice", bob "bob", admin every user.
var (
	aliceKey, bobKey, adminKey string
	testKeys                   *Keys
)

func init() {
	var ks KeysFile
	for _, k := range []struct {
		secret *string
		name   string
		users  []string
	}{{&aliceKey, "alice-key", []string{"alice"}}, {&bobKey, "bob-key", []string{"bob"}}, {&adminKey, "admin", []string{AllUsers}}} {
		secret, key, err := NewKey(k.name, k.users)
		if err != nil {
			panic(err)
		}
		*k.secret = secret
		ks.Keys = append(ks.Keys, key)
	}
	b, _ := json.Marshal(ks)
	var err error
	if testKeys, err = ParseKeys(b); err != nil {
		panic(err)
	}
}

// newMem opens an in-memory memory (offline mode with the hashing embedder
// unless opts say otherwise) closed at the end of the test.
func newMem(t *testing.T, opts higmem.Options) *higmem.Memory {
	t.Helper()
	if opts.Embedder == nil {
		opts.Embedder = hashing.New(0)
	}
	m, err := higmem.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// patterns records the mux patterns that served requests.
type patterns struct {
	mu   sync.Mutex
	seen map[string]int
}

func (p *patterns) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.seen == nil {
			p.seen = map[string]int{}
		}
		p.seen[r.Pattern]++
	})
}

// start serves mem with keys (unless opts set NoAuth) on an httptest
// server, shut down at the end of the test.
func start(t *testing.T, mem *higmem.Memory, opts Options) (*Server, *httptest.Server, *patterns) {
	t.Helper()
	if !opts.NoAuth && opts.Keys == nil {
		opts.Keys = testKeys
	}
	s := New(mem, opts)
	pats := &patterns{}
	ts := httptest.NewServer(pats.wrap(s))
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background()) // closes MCP streams first
		ts.Close()
	})
	return s, ts, pats
}

func statusOf(err error) (int, string) {
	if se, ok := err.(*api.StatusError); ok {
		return se.StatusCode, se.Code
	}
	return 0, ""
}

// httptestPlain serves a plain-text 502, as a proxy in front of the server
// might.
func httptestPlain(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}
