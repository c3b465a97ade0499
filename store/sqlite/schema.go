package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrSchemaTooNew is returned by Open when the database was written by a
// newer version of higmem, whose schema this build does not know.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this build of higmem")

// migrations are the schema changes, in order: migrations[i] takes a
// database from version i to i+1. Never edit one that has shipped; append a
// new one instead.
//
// Conventions: a space is a row of spaces, and every other table refers to
// it with ON DELETE CASCADE, so deleting the row deletes the space. Times
// are fixed-width UTC text (see timeLayout), NULL when zero. Lists and maps
// are JSON text, NULL when empty. The package doc lists the table names,
// which other packages sharing the file must not use.
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE spaces (
	id       INTEGER PRIMARY KEY,
	user_id  TEXT NOT NULL,
	agent_id TEXT NOT NULL,
	UNIQUE (user_id, agent_id)
);

CREATE TABLE turns (
	space_id     INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id           TEXT NOT NULL,
	session_id   TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	speaker      TEXT NOT NULL,
	text         TEXT NOT NULL,
	attachments  TEXT,
	occurred_at  TEXT,
	occurred_raw TEXT NOT NULL,
	recorded_at  TEXT,
	metadata     TEXT,
	PRIMARY KEY (space_id, id)
);
CREATE INDEX turns_seq ON turns (space_id, seq, id);
CREATE INDEX turns_session ON turns (space_id, session_id, seq, id);

CREATE TABLE annotations (
	space_id   INTEGER NOT NULL,
	turn_id    TEXT NOT NULL,
	keywords   TEXT,
	tags       TEXT,
	entities   TEXT,
	context    TEXT NOT NULL,
	time_refs  TEXT,
	producer   TEXT NOT NULL,
	updated_at TEXT,
	PRIMARY KEY (space_id, turn_id),
	FOREIGN KEY (space_id, turn_id) REFERENCES turns (space_id, id) ON DELETE CASCADE
);

CREATE TABLE events (
	space_id   INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id         TEXT NOT NULL,
	title      TEXT NOT NULL,
	summary    TEXT NOT NULL,
	facts      TEXT,
	entities   TEXT,
	keywords   TEXT,
	tags       TEXT,
	turn_ids   TEXT,
	start_at   TEXT,
	end_at     TEXT,
	producer   TEXT NOT NULL,
	version    INTEGER NOT NULL,
	created_at TEXT,
	updated_at TEXT,
	PRIMARY KEY (space_id, id)
);
CREATE INDEX events_created ON events (space_id, coalesce(created_at, '0001-01-01T00:00:00.000000000Z'), id);

CREATE TABLE links (
	space_id       INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	source         TEXT NOT NULL,
	target         TEXT NOT NULL,
	relation       TEXT NOT NULL,
	confidence     REAL NOT NULL,
	created_at     TEXT,
	invalidated_at TEXT,
	PRIMARY KEY (space_id, source, target, relation)
);
CREATE INDEX links_target ON links (space_id, target);

CREATE TABLE vectors (
	space_id INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	kind     TEXT NOT NULL,
	id       TEXT NOT NULL,
	embedder TEXT NOT NULL,
	dim      INTEGER NOT NULL,
	data     BLOB NOT NULL, -- dim float32s, little-endian
	PRIMARY KEY (space_id, kind, id)
);
CREATE INDEX vectors_embedder ON vectors (space_id, kind, embedder, id);

CREATE TABLE history (
	space_id INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	seq      INTEGER NOT NULL,
	kind     TEXT NOT NULL,
	id       TEXT NOT NULL,
	action   TEXT NOT NULL,
	actor    TEXT NOT NULL,
	before   BLOB,
	after    BLOB,
	at       TEXT NOT NULL,
	PRIMARY KEY (space_id, seq)
);
CREATE INDEX history_record ON history (space_id, kind, id, seq);
`,
	// 2: space versions (see store's "Versions and the write lock"). A
	// space's version is set from the one-row counter space_clock by every
	// committed Update that writes it; existing spaces start at 1.
	`
ALTER TABLE spaces ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
UPDATE spaces SET version = 1;
CREATE TABLE space_clock (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
);
INSERT INTO space_clock (id, version) VALUES (1, 1);
`,
	// 3: profile records (what a model stated about a person). turn_ids
	// is a JSON array, never empty; DeleteTurn removes the records citing
	// the deleted turn.
	`
CREATE TABLE profile_records (
	space_id   INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	id         TEXT NOT NULL,
	entity     TEXT NOT NULL,
	attribute  TEXT NOT NULL,
	value      TEXT NOT NULL,
	ended      INTEGER NOT NULL,
	turn_ids   TEXT NOT NULL,
	stated_at  TEXT,
	producer   TEXT NOT NULL,
	created_at TEXT,
	PRIMARY KEY (space_id, id)
);
CREATE INDEX profile_records_entity ON profile_records (space_id, entity, id);
`,
	// 4: the journal (journal.go): per-record versions, tombstones of
	// deleted turns, events and profile records, and each space's journal
	// floor.
	journalMigration,
}

// migrate brings the database up to len(migs) in one transaction and
// returns the version it found. It fails with ErrSchemaTooNew, changing
// nothing, when the database is newer than migs.
func migrate(ctx context.Context, db *sql.DB, migs []string) (from int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlite: migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version    INTEGER PRIMARY KEY,
	applied_at TEXT NOT NULL
)`); err != nil {
		return 0, fmt.Errorf("sqlite: migrate: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&from); err != nil {
		return 0, fmt.Errorf("sqlite: migrate: reading schema version: %w", err)
	}
	if from > len(migs) {
		return from, fmt.Errorf("%w: the file is at schema version %d, this build knows versions up to %d; open it with a newer higmem", ErrSchemaTooNew, from, len(migs))
	}
	now := time.Now().UTC().Format(timeLayout)
	for v := from; v < len(migs); v++ {
		if _, err := tx.ExecContext(ctx, migs[v]); err != nil {
			return from, fmt.Errorf("sqlite: migrate: applying version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`, v+1, now); err != nil {
			return from, fmt.Errorf("sqlite: migrate: recording version %d: %w", v+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return from, fmt.Errorf("sqlite: migrate: commit: %w", err)
	}
	return from, nil
}
