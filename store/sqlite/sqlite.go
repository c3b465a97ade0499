// Package sqlite is the default store.Store: one SQLite file, written with
// the pure-Go driver modernc.org/sqlite (no cgo).
//
// # Connections
//
// A file database runs in WAL mode with synchronous=NORMAL, foreign keys on
// and a busy timeout. Update uses one dedicated write connection and begins
// its transactions with BEGIN IMMEDIATE, and Updates run one at a time; reads
// outside Update go to a small pool of other connections and never wait for
// a writer, seeing only committed data. Read connections map up to 1 GiB of
// the file into memory (PRAGMA mmap_size), which spares a system call per
// page when a whole space is read.
//
// The path ":memory:" opens a database that lives in memory and dies with
// the Store. SQLite gives each connection its own in-memory database, so
// such a Store has a single connection shared by reads and Update: reads
// wait while an Update runs, and calling the Store (rather than the Tx)
// from inside an Update function deadlocks.
//
// # Schema
//
// Open creates or upgrades the schema in one transaction; the versions
// applied are recorded in the table schema_version. A file written by a
// newer higmem is refused with ErrSchemaTooNew and left untouched.
//
// # Sharing the file
//
// DB gives other packages (an LLM response cache, evaluation runs) the
// database handle so they can keep their own tables in the same file. They
// must create and migrate their own tables under their own names, with a
// prefix of their own such as "llmcache_", and never touch the store's
// tables: schema_version, space_clock, spaces, turns, annotations, events,
// links, vectors, history, profile_records and tombstones.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/higmem/higmem/store"
)

// Memory is the path that opens an in-memory database.
const Memory = ":memory:"

// Options tunes Open. The zero value is a good default.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// connection or process before failing with SQLITE_BUSY. Zero means 5
	// seconds.
	BusyTimeout time.Duration
	// MaxReadConns caps the connections used by reads outside Update and by
	// DB. Zero means 4. Ignored for ":memory:", which has one connection.
	MaxReadConns int
	// JournalTombstones bounds the tombstones (ids of deleted turns and
	// events) a space keeps for Changes: past it, the older half is
	// dropped and the space's journal floor rises (see store's "The
	// journal"). Zero means DefaultJournalTombstones.
	JournalTombstones int
}

// Store is a store.Store in one SQLite database. It is safe for concurrent
// use.
type Store struct {
	wdb    *sql.DB       // one connection, for Update only (all of it for :memory:)
	rdb    *sql.DB       // reads outside Update, and DB(); the same as wdb for :memory:
	wstmts *stmtCache    // prepared on wdb at Open
	rstmts *stmtCache    // prepared on rdb on first use
	vc     *versionCache // SpaceVersion's answers while nothing commits; nil for :memory:

	wmu sync.Mutex // serialises Update

	opts Options

	mu     sync.RWMutex // held for reading by every call, for writing by Close
	closed bool
}

var (
	_ store.Store                = (*Store)(nil)
	_ store.VectorsIntoReader    = (*Store)(nil)
	_ store.TimeRefsReader       = (*Store)(nil)
	_ store.SpaceTimeRefsReader  = (*Store)(nil)
	_ store.VectorSetsIntoReader = (*Store)(nil)
	_ store.EmbedderLister       = (*Store)(nil)
	_ store.Purger               = (*Store)(nil)
)

// Open opens or creates the database at path (a file path, or ":memory:")
// and brings its schema up to date. The directory must exist.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New(`sqlite: open: empty path (use ":memory:" for a database in memory)`)
	}
	if strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: give a plain file path, without '?' or a file: URI", path)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.MaxReadConns <= 0 {
		opts.MaxReadConns = 4
	}
	if opts.JournalTombstones <= 0 {
		opts.JournalTombstones = DefaultJournalTombstones
	}
	mem := path == Memory
	// secure_delete: deleted and replaced content is overwritten with
	// zeros as its space is freed, so a deleted turn's text does not stay
	// in free space of the file (see Purge for the write-ahead log).
	params := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=secure_delete(1)",
		opts.BusyTimeout.Milliseconds())
	wparams := params + "&_txlock=immediate"
	if !mem {
		wparams += "&_pragma=journal_mode(WAL)"
	}
	wdb, err := sql.Open("sqlite", path+"?"+wparams)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Keep the one write connection forever: for :memory: it is the database.
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	s := &Store{wdb: wdb, rdb: wdb, opts: opts}
	fail := func(err error) (*Store, error) {
		_ = s.closeAll()
		return nil, err
	}
	if err := migrateShared(ctx, wdb, opts.BusyTimeout); err != nil {
		return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
	}
	if s.wstmts, err = prepareAll(ctx, wdb, writeQueries()); err != nil {
		return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
	}
	s.rstmts = s.wstmts
	if !mem {
		if s.rdb, err = sql.Open("sqlite", path+"?"+params+"&_pragma=mmap_size(1073741824)"); err != nil {
			return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
		}
		s.rdb.SetMaxOpenConns(opts.MaxReadConns)
		s.rdb.SetMaxIdleConns(opts.MaxReadConns)
		s.rstmts = &stmtCache{db: s.rdb, m: map[string]*sql.Stmt{}}
		var mode string
		if err := wdb.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
		}
		if strings.EqualFold(mode, "wal") {
			s.vc = openVersionCache(path)
		}
	}
	return s, nil
}

