package jsonx

import (
	"encoding/json"
	"sync"
)

// schemaCacheSize bounds the compiled schemas kept. A program validates
// against a few dozen distinct schemas (one per prompt kind and variant);
// the bound only matters for a caller that sends a new schema every time,
// whose entries then cycle out.
const schemaCacheSize = 128

// schemas caches compiled schemas by their text: every model reply is
// validated, and most against the same few schemas, so compiling each
// once saves decoding the schema document per call. A compiled *schema is
// never changed after compileSchema returns, so one may serve concurrent
// calls.
var schemas = schemaCache{m: map[string]*schema{}}

// schemaCache is a bounded map from schema text to its compiled form.
// When full, the oldest entry is dropped (insertion order: the schemas in
// use are re-added on their next call).
type schemaCache struct {
	mu    sync.Mutex
	m     map[string]*schema
	order []string // keys, oldest first
}

// compiled returns the compiled form of doc, compiling it on first use.
// Errors are not cached: a bad schema is a programming error, reported
// every time.
func (c *schemaCache) compiled(doc json.RawMessage) (*schema, error) {
	c.mu.Lock()
	s, ok := c.m[string(doc)] // no copy of doc for the lookup
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileSchema(doc)
	if err != nil {
		return nil, err
	}
	key := string(doc)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		return old, nil // compiled concurrently
	}
	if len(c.order) >= schemaCacheSize {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[key] = s
	c.order = append(c.order, key)
	return s, nil
}

// len returns the number of schemas kept.
func (c *schemaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
