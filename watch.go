package higmem

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem/store"
)

// watcher keeps the loaded spaces of a Memory current between reads when
// its store tells of writes as they commit (store.Watcher: PostgreSQL's
// LISTEN/NOTIFY). A notification for a loaded space starts its catch-up in
// the background, so that the next read finds it current instead of
// paying for it. It is a hint only: every read still compares the space's
// version (see Memory.state), so a missed notification costs a catch-up at
// the next read, never a stale answer.
type watcher struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// caughtUp counts background catch-ups that moved a space's state (to
	// another version, or loaded it), for tests. A catch-up counts what it
	// did, under the state's lock (refreshCounting): not a version this
	// memory's own commit applied before it took the lock, and a commit of
	// this memory's own that it applied first is counted before that
	// commit returns.
	caughtUp atomic.Int64
}

// watchBackoff bounds the wait before a broken watch is started again.
const watchBackoff = 30 * time.Second

// startWatching starts the watcher when the store can tell of writes.
func (m *Memory) startWatching() {
	w, ok := m.store.(store.Watcher)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.watcher = &watcher{cancel: cancel}
	m.watcher.wg.Go(func() {
		wait := time.Second
		for {
			started := time.Now()
			err := w.Watch(ctx, func(sp store.Space) { m.changed(ctx, sp) })
			if ctx.Err() != nil {
				return
			}
			m.opts.Logger.Warn("higmem: watching the store for other writers' changes", "err", err, "retry_in", wait)
			if time.Since(started) > time.Minute {
				wait = time.Second
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, watchBackoff)
		}
	})
}

// stopWatching stops the watcher and waits for its catch-ups.
func (m *Memory) stopWatching() {
	if m.watcher != nil {
		m.watcher.cancel()
		m.watcher.wg.Wait()
	}
}

// changed catches up the state of sp, if it is loaded, in the
// background. Notifications that arrive while a catch-up runs make it run
// once more, so the last one is never lost: one that comes after the
// catch-up's last look but before it stands down (and so found it still
// running) is taken up when it does.
func (m *Memory) changed(ctx context.Context, sp store.Space) {
	m.mu.Lock()
	st := m.spaces[sp]
	m.mu.Unlock()
	if st == nil {
		return
	}
	st.notified.Store(true)
	if !st.catchingUp.CompareAndSwap(false, true) {
		return
	}
	m.watcher.wg.Go(func() {
		for {
			m.catchUpNotified(ctx, st)
			st.catchingUp.Store(false)
			if !st.notified.Load() || !st.catchingUp.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// catchUpNotified catches st up while notifications for it keep coming,
// unless it is no longer loaded, ctx is done or a catch-up fails (the next
// read then catches up, as it would without a watcher).
func (m *Memory) catchUpNotified(ctx context.Context, st *spaceState) {
	for st.notified.Swap(false) {
		st.mu.RLock()
		loaded := st.loaded
		st.mu.RUnlock()
		if !loaded || ctx.Err() != nil {
			return
		}
		if err := m.refreshCounting(ctx, st, &m.watcher.caughtUp); err != nil {
			if ctx.Err() == nil {
				m.opts.Logger.Debug("higmem: background catch-up", "space", st.space.String(), "err", err)
			}
			return
		}
	}
}
