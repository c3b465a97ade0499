package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrSchemaTooNew is returned by Open when the database was written by a
// newer version of higmem, whose schema this build does not know.
var ErrSchemaTooNew = errors.New("postgres: database schema is newer than this build of higmem")

// migrations are the schema changes, in order: migrations[i] takes a
// schema from version i to i+1. Never edit one that has shipped; append a
// new one instead.
//
// Conventions (those of store/sqlite, so that the two hold the same data
// the same way): a space is a row of spaces, and every other table refers
// to it with ON DELETE CASCADE, so deleting the row deletes the space. Ids
// and other text that is sorted collate "C" (byte order, whatever the
// database's locale). Times are fixed-width UTC text (see timeLayout), NULL
// when zero. String lists are text[], structured values jsonb, NULL when
// empty. Vectors are bytea of little-endian float32s.
//
// spaces.version is drawn from the sequence space_version and set anew by
// every committed Update that writes the space, so it only grows, even
// across a DeleteSpace and re-creation of the space.
var migrations = []string{
	// 1: the first schema.
	`
CREATE SEQUENCE space_version;

CREATE TABLE spaces (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	user_id  text COLLATE "C" NOT NULL,
	agent_id text COLLATE "C" NOT NULL,
	version  bigint NOT NULL DEFAULT nextval('space_version'),
	UNIQUE (user_id, agent_id)
);

CREATE TABLE turns (
	space_id     bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id           text COLLATE "C" NOT NULL,
	session_id   text COLLATE "C" NOT NULL,
	seq          bigint NOT NULL,
	speaker      text NOT NULL,
	text         text NOT NULL,
	attachments  jsonb,
	occurred_at  text COLLATE "C",
	occurred_raw text NOT NULL,
	recorded_at  text COLLATE "C",
	metadata     jsonb,
	PRIMARY KEY (space_id, id)
);
CREATE INDEX turns_seq ON turns (space_id, seq, id);
CREATE INDEX turns_session ON turns (space_id, session_id, seq, id);

CREATE TABLE annotations (
	space_id   bigint NOT NULL,
	turn_id    text COLLATE "C" NOT NULL,
	keywords   text[],
	tags       text[],
	entities   text[],
	context    text NOT NULL,
	time_refs  jsonb,
	producer   text NOT NULL,
	updated_at text COLLATE "C",
	PRIMARY KEY (space_id, turn_id),
	FOREIGN KEY (space_id, turn_id) REFERENCES turns (space_id, id) ON DELETE CASCADE
);

CREATE TABLE events (
	space_id   bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id         text COLLATE "C" NOT NULL,
	title      text NOT NULL,
	summary    text NOT NULL,
	facts      jsonb,
	entities   text[],
	keywords   text[],
	tags       text[],
	turn_ids   text[],
	start_at   text COLLATE "C",
	end_at     text COLLATE "C",
	producer   text NOT NULL,
	version    bigint NOT NULL,
	created_at text COLLATE "C",
	updated_at text COLLATE "C",
	PRIMARY KEY (space_id, id)
);
CREATE INDEX events_created ON events (space_id, (coalesce(created_at, '0001-01-01T00:00:00.000000000Z')), id);

CREATE TABLE links (
	space_id       bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	source         text COLLATE "C" NOT NULL,
	target         text COLLATE "C" NOT NULL,
	relation       text COLLATE "C" NOT NULL,
	confidence     double precision NOT NULL,
	created_at     text COLLATE "C",
	invalidated_at text COLLATE "C",
	PRIMARY KEY (space_id, source, target, relation)
);
CREATE INDEX links_target ON links (space_id, target);

CREATE TABLE vectors (
	space_id bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	kind     text COLLATE "C" NOT NULL,
	id       text COLLATE "C" NOT NULL,
	embedder text COLLATE "C" NOT NULL,
	dim      integer NOT NULL,
	data     bytea NOT NULL, -- dim float32s, little-endian
	PRIMARY KEY (space_id, kind, id)
);
CREATE INDEX vectors_embedder ON vectors (space_id, kind, embedder, id);

CREATE TABLE history (
	space_id bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	seq      bigint NOT NULL,
	kind     text COLLATE "C" NOT NULL,
	id       text COLLATE "C" NOT NULL,
	action   text NOT NULL,
	actor    text NOT NULL,
	before   bytea,
	after    bytea,
	at       text COLLATE "C" NOT NULL,
	PRIMARY KEY (space_id, seq)
);
CREATE INDEX history_record ON history (space_id, kind, id, seq);
`,
	// 2: profile records (what a model stated about a person). turn_ids is
	// never empty; DeleteTurn removes the records citing the deleted turn.
	`
CREATE TABLE profile_records (
	space_id   bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id         text COLLATE "C" NOT NULL,
	entity     text COLLATE "C" NOT NULL,
	attribute  text COLLATE "C" NOT NULL,
	value      text NOT NULL,
	ended      boolean NOT NULL,
	turn_ids   text[] NOT NULL,
	stated_at  text COLLATE "C",
	producer   text NOT NULL,
	created_at text COLLATE "C",
	PRIMARY KEY (space_id, id)
);
CREATE INDEX profile_records_entity ON profile_records (space_id, entity, id);
`,
	// 3: the journal (journal.go): per-record versions, tombstones of
	// deleted turns, events and profile records, and each space's journal
	// floor.
	journalMigration,
}

// migrate creates schema (when not empty) and brings it up to len(migs)
// in one transaction, under an advisory lock so that processes opening the
// same schema at once take turns. It returns the version it found and
// fails with ErrSchemaTooNew, changing nothing, when the schema is newer
// than migs.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, lockKey int64, migs []string) (from int, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey); err != nil {
		return 0, fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	if schema != "" {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return 0, fmt.Errorf("postgres: migrate: creating schema %q: %w", schema, err)
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version    integer PRIMARY KEY,
	applied_at text NOT NULL
)`); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&from); err != nil {
		return 0, fmt.Errorf("postgres: migrate: reading schema version: %w", err)
	}
	if from > len(migs) {
		return from, fmt.Errorf("%w: the schema is at version %d, this build knows versions up to %d; open it with a newer higmem", ErrSchemaTooNew, from, len(migs))
	}
	now := time.Now().UTC().Format(timeLayout)
	for v := from; v < len(migs); v++ {
		if _, err := tx.Exec(ctx, migs[v]); err != nil {
			return from, fmt.Errorf("postgres: migrate: applying version %d: %w", v+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)`, v+1, now); err != nil {
			return from, fmt.Errorf("postgres: migrate: recording version %d: %w", v+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return from, fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	return from, nil
}
