package httpx

import (
	"context"
	"net/url"
	"strings"
	"sync"
)

// Slots is a counting semaphore shared by every client of one server: a
// server has so many slots (llama.cpp and llama-cpp-python have one unless
// told otherwise), whichever client, role or model sends the request.
// Its capacity is the smallest that any client asked for. Safe for
// concurrent use.
type Slots struct {
	mu      sync.Mutex
	cap     int
	used    int
	waiters []chan struct{}
}

// slotsByServer maps a server key (see ServerKey) to its Slots. It is
// process state on purpose: two clients of one server must share its
// slots, or a one-slot server sees a request per client.
var slotsByServer sync.Map

// ServerSlots returns the Slots of the server that baseURL names, created
// with capacity n, or shrunk to n when an earlier client asked for more.
// n < 1 counts as 1.
func ServerSlots(baseURL string, n int) *Slots {
	n = max(n, 1)
	v, _ := slotsByServer.LoadOrStore(ServerKey(baseURL), &Slots{cap: n})
	s := v.(*Slots)
	s.mu.Lock()
	if n < s.cap {
		s.cap = n
	}
	s.mu.Unlock()
	return s
}

// ServerKey is what identifies a server for sharing slots: the scheme, host
// and port of baseURL, lower-cased. Paths are ignored (/v1/chat/completions
// and /v1/embeddings are served by the same process).
func ServerKey(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return strings.ToLower(baseURL)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// Cap returns the capacity.
func (s *Slots) Cap() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cap
}

// InUse returns how many slots are held.
func (s *Slots) InUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Acquire waits for a slot or for ctx to end.
func (s *Slots) Acquire(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.used < s.cap {
			s.used++
			s.mu.Unlock()
			return nil
		}
		ch := make(chan struct{})
		s.waiters = append(s.waiters, ch)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			for i, w := range s.waiters {
				if w == ch {
					s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
					break
				}
			}
			s.mu.Unlock()
			// A wake-up that raced with the cancellation is passed on.
			select {
			case <-ch:
				s.wakeOne()
			default:
			}
			return ctx.Err()
		}
	}
}

// Release frees a slot taken by Acquire.
func (s *Slots) Release() {
	s.mu.Lock()
	s.used--
	s.mu.Unlock()
	s.wakeOne()
}

// wakeOne wakes the oldest waiter, if any; it then competes for the slot.
func (s *Slots) wakeOne() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) > 0 && s.used < s.cap {
		ch := s.waiters[0]
		s.waiters = s.waiters[1:]
		close(ch)
	}
}
