package hashing

import (
	"context"
	"math"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/vec"
)

var _ embed.Embedder = (*Embedder)(nil)

func TestEmbedDeterministicAndSimilar(t *testing.T) {
	e := New(0)
	if e.Dim() != DefaultDim || e.ID() != "hashing:256" {
		t.Fatalf("Dim/ID = %d %q", e.Dim(), e.ID())
	}
	texts := []string{
		"Caroline went to the LGBTQ support group yesterday",
		"Caroline went to the LGBTQ support group yesterday",
		"Caroline attended a support group for LGBTQ people",
		"Melanie painted a sunset with her kids",
		"",
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs[:4] {
		if n := vec.Dot(v, v); math.Abs(float64(n)-1) > 1e-5 {
			t.Errorf("vector %d norm² = %v, want 1", i, n)
		}
	}
	if vec.Dot(vs[0], vs[1]) < 0.9999 {
		t.Errorf("identical texts differ")
	}
	if near, far := vec.Dot(vs[0], vs[2]), vec.Dot(vs[0], vs[3]); near <= far {
		t.Errorf("related texts score %v, unrelated %v: want related higher", near, far)
	}
	for _, x := range vs[4] {
		if x != 0 {
			t.Fatalf("empty text gave non-zero vector")
		}
	}
}

func TestEmbedHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(8).Embed(ctx, []string{"a"}); err == nil {
		t.Fatal("want error from cancelled context")
	}
}
