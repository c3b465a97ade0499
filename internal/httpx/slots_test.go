package httpx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestServerSlotsShared(t *testing.T) {
	a := ServerSlots("http://Slots-Test:8080/v1", 1)
	b := ServerSlots("http://slots-test:8080/v1/chat/completions", 1)
	if a != b || a.Cap() != 1 {
		t.Fatalf("same server and cap: shared %v, cap %d", a == b, a.Cap())
	}
	if ServerSlots("http://slots-test:8081/v1", 1) == a {
		t.Error("another port shares the slots")
	}
	// What one client asked for does not bind a later one (a server
	// restarted with more slots, a new server on a reused port).
	if c := ServerSlots("http://slots-test:8080", 8); c == a || c.Cap() != 8 {
		t.Errorf("a later client asking for 8 slots got %d (shared %v)", c.Cap(), c == a)
	}
}

// Never more holders than the capacity, and every waiter gets through.
func TestSlotsBound(t *testing.T) {
	s := &Slots{cap: 3}
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			in.Add(-1)
			s.Release()
		}()
	}
	wg.Wait()
	if most.Load() > 3 || s.InUse() != 0 {
		t.Errorf("max holders %d, in use after %d", most.Load(), s.InUse())
	}
}

// A waiter whose context ends leaves the queue and does not take a slot.
func TestSlotsCancelledWaiter(t *testing.T) {
	s := &Slots{cap: 1}
	if err := s.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Acquire(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	s.Release()
	if err := s.Acquire(context.Background()); err != nil || s.InUse() != 1 {
		t.Errorf("slot not free after the cancelled waiter: %v, in use %d", err, s.InUse())
	}
}
