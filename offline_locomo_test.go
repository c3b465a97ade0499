package higmem

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
)

// TestOfflineLoCoMo measures offline retrieval (no LLM) on the LoCoMo dev
// conversations: evidence recall and precision at the K actually returned,
// per category, with the recall of each trace stage, for BM25 only and for
// BM25 + all-MiniLM-L6-v2. It measures; it gates only against a broken
// pipeline. It is skipped unless HIGMEM_LOCOMO=1:
//
//	HIGMEM_LOCOMO=1 go test -run TestOfflineLoCoMo -v -timeout 20m .
//
// Environment:
//
//	HIGMEM_LOCOMO_DATA   the data file (default ../shared/data/locomo_dev.json)
//	HIGMEM_MODELS_DIR    the models root (default minilm.DefaultRoot())
//	HIGMEM_TEST_MODEL_DIR  a model directory to use instead of MiniLM's
//	                     (e.g. <root>/e5-small-v2; the CV harness reads it too)
//	HIGMEM_LOCOMO_EMBED  "bm25" or "minilm" to run one configuration only
//	HIGMEM_EMBED_CACHE   a file caching MiniLM vectors between runs
func TestOfflineLoCoMo(t *testing.T) {
	samples := loadLoCoMoDev(t, "HIGMEM_LOCOMO", "set HIGMEM_LOCOMO=1 to run the LoCoMo offline measurement")
	only := os.Getenv("HIGMEM_LOCOMO_EMBED")
	ctx := context.Background()
	if only == "" || only == "bm25" {
		rep := runLoCoMo(ctx, t, samples, nil)
		t.Logf("offline, BM25 only\n%s", rep)
		rep.sanity(t)
	}
	if only == "" || only == "minilm" {
		emb := loadMiniLMForTest(t)
		if emb == nil {
			return
		}
		cache := newCachedEmbedder(emb, os.Getenv("HIGMEM_EMBED_CACHE"))
		rep := runLoCoMo(ctx, t, samples, cache)
		if err := cache.save(); err != nil {
			t.Logf("embedding cache not saved: %v", err)
		}
		t.Logf("offline, BM25 + %s\n%s", emb.ID(), rep)
		rep.sanity(t)
	}
}

// loadMiniLMForTest loads all-MiniLM-L6-v2 (or the model in
// $HIGMEM_TEST_MODEL_DIR), or logs why not and returns nil.
func loadMiniLMForTest(t *testing.T) embed.Embedder {
	t.Helper()
	if e := ensembleForTest(t); e != nil {
		return e
	}
	if dir := os.Getenv("HIGMEM_TEST_MODEL_DIR"); dir != "" {
		m, err := minilm.Load(dir, minilm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		r, err := minilm.DefaultRoot()
		if err != nil {
			t.Logf("MiniLM run skipped: %v", err)
			return nil
		}
		root = r
	}
	m, err := minilm.Load(minilm.ModelDir(root), minilm.Options{})
	if err != nil {
		t.Logf("MiniLM run skipped: %v", err)
		return nil
	}
	return m
}

// cachedEmbedder memoises an embedder by text, optionally persisting the
// vectors in a gob file so that reruns embed nothing.
type cachedEmbedder struct {
	inner embed.Embedder
	path  string
	mu    sync.Mutex
	vecs  map[string][]float32
	dirty bool
}

func newCachedEmbedder(inner embed.Embedder, path string) *cachedEmbedder {
	c := &cachedEmbedder{inner: inner, path: path, vecs: map[string][]float32{}}
	if path == "" {
		return c
	}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	defer f.Close()
	var saved struct {
		ID   string
		Vecs map[string][]float32
	}
	if gob.NewDecoder(f).Decode(&saved) == nil && saved.ID == inner.ID() {
		c.vecs = saved.Vecs
	}
	return c
}

func (c *cachedEmbedder) Dim() int { return c.inner.Dim() }

func (c *cachedEmbedder) ID() string { return c.inner.ID() }

func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.cached(ctx, "", texts, c.inner.Embed)
}

// EmbedQuery caches the inner embedder's EmbedQuery when it has one (under
// keys of their own), else its Embed.
func (c *cachedEmbedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	if qe, ok := c.inner.(embed.QueryEmbedder); ok {
		return c.cached(ctx, "\x00query\x00", texts, qe.EmbedQuery)
	}
	return c.Embed(ctx, texts)
}

