// Package dbkeys keeps the server's API keys in a PostgreSQL table,
// server_keys, beside the memory (in the connections' current schema), so
// that every `higmem serve` on one database accepts the same keys: a key
// added or revoked once is seen by all of them (see server.KeySource).
// As in a keys file, only the SHA-256 of each secret is stored.
package dbkeys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/higmem/higmem/server"
)

// ErrExists is returned by Add when a key of the same name or hash is
// already stored.
var ErrExists = errors.New("dbkeys: a key with this name or hash exists")

// Conn is what the table needs of a PostgreSQL connection pool:
// *pgxpool.Pool has it (for higmem, (*postgres.Store).Pool()).
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Table is the server_keys table. It implements server.KeySource.
type Table struct {
	db Conn
}

var _ server.KeySource = (*Table)(nil)

// Open creates the table if it does not exist. Closing db is the caller's
// business.
func Open(ctx context.Context, db Conn) (*Table, error) {
	if db == nil {
		return nil, errors.New("dbkeys: open: nil connection")
	}
	create := `CREATE TABLE IF NOT EXISTS server_keys (
	name       text COLLATE "C" PRIMARY KEY,
	sha256     text NOT NULL UNIQUE,
	users      text[] NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
)`
	// Concurrent creators may race on the catalog; the second try sees
	// the table.
	if _, err := db.Exec(ctx, create); err != nil {
		if _, err := db.Exec(ctx, create); err != nil {
			return nil, fmt.Errorf("dbkeys: creating table server_keys: %w", err)
		}
	}
	return &Table{db: db}, nil
}

// Add stores k after validating it (as a keys file's entries are).
func (t *Table) Add(ctx context.Context, k server.Key) error {
	ks, err := server.NewKeys([]server.Key{k})
	if err != nil {
		return err
	}
	k = ks.Keys()[0]
	tag, err := t.db.Exec(ctx, `INSERT INTO server_keys (name, sha256, users) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		k.Name, k.SHA256, k.Users)
	if err != nil {
		return fmt.Errorf("dbkeys: adding key %q: %w", k.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q", ErrExists, k.Name)
	}
	return nil
}

// Revoke deletes the key named name; found is false when there is none.
func (t *Table) Revoke(ctx context.Context, name string) (found bool, err error) {
	tag, err := t.db.Exec(ctx, `DELETE FROM server_keys WHERE name = $1`, name)
	if err != nil {
		return false, fmt.Errorf("dbkeys: revoking key %q: %w", name, err)
	}
	return tag.RowsAffected() > 0, nil
}

// Entry is a stored key with the time it was added.
type Entry struct {
	server.Key
	CreatedAt time.Time `json:"created_at"`
}

// List returns the stored keys ordered by name.
func (t *Table) List(ctx context.Context) ([]Entry, error) {
	rows, err := t.db.Query(ctx, `SELECT name, sha256, users, created_at FROM server_keys ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("dbkeys: listing keys: %w", err)
	}
	es, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := row.Scan(&e.Name, &e.SHA256, &e.Users, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("dbkeys: listing keys: %w", err)
	}
	return es, nil
}

// LoadKeys implements server.KeySource.
func (t *Table) LoadKeys(ctx context.Context) (*server.Keys, error) {
	es, err := t.List(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]server.Key, len(es))
	for i, e := range es {
		keys[i] = e.Key
	}
	ks, err := server.NewKeys(keys)
	if err != nil {
		return nil, fmt.Errorf("dbkeys: stored keys: %w", err)
	}
	return ks, nil
}
