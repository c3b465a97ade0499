// Package postgres is a store.Store in a PostgreSQL database, through pgx
// (v5) and its connection pool. It is the store for deployments that
// outgrow one machine: several higmem processes may share one database.
//
// # Connections and transactions
//
// Reads outside Update run on the pool, each one query (one snapshot), and
// never wait for a writer. Update runs one PostgreSQL transaction (READ
// COMMITTED) on one pooled connection. The first time it names a space it
// takes that space's transaction-scoped advisory lock: Updates
// of one space run one at a time, in this process and across every process
// that shares the database, while Updates of other spaces run alongside.
// At most half the pool's connections run Updates at once, so reads always
// find a connection. A transaction touching several spaces (which the
// engine never runs concurrently with another such transaction) may meet a
// deadlock, which PostgreSQL breaks by failing one of them. Inside
// Update, reads see the transaction's own writes. The Store itself may be
// read from inside an Update function (another pooled connection serves
// it), seeing only committed data.
//
// # Schema
//
// Options.Schema names the PostgreSQL schema holding higmem's tables
// (created when missing); empty means the connection's current schema
// (usually public, or what the DSN's search_path names). Open creates or
// upgrades the tables in one transaction, recording applied versions in
// schema_version; a schema written by a newer higmem is refused with
// ErrSchemaTooNew. Several higmem databases can live in one PostgreSQL
// database, one per schema (the tests run that way, in parallel).
//
// # Data
//
// The tables and their encodings follow store/sqlite's, so both backends
// hold the same records the same way: times are fixed-width UTC text with
// nanoseconds (timestamptz keeps only microseconds), and vectors are bytea
// of little-endian float32s, 4 bytes a dimension. A vector as real[] would
// take 8 bytes a dimension on the wire (each element carries its length)
// and be decoded element by element; the engine reads every vector of a
// space when it loads it, so bytea halves that traffic. Similarity search
// stays in the engine's in-memory working set: the pgvector extension is
// neither needed nor used.
//
// PostgreSQL text cannot hold NUL bytes or invalid UTF-8. Every string is
// stored with each invalid byte and each NUL replaced by U+FFFD (what
// encoding/json does to invalid bytes); turn identity (PutTurn's no-op or
// ErrConflict) compares the stored forms.
//
// # Sharing the database
//
// Pool gives other packages (an LLM response cache, the server's API keys)
// the connection pool so they can keep their own tables in the same
// schema. They must use names with a prefix of their own, such as
// "llmcache_", and never touch the store's tables: schema_version, spaces,
// turns, annotations, events, links, vectors, history, profile_records,
// tombstones and the sequence space_version.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/higmem/higmem/store"
)

// Options tunes Open. The zero value is a good default.
type Options struct {
	// Schema is the PostgreSQL schema of higmem's tables, created when
	// missing. Empty uses the connection's current schema.
	Schema string
	// MaxConns caps the pool's connections. Zero means pgxpool's default
	// (the larger of 4 and the number of CPUs). At least 2 are used, so
	// that reads outside an Update never wait for it.
	MaxConns int32
	// JournalTombstones bounds the tombstones (ids of deleted turns and
	// events) a space keeps for Changes: past it, the older half is
	// dropped and the space's journal floor rises (see store's "The
	// journal"). Zero means DefaultJournalTombstones.
	JournalTombstones int
}

// Store is a store.Store in a PostgreSQL database. It is safe for
// concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	schema string // the schema of the tables, as the server names it

	wsem chan struct{} // bounds the Updates of this process holding a connection
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
)

// Open connects to the database named by dsn (a URL such as
// postgres://user:pass@host:5432/db?sslmode=disable, or a key=value
// string; see pgx's ParseConfig) and brings its schema up to date.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the DSN with its password redacted.
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	cfg.MaxConns = max(cfg.MaxConns, 2)
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if opts.JournalTombstones <= 0 {
		opts.JournalTombstones = DefaultJournalTombstones
	}
	s := &Store{pool: pool, wsem: make(chan struct{}, max(1, cfg.MaxConns/2)), opts: opts}
	if _, err := migrate(ctx, pool, opts.Schema, lockKey("migrate", opts.Schema), migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&s.schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: reading the current schema: %w", err)
	}
	return s, nil
}

