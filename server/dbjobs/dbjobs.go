// Package dbjobs keeps the server's asynchronous jobs in a PostgreSQL
// table, server_jobs, beside the memory (in the connections' current
// schema), so that every `higmem serve` on one database reports the same
// jobs, and the jobs of a server that stopped or crashed are finished by
// another (see server.JobStore). Leases are measured by the database's
// clock, so servers whose clocks disagree still agree on them.
package dbjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// DefaultKeep is how many finished jobs Open's table remembers when keep
// is not positive.
const DefaultKeep = 1000

// Conn is what the table needs of a PostgreSQL connection pool:
// *pgxpool.Pool has it (for higmem, (*postgres.Store).Pool()).
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Table is the server_jobs table. It implements server.JobStore.
type Table struct {
	db   Conn
	keep int
}

var _ server.JobStore = (*Table)(nil)

// Open creates the table if it does not exist. The table remembers the
// newest keep finished jobs (DefaultKeep if keep <= 0). Closing db is the
// caller's business.
func Open(ctx context.Context, db Conn, keep int) (*Table, error) {
	if db == nil {
		return nil, errors.New("dbjobs: open: nil connection")
	}
	if keep <= 0 {
		keep = DefaultKeep
	}
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS server_jobs (
	id          text COLLATE "C" PRIMARY KEY,
	created_at  timestamptz NOT NULL,
	done        boolean NOT NULL DEFAULT false,
	finished_at timestamptz,
	view        jsonb NOT NULL,
	payload     bytea,
	owner       text COLLATE "C" NOT NULL DEFAULT '',
	lease_until timestamptz
)`,
		`CREATE INDEX IF NOT EXISTS server_jobs_open ON server_jobs (created_at, id) WHERE NOT done`,
		`CREATE INDEX IF NOT EXISTS server_jobs_finished ON server_jobs (finished_at) WHERE done`,
	} {
		// Concurrent creators may race on the catalog; the second try sees
		// the table.
		if _, err := db.Exec(ctx, stmt); err != nil {
			if _, err := db.Exec(ctx, stmt); err != nil {
				return nil, fmt.Errorf("dbjobs: creating table server_jobs: %w", err)
			}
		}
	}
	return &Table{db: db, keep: keep}, nil
}

// seconds is a lease as PostgreSQL's make_interval takes it.
func seconds(d time.Duration) float64 { return d.Seconds() }

// CreateJob implements server.JobStore.
func (t *Table) CreateJob(ctx context.Context, j api.Job, payload []byte, owner string, lease time.Duration) error {
	view, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("dbjobs: encoding job %s: %w", j.ID, err)
	}
	if payload == nil {
		payload = []byte{}
	}
	_, err = t.db.Exec(ctx, `INSERT INTO server_jobs (id, created_at, view, payload, owner, lease_until)
VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`, j.ID, j.CreatedAt, view, payload, owner, seconds(lease))
	if err != nil {
		return fmt.Errorf("dbjobs: creating job %s: %w", j.ID, err)
	}
	return nil
}

// ClaimJob implements server.JobStore. Claimers skip each other's locked
// rows, so concurrent claims never take one job twice.
func (t *Table) ClaimJob(ctx context.Context, owner string, lease time.Duration) (api.Job, []byte, bool, error) {
	var view, payload []byte
	err := t.db.QueryRow(ctx, `UPDATE server_jobs SET owner = $1, lease_until = now() + make_interval(secs => $2)
WHERE id = (SELECT id FROM server_jobs WHERE NOT done AND lease_until < now()
            ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING view, payload`, owner, seconds(lease)).Scan(&view, &payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return api.Job{}, nil, false, nil
	}
	if err != nil {
		return api.Job{}, nil, false, fmt.Errorf("dbjobs: claiming a job: %w", err)
	}
	var j api.Job
	if err := json.Unmarshal(view, &j); err != nil {
		return api.Job{}, nil, false, fmt.Errorf("dbjobs: stored job unreadable: %w", err)
	}
	return j, payload, true, nil
}

// UpdateJob implements server.JobStore. A finished job drops its payload
// and lease, and the oldest finished jobs beyond the table's keep are
// deleted.
func (t *Table) UpdateJob(ctx context.Context, owner string, j api.Job, lease time.Duration) error {
	view, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("dbjobs: encoding job %s: %w", j.ID, err)
	}
	var tag pgconn.CommandTag
	if j.Done() {
		tag, err = t.db.Exec(ctx, `UPDATE server_jobs SET view = $3, done = true, finished_at = now(),
payload = NULL, owner = '', lease_until = NULL
WHERE id = $1 AND owner = $2 AND NOT done`, j.ID, owner, view)
	} else {
		tag, err = t.db.Exec(ctx, `UPDATE server_jobs SET view = $3, lease_until = now() + make_interval(secs => $4)
WHERE id = $1 AND owner = $2 AND NOT done`, j.ID, owner, view, seconds(lease))
	}
	if err != nil {
		return fmt.Errorf("dbjobs: updating job %s: %w", j.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", server.ErrJobLost, j.ID)
	}
	if j.Done() {
		_, err = t.db.Exec(ctx, `DELETE FROM server_jobs WHERE id IN (
SELECT id FROM server_jobs WHERE done ORDER BY finished_at DESC, id DESC OFFSET $1)`, t.keep)
		if err != nil {
			return fmt.Errorf("dbjobs: forgetting old jobs: %w", err)
		}
	}
	return nil
}

// Job implements server.JobStore.
func (t *Table) Job(ctx context.Context, id string) (api.Job, bool, error) {
	var view []byte
	err := t.db.QueryRow(ctx, `SELECT view FROM server_jobs WHERE id = $1`, id).Scan(&view)
	if errors.Is(err, pgx.ErrNoRows) {
		return api.Job{}, false, nil
	}
	if err != nil {
		return api.Job{}, false, fmt.Errorf("dbjobs: reading job %s: %w", id, err)
	}
	var j api.Job
	if err := json.Unmarshal(view, &j); err != nil {
		return api.Job{}, false, fmt.Errorf("dbjobs: stored job %s unreadable: %w", id, err)
	}
	return j, true, nil
}
