package forkcost

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var sink [2]float64

// work is about n float additions of work.
func work(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s += float64(i) * 1.0000001
	}
	return s
}

// spin keeps the calling goroutine busy for d, as a question's serial
// work between its parallel parts does (a sleep would idle the core).
func spin(d time.Duration) {
	t := time.Now()
	for time.Since(t) < d {
	}
}

// gap is the serial work between two forks.
const gap = 300 * time.Microsecond

// BenchmarkFork: one fork-join of two halves of work (a new goroutine per
// fork, as rank.ParallelRange runs them) against both halves in a row,
// each after gap of serial work. ns/op includes the gap.
func BenchmarkFork(b *testing.B) {
	for _, n := range []int{0, 10000, 100000} {
		b.Run("fork", func(b *testing.B) {
			for range b.N {
				var wg sync.WaitGroup
				wg.Go(func() { sink[1] = work(n) })
				sink[0] = work(n)
				wg.Wait()
				spin(gap)
			}
		})
		b.Run("serial", func(b *testing.B) {
			for range b.N {
				sink[0] = work(n)
				sink[1] = work(n)
				spin(gap)
			}
		})
	}
}

// hot is one worker goroutine that spins for spinFor after each job
// before it blocks.
type hot struct {
	job  atomic.Pointer[func()]
	done atomic.Bool
	wake chan struct{}
}

func newHot(b *testing.B, spinFor time.Duration) *hot {
	h := &hot{wake: make(chan struct{}, 1)}
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	go func() {
		for {
			t := time.Now()
			for n := 1; ; n++ {
				if f := h.job.Swap(nil); f != nil {
					(*f)()
					h.done.Store(true)
					t = time.Now()
					continue
				}
				if n&255 == 0 && time.Since(t) > spinFor {
					break
				}
			}
			select {
			case <-h.wake:
			case <-stop:
				return
			}
		}
	}()
	return h
}

// run runs f on the worker and g here, and waits for both.
func (h *hot) run(f, g func()) {
	h.done.Store(false)
	h.job.Store(&f)
	select {
	case h.wake <- struct{}{}:
	default:
	}
	g()
	for !h.done.Load() {
	}
}

// BenchmarkHotWorker is BenchmarkFork's fork with a worker that spins
// for 0, 100 µs or 500 µs (longer than gap) after each job.
func BenchmarkHotWorker(b *testing.B) {
	for _, sp := range []time.Duration{0, 100 * time.Microsecond, 500 * time.Microsecond} {
		for _, n := range []int{10000, 100000} {
			b.Run(sp.String(), func(b *testing.B) {
				h := newHot(b, sp)
				for range b.N {
					h.run(func() { sink[1] = work(n) }, func() { sink[0] = work(n) })
					spin(gap)
				}
			})
		}
	}
}
