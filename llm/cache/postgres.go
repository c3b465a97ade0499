package cache

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PGConn is what the Postgres backend needs of a PostgreSQL connection
// pool: *pgxpool.Pool has it (for higmem, (*postgres.Store).Pool()).
type PGConn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Postgres is a Backend storing entries in the table llm_cache of a
// PostgreSQL database (in the connections' current schema), so that every
// process sharing the database shares the cache.
type Postgres struct {
	db PGConn
}

// OpenPostgres creates the llm_cache table if it does not exist and
// returns a backend using it. Closing db is the caller's business.
func OpenPostgres(ctx context.Context, db PGConn) (*Postgres, error) {
	if db == nil {
		return nil, errors.New("cache: OpenPostgres: nil connection")
	}
	// Concurrent creators may race on the catalog: one of them may fail
	// with a unique violation although the table now exists, so retry once.
	create := `CREATE TABLE IF NOT EXISTS llm_cache (
	key        text PRIMARY KEY,
	value      bytea NOT NULL,
	created_at bigint NOT NULL
)`
	if _, err := db.Exec(ctx, create); err != nil {
		if _, err := db.Exec(ctx, create); err != nil {
			return nil, errorf("creating table llm_cache: %w", err)
		}
	}
	return &Postgres{db: db}, nil
}

// Get implements Backend.
func (p *Postgres) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := p.db.QueryRow(ctx, `SELECT value FROM llm_cache WHERE key = $1`, key).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, errorf("get %s: %w", key, err)
	}
	return v, true, nil
}

// Put implements Backend.
func (p *Postgres) Put(ctx context.Context, key string, value []byte) error {
	_, err := p.db.Exec(ctx,
		`INSERT INTO llm_cache (key, value, created_at) VALUES ($1, $2, $3)
		 ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
		key, value, time.Now().Unix())
	if err != nil {
		return errorf("put %s: %w", key, err)
	}
	return nil
}

// Len returns the number of entries.
func (p *Postgres) Len(ctx context.Context) (int, error) {
	var n int
	if err := p.db.QueryRow(ctx, `SELECT count(*) FROM llm_cache`).Scan(&n); err != nil {
		return 0, errorf("counting entries: %w", err)
	}
	return n, nil
}

// Clear deletes every entry.
func (p *Postgres) Clear(ctx context.Context) error {
	if _, err := p.db.Exec(ctx, `DELETE FROM llm_cache`); err != nil {
		return errorf("clearing: %w", err)
	}
	return nil
}

// Forget drops the entries whose value contains one of needles, letters
// compared case-insensitively, and returns how many it dropped, in one pass
// over the table. PostgreSQL keeps the deleted rows as dead tuples until
// VACUUM (see docs/PRIVACY.md).
func (p *Postgres) Forget(ctx context.Context, needles []string) (int, error) {
	if len(needles) == 0 {
		return 0, nil
	}
	tag, err := p.db.Exec(ctx, `DELETE FROM llm_cache WHERE EXISTS (
		SELECT 1 FROM unnest($1::text[]) AS n WHERE strpos(lower(convert_from(value, 'UTF8')), lower(n)) > 0)`, needles)
	if err != nil {
		return 0, errorf("forget: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
