package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

// isPostgres reports whether db (a --db value) names a PostgreSQL
// database, as a postgres:// or postgresql:// URL, rather than a SQLite
// file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// displayDB is db as it may be printed: a URL's password is masked.
func displayDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// database is an opened store with what lives beside it in the same
// database.
type database struct {
	Store store.Store
	// openCache opens the LLM response cache kept in the database.
	openCache func(ctx context.Context) (cache.Backend, error)
}

// openDatabase opens the store named by db: a PostgreSQL URL, or the path
// of a SQLite file (its directory is created when missing). The caller
// closes the store.
func openDatabase(ctx context.Context, db string) (*database, error) {
	if db == "" {
		return nil, fmt.Errorf("no database: give --db FILE or --db postgres://... (or HIGMEM_DB)")
	}
	if isPostgres(db) {
		st, err := postgres.Open(ctx, db, postgres.Options{})
		if err != nil {
			return nil, err
		}
		return &database{Store: st, openCache: func(ctx context.Context) (cache.Backend, error) {
			return cache.OpenPostgres(ctx, st.Pool())
		}}, nil
	}
	if dir := filepath.Dir(db); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		return nil, err
	}
	return &database{Store: st, openCache: func(ctx context.Context) (cache.Backend, error) {
		return cache.OpenSQLite(ctx, st.DB())
	}}, nil
}
