package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/higmem/higmem/store"
)

// The journal (see store's "The journal"). Every record row carries
// written, the version of the transaction that last wrote it (indexed
// with the space); a deleted turn or event leaves a row of tombstones
// (kind, id, the version that deleted it). A space row carries
// journal_floor, the oldest version Changes answers from, and
// journal_version, the version of the last write that kept the journal:
// a write by a build without the journal bumps version alone, so the two
// differ and Changes reports Reset until a write with the journal raises
// the floor past it.
//
// A transaction gives each space it writes one version, on its first
// write (tick), which its records carry and which the space row takes at
// Lock or at commit (setVersion).

// journalMigration is schema version 4.
const journalMigration = `
ALTER TABLE spaces ADD COLUMN journal_floor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE spaces ADD COLUMN journal_version INTEGER NOT NULL DEFAULT -1;
UPDATE spaces SET journal_floor = version, journal_version = version;
ALTER TABLE turns ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
ALTER TABLE annotations ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
ALTER TABLE links ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vectors ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profile_records ADD COLUMN written INTEGER NOT NULL DEFAULT 0;
CREATE INDEX turns_written ON turns (space_id, written);
CREATE INDEX annotations_written ON annotations (space_id, written);
CREATE INDEX events_written ON events (space_id, written);
CREATE INDEX links_written ON links (space_id, written);
CREATE INDEX vectors_written ON vectors (space_id, written);
CREATE INDEX profile_records_written ON profile_records (space_id, written);
CREATE TABLE tombstones (
	space_id INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
	kind     TEXT NOT NULL,
	id       TEXT NOT NULL,
	version  INTEGER NOT NULL,
	PRIMARY KEY (space_id, kind, id)
) WITHOUT ROWID;
CREATE INDEX tombstones_version ON tombstones (space_id, version);
`

// DefaultJournalTombstones is the bound of Options.JournalTombstones when
// it is zero.
const DefaultJournalTombstones = 10000

// Journal statements.
const (
	// qSetVersion gives a space its new version (?1) and keeps its
	// journal: when the last write did not keep it (or the row is new),
	// the floor rises to the new version.
	qSetVersion = `UPDATE spaces SET journal_floor = CASE WHEN journal_version = version THEN journal_floor ELSE ?1 END,
	journal_version = ?1, version = ?1 WHERE id = ?2`
	qTombstonePut = `INSERT INTO tombstones (space_id, kind, id, version) VALUES (?, ?, ?, ?)
	ON CONFLICT (space_id, kind, id) DO UPDATE SET version = excluded.version`
	qTombstoneCount = `SELECT count(*) FROM tombstones WHERE space_id = ?`
	// qTombstoneCut is the version at or below which tombstones are
	// dropped to keep the newest ?2.
	qTombstoneCut   = `SELECT version FROM tombstones WHERE space_id = ?1 ORDER BY version DESC LIMIT 1 OFFSET ?2`
	qTombstonePrune = `DELETE FROM tombstones WHERE space_id = ?1 AND version <= ?2`
	qFloorRaise     = `UPDATE spaces SET journal_floor = max(journal_floor, ?2) WHERE id = ?1`

	qJournalSpace = `SELECT id, version, journal_floor, journal_version FROM spaces WHERE user_id = ? AND agent_id = ?`
	qChangedTurns = `SELECT ` + turnCols + ` FROM turns WHERE space_id = ? AND written > ? ORDER BY seq, id`
	qChangedAnns  = `SELECT ` + annCols + ` FROM annotations a CROSS JOIN turns t ON t.space_id = a.space_id AND t.id = a.turn_id
	WHERE a.space_id = ? AND a.written > ? ORDER BY t.seq, t.id`
	qChangedEvents = `SELECT ` + eventCols + ` FROM events WHERE space_id = ? AND written > ?
	ORDER BY coalesce(created_at, '` + zeroTimeText + `'), id`
	qChangedLinks = `SELECT ` + linkCols + ` FROM links WHERE space_id = ? AND written > ? ORDER BY source, target, relation`
	// qChangedVectors reads the vectors written since, and those of the
	// turns and events written since (?1 the space, ?2 the version, ?3
	// the embedder); a vector may come twice (sorted and made unique in
	// Go, which spares SQLite sorting the vectors' bytes).
	qChangedVectors = `SELECT kind, id, embedder, dim, data FROM vectors WHERE space_id = ?1 AND written > ?2 AND (embedder = ?3 OR substr(embedder, 1, length(?3) + 1) = ?3 || '+')
	UNION ALL SELECT v.kind, v.id, v.embedder, v.dim, v.data FROM turns t CROSS JOIN vectors v ON v.space_id = t.space_id AND v.kind IN ('turn', 'window', 'passage') AND v.id = t.id
	WHERE t.space_id = ?1 AND t.written > ?2 AND (v.embedder = ?3 OR substr(v.embedder, 1, length(?3) + 1) = ?3 || '+')
	UNION ALL SELECT v.kind, v.id, v.embedder, v.dim, v.data FROM events e CROSS JOIN vectors v ON v.space_id = e.space_id AND v.kind = 'event' AND v.id = e.id
	WHERE e.space_id = ?1 AND e.written > ?2 AND (v.embedder = ?3 OR substr(v.embedder, 1, length(?3) + 1) = ?3 || '+')`
	qChangedProfiles = `SELECT ` + profileCols + ` FROM profile_records WHERE space_id = ? AND written > ? ORDER BY entity, id`
	qDeleted         = `SELECT kind, id FROM tombstones WHERE space_id = ? AND version > ? ORDER BY kind, id`
)

