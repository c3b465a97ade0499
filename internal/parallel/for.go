package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// For calls fn(part) for every part in [0, n) and returns when all calls
// have returned. The caller runs parts itself, lowest first; helper
// goroutines take the others as they come free, so that a helper that
// starts late (a parked thread wakes ~55 µs after the fork on a 2-vCPU
// VM: internal/research/forkcost) only takes fewer parts, where a new
// goroutine per part would hold the caller up until it ran. It is the
// fork-join of a retrieval's parallel parts (a scan's ranges, a search
// beside another), each a few hundred microseconds.
//
// Parts are claimed in order, each by one goroutine; fn must be safe to
// call from several goroutines at once for distinct parts. Which goroutine
// runs a part, and when, is not specified: a part must not wait for
// another part of the same call. A part may itself call For (the waiting
// caller helps with the inner parts). With GOMAXPROCS 1, or n below 2,
// every part runs on the caller, in order. A part that panics on a helper
// ends the process, as in a goroutine of its own; on the caller, the
// panic goes up to For's caller.
//
// The helpers (GOMAXPROCS−1 of them at the first call, at most
// maxHelpers) live as long as the process. Each spins briefly after its
// last part (spinFor: the next For of a question often comes sooner),
// then parks until a call wakes it; a spinner that finds itself
// descheduled stops at once (spin). Longer spins were measured faster on
// a quiet machine and much slower with another process busy on one of
// the two cores (BENCHMARKS.md, "parallel.For"): a spinning thread takes
// the caller's share of the core. An idle process costs nothing.
func For(n int, fn func(part int)) {
	if n <= 0 {
		return
	}
	if n == 1 || runtime.GOMAXPROCS(0) == 1 {
		for p := range n {
			fn(p)
		}
		return
	}
	c := theCrew()
	if c.size == 0 {
		for p := range n {
			fn(p)
		}
		return
	}
	j := &job{fn: fn, n: int32(n), done: make(chan struct{})}
	j.left.Store(int32(n))
	slot := c.publish(j)
	if slot < 0 {
		// Every slot is taken (many questions at once): the caller runs
		// its parts alone, as the helpers are busy anyway.
		j.work()
		return
	}
	// Unpublished as soon as every part is claimed, and in any case on
	// return (a part that panics on the caller must not hold the slot).
	defer c.jobs[slot].CompareAndSwap(j, nil)
	c.wake(n - 1)
	j.work()
	c.jobs[slot].CompareAndSwap(j, nil)
	j.wait(c)
}

// Parts returns how many parts For should split size units of work
// into: one per P (GOMAXPROCS) up to most, each of at least minSize
// units. More parts than Ps balanced better on a quiet machine but were
// slower with another process busy on one of two cores (a part held by a
// descheduled helper holds the question up; BENCHMARKS.md,
// "parallel.For").
func Parts(size, minSize, most int) int {
	return max(1, min(most, runtime.GOMAXPROCS(0), size/max(minSize, 1)))
}

// maxHelpers bounds the helper goroutines: the callers split their work
// into at most four parts.
const maxHelpers = 3

// spinFor is how long a helper (or a caller waiting for a part another
// goroutine runs) spins without work before it parks: 50 µs, as fast as
// 500 µs at the 100k-turn bench on a quiet 2-vCPU VM and close to no spin
// with the other core busy. Nanoseconds, atomic: the tests change it.
var spinFor atomic.Int64

func init() { spinFor.Store(int64(50 * time.Microsecond)) }

// slots is the number of calls whose parts can be claimed at once.
const slots = 8

// job is one call of For.
type job struct {
	fn   func(int)
	n    int32
	next atomic.Int32 // the next part to claim
	left atomic.Int32 // the parts not yet returned
	// sleeping is set by a caller that stopped spinning; done is closed
	// by whoever returns the last part after it was set.
	sleeping atomic.Bool
	done     chan struct{}
}

