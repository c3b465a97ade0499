package sqlite

import (
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/store"
)

// A read of SpaceVersion is one indexed SELECT, but in SQLite every read
// transaction also takes and drops a lock on the write-ahead log's index
// (fcntl calls) and checks the file's size: some 20-50 µs a call when the
// caches are cold, as they are at the start of every retrieval. Most
// calls find nothing changed. versionCache answers those without SQL.
//
// In WAL mode every connection, of this process or another, finds the
// database's current state through the WAL index (the "-shm" file beside
// the database): its header, kept twice at the start of the file (two
// copies of 48 bytes), is rewritten by every commit, which sets a change
// counter (iChange), the log's frame count and checksums anew, and a read
// transaction sees a commit exactly when the header it reads says so (the
// format is documented in SQLite's "WAL-mode File Format"). So when the
// two copies read now are byte for byte the header read before a SELECT
// ran, nothing was committed since that header was read, and the SELECT's
// answer is still the store's. The cache keeps the versions read under one
// header and forgets them all when the header changes: any commit to the
// file (any space, any table, a checkpoint's log restart) sends the next
// call of every space to SQL once.
//
// The header is read with one pread (no mapping, so a file cut short
// cannot fault the process), and then the file is checked to be still the
// one at the path (on Unix: that it still has a link, one fstat): a
// "-shm" file deleted and created anew (the last connection of every
// process closed) is never trusted. The cache is used only for a file in
// WAL mode (checked at Open), and only while the header says the format
// version SQLite documents. While this Store is open its connections hold
// SQLite's shared locks (in WAL mode a connection keeps a read lock on the
// database file and on the index's DMS byte from its first read to its
// close), so no other process can take the file out of WAL mode, lock it
// exclusively (an index in heap memory) or reset the index file.
type versionCache struct {
	f    *os.File    // the -shm file, read only; nil: no cache
	fd   uintptr     // f's descriptor
	path string      // its path
	info os.FileInfo // f's identity when opened

	mu  sync.Mutex
	hdr [walHdrBytes]byte // the header the versions were read under
	ok  bool              // hdr holds a header
	v   map[store.Space]int64

	hits atomic.Int64 // answers from the cache (for tests)
}

const (
	// walHdrBytes is the WAL index header's two copies.
	walHdrBytes = 96
	// walIndexVersion is the header's format version (WALINDEX_MAX_VERSION).
	walIndexVersion = 3007000
	// versionCacheMax bounds the spaces one header keeps.
	versionCacheMax = 4096
)

// openVersionCache returns the cache of the database at path, opened in
// WAL mode, or a cache that is never used when its WAL index cannot be
// read.
func openVersionCache(path string) *versionCache {
	c := &versionCache{path: path + "-shm", v: map[store.Space]int64{}}
	f, err := os.Open(c.path)
	if err != nil {
		return c
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return c
	}
	c.f, c.fd, c.info = f, f.Fd(), info
	return c
}

// header reads the WAL index header; ok is false when it cannot be
// trusted: not readable in full, its two copies differ (a commit writing
// it), not initialised, of another format, or the file is no longer the
// one at the path.
func (c *versionCache) header() (h [walHdrBytes]byte, ok bool) {
	if c.f == nil {
		return h, false
	}
	if n, err := c.f.ReadAt(h[:], 0); n != len(h) || err != nil {
		return h, false
	}
	if [48]byte(h[:48]) != [48]byte(h[48:]) || binary.NativeEndian.Uint32(h[0:4]) != walIndexVersion || h[12] != 1 {
		return h, false
	}
	// After the read: a file no longer at the path (deleted, perhaps a
	// new one made) says nothing about the database now.
	if !c.current() {
		return h, false
	}
	return h, true
}

// get returns sp's version when nothing was committed since it was read;
// h is the header read now, for put, when ok.
func (c *versionCache) get(sp store.Space) (v int64, hit bool, h [walHdrBytes]byte, ok bool) {
	if h, ok = c.header(); !ok {
		return 0, false, h, false
	}
	c.mu.Lock()
	if c.ok && c.hdr == h {
		v, hit = c.v[sp]
	}
	c.mu.Unlock()
	if hit {
		c.hits.Add(1)
	}
	return v, hit, h, true
}

// put records v, sp's version read by a SELECT that began after h was
// read. The versions read under another header are forgotten.
func (c *versionCache) put(h [walHdrBytes]byte, sp store.Space, v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.hdr != h || len(c.v) >= versionCacheMax {
		c.hdr, c.ok = h, true
		clear(c.v)
	}
	c.v[sp] = v
}

// close closes the file.
func (c *versionCache) close() error {
	if c == nil || c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}