// migrateShared runs migrate, trying again for up to busyTimeout while
// another process holds the file's lock in a way SQLite does not wait for
// (two processes creating a new file at once race to switch it to WAL).
func migrateShared(ctx context.Context, db *sql.DB, busyTimeout time.Duration) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		_, err := migrate(ctx, db, migrations)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		c := coded.Code() & 0xff
		return c == 5 || c == 6
	}
	return false
}

// Purge implements store.Purger. Deleted content is zeroed in the database
// pages as it is freed (Open sets PRAGMA secure_delete), but the
// write-ahead log still holds the pages as they were before: Purge copies
// the log into the database and truncates it to zero bytes (PRAGMA
// wal_checkpoint(TRUNCATE)). Readers of other processes can keep the log
// busy: Purge tries a few times (up to about 0.3 s, letting this process's
// writers in between) and then fails with store.ErrPurgeBlocked.
func (s *Store) Purge(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("sqlite: purge: %w", store.ErrClosed)
	}
	if s.rdb == s.wdb {
		return nil // ":memory:" has no files
	}
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		done, logPages, err := s.checkpoint(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("sqlite: purge: checkpoint: %w", err)
		case done:
			return nil
		case wait > 200*time.Millisecond:
			return fmt.Errorf("sqlite: purge: %w (%d log pages); the next purge finishes it", store.ErrPurgeBlocked, logPages)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sqlite: purge: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// checkpoint runs one truncating checkpoint under the write lock; done is
// false when readers kept it from finishing.
func (s *Store) checkpoint(ctx context.Context) (done bool, logPages int, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var busy, copied int
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &copied); err != nil {
		return false, 0, err
	}
	return busy == 0, logPages, nil
}

// DB returns the database handle, for packages that keep their own tables
// in the same file (see the package doc for the rules). Writes through it
// take SQLite's one write lock, as Update does, and wait up to
// Options.BusyTimeout for it: keep their transactions short, and never
// write through DB from inside an Update function, which holds the lock
// (for ":memory:", do not use DB there at all). The handle is closed by
// Close.
func (s *Store) DB() *sql.DB { return s.rdb }

// Close closes the database. It waits for running calls; later calls fail
// with store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("sqlite: close: %w", store.ErrClosed)
	}
	s.closed = true
	return s.closeAll()
}

func (s *Store) closeAll() error {
	var errs []error
	errs = append(errs, s.vc.close())
	if s.rstmts != nil && s.rstmts != s.wstmts {
		errs = append(errs, s.rstmts.close())
	}
	if s.wstmts != nil {
		errs = append(errs, s.wstmts.close())
	}
	if s.rdb != s.wdb {
		errs = append(errs, s.rdb.Close())
	}
	errs = append(errs, s.wdb.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

// Update implements store.Store. fn's error is returned as is; when ctx
// ends before the commit, nothing is written and ctx's error is returned.
// fn must not call Update or Close (they would wait for fn), nor, for
// ":memory:", any method of s or DB.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("sqlite: update: %w", store.ErrClosed)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: update: begin: %w", err)
	}
	t := newTx(s, sqlTx)
	defer func() {
		t.done.Store(true)
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(t); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := t.bumpVersions(ctx); err != nil {
		_ = sqlTx.Rollback()
		return fmt.Errorf("sqlite: update: %w", err)
	}
	if err := sqlTx.Commit(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr // database/sql rolled back when ctx ended
		}
		return fmt.Errorf("sqlite: update: commit: %w", err)
	}
	return nil
}

// SpaceVersion implements store.Store: one read of the space's row, or
// none when nothing was committed to the file since the space's version
// was last read (see versionCache).
func (s *Store) SpaceVersion(ctx context.Context, sp store.Space) (int64, error) {
	return read(s, &sp, func(r reader) (int64, error) {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("sqlite: space version: %w", err)
		}
		var hdr [walHdrBytes]byte
		cache := false
		if s.vc != nil {
			var v int64
			var hit bool
			if v, hit, hdr, cache = s.vc.get(sp); hit {
				return v, nil
			}
		}
		st, err := s.stmt(ctx, qSpaceVersionByName)
		if err != nil {
			return 0, fmt.Errorf("sqlite: space version: %w", err)
		}
		var v int64
		switch err := st.QueryRowContext(ctx, sp.UserID, sp.AgentID).Scan(&v); err {
		case nil:
			if cache {
				s.vc.put(hdr, sp, v)
			}
			return v, nil
		case sql.ErrNoRows:
			if cache {
				s.vc.put(hdr, sp, 0)
			}
			return 0, nil
		default:
			return 0, fmt.Errorf("sqlite: space version: %w", err)
		}
	})
}

