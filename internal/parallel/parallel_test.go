package parallel

import (
	"context"
	"errors"
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
