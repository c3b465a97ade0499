package cache

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/higmem/higmem/llm"
)

// ErrCassetteMiss is returned by a replaying cassette for a request it has
// no recorded response for: the prompts changed since the recording (record
// again against the server), or the code asks something new.
var ErrCassetteMiss = errors.New("cache: request not in cassette")

// Cassette is a Backend kept in a file: the recorded responses of a real
// model server, keyed like every cache entry by the request's hash, one
// JSON object per line, sorted by key so that a re-recording diffs well.
// Committed as test data, it lets CI replay what a real server answered
// without the server (see Replay). Only responses are stored, with the
// operation that asked (for people reading a miss), not the prompts, so a
// LoCoMo slice is a few hundred KB.
//
// Record with a Cache over a Cassette in front of the real client, then
// Save; replay with Replay. Safe for concurrent use.
type Cassette struct {
	path string

	mu      sync.Mutex
	entries map[string]cassetteLine
	dirty   bool
}

// cassetteLine is one line of a cassette file.
type cassetteLine struct {
	Key   string          `json:"key"`
	Op    string          `json:"op,omitempty"`
	Value json.RawMessage `json:"value"`
}

// OpenCassette reads the cassette at path; a missing file is an empty
// cassette (Save creates it).
func OpenCassette(path string) (*Cassette, error) {
	c := &Cassette{path: path, entries: map[string]cassetteLine{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, errorf("cassette: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var l cassetteLine
		if err := json.Unmarshal(line, &l); err != nil || l.Key == "" || !json.Valid(l.Value) {
			return nil, errorf("cassette %s line %d: not an entry", path, n)
		}
		c.entries[l.Key] = l
	}
	if err := sc.Err(); err != nil {
		return nil, errorf("cassette %s: %w", path, err)
	}
	return c, nil
}

// Get implements Backend.
func (c *Cassette) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.entries[key]
	return bytes.Clone(l.Value), ok, nil
}

// Put implements Backend.
func (c *Cassette) Put(ctx context.Context, key string, value []byte) error {
	return c.PutOp(ctx, key, "", value)
}

// PutOp stores value under key, labelled with the operation that asked.
// Cache calls it instead of Put when its backend has it.
func (c *Cassette) PutOp(_ context.Context, key, op string, value []byte) error {
	if !json.Valid(value) {
		return errorf("cassette: value for %s is not JSON", key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = cassetteLine{Key: key, Op: op, Value: bytes.Clone(value)}
	c.dirty = true
	return nil
}

// Len returns the number of recorded responses.
func (c *Cassette) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Save writes the cassette to its file (sorted by key, atomically) when it
// changed.
func (c *Cassette) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	keys := make([]string, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, k := range keys {
		if err := enc.Encode(c.entries[k]); err != nil {
			return errorf("cassette: %w", err)
		}
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return errorf("cassette: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return errorf("cassette: %w", err)
	}
	c.dirty = false
	return nil
}

// Replay returns a model answering from the cassette at path only: a
// request it holds gets the recorded response (Cached set, with the
// recorded usage, finish reason and request count); any other fails with
// ErrCassetteMiss, naming the operation. model is the model name the
// recording was keyed with.
func Replay(path, model string) (*Cache, error) {
	c, err := OpenCassette(path)
	if err != nil {
		return nil, err
	}
	miss := llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{}, fmt.Errorf("%w: %s (key %s) in %s", ErrCassetteMiss, req.Operation, Key(model, req), path)
	})
	return New(miss, c, Options{Model: model}), nil
}

// Record returns a cache in front of inner that adds every new response
// to the cassette at path (Save it when done) and answers known requests
// from it, so an interrupted recording resumes.
func Record(inner llm.Model, path, model string) (*Cache, *Cassette, error) {
	c, err := OpenCassette(path)
	if err != nil {
		return nil, nil, err
	}
	return New(inner, c, Options{Model: model}), c, nil
}
