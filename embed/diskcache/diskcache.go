// Package diskcache remembers an embedder's vectors on disk, so that a
// rerun (a resumed eval, a research loop over the same conversations)
// embeds no text twice.
//
// A cache is one file per model under a directory, named after the
// model's ID ("minilm:e5-small-v2:512" is minilm_e5-small-v2_512.vec). The
// file is append-only and made of fixed-size records: the SHA-256 of
// model ID + "\x00" + kind + "\x00" + text (kind is "passage" for Embed
// and "query" for EmbedQuery), then the Dim() float32s of the vector, little
// endian. A torn last record (a write cut short) is dropped, and cut off
// the file, when the cache is opened. Processes that share a directory
// lock the file around their reads and writes where the system has
// flock(2); each sees the others' vectors from its next Open.
package diskcache

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
	"slices"
	"strings"
	"sync"

	"github.com/higmem/higmem/embed"
)

// Kinds of vector, part of each record's key: a QueryEmbedder's model
// embeds a question ("query") differently from a stored text ("passage").
const (
	KindPassage = "passage"
	KindQuery   = "query"
)

// batch is how many missing texts are embedded and written at once, so
// that an interrupted run keeps most of its work.
const batch = 256

// Cache remembers the vectors of one model in one file. Its methods are
// safe for concurrent use. Embed through the embedder its Embedder method
// returns.
type Cache struct {
	model embed.Embedder
	path  string
	rec   int64 // bytes per record

	mu     sync.Mutex // guards everything below
	vecs   map[[32]byte][]float32
	f      *os.File
	werr   error // the first failed write: the file is no longer written
	hits   int
	misses int
}

// FileName is the name of the file that holds the vectors of the model
// with the given ID.
func FileName(modelID string) string {
	return strings.NewReplacer("/", "_", ":", "_", `\`, "_").Replace(modelID) + ".vec"
}

// Open opens the cache of model under dir (creating both if need be) and
// reads the vectors it holds.
func Open(dir string, model embed.Embedder) (*Cache, error) {
	if model.Dim() <= 0 {
		return nil, fmt.Errorf("diskcache: %s has dimension %d", model.ID(), model.Dim())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cache{
		model: model, path: filepath.Join(dir, FileName(model.ID())),
		rec: int64(32 + 4*model.Dim()), vecs: map[[32]byte][]float32{},
	}
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := c.load(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("diskcache: %s: %w", c.path, err)
	}
	c.f = f
	return c, nil
}

// load reads f's records under the file lock and cuts off a torn last
// record, so that the records appended next start on a record boundary.
func (c *Cache) load(f *os.File) error {
	unlock, err := lock(f)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	dim := c.model.Dim()
	buf := make([]byte, c.rec)
	var good int64
	for {
		_, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return f.Truncate(good) // a torn last record is dropped
		}
		if err != nil {
			return err
		}
		var k [32]byte
		copy(k[:], buf)
		v := make([]float32, dim)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[32+4*i:]))
		}
		c.vecs[k] = v
		good += c.rec
	}
}

// Path is the file that holds the vectors.
func (c *Cache) Path() string { return c.path }

// Len is the number of vectors the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

// Stats returns how many texts were found in the cache (hits) and how
// many were embedded by the model and added to it (misses) since Open.
func (c *Cache) Stats() (hits, misses int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// Close closes the file. The cache must not be used afterwards.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// Embedder returns the model behind the cache: an embed.Embedder with the
// model's ID and Dim whose Embed answers from the cache and embeds (and
// adds) only the texts it lacks. It is an embed.QueryEmbedder exactly
// when the model is one, whose EmbedQuery is the model's (e5's "query: "
// still reaches it), cached apart from Embed's vectors.
func (c *Cache) Embedder() embed.Embedder {
	w := cached{c}
	qe, ok := c.model.(embed.QueryEmbedder)
	if !ok {
		return w
	}
	return embed.KeepQuery(w, c.model, func(ctx context.Context, texts []string) ([][]float32, error) {
		return c.embed(ctx, KindQuery, texts, qe.EmbedQuery)
	})
}

// cached is the passage side of a Cache's Embedder.
type cached struct{ c *Cache }

func (w cached) Dim() int   { return w.c.model.Dim() }
func (w cached) ID() string { return w.c.model.ID() }
func (w cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return w.c.embed(ctx, KindPassage, texts, w.c.model.Embed)
}

// Key is the key of the record of text embedded as kind by the model
// with the given ID.
func Key(modelID, kind, text string) [32]byte {
	return sha256.Sum256([]byte(modelID + "\x00" + kind + "\x00" + text))
}

// embed returns the cached vectors of texts and embeds the others (each
// distinct text once) with fn, in batches, adding them to the file after
// each batch.
func (c *Cache) embed(ctx context.Context, kind string, texts []string,
	fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	id := c.model.ID()
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var miss []int // the first index of each distinct missing text
	seen := map[[32]byte]bool{}
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = Key(id, kind, t)
		if v, ok := c.vecs[keys[i]]; ok {
			out[i] = slices.Clone(v)
			c.hits++
		} else if !seen[keys[i]] {
			seen[keys[i]] = true
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	for len(miss) > 0 {
		part := miss[:min(batch, len(miss))]
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
			return nil, fmt.Errorf("diskcache: %s returned %d vectors for %d texts", id, len(vs), len(mt))
		}
		if err := c.add(keys, part, vs); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range texts {
		if out[i] == nil { // a missing text, or a repeat of one
			out[i] = slices.Clone(c.vecs[keys[i]])
		}
	}
	return out, nil
}

// add remembers vs, the vectors of the texts whose keys are keys[part[j]],
// and appends those the cache did not hold to the file in one write.
func (c *Cache) add(keys [][32]byte, part []int, vs [][]float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	dim := c.model.Dim()
	buf := make([]byte, 0, int64(len(part))*c.rec)
	for j, i := range part {
		if len(vs[j]) != dim {
			return fmt.Errorf("diskcache: %s returned a vector of %d dimensions, not %d", c.model.ID(), len(vs[j]), dim)
		}
		k := keys[i]
		if _, ok := c.vecs[k]; ok {
			continue // embedded meanwhile by another call
		}
		c.vecs[k] = slices.Clone(vs[j])
		c.misses++
		buf = append(buf, k[:]...)
		for _, x := range vs[j] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
	}
	if len(buf) == 0 {
		return nil
	}
	if c.werr != nil {
		return c.werr
	}
	if c.f == nil {
		return fmt.Errorf("diskcache: %s: cache is closed", c.path)
	}
	if c.werr = c.write(buf); c.werr != nil {
		c.werr = fmt.Errorf("diskcache: %s: %w", c.path, c.werr)
	}
	return c.werr
}

// write appends buf to the file under the file lock.
func (c *Cache) write(buf []byte) error {
	unlock, err := lock(c.f)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = c.f.Write(buf)
	return err
}
