package higmem

import "time"

// SetClock makes m stamp what it stores with now instead of time.Now, for
// the tests of package higmem_test.
func SetClock(m *Memory, now func() time.Time) { m.now = now }

// LoadedSpaces returns how many spaces m keeps loaded.
func LoadedSpaces(m *Memory) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.spaces)
}

// CatchUps returns how many times m caught a space up in place from what
// other writers appended, rather than loading it again.
func CatchUps(m *Memory) int64 { return m.catchUps.Load() }

// WatchCatchUps returns how many background catch-ups of m's watcher
// moved a space (watcher.caughtUp): -1 without a watcher.
func WatchCatchUps(m *Memory) int64 {
	if m.watcher == nil {
		return -1
	}
	return m.watcher.caughtUp.Load()
}

// Fragmentation is the allowance the cache's estimate makes for heap
// fragmentation (cache.go).
const Fragmentation = fragmentation
