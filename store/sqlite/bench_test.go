package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// benchTurn is a LoCoMo-sized turn.
func benchTurn(sp store.Space, i int) store.Turn {
	return store.Turn{
		Space: sp, ID: fmt.Sprintf("D%d:%d", i/20+1, i%20+1), SessionID: fmt.Sprint("S", i/20+1), Seq: int64(i + 1),
		Speaker:     "Caroline",
		Text:        "I went to a LGBTQ support group yesterday and it was so powerful. The stories really inspired me.",
		OccurredAt:  time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
		OccurredRaw: "1:56 pm on 8 May, 2023",
		Metadata:    map[string]string{"source": "bench"},
	}
}

// BenchmarkPutTurns stores 1,000 new turns in one Update, in a file.
func BenchmarkPutTurns(b *testing.B) {
	for _, mode := range []string{"file", "memory"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			path := sqlite.Memory
			if mode == "file" {
				path = filepath.Join(b.TempDir(), "bench.db")
			}
			s, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			const n = 1000
			iter := 0
			for b.Loop() {
				sp := store.Space{UserID: fmt.Sprint("user", iter)}
				iter++
				err := s.Update(ctx, func(tx store.Tx) error {
					for i := range n {
						if _, err := tx.PutTurn(ctx, benchTurn(sp, i)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkListVectors reads 10,000 384-dimensional vectors of one space.
func BenchmarkListVectors(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, dim = 10000, 384
	sp := store.Space{UserID: "u"}
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]store.Vector, n)
	for i := range vs {
		vs[i] = store.Vector{Kind: store.VectorTurn, ID: fmt.Sprintf("t%05d", i), Embedder: "minilm", Values: make([]float32, dim)}
		for j := range dim {
			vs[i].Values[j] = rng.Float32()
		}
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, vs) }); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := s.ListVectors(ctx, sp, store.VectorTurn, "minilm")
		if err != nil || len(got) != n {
			b.Fatalf("ListVectors: %d, %v", len(got), err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "vectors/s")
}

// BenchmarkSpaceVersion is the check every engine read makes before
// serving from its cache: one indexed row read, in a file of 1,000 turns.
func BenchmarkSpaceVersion(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sp := store.Space{UserID: "bench"}
	if err := s.Update(ctx, func(tx store.Tx) error {
		for i := range 1000 {
			if _, err := tx.PutTurn(ctx, benchTurn(sp, i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if v, err := s.SpaceVersion(ctx, sp); err != nil || v == 0 {
			b.Fatal(v, err)
		}
	}
}
