package diskcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
)

// model is a test embedder that counts the texts it embeds. With query
// set it is a QueryEmbedder that, as e5 does, prefixes a question with
// "query: ".
type model struct {
	h       embed.Embedder
	mu      sync.Mutex
	embeds  []string
	queries []string
}

func newModel() *model { return &model{h: hashing.New(16)} }

func (m *model) Dim() int   { return 16 }
func (m *model) ID() string { return "test:model/16" }

func (m *model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	m.embeds = append(m.embeds, texts...)
	m.mu.Unlock()
	return m.h.Embed(ctx, texts)
}

func (m *model) calls() (embeds, queries []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.embeds), slices.Clone(m.queries)
}

// queryModel is a model with a query embedding.
type queryModel struct{ *model }

func (m queryModel) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	m.mu.Lock()
	m.queries = append(m.queries, texts...)
	m.mu.Unlock()
	q := make([]string, len(texts))
	for i, s := range texts {
		q[i] = "query: " + s
	}
	return m.h.Embed(ctx, q)
}

func open(t *testing.T, dir string, m embed.Embedder) *Cache {
	t.Helper()
	c, err := Open(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// check fails unless got holds, for each text, the vector m.h gives it
// (after prefix).
func check(t *testing.T, m *model, prefix string, texts []string, got [][]float32) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, s := range texts {
		want, _ := m.h.Embed(context.Background(), []string{prefix + s})
		if !slices.Equal(got[i], want[0]) {
			t.Fatalf("vector of %q is not the model's", s)
		}
	}
}

func TestHitsAndMisses(t *testing.T) {
	ctx := context.Background()
	m := newModel()
	c := open(t, t.TempDir(), m)
	e := c.Embedder()
	if e.ID() != m.ID() || e.Dim() != m.Dim() {
		t.Fatalf("ID, Dim = %q, %d; want the model's %q, %d", e.ID(), e.Dim(), m.ID(), m.Dim())
	}
	texts := []string{"a", "b", "a"}
	got, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	check(t, m, "", texts, got)
	if embeds, _ := m.calls(); !slices.Equal(embeds, []string{"a", "b"}) {
		t.Fatalf("model embedded %q; want each missing text once", embeds)
	}
	got, err = e.Embed(ctx, []string{"b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, m, "", []string{"b", "c"}, got)
	if embeds, _ := m.calls(); !slices.Equal(embeds, []string{"a", "b", "c"}) {
		t.Fatalf("model embedded %q; want a cached text not embedded again", embeds)
	}
	if h, mi := c.Stats(); h != 1 || mi != 3 || c.Len() != 3 {
		t.Fatalf("hits %d, misses %d, len %d; want 1, 3, 3", h, mi, c.Len())
	}
	got[0][0] = 42 // a caller's vector is its own
	again, _ := e.Embed(ctx, []string{"b"})
	check(t, m, "", []string{"b"}, again)
}

func TestReopenReadsTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	texts := []string{"one", "two", "three"}
	c := open(t, dir, newModel())
	if _, err := c.Embedder().Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m := newModel()
	c = open(t, dir, m)
	if c.Len() != 3 {
		t.Fatalf("reopened cache holds %d vectors; want 3", c.Len())
	}
	got, err := c.Embedder().Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	check(t, m, "", texts, got)
	if embeds, _ := m.calls(); len(embeds) != 0 {
		t.Fatalf("reopened cache embedded %q again", embeds)
	}
	if c.Path() != filepath.Join(dir, "test_model_16.vec") {
		t.Errorf("path %s", c.Path())
	}
}

func TestTornLastRecordIsDropped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := open(t, dir, newModel())
	for _, s := range []string{"one", "two", "three"} { // one write each
		if _, err := c.Embedder().Embed(ctx, []string{s}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	rec := int64(32 + 4*16)
	if err := os.Truncate(c.Path(), 3*rec-5); err != nil { // "three" torn
		t.Fatal(err)
	}
	m := newModel()
	c = open(t, dir, m)
	if c.Len() != 2 {
		t.Fatalf("cache with a torn last record holds %d vectors; want 2", c.Len())
	}
	if fi, err := os.Stat(c.Path()); err != nil || fi.Size() != 2*rec {
		t.Fatalf("torn record not cut off the file: %v, %v", fi.Size(), err)
	}
	texts := []string{"one", "two", "three"}
	if _, err := c.Embedder().Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if embeds, _ := m.calls(); !slices.Equal(embeds, []string{"three"}) {
		t.Fatalf("model embedded %q; want only the torn text", embeds)
	}
	c.Close()
	// The record appended after the cut is whole and where it belongs.
	m = newModel()
	c = open(t, dir, m)
	got, err := c.Embedder().Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	check(t, m, "", texts, got)
	if embeds, _ := m.calls(); len(embeds) != 0 || c.Len() != 3 {
		t.Fatalf("after the repair: %d vectors, embedded %q; want 3, none", c.Len(), embeds)
	}
}

func TestQueriesAndPassagesApart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := newModel()
	c := open(t, dir, queryModel{m})
	e, ok := c.Embedder().(embed.QueryEmbedder)
	if !ok {
		t.Fatal("the cache hides its model's query embedding")
	}
	text := []string{"when did she move?"}
	for range 2 { // the second from the cache
		q, err := e.EmbedQuery(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		check(t, m, "query: ", text, q)
		p, err := e.Embed(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		check(t, m, "", text, p)
	}
	embeds, queries := m.calls()
	if !slices.Equal(embeds, text) || !slices.Equal(queries, text) {
		t.Fatalf("model embedded %q as passages and %q as queries; want each once", embeds, queries)
	}
	c.Close()
	m2 := newModel()
	c = open(t, dir, queryModel{m2})
	e = c.Embedder().(embed.QueryEmbedder)
	q, _ := e.EmbedQuery(ctx, text)
	p, _ := e.Embed(ctx, text)
	check(t, m2, "query: ", text, q)
	check(t, m2, "", text, p)
	if embeds, queries := m2.calls(); len(embeds)+len(queries) != 0 || c.Len() != 2 {
		t.Fatalf("reopened: %d vectors, embedded %q and %q", c.Len(), embeds, queries)
	}

	plain := open(t, t.TempDir(), newModel())
	if _, ok := plain.Embedder().(embed.QueryEmbedder); ok {
		t.Error("the cache claims a query embedding its model does not have")
	}
}

// TestFileFormat pins the records to the research loop's format, so that
// its cache files are read as they are.
func TestFileFormat(t *testing.T) {
	dir := t.TempDir()
	m := newModel()
	c := open(t, dir, queryModel{m})
	e := c.Embedder().(embed.QueryEmbedder)
	p, _ := e.Embed(context.Background(), []string{"x"})
	q, _ := e.EmbedQuery(context.Background(), []string{"x"})
	c.Close()
	var want bytes.Buffer
	for _, r := range []struct {
		key string
		vec []float32
	}{{"test:model/16\x00passage\x00x", p[0]}, {"test:model/16\x00query\x00x", q[0]}} {
		k := sha256.Sum256([]byte(r.key))
		want.Write(k[:])
		for _, x := range r.vec {
			want.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "test_model_16.vec"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("file is not the research cache's format:\n got %x\nwant %x", got, want.Bytes())
	}
	if FileName("minilm:e5-small-v2:512:int8") != "minilm_e5-small-v2_512_int8.vec" {
		t.Errorf("FileName = %s", FileName("minilm:e5-small-v2:512:int8"))
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := newModel()
	c := open(t, dir, queryModel{m})
	e := c.Embedder().(embed.QueryEmbedder)
	var texts []string
	for i := range 600 { // more than a batch
		texts = append(texts, fmt.Sprint("text ", i%300))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := texts[g*50:]
			var got [][]float32
			var err error
			prefix := ""
			if g%2 == 0 {
				got, err = e.Embed(ctx, part)
			} else {
				got, err = e.EmbedQuery(ctx, part)
				prefix = "query: "
			}
			if err != nil {
				errs <- err
				return
			}
			for i, s := range part {
				want, _ := m.h.Embed(ctx, []string{prefix + s})
				if !slices.Equal(got[i], want[0]) {
					errs <- fmt.Errorf("goroutine %d: wrong vector for %q", g, s)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.Len() != 600 {
		t.Fatalf("%d vectors; want 300 passages and 300 queries", c.Len())
	}
	c.Close()
	c = open(t, dir, queryModel{newModel()})
	if c.Len() != 600 {
		t.Fatalf("reopened: %d vectors; want 600", c.Len())
	}
}

func TestWrongDimensionIsAnError(t *testing.T) {
	c := open(t, t.TempDir(), short{newModel()})
	if _, err := c.Embedder().Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("a vector of the wrong length was cached")
	}
}

// short claims more dimensions than it gives.
type short struct{ *model }

func (s short) Dim() int { return 17 }
