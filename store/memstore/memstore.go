// Package memstore is an in-memory store.Store, for tests and for memory
// that need not outlive the process.
//
// Records live in Go maps, one set per space. Update works on copies of the
// spaces it writes (copy-on-write) and swaps them in when the function
// returns nil, so a rollback just drops the copies and readers never see a
// transaction half-done. One Update runs at a time; reads never wait for
// an Update to finish, only for the moment its result is swapped in.
//
// Copying a space costs time proportional to the number of its records,
// once per Update that writes it. That is fine for tests and for the
// hundreds to thousands of turns of a conversation; use store/sqlite for
// anything larger or anything that must persist.
package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/higmem/higmem/store"
)

// Store is an in-memory store.Store. The zero value is not usable; call
// New. A Store is safe for concurrent use.
type Store struct {
	wmu sync.Mutex // serialises Update and Close

	mu     sync.RWMutex // guards spaces and closed
	spaces map[store.Space]*space
	closed bool
	clock  int64 // the last version handed out; guarded by wmu
	opts   Options
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return NewWithOptions(Options{}) }

// NewWithOptions returns an empty store tuned by opts.
func NewWithOptions(opts Options) *Store {
	if opts.JournalTombstones <= 0 {
		opts.JournalTombstones = DefaultJournalTombstones
	}
	return &Store{spaces: map[store.Space]*space{}, opts: opts}
}

// read runs fn on the committed space sp under the read lock.
func (s *Store) read(sp store.Space, fn func(*space) error) error {
	if err := sp.Validate(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("memstore: %w", store.ErrClosed)
	}
	return fn(s.spaces[sp])
}

// GetTurn implements store.Reader.
func (s *Store) GetTurn(ctx context.Context, sp store.Space, id string) (t store.Turn, err error) {
	err = s.read(sp, func(x *space) error { t, err = x.getTurn(id); return err })
	return t, err
}

// ListTurns implements store.Reader.
func (s *Store) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) (ts []store.Turn, err error) {
	err = s.read(sp, func(x *space) error { ts = x.listTurns(q); return nil })
	return ts, err
}

// ListAnnotations implements store.Reader.
func (s *Store) ListAnnotations(ctx context.Context, sp store.Space, ids []string) (as []store.Annotation, err error) {
	err = s.read(sp, func(x *space) error { as = x.listAnnotations(ids); return nil })
	return as, err
}

// ListEvents implements store.Reader.
func (s *Store) ListEvents(ctx context.Context, sp store.Space) (es []store.Event, err error) {
	err = s.read(sp, func(x *space) error { es = x.listEvents(); return nil })
	return es, err
}

// ListLinks implements store.Reader.
func (s *Store) ListLinks(ctx context.Context, sp store.Space, ids []string) (ls []store.Link, err error) {
	err = s.read(sp, func(x *space) error { ls = x.listLinks(ids); return nil })
	return ls, err
}

// ListVectors implements store.Reader.
func (s *Store) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) (vs []store.Vector, err error) {
	err = s.read(sp, func(x *space) error { vs = x.listVectors(kind, embedder); return nil })
	return vs, err
}

// History implements store.Reader.
func (s *Store) History(ctx context.Context, sp store.Space, kind, id string) (cs []store.Change, err error) {
	err = s.read(sp, func(x *space) error { cs = x.listHistory(kind, id); return nil })
	return cs, err
}

// Stats implements store.Reader.
func (s *Store) Stats(ctx context.Context, sp store.Space) (st store.Stats, err error) {
	err = s.read(sp, func(x *space) error { st = x.stats(); return nil })
	return st, err
}

// Spaces implements store.Reader.
func (s *Store) Spaces(ctx context.Context) ([]store.Space, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("memstore: %w", store.ErrClosed)
	}
	return spaceList(slices.Collect(maps.Keys(s.spaces)), func(k store.Space) *space { return s.spaces[k] }), nil
}

// SpaceVersion implements store.Store.
func (s *Store) SpaceVersion(ctx context.Context, sp store.Space) (v int64, err error) {
	err = s.read(sp, func(x *space) error {
		if !x.empty() {
			v = x.version
		}
		return nil
	})
	return v, err
}

// Update implements store.Store. fn's error is returned as is; when ctx
// ends before the commit, nothing is written and ctx's error is returned.
// fn must not call Update or Close (they would wait for fn).
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: update: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return fmt.Errorf("memstore: update: %w", store.ErrClosed)
	}
	// Only this goroutine changes s.spaces while it holds wmu, so the
	// transaction may read it without the read lock.
	tx := &tx{base: s.spaces, dirty: map[store.Space]*space{}, clock: s.clock, locked: map[store.Space]store.Head{},
		vers: map[store.Space]int64{}, bound: s.opts.JournalTombstones}
	defer tx.done.Store(true) // also on a panic, which then goes on up
	if err := fn(tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: update: %w", err)
	}
	tx.bumpVersions()
	s.clock = tx.clock
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, x := range tx.dirty {
		if x.empty() {
			delete(s.spaces, k)
		} else {
			s.spaces[k] = x
		}
	}
	return nil
}

// Close implements store.Store. It waits for a running Update.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("memstore: close: %w", store.ErrClosed)
	}
	s.closed = true
	s.spaces = nil
	return nil
}