// qSpaceVersionByName reads a space's version outside a transaction.
const qSpaceVersionByName = `SELECT version FROM spaces WHERE user_id = ? AND agent_id = ?`

// stmt implements runner for reads outside Update.
func (s *Store) stmt(ctx context.Context, q string) (*sql.Stmt, error) { return s.rstmts.get(ctx, q) }

// read runs fn for a read outside Update, after the checks every call makes.
func read[T any](s *Store, sp *store.Space, fn func(r reader) (T, error)) (T, error) {
	var zero T
	if sp != nil {
		if err := sp.Validate(); err != nil {
			return zero, err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return zero, fmt.Errorf("sqlite: %w", store.ErrClosed)
	}
	return fn(reader{run: s})
}

// GetTurn implements store.Reader.
func (s *Store) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	return read(s, &sp, func(r reader) (store.Turn, error) { return r.GetTurn(ctx, sp, id) })
}

// ListTurns implements store.Reader.
func (s *Store) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	return read(s, &sp, func(r reader) ([]store.Turn, error) { return r.ListTurns(ctx, sp, q) })
}

// ListAnnotations implements store.Reader.
func (s *Store) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	return read(s, &sp, func(r reader) ([]store.Annotation, error) { return r.ListAnnotations(ctx, sp, ids) })
}

// ListTimeRefs implements store.TimeRefsReader.
func (s *Store) ListTimeRefs(ctx context.Context, sp store.Space, ids []string) ([][]store.TimeRef, error) {
	return read(s, &sp, func(r reader) ([][]store.TimeRef, error) { return r.ListTimeRefs(ctx, sp, ids) })
}

// EachTimeRefs implements store.SpaceTimeRefsReader.
func (s *Store) EachTimeRefs(ctx context.Context, sp store.Space, fn func(id string, refs []store.TimeRef)) error {
	_, err := read(s, &sp, func(r reader) (struct{}, error) { return struct{}{}, r.EachTimeRefs(ctx, sp, fn) })
	return err
}

// ListEvents implements store.Reader.
func (s *Store) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	return read(s, &sp, func(r reader) ([]store.Event, error) { return r.ListEvents(ctx, sp) })
}

// ListLinks implements store.Reader.
func (s *Store) ListLinks(ctx context.Context, sp store.Space, ids []string) ([]store.Link, error) {
	return read(s, &sp, func(r reader) ([]store.Link, error) { return r.ListLinks(ctx, sp, ids) })
}

// ListVectors implements store.Reader.
func (s *Store) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	return read(s, &sp, func(r reader) ([]store.Vector, error) { return r.ListVectors(ctx, sp, kind, embedder) })
}

// VectorsInto implements store.VectorsIntoReader: it decodes the vectors of
// one kind made by one embedder straight into rows of dst, a row-major
// matrix of rows of dim float32s (the vector with id goes to row row(id)),
// skipping a copy of every vector (see ListVectors).
func (s *Store) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	return read(s, &sp, func(r reader) (int, error) { return r.VectorsInto(ctx, sp, kind, embedder, dim, dst, row) })
}

// VectorSetsInto implements store.VectorSetsIntoReader: it decodes the
// vectors of several kinds (or embedders) of a space straight into rows of
// the sets' matrices, reading the vectors table once when the space holds
// most of it.
func (s *Store) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	_, err := read(s, &sp, func(r reader) (struct{}, error) { return struct{}{}, r.VectorSetsInto(ctx, sp, sets) })
	return err
}

// History implements store.Reader.
func (s *Store) History(ctx context.Context, sp store.Space, kind, id string) ([]store.Change, error) {
	return read(s, &sp, func(r reader) ([]store.Change, error) { return r.History(ctx, sp, kind, id) })
}

// Spaces implements store.Reader.
func (s *Store) Spaces(ctx context.Context) ([]store.Space, error) {
	return read(s, nil, func(r reader) ([]store.Space, error) { return r.Spaces(ctx) })
}

// Stats implements store.Reader.
func (s *Store) Stats(ctx context.Context, sp store.Space) (store.Stats, error) {
	return read(s, &sp, func(r reader) (store.Stats, error) { return r.Stats(ctx, sp) })
}

// stmtCache holds statements prepared on one *sql.DB (which re-prepares
// them on each pooled connection as needed).
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// prepareAll returns a cache holding qs prepared on db.
func prepareAll(ctx context.Context, db *sql.DB, qs []string) (*stmtCache, error) {
	c := &stmtCache{db: db, m: map[string]*sql.Stmt{}}
	for _, q := range qs {
		if _, err := c.get(ctx, q); err != nil {
			_ = c.close()
			return nil, err
		}
	}
	return c, nil
}

// lookup returns the statement for q if it is prepared, else nil.
func (c *stmtCache) lookup(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[q]
}

// get returns the statement for q, preparing it if needed. The lock is not
// held while preparing, which may wait for a connection.
func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if st := c.lookup(q); st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("preparing %q: %w", q, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[q]; ok {
		_ = st.Close()
		return old, nil
	}
	c.m[q] = st
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}