// cached returns the vectors of texts under keys prefixed by kind, calling
// fn for those not cached yet.
func (c *cachedEmbedder) cached(ctx context.Context, kind string, texts []string, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	seen := map[string]bool{}
	c.mu.Lock()
	for i, s := range texts {
		if v, ok := c.vecs[kind+s]; ok {
			out[i] = slices.Clone(v)
		} else if !seen[s] {
			seen[s] = true
			miss = append(miss, s)
		}
	}
	c.mu.Unlock()
	if len(miss) > 0 {
		vs, err := fn(ctx, miss)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		for i, s := range miss {
			c.vecs[kind+s] = slices.Clone(vs[i])
		}
		c.dirty = true
		for i, s := range texts {
			if out[i] == nil {
				out[i] = slices.Clone(c.vecs[kind+s])
			}
		}
		c.mu.Unlock()
	}
	return out, nil
}

func (c *cachedEmbedder) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return nil
	}
	f, err := os.Create(c.path)
	if err != nil {
		return err
	}
	err = gob.NewEncoder(f).Encode(struct {
		ID   string
		Vecs map[string][]float32
	}{c.inner.ID(), c.vecs})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// locomoStages are the trace stages whose recall is reported.
var locomoStages = [...]string{"search", "final"}

// locomoCell accumulates the scores of one question category.
type locomoCell struct {
	n          int
	r, p, k    float64
	stageR     [len(locomoStages)]float64
	stageK     [len(locomoStages)]float64
	recallHits int // questions with every gold turn found
}

// locomoReport is the outcome of one run over the dev set.
type locomoReport struct {
	cells [6]locomoCell // by category; 0 unused
	sizes []int         // event sizes
	// multiSession counts events with turns from more than one session.
	multiSession int
	turns        int
	buildTime    time.Duration
	askTime      time.Duration
	calls        int
}

// ingestLoCoMo adds a sample to its own space, one Add per session.
func ingestLoCoMo(ctx context.Context, m *Memory, s *locomo.Sample) (Space, error) {
	sp := Space{UserID: s.ID}
	for _, sess := range s.Sessions {
		in := make([]TurnInput, 0, len(sess.Turns))
		for _, tr := range sess.Turns {
			ti := TurnInput{ID: tr.DiaID, SessionID: strconv.Itoa(sess.N), Speaker: tr.Speaker, Text: tr.Text, Time: sess.DateTime}
			if tr.Caption != "" {
				ti.Attachments = []Attachment{{Kind: "image", Caption: tr.Caption}}
			}
			in = append(in, ti)
		}
		res, err := m.Add(ctx, sp, in)
		if err != nil {
			return sp, err
		}
		if len(res.Calls) > 0 {
			return sp, fmt.Errorf("%d LLM calls while adding session %d", len(res.Calls), sess.N)
		}
	}
	return sp, nil
}

