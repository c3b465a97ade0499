package higmem

// CacheStats is what a Memory holds in memory now, for monitoring (the
// server's /metrics). Reading it changes nothing.
type CacheStats struct {
	// Spaces is the number of space states the cache holds and counts
	// against Limit (loaded ones, and any dropped by another writer's
	// change until their next use reloads them).
	Spaces int
	// Bytes is the estimated heap of the loaded states, the figure that
	// Options.CacheBytes bounds (see cache.go).
	Bytes int64
	// Limit is Options.CacheBytes as applied (negative: no bound).
	Limit int64
	// CatchUps counts the loaded states brought up to date in place with
	// another writer's changes, since Open, instead of being loaded afresh.
	CatchUps int64
}

// CacheStats returns what the Memory holds in memory now.
func (m *Memory) CacheStats() CacheStats {
	cs := CacheStats{Limit: m.opts.CacheBytes, CatchUps: m.catchUps.Load()}
	m.mu.Lock()
	defer m.mu.Unlock()
	for e := m.lru.Front(); e != nil; e = e.Next() {
		if n := e.Value.(*spaceState).size.Load(); n > 0 {
			cs.Spaces++
			cs.Bytes += n
		}
	}
	return cs
}
