package memstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunOptions(t, func(t *testing.T) store.Store {
		s := memstore.NewWithOptions(memstore.Options{JournalTombstones: 8})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, storetest.Options{JournalTombstones: 8})
}

// BenchmarkPutTurns stores 1,000 turns in one Update.
func BenchmarkPutTurns(b *testing.B) {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	const n = 1000
	i := 0
	for b.Loop() {
		sp := store.Space{UserID: fmt.Sprint("u", i)}
		i++
		err := s.Update(ctx, func(tx store.Tx) error {
			for j := range n {
				t := store.Turn{Space: sp, ID: fmt.Sprint("D", j), Seq: int64(j + 1), Speaker: "A", Text: "hello there, how was the trip?"}
				if _, err := tx.PutTurn(ctx, t); err != nil {
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
}

func ExampleStore_Update() {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	sp := store.Space{UserID: "alice"}
	err := s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: "D1:1", Seq: 1, Speaker: "Alice", Text: "I adopted a cat."})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := s.GetTurn(ctx, sp, "D1:1")
	fmt.Println(t.Speaker+":", t.Text, err)
	// Output: Alice: I adopted a cat. <nil>
}
