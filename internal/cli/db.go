package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// errNoDatabase is the error of a command that reads a SQLite database that
// does not exist: it creates none.
var errNoDatabase = errors.New("no database")

// openDatabase opens the store named by db: a PostgreSQL URL, or the path
// of a SQLite file. With create, a missing file is created, and its folder;
// without, a missing file is errNoDatabase and nothing is created. The
// caller closes the store.
func openDatabase(ctx context.Context, db string, create bool) (*database, error) {
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
	if !create && db != ":memory:" && !strings.HasPrefix(db, "file:") {
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s: nothing has been stored there (check --db or HIGMEM_DB; add, ingest and import create it)", errNoDatabase, db)
		} else if err != nil {
			return nil, fmt.Errorf("database %s: %w", db, err)
		}
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