// runLoCoMo builds one offline memory per sample and retrieves every
// question with evidence.
func runLoCoMo(ctx context.Context, t *testing.T, samples []locomo.Sample, emb embed.Embedder) *locomoReport {
	t.Helper()
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rep := &locomoReport{}
	for i := range samples {
		s := &samples[i]
		start := time.Now()
		sp, err := ingestLoCoMo(ctx, m, s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		rep.buildTime += time.Since(start)
		rep.turns += len(s.Turns())
		evs, err := m.Events(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			rep.sizes = append(rep.sizes, len(e.Event.TurnIDs))
			sessions := map[string]bool{}
			for _, tr := range e.Turns {
				sessions[tr.SessionID] = true
			}
			if len(sessions) > 1 {
				rep.multiSession++
			}
		}
		start = time.Now()
		for _, q := range s.QA {
			if len(q.Evidence) == 0 || q.Category < 1 || q.Category > 5 {
				continue
			}
			res, err := m.Retrieve(ctx, sp, q.Question, RetrieveOptions{})
			if err != nil {
				t.Fatalf("%s: %q: %v", s.ID, q.Question, err)
			}
			rep.calls += len(res.Trace.Calls)
			rep.add(q, res)
		}
		rep.askTime += time.Since(start)
	}
	return rep
}

func (r *locomoReport) add(q locomo.QA, res *Result) {
	c := &r.cells[q.Category]
	c.n++
	p, rec := locomo.EvidenceScore(res.IDs(), q.Evidence)
	c.r += rec
	c.p += p
	c.k += float64(len(res.Evidence))
	if rec == 1 {
		c.recallHits++
	}
	for i, name := range locomoStages {
		ids := res.Trace.Stage(name)
		_, sr := locomo.EvidenceScore(ids, q.Evidence)
		c.stageR[i] += sr
		c.stageK[i] += float64(len(ids))
	}
}

// sum merges the cells of the given categories.
func (r *locomoReport) sum(cats ...int) locomoCell {
	var out locomoCell
	for _, c := range cats {
		x := r.cells[c]
		out.n += x.n
		out.r += x.r
		out.p += x.p
		out.k += x.k
		out.recallHits += x.recallHits
		for i := range out.stageR {
			out.stageR[i] += x.stageR[i]
			out.stageK[i] += x.stageK[i]
		}
	}
	return out
}

// overall returns recall, precision and mean K over categories 1-5.
func (r *locomoReport) overall() (rec, p, k float64) {
	c := r.sum(1, 2, 3, 4, 5)
	n := float64(max(c.n, 1))
	return c.r / n, c.p / n, c.k / n
}

func (r *locomoReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| questions | n | R | P | avg K | all found |")
	for _, name := range locomoStages {
		fmt.Fprintf(&b, " R %s (K) |", name)
	}
	fmt.Fprintf(&b, "\n|---|---:|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", len(locomoStages)))
	row := func(label string, c locomoCell) {
		n := float64(max(c.n, 1))
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.2f | %.3f |", label, c.n, c.r/n, c.p/n, c.k/n, float64(c.recallHits)/n)
		for i := range locomoStages {
			fmt.Fprintf(&b, " %.3f (%.1f) |", c.stageR[i]/n, c.stageK[i]/n)
		}
		b.WriteByte('\n')
	}
	row("cats 1-5", r.sum(1, 2, 3, 4, 5))
	row("cats 1-4", r.sum(1, 2, 3, 4))
	for c := 1; c <= 5; c++ {
		row(fmt.Sprintf("%d %s", c, locomo.CategoryName(c)), r.cells[c])
	}
	fmt.Fprintf(&b, "\nevents: %s; %d span several sessions\n", sizeDistribution(r.sizes), r.multiSession)
	fmt.Fprintf(&b, "turns %d, build %s, retrieval %s, LLM calls %d\n", r.turns,
		r.buildTime.Round(time.Millisecond), r.askTime.Round(time.Millisecond), r.calls)
	return b.String()
}

// sanity fails the test on a broken pipeline (not on quality).
func (r *locomoReport) sanity(t *testing.T) {
	t.Helper()
	rec, _, k := r.overall()
	if r.calls != 0 {
		t.Errorf("offline retrieval made %d LLM calls", r.calls)
	}
	if rec < 0.3 || k == 0 {
		t.Errorf("recall %.3f at K %.2f: implausibly low, pipeline broken", rec, k)
	}
}

// sizeDistribution summarises event sizes: count, mean, median, max, and
// how many events fall in each size bucket.
func sizeDistribution(sizes []int) string {
	if len(sizes) == 0 {
		return "none"
	}
	s := slices.Clone(sizes)
	slices.Sort(s)
	total := 0
	for _, x := range s {
		total += x
	}
	buckets := []struct {
		lo, hi int
	}{{1, 1}, {2, 2}, {3, 5}, {6, 10}, {11, 20}, {21, 40}, {41, 1 << 30}}
	var parts []string
	for _, bk := range buckets {
		n := 0
		for _, x := range s {
			if x >= bk.lo && x <= bk.hi {
				n++
			}
		}
		label := fmt.Sprintf("%d-%d", bk.lo, bk.hi)
		switch {
		case bk.lo == bk.hi:
			label = strconv.Itoa(bk.lo)
		case bk.hi == 1<<30:
			label = fmt.Sprintf("%d+", bk.lo)
		}
		parts = append(parts, fmt.Sprintf("%s: %d", label, n))
	}
	return fmt.Sprintf("%d events, mean %.1f, median %d, max %d turns; sizes %s",
		len(s), float64(total)/float64(len(s)), s[len(s)/2], s[len(s)-1], strings.Join(parts, ", "))
}

// loadLoCoMoDev skips the test unless the environment variable flag is "1"
// (saying why in skip), and loads the LoCoMo dev file (HIGMEM_LOCOMO_DATA,
// default ../shared/data/locomo_dev.json), skipping when it is missing.
func loadLoCoMoDev(t *testing.T, flag, skip string) []locomo.Sample {
	t.Helper()
	if os.Getenv(flag) != "1" {
		t.Skip(skip)
	}
	path := os.Getenv("HIGMEM_LOCOMO_DATA")
	if path == "" {
		path = filepath.Join("..", "shared", "data", "locomo_dev.json")
	}
	samples, err := locomo.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("LoCoMo data not found at %s", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return samples
}
