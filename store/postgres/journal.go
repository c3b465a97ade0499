package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// The journal (see store's "The journal"), kept as store/sqlite keeps it:
// every record row carries written, the version of the transaction that
// last wrote it; a deleted turn or event leaves a row of tombstones; a
// space row carries journal_floor (the oldest version Changes answers
// from) and journal_version (the version of the last write that kept the
// journal; a write by a build without the journal bumps version alone).
//
// A transaction draws one version per space it writes from the sequence
// space_version on its first write (version); the records carry it and
// the space row takes it at Lock or at commit. The space's advisory lock,
// taken before any read or write of the space, keeps a space's versions in
// commit order.

// journalMigration is schema version 3.
const journalMigration = `
ALTER TABLE spaces ADD COLUMN journal_floor bigint NOT NULL DEFAULT 0;
ALTER TABLE spaces ADD COLUMN journal_version bigint NOT NULL DEFAULT -1;
UPDATE spaces SET journal_floor = version, journal_version = version;
ALTER TABLE turns ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE annotations ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE vectors ADD COLUMN written bigint NOT NULL DEFAULT 0;
ALTER TABLE profile_records ADD COLUMN written bigint NOT NULL DEFAULT 0;
CREATE INDEX turns_written ON turns (space_id, written);
CREATE INDEX annotations_written ON annotations (space_id, written);
CREATE INDEX events_written ON events (space_id, written);
CREATE INDEX links_written ON links (space_id, written);
CREATE INDEX vectors_written ON vectors (space_id, written);
CREATE INDEX profile_records_written ON profile_records (space_id, written);
CREATE TABLE tombstones (
	space_id bigint NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	kind     text COLLATE "C" NOT NULL,
	id       text COLLATE "C" NOT NULL,
	version  bigint NOT NULL,
	PRIMARY KEY (space_id, kind, id)
);
CREATE INDEX tombstones_version ON tombstones (space_id, version);
`

// DefaultJournalTombstones is the bound of Options.JournalTombstones when
// it is zero.
const DefaultJournalTombstones = 10000

// Journal statements.
const (
	// qSetVersion gives a space its new version ($1) and keeps its
	// journal: when the last write did not keep it (or the row is new),
	// the floor rises to the new version.
	qSetVersion = `UPDATE spaces SET journal_floor = CASE WHEN journal_version = version THEN journal_floor ELSE $1 END,
	journal_version = $1, version = $1 WHERE id = $2`
	qTombstonePut = `INSERT INTO tombstones (space_id, kind, id, version) VALUES ($1, $2, $3, $4)
	ON CONFLICT (space_id, kind, id) DO UPDATE SET version = excluded.version`
	// qTombstonePrune drops, past $2 tombstones, those at or below the
	// version of the ($3+1)-th newest, raises the floor to it and returns
	// it (no row when there is nothing to drop).
	qTombstonePrune = `WITH cut AS (
		SELECT version FROM tombstones WHERE space_id = $1 ORDER BY version DESC OFFSET $3 LIMIT 1
	), n AS (SELECT count(*) AS n FROM tombstones WHERE space_id = $1),
	gone AS (DELETE FROM tombstones WHERE space_id = $1 AND (SELECT n FROM n) > $2 AND version <= (SELECT version FROM cut))
	UPDATE spaces SET journal_floor = greatest(journal_floor, (SELECT version FROM cut))
	WHERE id = $1 AND (SELECT n FROM n) > $2`

	qJournalSpace = `SELECT id, version, journal_floor, journal_version FROM spaces WHERE user_id = $1 AND agent_id = $2`
	qChangedTurns = `SELECT ` + turnCols + ` FROM turns WHERE space_id = $1 AND written > $2 ORDER BY seq, id`
	qChangedAnns  = `SELECT ` + annCols + ` FROM annotations a JOIN turns t ON t.space_id = a.space_id AND t.id = a.turn_id
	WHERE a.space_id = $1 AND a.written > $2 ORDER BY t.seq, t.id`
	qChangedEvents = `SELECT ` + eventCols + ` FROM events WHERE space_id = $1 AND written > $2
	ORDER BY coalesce(created_at, '` + zeroTimeText + `'), id`
	qChangedLinks = `SELECT ` + linkCols + ` FROM links WHERE space_id = $1 AND written > $2 ORDER BY source, target, relation`
	// qChangedVectors reads the vectors written since, and those of the
	// turns and events written since.
	// (a vector may come twice: sorted and made unique in Go).
	qChangedVectors = `SELECT kind, id, embedder, dim, data FROM vectors WHERE space_id = $1 AND written > $2 AND (embedder = $3 OR left(embedder, length($3) + 1) = $3 || '+')
	UNION ALL SELECT v.kind, v.id, v.embedder, v.dim, v.data FROM turns t JOIN vectors v ON v.space_id = t.space_id AND v.kind IN ('turn', 'window', 'passage') AND v.id = t.id
	WHERE t.space_id = $1 AND t.written > $2 AND (v.embedder = $3 OR left(v.embedder, length($3) + 1) = $3 || '+')
	UNION ALL SELECT v.kind, v.id, v.embedder, v.dim, v.data FROM events e JOIN vectors v ON v.space_id = e.space_id AND v.kind = 'event' AND v.id = e.id
	WHERE e.space_id = $1 AND e.written > $2 AND (v.embedder = $3 OR left(v.embedder, length($3) + 1) = $3 || '+')`
	qChangedProfiles = `SELECT ` + profileCols + ` FROM profile_records WHERE space_id = $1 AND written > $2 ORDER BY entity, id`
	qDeleted         = `SELECT kind, id FROM tombstones WHERE space_id = $1 AND version > $2 ORDER BY kind, id`
)

