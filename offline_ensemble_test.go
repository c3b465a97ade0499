package higmem

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
)

// concatEmbedder embeds a text with two models and joins the vectors,
// each scaled so that the cosine of two joined vectors is (1-w) times the
// first model's cosine plus w times the second's: an ensemble of two
// embedders for the cross-validation (HIGMEM_TEST_ENSEMBLE), not a
// product.
type concatEmbedder struct {
	a, b   embed.Embedder
	wa, wb float32
}

func (c concatEmbedder) Dim() int { return c.a.Dim() + c.b.Dim() }
func (c concatEmbedder) ID() string {
	return fmt.Sprintf("concat(%s,%s,%g)", c.a.ID(), c.b.ID(), c.wb*c.wb)
}

func (c concatEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.both(ctx, texts, false)
}

// EmbedQuery embeds questions through each model's EmbedQuery when it has
// one.
func (c concatEmbedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return c.both(ctx, texts, true)
}

func (c concatEmbedder) both(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	one := func(e embed.Embedder) ([][]float32, error) {
		if qe, ok := e.(embed.QueryEmbedder); ok && query {
			return qe.EmbedQuery(ctx, texts)
		}
		return e.Embed(ctx, texts)
	}
	va, err := one(c.a)
	if err != nil {
		return nil, err
	}
	vb, err := one(c.b)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		v := make([]float32, 0, len(va[i])+len(vb[i]))
		for _, x := range va[i] {
			v = append(v, c.wa*x)
		}
		for _, x := range vb[i] {
			v = append(v, c.wb*x)
		}
		out[i] = v
	}
	return out, nil
}

// ensembleForTest returns the ensemble HIGMEM_TEST_ENSEMBLE names ("dirA,dirB",
// two model directories), each model cached in its own file of
// HIGMEM_TEST_ENSEMBLE_CACHES ("a.gob,b.gob", optional), the second
// model's cosine weighted by HIGMEM_TEST_ENSEMBLE_WEIGHT (default 0.5);
// nil when unset.
func ensembleForTest(t *testing.T) embed.Embedder {
	t.Helper()
	dirs := strings.Split(os.Getenv("HIGMEM_TEST_ENSEMBLE"), ",")
	if len(dirs) != 2 {
		return nil
	}
	caches := strings.Split(os.Getenv("HIGMEM_TEST_ENSEMBLE_CACHES"), ",")
	if len(caches) != 2 {
		caches = []string{"", ""}
	}
	w := 0.5
	if s := os.Getenv("HIGMEM_TEST_ENSEMBLE_WEIGHT"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v > 1 {
			t.Fatalf("HIGMEM_TEST_ENSEMBLE_WEIGHT %q: want a number in [0, 1]", s)
		}
		w = v
	}
	var es [2]embed.Embedder
	for i, dir := range dirs {
		m, err := minilm.Load(dir, minilm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		es[i] = newCachedEmbedder(m, caches[i])
		t.Cleanup(func() {
			if err := es[i].(*cachedEmbedder).save(); err != nil {
				t.Logf("embedding cache %s: %v", caches[i], err)
			}
		})
	}
	return concatEmbedder{a: es[0], b: es[1], wa: float32(math.Sqrt(1 - w)), wb: float32(math.Sqrt(w))}
}

func TestConcatEmbedderCosine(t *testing.T) {
	a := fixedEmbedder{"a": {1, 0}, "b": {0.6, 0.8}}
	b := fixedEmbedder{"a": {0, 1, 0}, "b": {0, 0, 1}}
	c := concatEmbedder{a: a, b: b, wa: float32(math.Sqrt(0.75)), wb: float32(math.Sqrt(0.25))}
	vs, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	var dot float64
	for i := range vs[0] {
		dot += float64(vs[0][i] * vs[1][i])
	}
	if want := 0.75*0.6 + 0.25*0; math.Abs(dot-want) > 1e-6 || len(vs[0]) != 5 {
		t.Fatalf("cosine %g (dim %d), want %g (dim 5)", dot, len(vs[0]), want)
	}
}

// fixedEmbedder returns a fixed vector per text.
type fixedEmbedder map[string][]float32

func (f fixedEmbedder) Dim() int {
	for _, v := range f {
		return len(v)
	}
	return 0
}
func (f fixedEmbedder) ID() string { return "fixed" }
func (f fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = f[s]
	}
	return out, nil
}
