package minilm

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed"
)

// testModelDir finds the real all-MiniLM-L6-v2 files: $HIGMEM_MODELS_DIR/
// all-MiniLM-L6-v2, else the default root. It skips the test when they are
// absent.
func testModelDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			t.Skipf("no models root: %v", err)
		}
	}
	dir := ModelDir(root)
	for _, f := range modelFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Skipf("model files not found in %s (set HIGMEM_MODELS_DIR or run `higmem models fetch --model all-MiniLM-L6-v2`): %v", dir, err)
		}
	}
	return dir
}

var (
	sharedOnce  sync.Once
	sharedModel *Model
	sharedErr   error
)

func loadTestModel(t testing.TB) *Model {
	t.Helper()
	dir := testModelDir(t)
	sharedOnce.Do(func() { sharedModel, sharedErr = Load(dir, Options{}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedModel
}

type goldenVectors struct {
	Cases []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float32 `json:"vector"`
	} `json:"cases"`
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// TestEmbedGolden compares with vectors from sentence-transformers
// (testdata/gen_golden.py).
func TestEmbedGolden(t *testing.T) {
	m := loadTestModel(t)
	var g goldenVectors
	readJSON(t, filepath.Join("testdata", "golden_vectors.json"), &g)
	texts := make([]string, len(g.Cases))
	for i, c := range g.Cases {
		texts[i] = c.Text
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	worst := 1.0
	for i, c := range g.Cases {
		if ids := m.Tokenizer().Encode(c.Text); !slices.Equal(ids, c.IDs) {
			t.Errorf("case %d: token ids differ from the reference", i)
		}
		if len(got[i]) != 384 {
			t.Fatalf("case %d: dim %d", i, len(got[i]))
		}
		cos := cosine(got[i], c.Vector)
		worst = min(worst, cos)
		if cos < 0.999 {
			t.Errorf("case %d %.40q: cosine %.6f < 0.999", i, c.Text, cos)
		}
		var norm float64
		for _, x := range got[i] {
			norm += float64(x) * float64(x)
		}
		if math.Abs(norm-1) > 1e-4 {
			t.Errorf("case %d: squared norm %v, want 1", i, norm)
		}
	}
	t.Logf("min cosine vs sentence-transformers over %d sentences: %.9f (1-cos = %.2g)", len(g.Cases), worst, 1-worst)
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(t.TempDir(), Options{})
	if !errors.Is(err, embed.ErrNoModel) {
		t.Fatalf("Load(empty dir) error = %v, want embed.ErrNoModel", err)
	}
}