// work runs parts of j until none is left to claim, and reports whether
// it ran any.
func (j *job) work() bool {
	ran := false
	for j.next.Load() < j.n { // read before the write: helpers poll
		p := j.next.Add(1) - 1
		if p >= j.n {
			return ran
		}
		j.fn(int(p))
		ran = true
		if j.left.Add(-1) == 0 && j.sleeping.Load() {
			close(j.done)
		}
	}
	return ran
}

// wait returns when every part of j has returned, helping with the parts
// of other calls (an inner For of one of j's parts) meanwhile.
func (j *job) wait(c *crew) {
	var s spin
	s.reset()
	for j.left.Load() > 0 {
		if c.help() {
			s.reset()
			continue
		}
		if !s.more() {
			j.sleeping.Store(true)
			if j.left.Load() > 0 {
				<-j.done
			}
			return
		}
	}
}

// spin is the clock of a spin-wait: it ends the spin after spinFor
// without work, or at once when the spinner was descheduled (two looks at
// the clock further apart than preempted): the machine's cores are busy,
// and a spinning thread would take one from the work (the scheduler
// favours threads that slept). The cores are then taken as busy for
// busyFor: spins end at once, parts are waited for asleep.
type spin struct {
	start, last time.Time
	n           int
}

// preempted is the gap between two looks at the clock (64 polls apart,
// a microsecond or so) past which the spinner was descheduled.
const preempted = 50 * time.Microsecond

// busyFor is how long spins stay off after a spinner was descheduled.
const busyFor = 20 * time.Millisecond

// busyUntil is when spins may start again (UnixNano; 0: now).
var busyUntil atomic.Int64

func (s *spin) reset() {
	s.start, s.n = time.Now(), 0
	s.last = s.start
}

// more reports whether to spin on, and lets other goroutines of this P
// run now and then.
func (s *spin) more() bool {
	s.n++
	if s.n&63 != 0 {
		return true
	}
	now := time.Now()
	if now.Sub(s.last) > preempted {
		busyUntil.Store(now.Add(busyFor).UnixNano())
		return false
	}
	if now.Sub(s.start) > time.Duration(spinFor.Load()) || now.UnixNano() < busyUntil.Load() {
		return false
	}
	// Measured from after the yield: other goroutines of this process
	// running meanwhile are not a busy machine.
	runtime.Gosched()
	s.last = time.Now()
	return true
}

// crew is the process's helpers and the calls whose parts they may take.
type crew struct {
	size   int
	jobs   [slots]atomic.Pointer[job]
	parked atomic.Int32
	wakeup chan struct{}
}

var (
	crewOnce sync.Once
	theOne   *crew
)

// theCrew returns the process's crew, starting its helpers at the first
// call.
func theCrew() *crew {
	crewOnce.Do(func() {
		c := &crew{size: min(runtime.GOMAXPROCS(0)-1, maxHelpers)}
		c.size = max(c.size, 0)
		c.wakeup = make(chan struct{}, c.size)
		for range c.size {
			go c.helper()
		}
		theOne = c
	})
	return theOne
}

// publish puts j in a free slot and returns it, or -1 when none is free.
func (c *crew) publish(j *job) int {
	for i := range c.jobs {
		if c.jobs[i].CompareAndSwap(nil, j) {
			return i
		}
	}
	return -1
}

// wake wakes up to n parked helpers.
func (c *crew) wake(n int) {
	for k := min(int(c.parked.Load()), n); k > 0; k-- {
		select {
		case c.wakeup <- struct{}{}:
		default:
			return
		}
	}
}

// help runs the parts left of one published call, and reports whether it
// ran any.
func (c *crew) help() bool {
	for i := range c.jobs {
		if j := c.jobs[i].Load(); j != nil && j.work() {
			return true
		}
	}
	return false
}

// helper takes parts as they are published, spinning after the last
// (spin) before it parks.
func (c *crew) helper() {
	var s spin
	for {
		s.reset()
		for {
			if c.help() {
				s.reset()
				continue
			}
			if !s.more() {
				break
			}
		}
		c.parked.Add(1)
		<-c.wakeup
		c.parked.Add(-1)
	}
}
