package higmem_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// watchedStore is a memstore that tells its watchers of every committed
// Update, as store/postgres does with LISTEN/NOTIFY (tested against a
// real server in store/postgres).
type watchedStore struct {
	*memstore.Store
	mu       sync.Mutex
	watchers []chan store.Space
}

func (s *watchedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	var touched []store.Space
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		return fn(spyTx{Tx: tx, touched: &touched})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		for _, sp := range touched {
			w <- sp
		}
	}
	return nil
}

// spyTx records the spaces a transaction writes turns to or deletes
// turns from.
type spyTx struct {
	store.Tx
	touched *[]store.Space
}

func (t spyTx) PutTurn(ctx context.Context, tr store.Turn) (bool, error) {
	*t.touched = append(*t.touched, tr.Space)
	return t.Tx.PutTurn(ctx, tr)
}

func (t spyTx) DeleteTurn(ctx context.Context, sp store.Space, id string) error {
	*t.touched = append(*t.touched, sp)
	return t.Tx.DeleteTurn(ctx, sp, id)
}

func (s *watchedStore) Watch(ctx context.Context, changed func(store.Space)) error {
	ch := make(chan store.Space, 64)
	s.mu.Lock()
	s.watchers = append(s.watchers, ch)
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case sp := <-ch:
			changed(sp)
		}
	}
}

// listening returns how many watchers listen.
func (s *watchedStore) listening() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

// watchedPair opens two memories on one watched store, as two processes
// on one database whose writes each hears. It returns once both listen:
// a memory starts watching in the background, and a write committed
// before its watch listens is not told to it (a notification may be
// missed while Watch is not running, see store.Watcher), as
// store/postgres's TestWatch waits for its LISTEN.
func watchedPair(t *testing.T) (a, b *higmem.Memory) {
	t.Helper()
	st := &watchedStore{Store: memstore.New()}
	for _, m := range []**higmem.Memory{&a, &b} {
		var err error
		if *m, err = higmem.Open(t.Context(), higmem.Options{Store: st}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*m).Close() })
	}
	deadline := time.Now().Add(30 * time.Second)
	for st.listening() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 memories watching the store after 30 s", st.listening())
		}
		time.Sleep(time.Millisecond)
	}
	return a, b
}

// TestWatchCatchesUpBeforeTheRead: memory A has a space loaded; memory B
// (another process) writes to it; A's watcher hears of it and catches the
// space up in the background, so that A's next read finds it current and
// has nothing left to catch up.
func TestWatchCatchesUpBeforeTheRead(t *testing.T) {
	ctx := t.Context()
	a, b := watchedPair(t)
	sp := higmem.Space{UserID: "alice"}
	if _, err := a.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Alice", Text: "I adopted a greyhound called Biscuit."}}); err != nil {
		t.Fatal(err)
	}
	before := higmem.WatchCatchUps(a)
	if before < 0 {
		t.Fatal("no watcher on a store that can tell of writes")
	}
	if _, err := b.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Alice", Text: "Biscuit runs on the beach at Matosinhos."}}); err != nil {
		t.Fatal(err)
	}
	waitWatchCatchUp(t, a, before)
	reads := higmem.CatchUps(a)
	res, err := a.Retrieve(ctx, sp, "Where does Biscuit run?", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := higmem.CatchUps(a); got != reads {
		t.Errorf("the read caught up %d more time(s): the watcher left the space behind", got-reads)
	}
	found := false
	for _, e := range res.Evidence {
		if e.Turn.Text == "Biscuit runs on the beach at Matosinhos." {
			found = true
		}
	}
	if !found {
		t.Errorf("B's turn not retrieved through A: %+v", res.Evidence)
	}
}

// TestWatchCatchesUpDeletesInPlace: memory B (another process) deletes a
// turn of a space A has loaded; A's watcher applies the delete from the
// store's journal in the background, in place (no reload), so that A's
// next read neither catches up nor sees the turn.
func TestWatchCatchesUpDeletesInPlace(t *testing.T) {
	ctx := t.Context()
	a, b := watchedPair(t)
	sp := higmem.Space{UserID: "alice"}
	if _, err := a.Add(ctx, sp, []higmem.TurnInput{
		{ID: "keep", Speaker: "Alice", Text: "I adopted a greyhound called Biscuit."},
		{ID: "gone", Speaker: "Alice", Text: "Biscuit runs on the beach at Matosinhos."},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Retrieve(ctx, sp, "Biscuit", higmem.RetrieveOptions{}); err != nil {
		t.Fatal(err)
	}
	watched, inPlace := higmem.WatchCatchUps(a), higmem.CatchUps(a)
	if err := b.Delete(ctx, sp, "gone"); err != nil {
		t.Fatal(err)
	}
	waitWatchCatchUp(t, a, watched)
	if higmem.CatchUps(a) == inPlace {
		t.Error("the watcher loaded the space afresh instead of applying the delete in place")
	}
	reads := higmem.CatchUps(a)
	res, err := a.Retrieve(ctx, sp, "Where does Biscuit run?", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := higmem.CatchUps(a); got != reads {
		t.Errorf("the read caught up %d more time(s): the watcher left the space behind", got-reads)
	}
	for _, e := range res.Evidence {
		if e.Turn.ID == "gone" {
			t.Errorf("the deleted turn is still retrieved through A: %+v", e)
		}
	}
}

// waitWatchCatchUp waits, without reading through m, until m's watcher has
// moved a space since it had counted n (see WatchCatchUps); it fails after
// 30 s rather than leaving the test to the package's timeout.
func waitWatchCatchUp(t *testing.T, m *higmem.Memory, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for higmem.WatchCatchUps(m) == n {
		if time.Now().After(deadline) {
			t.Fatalf("no background catch-up within 30 s (still %d)", n)
		}
		time.Sleep(time.Millisecond)
	}
}
