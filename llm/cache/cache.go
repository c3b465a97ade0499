// Package cache wraps an llm.Model with a content-addressed response cache,
// so that re-running an evaluation costs nothing and returns bit-identical
// replies.
//
// A response is stored under the SHA-256 of the canonical JSON of what
// determines it: the model name, the messages, the schema, the temperature,
// the max tokens, the seed and the stop sequences. Request.Operation is only a label and is not
// part of the key. Only successful responses are stored. Responses served
// from the cache have Cached set and zero Latency.
//
// Backends are pluggable: Memory for tests and single runs, SQLite (a table
// in a database the caller opened) for reruns across processes, Postgres
// (a table in a PostgreSQL database) for every process sharing one.
package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/llm"
)

// Backend stores cache entries. Implementations must be safe for
// concurrent use.
type Backend interface {
	// Get returns the value stored under key; ok is false when there is
	// none.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Put stores value under key, replacing any previous value.
	Put(ctx context.Context, key string, value []byte) error
}

// Options configures a Cache.
type Options struct {
	// Model is the model name used in keys. When empty, the inner model's
	// ModelName() is used if it has that method (llm/openai clients do);
	// otherwise keys carry no model name, so do set it when one cache
	// backend serves several models.
	Model string
	// Logger receives backend failures, which are otherwise only counted:
	// a broken cache degrades to calling the model. Nil discards.
	Logger *slog.Logger
}

// Stats counts cache traffic.
type Stats struct {
	Hits   int64 // answered from the backend
	Misses int64 // sent to the inner model
	// BackendErrors counts failed Gets and Puts (each treated as a miss or
	// a skipped store).
	BackendErrors int64
}

// Cache is an llm.Model that answers from a Backend when it can and from
// the inner model otherwise. It is safe for concurrent use.
type Cache struct {
	inner   llm.Model
	backend Backend
	model   string
	log     *slog.Logger

	hits, misses, errs atomic.Int64
}

// forgetter is a Backend that can drop the entries holding a string.
type forgetter interface {
	Forget(ctx context.Context, needles []string) (int, error)
}

var _ llm.Forgetter = (*Cache)(nil)

