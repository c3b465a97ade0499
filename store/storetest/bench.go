package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

// Bench runs the same benchmarks of the main store operations against
// the stores made by open (a new, empty store per benchmark), so that
// backends can be compared figure by figure:
//
//   - PutTurns: 1,000 new LoCoMo-sized turns in one Update (turns/s);
//   - PutVectors: 1,000 384-dimensional vectors in one Update (vectors/s);
//   - ListTurns: every turn of a 10,000-turn space (turns/s);
//   - ListVectors: every vector of a space with 10,000 384-dimensional
//     vectors (vectors/s).
func Bench(b *testing.B, open func(b *testing.B) store.Store) {
	const dim = 384
	b.Run("PutTurns", func(b *testing.B) {
		s, ctx := open(b), context.Background()
		const n = 1000
		iter := 0
		for b.Loop() {
			sp := store.Space{UserID: fmt.Sprint("user", iter)}
			iter++
			if err := putTurns(ctx, s, sp, n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "turns/s")
	})
	b.Run("PutVectors", func(b *testing.B) {
		s, ctx := open(b), context.Background()
		const n = 1000
		vs := benchVectors(n, dim)
		iter := 0
		for b.Loop() {
			sp := store.Space{UserID: fmt.Sprint("user", iter)}
			iter++
			if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, vs) }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "vectors/s")
	})
	b.Run("ListTurns", func(b *testing.B) {
		s, ctx := open(b), context.Background()
		const n = 10000
		sp := store.Space{UserID: "u"}
		if err := putTurns(ctx, s, sp, n); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			ts, err := s.ListTurns(ctx, sp, store.TurnQuery{})
			if err != nil || len(ts) != n {
				b.Fatalf("ListTurns: %d, %v", len(ts), err)
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "turns/s")
	})
	b.Run("ListVectors", func(b *testing.B) {
		s, ctx := open(b), context.Background()
		const n = 10000
		sp := store.Space{UserID: "u"}
		vs := benchVectors(n, dim)
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
	})
}

// putTurns stores n LoCoMo-sized turns in sp in one Update.
func putTurns(ctx context.Context, s store.Store, sp store.Space, n int) error {
	return s.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			t := store.Turn{
				Space: sp, ID: fmt.Sprintf("D%d:%d", i/20+1, i%20+1), SessionID: fmt.Sprint("S", i/20+1), Seq: int64(i + 1),
				Speaker:     "Caroline",
				Text:        "I went to a LGBTQ support group yesterday and it was so powerful. The stories really inspired me.",
				OccurredAt:  time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
				OccurredRaw: "1:56 pm on 8 May, 2023",
				Metadata:    map[string]string{"source": "bench"},
			}
			if _, err := tx.PutTurn(ctx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchVectors returns n random turn vectors of dim dimensions.
func benchVectors(n, dim int) []store.Vector {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]store.Vector, n)
	for i := range vs {
		vs[i] = store.Vector{Kind: store.VectorTurn, ID: fmt.Sprintf("t%05d", i), Embedder: "minilm", Values: make([]float32, dim)}
		for j := range dim {
			vs[i].Values[j] = rng.Float32()
		}
	}
	return vs
}
