package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/diskcache"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
)

// recordingQueryModel embeds a question differently from a passage, as
// e5-small-v2 does ("query: " against "passage: "), and records which
// texts it was given by each method.
type recordingQueryModel struct {
	h       embed.Embedder
	mu      sync.Mutex
	embeds  map[string]bool
	queries map[string]bool
}

func newRecordingQueryModel() *recordingQueryModel {
	return &recordingQueryModel{h: hashing.New(64), embeds: map[string]bool{}, queries: map[string]bool{}}
}

func (r *recordingQueryModel) Dim() int   { return 64 }
func (r *recordingQueryModel) ID() string { return "recording-query-model" }

func (r *recordingQueryModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	for _, s := range texts {
		r.embeds[s] = true
	}
	r.mu.Unlock()
	return r.h.Embed(ctx, texts)
}

func (r *recordingQueryModel) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	for _, s := range texts {
		r.queries[s] = true
	}
	r.mu.Unlock()
	q := make([]string, len(texts))
	for i, s := range texts {
		q[i] = "query: " + s
	}
	return r.h.Embed(ctx, q)
}

// TestRunEmbedderKeepsQueryEmbedding: the run's embedder (the model
// behind the vector cache) gives a question the model's query vector (and
// remembers it apart from passages), and claims no query embedding for a
// model without one.
func TestRunEmbedderKeepsQueryEmbedding(t *testing.T) {
	ctx := context.Background()
	model := newRecordingQueryModel()
	vc, err := diskcache.Open(t.TempDir(), model)
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	memo := vc.Embedder()
	want, _ := model.EmbedQuery(ctx, []string{"when did she move?"})
	for range 2 { // the second is remembered
		got, err := embed.EmbedQuestions(ctx, memo, []string{"when did she move?"})
		if err != nil || len(got) != 1 || !slices.Equal(got[0], want[0]) {
			t.Fatalf("question vector through the vector cache is not the model's query vector (err %v)", err)
		}
	}
	passage, _ := model.Embed(ctx, []string{"when did she move?"})
	got, err := memo.Embed(ctx, []string{"when did she move?"})
	if err != nil || !slices.Equal(got[0], passage[0]) {
		t.Fatalf("a stored text's vector through the vector cache is not the model's Embed vector (err %v)", err)
	}
	plain, err := diskcache.Open(t.TempDir(), hashing.New(8))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, ok := plain.Embedder().(embed.QueryEmbedder); ok {
		t.Error("the vector cache claims a query embedding its model does not have")
	}
}

// TestResumedRunEmbedsNothingTwice: a run killed in the middle and
// resumed asks its model for no text (turn or question) the killed run had
// it embed: the vectors are in the run directory.
func TestResumedRunEmbedsNothingTwice(t *testing.T) {
	dir := t.TempDir()
	cfg := func(model embed.Embedder) Config {
		return Config{Data: miniData, Out: dir, Systems: []string{"offline", "hybrid-topk", "dense-topk"},
			Env: Env{Embedder: model, K: 3}}
	}
	first := newRecordingQueryModel()
	ctx, cancel := context.WithCancel(context.Background())
	c := cfg(first)
	n := 0
	c.OnRecord = func(QuestionRecord) {
		if n++; n == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	if len(first.embeds) == 0 || len(first.queries) == 0 {
		t.Fatalf("the interrupted run embedded %d texts and %d questions; want some of each", len(first.embeds), len(first.queries))
	}
	second := newRecordingQueryModel()
	var log strings.Builder
	c = cfg(second)
	c.Log = &log
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	// The resumed run rebuilt memories, from the cache.
	m := regexp.MustCompile(`vector cache \S+: (\d+) texts found`).FindStringSubmatch(log.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("the resumed run found no vector in the cache; its log:\n%s", log.String())
	}
	for s := range second.embeds {
		if first.embeds[s] {
			t.Errorf("the resumed run embedded %q again", s)
		}
	}
	for s := range second.queries {
		if first.queries[s] {
			t.Errorf("the resumed run embedded question %q again", s)
		}
	}
	rc, err := readConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, VectorsDir, diskcache.FileName(first.ID()))
	for _, inv := range rc.Invocations {
		if inv.VectorCache != want {
			t.Errorf("config.json records the vector cache %q; want %q", inv.VectorCache, want)
		}
	}
}

// TestRunsShareAVectorCache: a run given the vector cache of another
// (Config.VectorCache, --vector-cache) embeds nothing that one did.
func TestRunsShareAVectorCache(t *testing.T) {
	shared := t.TempDir()
	var models []*recordingQueryModel
	for range 2 {
		m := newRecordingQueryModel()
		models = append(models, m)
		_, err := Run(context.Background(), Config{
			Data: miniData, Out: t.TempDir(), VectorCache: shared,
			Systems: []string{"offline", "dense-topk"}, Env: Env{Embedder: m, K: 3},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(models[0].embeds) == 0 {
		t.Fatal("the first run embedded nothing")
	}
	if len(models[1].embeds)+len(models[1].queries) != 0 {
		t.Fatalf("the second run embedded %d texts and %d questions; want none (all in the shared cache)",
			len(models[1].embeds), len(models[1].queries))
	}
	if _, err := os.Stat(filepath.Join(shared, diskcache.FileName(models[0].ID()))); err != nil {
		t.Fatal(err)
	}
}

// TestEvalEmbedsQuestionsAsQueries: in an eval run, every system that
// embeds a question (the engine's offline mode and hybrid search, and the
// dense baseline) embeds it with the model's EmbedQuery, never as a
// passage: with e5-small-v2 the question gets "query: ".
func TestEvalEmbedsQuestionsAsQueries(t *testing.T) {
	model := newRecordingQueryModel()
	_, err := Run(context.Background(), Config{
		Data: miniData, Out: t.TempDir(),
		Systems: []string{"offline", "hybrid-topk", "dense-topk"},
		Env:     Env{Embedder: model, K: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	samples, err := locomo.Load(miniData)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range samples {
		for _, q := range s.QA {
			n++
			if !model.queries[q.Question] {
				t.Errorf("%q was never embedded with EmbedQuery", q.Question)
			}
			if model.embeds[q.Question] {
				t.Errorf("%q was embedded as a passage", q.Question)
			}
		}
	}
	if n == 0 {
		t.Fatal("no questions in the test data")
	}
}
