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
// Clients share slots when they name the same server and ask for the same
// capacity (every client the CLI builds does). Safe for concurrent use.
type Slots struct {
	mu      sync.Mutex
	cap     int
	used    int
	waiters []chan struct{}
}

// slotsByServer maps a server key (see ServerKey) and a capacity to their
// Slots. It is process state on purpose: two clients of one server must
// share its slots, or a one-slot server sees a request per client. The
// capacity is part of the key, so that what one client asked for never
// binds another for the life of the process (a server restarted with more
// slots, or a later server on a reused port).
var slotsByServer sync.Map

// ServerSlots returns the n slots of the server that baseURL names, shared
// with every other client that asked for n slots of it. n < 1 counts as 1.
func ServerSlots(baseURL string, n int) *Slots {
	n = max(n, 1)
	v, _ := slotsByServer.LoadOrStore(slotsKey{ServerKey(baseURL), n}, &Slots{cap: n})
	return v.(*Slots)
}

type slotsKey struct {
	server string
	cap    int
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