// version returns the version the transaction writes space row sid with,
// drawing it from the sequence on first use.
func (t *tx) version(ctx context.Context, sid int64) (int64, error) {
	if h, ok := t.locked[sid]; ok {
		return h.Next, nil
	}
	if v, ok := t.vers[sid]; ok {
		return v, nil
	}
	var v int64
	if err := t.pgTx.QueryRow(ctx, `SELECT nextval('space_version')`).Scan(&v); err != nil {
		return 0, fmt.Errorf("drawing a version: %w", err)
	}
	t.vers[sid] = v
	return v, nil
}

// setVersion gives space row sid its version v (see qSetVersion).
func (t *tx) setVersion(ctx context.Context, sid, v int64) error {
	_, err := t.pgTx.Exec(ctx, qSetVersion, v, sid)
	return err
}

// tombstone records that the turn, event or profile record id of space
// row sid was deleted.
func (t *tx) tombstone(ctx context.Context, sid int64, kind, id string) error {
	v, err := t.version(ctx, sid)
	if err != nil {
		return err
	}
	if _, err := t.pgTx.Exec(ctx, qTombstonePut, sid, kind, id, v); err != nil {
		return fmt.Errorf("recording the delete: %w", err)
	}
	t.tombs[sid] = true
	return nil
}

// pruneTombstones bounds the tombstones of the spaces the transaction
// deleted from: past the store's bound, the older half goes and the
// space's floor rises past it.
func (t *tx) pruneTombstones(ctx context.Context) error {
	for sid := range t.tombs {
		if _, err := t.pgTx.Exec(ctx, qTombstonePrune, sid, t.bound, t.bound/2); err != nil {
			return fmt.Errorf("pruning tombstones: %w", err)
		}
	}
	return nil
}

// Changes implements store.Reader: its reads run in one read-only
// REPEATABLE READ transaction (one snapshot).
func (s *Store) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (store.Changes, error) {
	return read(s, &sp, func(r reader) (store.Changes, error) {
		pgTx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return store.Changes{}, fmt.Errorf("postgres: changes: %w", err)
		}
		defer func() { _ = pgTx.Rollback(context.WithoutCancel(ctx)) }()
		return reader{q: pgTx}.changes(ctx, sp, since, embedder, nil)
	})
}

