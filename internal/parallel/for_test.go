package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counts runs For(n) and returns how many times each part ran.
func counts(n int) []int32 {
	c := make([]int32, n)
	For(n, func(p int) { atomic.AddInt32(&c[p], 1) })
	return c
}

func checkOnce(t *testing.T, c []int32) {
	t.Helper()
	for p, k := range c {
		if k != 1 {
			t.Fatalf("part %d of %d ran %d times, want once", p, len(c), k)
		}
	}
}

// TestForRunsEveryPartOnce: with one P (all on the caller), two and four,
// every part of 0 to 40 runs exactly once, and For returns only after all
// have returned.
func TestForRunsEveryPartOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for n := range 41 {
			checkOnce(t, counts(n))
		}
		var done atomic.Int32
		For(8, func(p int) {
			time.Sleep(time.Duration(p%3) * time.Millisecond)
			done.Add(1)
		})
		if done.Load() != 8 {
			t.Fatalf("GOMAXPROCS %d: For returned with %d of 8 parts done", procs, done.Load())
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestForUsesHelpers: with two Ps, parts that wait for each other's
// start (allowed here only because the test knows a helper exists) are
// run by two goroutines at once.
func TestForUsesHelpers(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 || theCrew().size == 0 {
		t.Skip("one P: For runs every part on the caller")
	}
	var started atomic.Int32
	deadline := time.Now().Add(10 * time.Second)
	For(2, func(int) {
		started.Add(1)
		for started.Load() < 2 && time.Now().Before(deadline) {
			runtime.Gosched()
		}
	})
	if started.Load() != 2 || time.Now().After(deadline) {
		t.Fatal("the two parts never ran at once")
	}
}

// TestForNested: parts that call For themselves (as a scan inside one of
// two searches does) complete, every inner part once.
func TestForNested(t *testing.T) {
	outer := make([][]int32, 5)
	For(5, func(p int) { outer[p] = counts(7 + p) })
	for _, c := range outer {
		checkOnce(t, c)
	}
}

// TestForManyCallers: more calls at once than slots (the callers then run
// their parts alone) from many goroutines, nested, every part once.
func TestForManyCallers(t *testing.T) {
	var wg sync.WaitGroup
	res := make([][][]int32, 4*slots)
	for g := range res {
		wg.Go(func() {
			for range 20 {
				res[g] = res[g][:0]
				var mu sync.Mutex
				For(3, func(p int) {
					c := counts(4 + p + g%3)
					mu.Lock()
					res[g] = append(res[g], c)
					mu.Unlock()
				})
			}
		})
	}
	wg.Wait()
	for _, cs := range res {
		if len(cs) != 3 {
			t.Fatalf("%d inner calls, want 3", len(cs))
		}
		for _, c := range cs {
			checkOnce(t, c)
		}
	}
}

// TestForWaitsAsleep: a caller whose part runs on a helper longer than
// spinFor stops spinning and is woken when the part returns; the helpers
// then park.
func TestForWaitsAsleep(t *testing.T) {
	c := theCrew()
	if runtime.GOMAXPROCS(0) < 2 || c.size == 0 {
		t.Skip("one P: For runs every part on the caller")
	}
	old := spinFor.Swap(int64(100 * time.Microsecond))
	defer spinFor.Store(old)
	met := 0
	for range 20 {
		var done [2]atomic.Bool
		var started atomic.Int32
		apart := false
		For(2, func(p int) {
			started.Add(1)
			if p == 0 {
				// Hold part 0 until part 1 starts elsewhere, so that the
				// caller waits for a helper's part.
				deadline := time.Now().Add(time.Second)
				for started.Load() < 2 && time.Now().Before(deadline) {
					runtime.Gosched()
				}
				apart = started.Load() == 2
			} else {
				time.Sleep(3 * time.Millisecond)
			}
			done[p].Store(true)
		})
		if !done[0].Load() || !done[1].Load() {
			t.Fatal("For returned before its parts")
		}
		if apart {
			met++
		}
	}
	if met < 10 {
		t.Fatalf("a helper ran part 1 in %d of 20 calls, want most", met)
	}
	deadline := time.Now().Add(5 * time.Second)
	for int(c.parked.Load()) < c.size {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helpers parked after 5 s idle", c.parked.Load(), c.size)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestParts: one part a P, up to most, each at least minSize.
func TestParts(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	if got := Parts(1000, 10, 4); got != 1 {
		t.Errorf("GOMAXPROCS 1: Parts(1000, 10, 4) = %d, want 1", got)
	}
	runtime.GOMAXPROCS(2)
	for _, c := range []struct{ size, minSize, most, want int }{
		{1000, 10, 4, 2}, {35, 10, 4, 2}, {15, 10, 4, 1}, {5, 10, 4, 1}, {1000, 0, 4, 2}, {0, 10, 4, 1},
	} {
		if got := Parts(c.size, c.minSize, c.most); got != c.want {
			t.Errorf("GOMAXPROCS 2: Parts(%d, %d, %d) = %d, want %d", c.size, c.minSize, c.most, got, c.want)
		}
	}
	runtime.GOMAXPROCS(8)
	if got := Parts(1000, 10, 4); got != 4 {
		t.Errorf("GOMAXPROCS 8: Parts(1000, 10, 4) = %d, want 4", got)
	}
}

// TestSpinStopsWhenDescheduled: a spinner whose two looks at the clock
// are further apart than preempted stops at once and marks the cores busy;
// while they are, every spin ends at its first look; else a spin goes on
// until spinFor.
func TestSpinStopsWhenDescheduled(t *testing.T) {
	defer busyUntil.Store(0)
	busyUntil.Store(0)
	var s spin
	s.reset()
	for range 63 {
		if !s.more() {
			t.Fatal("a fresh spin ended before its first look at the clock")
		}
	}
	if !s.more() {
		t.Fatal("a fresh spin ended at its first look at the clock")
	}
	s.n = 63
	s.last = time.Now().Add(-2 * preempted)
	if s.more() {
		t.Fatal("a spin went on after it was descheduled")
	}
	if until := busyUntil.Load(); until < time.Now().UnixNano() {
		t.Fatalf("busyUntil %d is not ahead after a descheduled spin", until)
	}
	s.reset()
	s.n = 63
	if s.more() {
		t.Fatal("a spin went on while the cores are busy")
	}
	busyUntil.Store(0)
	old := spinFor.Swap(int64(time.Millisecond))
	defer spinFor.Store(old)
	s.reset()
	t0 := time.Now()
	for s.more() && time.Since(t0) < 100*time.Millisecond {
	}
	el := time.Since(t0)
	if busyUntil.Load() != 0 {
		t.Skipf("the spinner was descheduled after %v: this machine is busy", el)
	}
	if el < time.Millisecond || el >= 100*time.Millisecond {
		t.Fatalf("a spin of spinFor 1 ms ended after %v", el)
	}
}

// TestForPanicFreesSlot: a part that panics on the caller goes up to
// For's caller and leaves no slot taken, however often it happens.
func TestForPanicFreesSlot(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 || theCrew().size == 0 {
		t.Skip("one P: For runs every part on the caller")
	}
	c := theCrew()
	for range 3 * slots {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the part's panic did not reach For's caller")
				}
			}()
			For(1<<20, func(p int) {
				if p == 0 {
					panic("part 0")
				}
			})
		}()
	}
	for i := range c.jobs {
		if c.jobs[i].Load() != nil {
			t.Fatalf("slot %d still holds a job after the panics", i)
		}
	}
}