// journalReads and journalWrites list the journal's statements, to
// prepare them up front.
var (
	journalReads = []string{qJournalSpace, qChangedTurns, qChangedAnns, qChangedEvents, qChangedLinks, qChangedVectors,
		qChangedProfiles, qDeleted}
	journalWrites = []string{qSetVersion, qTombstonePut, qTombstoneCount, qTombstoneCut, qTombstonePrune, qFloorRaise}
)

// version returns the version the transaction writes space row sid with,
// giving it one on first use.
func (t *tx) version(ctx context.Context, sid int64) (int64, error) {
	if h, ok := t.locked[sid]; ok {
		return h.Next, nil
	}
	if v, ok := t.vers[sid]; ok {
		return v, nil
	}
	v, err := t.tick(ctx)
	if err != nil {
		return 0, err
	}
	t.vers[sid] = v
	return v, nil
}

// setVersion gives space row sid its version v (see qSetVersion).
func (t *tx) setVersion(ctx context.Context, sid, v int64) error {
	_, err := t.exec(ctx, qSetVersion, v, sid)
	return err
}

// tombstone records that the turn, event or profile record id of space
// row sid was deleted.
func (t *tx) tombstone(ctx context.Context, sid int64, kind, id string) error {
	v, err := t.version(ctx, sid)
	if err != nil {
		return err
	}
	if _, err := t.exec(ctx, qTombstonePut, sid, kind, id, v); err != nil {
		return fmt.Errorf("recording the delete: %w", err)
	}
	t.tombs[sid] = true
	return nil
}

// pruneTombstones bounds the tombstones of the spaces the transaction
// deleted from: past the store's bound, the older half goes and the
// space's floor rises past it.
func (t *tx) pruneTombstones(ctx context.Context) error {
	bound := t.s.opts.JournalTombstones
	for sid := range t.tombs {
		st, err := t.stmt(ctx, qTombstoneCount)
		if err != nil {
			return err
		}
		var n int
		if err := st.QueryRowContext(ctx, sid).Scan(&n); err != nil {
			return fmt.Errorf("counting tombstones: %w", err)
		}
		if n <= bound {
			continue
		}
		if st, err = t.stmt(ctx, qTombstoneCut); err != nil {
			return err
		}
		var cut int64
		if err := st.QueryRowContext(ctx, sid, bound/2).Scan(&cut); err != nil {
			return fmt.Errorf("pruning tombstones: %w", err)
		}
		if _, err := t.exec(ctx, qTombstonePrune, sid, cut); err != nil {
			return fmt.Errorf("pruning tombstones: %w", err)
		}
		if _, err := t.exec(ctx, qFloorRaise, sid, cut); err != nil {
			return fmt.Errorf("raising the journal floor: %w", err)
		}
	}
	return nil
}

