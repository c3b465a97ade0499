package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// KeySource supplies API keys kept outside the process, such as in a
// database that several servers share (see package server/dbkeys), so that
// a key added or revoked once is seen by every server.
type KeySource interface {
	// LoadKeys returns the keys in force now.
	LoadKeys(ctx context.Context) (*Keys, error)
}

// DefaultKeyRefresh is how often keys are re-read from a KeySource when
// Options.KeyRefresh is zero: a revoked key stops working within it.
const DefaultKeyRefresh = 10 * time.Second

// minKeyReload is the least time between two loads caused by unknown keys
// (a key added since the last load is accepted at once, but unknown keys
// cannot make the server query its source more often than this).
const minKeyReload = time.Second

// keyLoadTimeout is the least time a periodic key load may take.
const keyLoadTimeout = 10 * time.Second

// keyring holds the keys in force: Options.Keys, replaced by each load
// from Options.KeySource.
type keyring struct {
	src KeySource
	cur atomic.Pointer[Keys]

	mu sync.Mutex // serialises loads; guards demanded
	// demanded is when the last load asked for by an unknown key started
	// (periodic loads do not count: a key added after one of them must
	// still be found at once).
	demanded time.Time
}

func newKeyring(keys *Keys, src KeySource) *keyring {
	kr := &keyring{src: src}
	kr.cur.Store(keys)
	return kr
}

// current returns the keys in force (nil when there are none).
func (kr *keyring) current() *Keys { return kr.cur.Load() }

// reload loads the keys from the source. A load on demand (minAge > 0,
// for an unknown key) is skipped when the last one started less than minAge
// ago. It reports whether the keys were (re)loaded. On an error the keys in
// force stay.
func (kr *keyring) reload(ctx context.Context, minAge time.Duration) (bool, error) {
	if kr.src == nil {
		return false, nil
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	if minAge > 0 {
		if time.Since(kr.demanded) < minAge {
			return false, nil
		}
		kr.demanded = time.Now()
	}
	ks, err := kr.src.LoadKeys(ctx)
	if err != nil {
		return false, err
	}
	kr.cur.Store(ks)
	return true, nil
}

// lookup finds the key of secret. An unknown secret makes the keys be
// re-read from the source first (at most once every minKeyReload), so a
// key added to a shared source works at once.
func (s *Server) lookupKey(ctx context.Context, secret string) (Key, bool) {
	if k, ok := s.keys.current().Lookup(secret); ok {
		return k, true
	}
	reloaded, err := s.keys.reload(ctx, minKeyReload)
	if err != nil {
		s.log.Warn("server: reloading API keys", "err", err)
	}
	if !reloaded {
		return Key{}, false
	}
	return s.keys.current().Lookup(secret)
}

// ReloadKeys re-reads the keys from Options.KeySource now (a no-op without
// one). The server also does so every Options.KeyRefresh.
func (s *Server) ReloadKeys(ctx context.Context) error {
	_, err := s.keys.reload(ctx, 0)
	return err
}

// refreshKeys re-reads the keys every interval until the server's base
// context ends (Shutdown).
func (s *Server) refreshKeys(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.base.Done():
			return
		case <-t.C:
			// A short interval must not cut off a slow load: give each at
			// least keyLoadTimeout.
			ctx, cancel := context.WithTimeout(s.base, max(interval, keyLoadTimeout))
			if err := s.ReloadKeys(ctx); err != nil && s.base.Err() == nil {
				s.log.Warn("server: refreshing API keys", "err", err)
			}
			cancel()
		}
	}
}
