package parallel

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestRunBoundsAndErrors(t *testing.T) {
	var running, peak, done atomic.Int32
	err := Run(context.Background(), 2, 20, func(ctx context.Context, i int) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		running.Add(-1)
		done.Add(1)
		return nil
	})
	if err != nil || done.Load() != 20 || peak.Load() > 2 {
		t.Fatalf("err %v, done %d, peak %d; want nil, 20, <= 2", err, done.Load(), peak.Load())
	}
	boom := errors.New("boom")
	err = Run(context.Background(), 1, 5, func(ctx context.Context, i int) error {
		if i == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if err := Run(context.Background(), 3, 0, nil); err != nil {
		t.Fatalf("n=0: %v", err)
	}
}

// TestRunOne: a single call runs on the caller's goroutine (no other
// goroutine starts), returns its error, and a cancelled context stops it
// before it starts.
func TestRunOne(t *testing.T) {
	boom := errors.New("boom")
	before := runtime.NumGoroutine()
	var during int
	err := Run(context.Background(), 4, 1, func(ctx context.Context, i int) error {
		during = runtime.NumGoroutine()
		return boom
	})
	if !errors.Is(err, boom) || during != before {
		t.Fatalf("err %v, %d goroutines during the call (%d before); want boom, the same", err, during, before)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err = Run(ctx, 1, 1, func(context.Context, int) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || called {
		t.Fatalf("cancelled: err %v, called %v; want Canceled, not called", err, called)
	}
}