// lockKey is the advisory lock key for one purpose on one schema: the
// first 8 bytes of an FNV-1a hash, so unrelated schemas of a database
// (almost surely) do not contend.
func lockKey(purpose, schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("higmem " + purpose + " " + schema))
	return int64(h.Sum64())
}

// Schema returns the PostgreSQL schema holding the store's tables.
func (s *Store) Schema() string { return s.schema }

// Pool returns the connection pool, for packages that keep their own
// tables in the same schema (see the package doc for the rules). Its
// connections' search_path is the store's schema. The pool is closed by
// Close.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool. It waits for running calls; later calls fail
// with store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("postgres: close: %w", store.ErrClosed)
	}
	s.closed = true
	s.pool.Close()
	return nil
}

// Update implements store.Store. fn's error is returned as is; when ctx
// ends before the commit, nothing is written and ctx's error is returned.
// fn must not call Update or Close (they would wait for fn).
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fmt.Errorf("postgres: update: %w", store.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: update: %w", err)
	}
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("postgres: update: %w", ctx.Err())
	}
	defer func() { <-s.wsem }()
	pgTx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: update: begin: %w", err)
	}
	// Rollback must run even when ctx has ended.
	rollback := func() { _ = pgTx.Rollback(context.WithoutCancel(ctx)) }
	t := newTx(pgTx, s.schema, s.opts.JournalTombstones)
	defer func() {
		t.done.Store(true)
		if p := recover(); p != nil {
			rollback()
			panic(p)
		}
	}()
	if err := fn(t); err != nil {
		rollback()
		return err
	}
	if err := t.bumpVersions(ctx); err != nil {
		rollback()
		return fmt.Errorf("postgres: update: %w", err)
	}
	if err := ctx.Err(); err != nil {
		rollback()
		return fmt.Errorf("postgres: update: %w", err)
	}
	if err := pgTx.Commit(ctx); err != nil {
		rollback()
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return fmt.Errorf("postgres: update: commit: %w", err)
	}
	return nil
}

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
		return zero, fmt.Errorf("postgres: %w", store.ErrClosed)
	}
	return fn(reader{q: s.pool})
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

// VectorsInto decodes the vectors of one kind made by one embedder straight
// into rows of dst, a row-major matrix of rows of dim float32s: the vector
// with id goes to row row(id). Vectors whose row is negative, or of another
// dimension, are skipped. It returns how many rows it wrote. Loading a
// space this way skips a copy of every vector (see ListVectors).
func (s *Store) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	return read(s, &sp, func(r reader) (int, error) { return r.VectorsInto(ctx, sp, kind, embedder, dim, dst, row) })
}

// VectorSetsInto implements store.VectorSetsIntoReader: it decodes the
// vectors of several kinds (or embedders) of a space straight into rows of
// the sets' matrices, all sets in one query (one round trip and one
// snapshot) rather than one VectorsInto each.
func (s *Store) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	_, err := read(s, &sp, func(r reader) (struct{}, error) { return struct{}{}, r.VectorSetsInto(ctx, sp, sets) })
	return err
}

// Embedders lists the embedders that made vectors of kind in sp, sorted;
// with ListVectors it enumerates every stored vector (higmem migrate uses
// it).
func (s *Store) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	return read(s, &sp, func(r reader) ([]string, error) { return r.Embedders(ctx, sp, kind) })
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

// SpaceVersion returns the version of sp: it changes (grows) with every
// committed Update that changed the space, and is 0 for a space that has no
// row (never written, or deleted). One indexed query: what a cache of the
// space checks before serving a read.
func (s *Store) SpaceVersion(ctx context.Context, sp store.Space) (int64, error) {
	return read(s, &sp, func(r reader) (int64, error) {
		var v int64
		err := r.q.QueryRow(ctx, `SELECT version FROM spaces WHERE user_id = $1 AND agent_id = $2`, clean(sp.UserID), clean(sp.AgentID)).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("postgres: space version: %w", err)
		}
		return v, nil
	})
}