// Forget implements llm.Forgetter: it drops the entries whose stored reply
// contains one of needles (ASCII letters compared case-insensitively),
// then forwards to the inner model when it is a Forgetter too (a cache in
// front of a cache). Keys are SHA-256 digests of the requests and hold no
// text; a backend that cannot search its entries (Cassette) drops nothing.
func (c *Cache) Forget(ctx context.Context, needles []string) (int, error) {
	var n int
	needles = slices.DeleteFunc(slices.Clone(needles), func(s string) bool { return s == "" })
	if len(needles) == 0 {
		return 0, nil
	}
	if f, ok := c.backend.(forgetter); ok {
		k, err := f.Forget(ctx, needles)
		if err != nil {
			return k, err
		}
		n += k
	}
	if f, ok := c.inner.(llm.Forgetter); ok {
		k, err := f.Forget(ctx, needles)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// opPutter is a Backend that also keeps the operation of an entry.
type opPutter interface {
	PutOp(ctx context.Context, key, op string, value []byte) error
}

// namer is implemented by models that know their name.
type namer interface{ ModelName() string }

// New returns a cache in front of inner, storing in backend.
func New(inner llm.Model, backend Backend, opts Options) *Cache {
	c := &Cache{inner: inner, backend: backend, model: opts.Model, log: opts.Logger}
	if c.model == "" {
		if n, ok := inner.(namer); ok {
			c.model = n.ModelName()
		}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// ModelName returns the model name used in keys.
func (c *Cache) ModelName() string { return c.model }

// Stats returns the counters so far.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), BackendErrors: c.errs.Load()}
}

// entry is what is stored for a response.
type entry struct {
	Content string    `json:"content"`
	Model   string    `json:"model"`
	Usage   llm.Usage `json:"usage"`
	// FinishReason and Requests are the original call's, so a replay
	// sees a cut reply as cut and counts what the work cost.
	FinishReason string `json:"finish_reason,omitempty"`
	Requests     int    `json:"requests,omitempty"`
}

// Complete answers req from the cache, or asks the inner model and stores
// a successful reply.
func (c *Cache) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	key := Key(c.model, req)
	if data, ok, err := c.backend.Get(ctx, key); err != nil {
		c.errs.Add(1)
		c.log.Warn("llm cache: get failed", "error", err)
	} else if ok {
		var e entry
		if err := json.Unmarshal(data, &e); err == nil {
			c.hits.Add(1)
			return llm.Response{Content: e.Content, Model: e.Model, Usage: e.Usage, Cached: true,
				FinishReason: e.FinishReason, Requests: e.Requests}, nil
		}
		c.errs.Add(1)
		c.log.Warn("llm cache: corrupt entry ignored", "key", key)
	}
	c.misses.Add(1)
	resp, err := c.inner.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	data, err := json.Marshal(entry{Content: resp.Content, Model: resp.Model, Usage: resp.Usage,
		FinishReason: resp.FinishReason, Requests: resp.Requests})
	if err == nil {
		if op, ok := c.backend.(opPutter); ok {
			err = op.PutOp(ctx, key, req.Operation, data)
		} else {
			err = c.backend.Put(ctx, key, data)
		}
	}
	if err != nil {
		c.errs.Add(1)
		c.log.Warn("llm cache: put failed", "error", err)
	}
	return resp, nil
}

// keyDoc is what a key hashes.
type keyDoc struct {
	Model    string          `json:"model"`
	Messages []llm.Message   `json:"messages"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	// Constraint is what the server was sent in place of Schema (it
	// shapes the reply of a server that enforces it); absent when none,
	// so keys of requests without one are unchanged.
	Constraint  json.RawMessage `json:"constraint,omitempty"`
	Temperature float64         `json:"temperature"`
	MaxTokens   int             `json:"max_tokens"`
	Seed        *int64          `json:"seed,omitempty"`
	Stop        []string        `json:"stop,omitempty"`
}

// Key returns the cache key of req for model: the hex SHA-256 of the
// canonical JSON of the model name, messages, schema and constraint
// (re-encoded with sorted keys, so formatting does not matter),
// temperature, max tokens and seed.
func Key(model string, req llm.Request) string {
	doc := keyDoc{
		Model:       model,
		Messages:    req.Messages,
		Schema:      canonicalJSON(req.Schema),
		Temperature: req.Temperature,
		MaxTokens:   req.MaxTokens,
		Seed:        req.Seed,
		Stop:        req.Stop,
	}
	if len(req.Schema) > 0 && len(req.Constraint) > 0 {
		doc.Constraint = canonicalJSON(req.Constraint)
	}
	if doc.Messages == nil {
		doc.Messages = []llm.Message{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Encoding cannot fail: canonicalJSON always yields valid JSON.
	_ = enc.Encode(doc)
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes a JSON document with sorted keys and no
// insignificant space; invalid JSON is returned as a JSON string of itself.
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		b, _ := json.Marshal(string(raw))
		return b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b, _ := json.Marshal(string(raw))
		return b
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Memory is an in-memory Backend.
type Memory struct {
	mu sync.RWMutex // guards m
	m  map[string][]byte
}

// NewMemory returns an empty in-memory backend.
func NewMemory() *Memory { return &Memory{m: map[string][]byte{}} }

// Get implements Backend.
func (b *Memory) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	v, ok := b.m[key]
	return bytes.Clone(v), ok, nil
}

// Put implements Backend.
func (b *Memory) Put(ctx context.Context, key string, value []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = bytes.Clone(value)
	return nil
}

// Forget drops the entries whose value contains one of needles, ASCII
// letters compared case-insensitively, and returns how many it dropped.
func (b *Memory) Forget(ctx context.Context, needles []string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for k, v := range b.m {
		if containsAnyFold(v, needles) {
			delete(b.m, k)
			n++
		}
	}
	return n, nil
}

// containsAnyFold reports whether v contains one of needles, ASCII letters
// compared case-insensitively (as SQL lower() does in SQLite).
func containsAnyFold(v []byte, needles []string) bool {
	lv := bytes.ToLower(v)
	for _, s := range needles {
		if bytes.Contains(lv, bytes.ToLower([]byte(s))) {
			return true
		}
	}
	return false
}

// Len returns the number of entries.
func (b *Memory) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.m)
}

// errorf formats a package error.
func errorf(format string, args ...any) error { return fmt.Errorf("cache: "+format, args...) }
