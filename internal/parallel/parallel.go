// Package parallel runs work at once: Run, a bounded number of calls (the
// engine's model and embedder calls), the first error cancelling the
// rest; For, the parts of one question's scan, shared between the caller
// and helper goroutines.
package parallel

import (
	"context"
	"sync"
)

// Run runs fn(ctx, i) for i in [0, n) with at most limit running at
// once. The first error cancels the others and is returned. A single call
// runs on the calling goroutine.
func Run(ctx context.Context, limit, n int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	if n == 1 {
		// One call (a question's one select call) runs on the caller: a
		// new goroutine would only start it later.
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, 0); err != nil {
			return err
		}
		return ctx.Err()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, max(limit, 1))
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
loop:
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err() // the parent's cancellation, if any
}