// Changes implements store.Reader: the transaction's own writes are among
// the changes, at the version it commits.
func (t *tx) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (store.Changes, error) {
	if err := t.check(ctx, sp); err != nil {
		return store.Changes{}, err
	}
	return t.reader.changes(ctx, sp, since, embedder, t)
}

// changes reads what was written to sp after since. Inside a transaction
// (t set), the version is the one the transaction commits when it wrote
// the space.
func (r reader) changes(ctx context.Context, sp store.Space, since int64, embedder string, t *tx) (store.Changes, error) {
	ch := store.Changes{Since: since}
	fail := func(err error) (store.Changes, error) {
		return store.Changes{}, fmt.Errorf("postgres: changes of %s since %d: %w", sp, since, err)
	}
	var sid, floor, journalled int64
	switch err := r.q.QueryRow(ctx, qJournalSpace, clean(sp.UserID), clean(sp.AgentID)).Scan(&sid, &ch.Version, &floor, &journalled); {
	case errors.Is(err, pgx.ErrNoRows):
		ch.Version, ch.Reset = 0, since != 0
		return ch, nil
	case err != nil:
		return fail(err)
	}
	if t != nil {
		if _, locked := t.locked[sid]; !locked {
			if v, ok := t.vers[sid]; ok && t.dirty[sid] {
				// Written, not locked: the row takes its version at
				// commit (see qSetVersion).
				if journalled != ch.Version {
					floor = v
				}
				ch.Version, journalled = v, v
			}
		}
	}
	if since < floor || since > ch.Version || journalled != ch.Version {
		ch.Reset = true
		return ch, nil
	}
	if since == ch.Version {
		return ch, nil
	}
	rows, err := r.q.Query(ctx, qChangedTurns, sid, since)
	if ch.Turns, err = collect(rows, err, 0, func(rows pgx.Rows) (store.Turn, error) { return scanTurn(rows, sp) }); err != nil {
		return fail(err)
	}
	rows, err = r.q.Query(ctx, qChangedAnns, sid, since)
	if ch.Annotations, err = collect(rows, err, 0, scanAnnotation); err != nil {
		return fail(err)
	}
	rows, err = r.q.Query(ctx, qChangedEvents, sid, since)
	if ch.Events, err = collect(rows, err, 0, func(rows pgx.Rows) (store.Event, error) { return scanEvent(rows, sp) }); err != nil {
		return fail(err)
	}
	rows, err = r.q.Query(ctx, qChangedLinks, sid, since)
	if ch.Links, err = collect(rows, err, 0, scanLink); err != nil {
		return fail(err)
	}
	if embedder != "" {
		rows, err = r.q.Query(ctx, qChangedVectors, sid, since, clean(embedder))
		if ch.Vectors, err = collect(rows, err, 0, func(rows pgx.Rows) (store.Vector, error) {
			var v store.Vector
			var kind string
			var dim int32
			var data []byte
			if err := rows.Scan(&kind, &v.ID, &v.Embedder, &dim, &data); err != nil {
				return v, err
			}
			v.Kind = store.VectorKind(kind)
			if len(data) != 4*int(dim) || dim < 0 {
				return v, fmt.Errorf("stored vector %q has %d bytes for dimension %d", v.ID, len(data), dim)
			}
			v.Values = make([]float32, dim)
			vec.DecodeLEInto(v.Values, data)
			return v, nil
		}); err != nil {
			return fail(err)
		}
		ch.Vectors = store.UniqueVectors(ch.Vectors)
	}
	rows, err = r.q.Query(ctx, qChangedProfiles, sid, since)
	if ch.ProfileRecords, err = collect(rows, err, 0, scanProfile); err != nil {
		return fail(err)
	}
	rows, err = r.q.Query(ctx, qDeleted, sid, since)
	type gone struct{ kind, id string }
	deleted, err := collect(rows, err, 0, func(rows pgx.Rows) (gone, error) {
		var g gone
		return g, rows.Scan(&g.kind, &g.id)
	})
	if err != nil {
		return fail(err)
	}
	for _, g := range deleted {
		ch.AddDeleted(g.kind, g.id)
	}
	ch.SortDeleted()
	return ch, nil
}
