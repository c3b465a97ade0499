package higmem

import (
	"sync"

	"github.com/higmem/higmem/store"
)

// timesCacheMax bounds the turns whose time expressions a timesCache
// holds: past it, it starts again empty (a few hundred kilobytes at most).
const timesCacheMax = 4096

// timesCache holds the time expressions that evidenceTimes read from the
// store for a space that has not read its annotations, by turn id, as of
// one version of the space: evidence turns recur from question to
// question, and each read costs a store query. The store's contents at a
// version never change (every committed write gives the space a new
// version), so what the cache holds is the store's own as long as the
// state is at the version the cache was filled at; it is emptied when it
// is not, and when the state is loaded again. Its lock is its own: it is
// read and filled under the state's read lock.
type timesCache struct {
	mu      sync.Mutex
	version int64
	refs    map[string][]store.TimeRef
}

// reset empties c. Caller holds st.mu for writing.
func (c *timesCache) reset() {
	c.mu.Lock()
	c.refs = nil
	c.mu.Unlock()
}

// lookup puts in out[j] the cached time expressions of ids[j] when the
// cache is of version v, emptying it first when it is of another version,
// and returns the indexes into ids of the turns it does not hold.
func (c *timesCache) lookup(v int64, ids []string, out [][]store.TimeRef) (missing []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == nil || c.version != v {
		c.refs, c.version = map[string][]store.TimeRef{}, v
	}
	for j, id := range ids {
		refs, ok := c.refs[id]
		if !ok {
			missing = append(missing, j)
			continue
		}
		out[j] = refs
	}
	return missing
}

// fill records the time expressions read for ids[j] (refs[k] for the
// k-th j of missing) when the cache is still of version v.
func (c *timesCache) fill(v int64, ids []string, missing []int, refs [][]store.TimeRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs == nil || c.version != v {
		return
	}
	if len(c.refs)+len(missing) > timesCacheMax {
		c.refs = map[string][]store.TimeRef{}
	}
	for k, j := range missing {
		c.refs[ids[j]] = refs[k]
	}
}