// Changes implements store.Reader: its reads run in one read transaction
// (one snapshot of the file) on a read connection.
func (s *Store) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (store.Changes, error) {
	return read(s, &sp, func(r reader) (store.Changes, error) {
		sqlTx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return store.Changes{}, fmt.Errorf("sqlite: changes: %w", err)
		}
		defer func() { _ = sqlTx.Rollback() }()
		return reader{run: snapshot{s: s, sqlTx: sqlTx}}.changes(ctx, sp, since, embedder, nil)
	})
}

// Changes implements store.Reader: the transaction's own writes are among
// the changes, at the version it commits.
func (t *tx) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (store.Changes, error) {
	if err := t.check(sp); err != nil {
		return store.Changes{}, err
	}
	return t.reader.changes(ctx, sp, since, embedder, t)
}

// snapshot is a runner of a read transaction on the read pool.
type snapshot struct {
	s     *Store
	sqlTx *sql.Tx
}

func (r snapshot) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	p, err := r.s.rstmts.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return r.sqlTx.StmtContext(ctx, p), nil
}

// changes reads what was written to sp after since. Inside a transaction
// (t set), the version is the one the transaction commits when it wrote
// the space.
func (r reader) changes(ctx context.Context, sp store.Space, since int64, embedder string, t *tx) (store.Changes, error) {
	ch := store.Changes{Since: since}
	fail := func(err error) (store.Changes, error) {
		return store.Changes{}, fmt.Errorf("sqlite: changes of %s since %d: %w", sp, since, err)
	}
	st, err := r.run.stmt(ctx, qJournalSpace)
	if err != nil {
		return fail(err)
	}
	var sid, floor, journalled int64
	switch err := st.QueryRowContext(ctx, sp.UserID, sp.AgentID).Scan(&sid, &ch.Version, &floor, &journalled); {
	case errors.Is(err, sql.ErrNoRows):
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
	rows, err := r.query(ctx, qChangedTurns, sid, since)
	if ch.Turns, err = collect(rows, err, newTurnScan(sp).scan); err != nil {
		return fail(err)
	}
	rows, err = r.query(ctx, qChangedAnns, sid, since)
	if ch.Annotations, err = collect(rows, err, scanAnnotation); err != nil {
		return fail(err)
	}
	rows, err = r.query(ctx, qChangedEvents, sid, since)
	if ch.Events, err = collect(rows, err, newEventScan(sp).scan); err != nil {
		return fail(err)
	}
	rows, err = r.query(ctx, qChangedLinks, sid, since)
	if ch.Links, err = collect(rows, err, scanLink); err != nil {
		return fail(err)
	}
	if embedder != "" {
		rows, err = r.query(ctx, qChangedVectors, sid, since, embedder)
		if ch.Vectors, err = collect(rows, err, func(sc scanner) (store.Vector, error) {
			var v store.Vector
			var kind string
			var dim int
			var data []byte
			if err := sc.Scan(&kind, &v.ID, &v.Embedder, &dim, &data); err != nil {
				return v, err
			}
			v.Kind = store.VectorKind(kind)
			v.Values, err = decodeVector(data, dim)
			return v, err
		}); err != nil {
			return fail(err)
		}
		ch.Vectors = store.UniqueVectors(ch.Vectors)
	}
	rows, err = r.query(ctx, qChangedProfiles, sid, since)
	if ch.ProfileRecords, err = collect(rows, err, scanProfile); err != nil {
		return fail(err)
	}
	rows, err = r.query(ctx, qDeleted, sid, since)
	type gone struct{ kind, id string }
	deleted, err := collect(rows, err, func(sc scanner) (gone, error) {
		var g gone
		return g, sc.Scan(&g.kind, &g.id)
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
