package cache

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// SQLite is a Backend storing entries in the table llm_cache of a SQLite
// database the caller opened (for higmem, the store's own database, via
// (*sqlite.Store).DB()). It only uses database/sql; the caller brings the
// driver.
type SQLite struct {
	db *sql.DB
}

// OpenSQLite creates the llm_cache table in db if it does not exist and
// returns a backend using it. Closing db is the caller's business.
func OpenSQLite(ctx context.Context, db *sql.DB) (*SQLite, error) {
	if db == nil {
		return nil, errors.New("cache: OpenSQLite: nil database")
	}
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS llm_cache (
	key        TEXT PRIMARY KEY,
	value      BLOB NOT NULL,
	created_at INTEGER NOT NULL
)`)
	if err != nil {
		return nil, errorf("creating table llm_cache: %w", err)
	}
	return &SQLite{db: db}, nil
}

// Get implements Backend.
func (s *SQLite) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM llm_cache WHERE key = ?`, key).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, errorf("get %s: %w", key, err)
	}
	return v, true, nil
}

// Put implements Backend.
func (s *SQLite) Put(ctx context.Context, key string, value []byte) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO llm_cache (key, value, created_at) VALUES (?, ?, ?)
		 ON CONFLICT(key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at`,
		key, value, time.Now().Unix())
	if err != nil {
		return errorf("put %s: %w", key, err)
	}
	return nil
}

// Len returns the number of entries.
func (s *SQLite) Len(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM llm_cache`).Scan(&n); err != nil {
		return 0, errorf("counting entries: %w", err)
	}
	return n, nil
}

// Clear deletes every entry.
func (s *SQLite) Clear(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM llm_cache`); err != nil {
		return errorf("clearing: %w", err)
	}
	return nil
}

// Forget drops the entries whose value contains one of needles, ASCII
// letters compared case-insensitively, and returns how many it dropped.
// It reads the table once per forgetBatch needles. In a store opened by
// store/sqlite the freed bytes are zeroed (PRAGMA secure_delete).
func (s *SQLite) Forget(ctx context.Context, needles []string) (int, error) {
	var n int64
	for len(needles) > 0 {
		batch := needles[:min(len(needles), forgetBatch)]
		needles = needles[len(batch):]
		conds := make([]string, len(batch))
		args := make([]any, len(batch))
		for i, w := range batch {
			conds[i] = "instr(v, lower(?)) > 0"
			args[i] = w
		}
		q := `DELETE FROM llm_cache WHERE key IN (SELECT key FROM (SELECT key, lower(CAST(value AS TEXT)) AS v FROM llm_cache) WHERE ` +
			strings.Join(conds, " OR ") + `)`
		res, err := s.db.ExecContext(ctx, q, args...)
		if err != nil {
			return int(n), errorf("forget: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return int(n), errorf("forget: %w", err)
		}
		n += k
	}
	return int(n), nil
}

// forgetBatch is how many needles one Forget statement looks for.
const forgetBatch = 200
