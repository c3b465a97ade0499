package shapes

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/higmem/higmem/embed"
)

// Cache is an embed.QueryEmbedder that remembers every vector its model
// made, on disk: a file per model under a directory, of records (the
// SHA-256 of the model id, the prompt kind and the text, then the vector).
// A rerun over the same conversations embeds nothing. Its ID is the
// model's, so that the engine stores and reads its vectors as the model's.
type Cache struct {
	model embed.QueryEmbedder
	path  string

	// AsID, when set, is the ID the cache reports (the engine's key for
	// the learned stage): the research loop embeds with e5-small-v2 in
	// int8 (cosine 0.999 with float32's vectors, 1.8× as fast) and lets
	// the engine take it for float32's.
	AsID string

	mu     sync.Mutex
	vecs   map[[32]byte][]float32
	f      *os.File
	Hits   int
	Misses int
}

var _ embed.QueryEmbedder = (*Cache)(nil)

// OpenCache opens (or creates) the cache of model under dir.
func OpenCache(dir string, model embed.QueryEmbedder) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := strings.NewReplacer("/", "_", ":", "_").Replace(model.ID()) + ".vec"
	c := &Cache{model: model, path: filepath.Join(dir, name), vecs: map[[32]byte][]float32{}}
	if err := c.load(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	c.f = f
	return c, nil
}

func (c *Cache) load() error {
	f, err := os.Open(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	dim := c.model.Dim()
	buf := make([]byte, 32+4*dim)
	for {
		if _, err := io.ReadFull(r, buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil // a torn last record is dropped
			}
			return err
		}
		var k [32]byte
		copy(k[:], buf)
		v := make([]float32, dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[32+4*i:]))
		}
		c.vecs[k] = v
	}
}

// Close closes the cache file.
func (c *Cache) Close() error { return c.f.Close() }

// Len is the number of vectors cached.
func (c *Cache) Len() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.vecs) }

func (c *Cache) Dim() int { return c.model.Dim() }
func (c *Cache) ID() string {
	if c.AsID != "" {
		return c.AsID
	}
	return c.model.ID()
}

func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, "passage", texts, c.model.Embed)
}

func (c *Cache) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, "query", texts, c.model.EmbedQuery)
}

func (c *Cache) key(kind, text string) [32]byte {
	return sha256.Sum256([]byte(c.model.ID() + "\x00" + kind + "\x00" + text))
}

// embedBatch is how many missing texts are embedded and written at once, so
// that an interrupted run keeps most of its work.
const embedBatch = 256

func (c *Cache) embed(ctx context.Context, kind string, texts []string, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.vecs[c.key(kind, t)]; ok {
			out[i] = append([]float32(nil), v...)
			c.Hits++
		} else {
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	for len(miss) > 0 {
		part := miss[:min(embedBatch, len(miss))]
		miss = miss[len(part):]
		mt := make([]string, len(part))
		for j, i := range part {
			mt[j] = texts[i]
		}
		vs, err := fn(ctx, mt)
		if err != nil {
			return nil, err
		}
		if len(vs) != len(mt) {
			return nil, fmt.Errorf("shapes: %d vectors for %d texts", len(vs), len(mt))
		}
		c.mu.Lock()
		rec := make([]byte, 0, len(part)*(32+4*c.model.Dim()))
		for j, i := range part {
			out[i] = vs[j]
			k := c.key(kind, mt[j])
			if _, ok := c.vecs[k]; ok {
				continue
			}
			c.vecs[k] = append([]float32(nil), vs[j]...)
			rec = append(rec, k[:]...)
			for _, x := range vs[j] {
				rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(x))
			}
			c.Misses++
		}
		_, err = c.f.Write(rec)
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
