package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/higmem/higmem/store"
)

// Profile records live in the table profile_records (migration 3), their
// evidence turn ids as a JSON array.

const profileCols = `id, entity, attribute, value, ended, turn_ids, stated_at, producer, created_at`

var (
	qListProfiles   = `SELECT ` + profileCols + ` FROM profile_records WHERE space_id = ` + spaceSub + ` ORDER BY entity, id`
	qListProfilesOf = `SELECT ` + profileCols + ` FROM profile_records WHERE space_id = ` + spaceSub +
		` AND entity = ? ORDER BY entity, id`

	qProfilePut = `INSERT INTO profile_records (space_id, ` + profileCols + `, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (space_id, id) DO UPDATE SET entity = excluded.entity, attribute = excluded.attribute,
		value = excluded.value, ended = excluded.ended, turn_ids = excluded.turn_ids, stated_at = excluded.stated_at,
		producer = excluded.producer, created_at = excluded.created_at, written = excluded.written`
	qProfileDelete = `DELETE FROM profile_records WHERE space_id = ? AND id = ?`
	// qProfilesCiting deletes the records that cite a turn (DeleteTurn).
	qProfilesCiting = `DELETE FROM profile_records WHERE space_id = ?1
	AND EXISTS (SELECT 1 FROM json_each(profile_records.turn_ids) WHERE value = ?2)`
	// qTurnsStored counts the distinct stored turns among a JSON id list.
	qTurnsStored = `SELECT count(*) FROM turns WHERE space_id = ?1 AND ` + inIDs2("id")
)

// inIDs2 is inIDs with the list as the numbered parameter ?2.
func inIDs2(col string) string { return col + ` IN (SELECT value FROM json_each(?2))` }

// profileReadQueries and profileWriteQueries are the statements of this
// file, for readQueries and writeQueries.
func profileReadQueries() []string { return []string{qListProfiles, qListProfilesOf} }
func profileWriteQueries() []string {
	return []string{qProfilePut, qProfileDelete, qProfilesCiting, qTurnsStored}
}

func scanProfile(sc scanner) (store.ProfileRecord, error) {
	var r store.ProfileRecord
	var tids, stated, created sql.NullString
	if err := sc.Scan(&r.ID, &r.Entity, &r.Attribute, &r.Value, &r.Ended, &tids, &stated, &r.Producer, &created); err != nil {
		return r, err
	}
	var err1, err2 error
	r.StatedAt, err1 = decodeTime(stated)
	r.CreatedAt, err2 = decodeTime(created)
	return r, errors.Join(err1, err2, decodeJSON("turn ids", tids, &r.TurnIDs))
}

func (r reader) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	q, args := qListProfiles, []any{sp.UserID, sp.AgentID}
	if entity != "" {
		q, args = qListProfilesOf, append(args, entity)
	}
	rows, err := r.query(ctx, q, args...)
	rs, err := collect(rows, err, scanProfile)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list profile records: %w", err)
	}
	return rs, nil
}

// ListProfileRecords implements store.Reader.
func (s *Store) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	return read(s, &sp, func(r reader) ([]store.ProfileRecord, error) { return r.ListProfileRecords(ctx, sp, entity) })
}

// ListProfileRecords implements store.Reader.
func (t *tx) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListProfileRecords(ctx, sp, entity)
}

// PutProfileRecord implements store.Writer.
func (t *tx) PutProfileRecord(ctx context.Context, sp store.Space, r store.ProfileRecord) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	tids, err1 := encodeList("turn ids", r.TurnIDs)
	stated, err2 := encodeTime("stated at", r.StatedAt)
	created, err3 := encodeTime("created at", r.CreatedAt)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("sqlite: put profile record %q: %w", r.ID, err)
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	if err == nil && ok {
		var n int
		st, serr := t.stmt(ctx, qTurnsStored)
		if serr != nil {
			return fmt.Errorf("sqlite: put profile record %q: %w", r.ID, serr)
		}
		if err = st.QueryRowContext(ctx, sid, tids).Scan(&n); err == nil && n != len(r.TurnIDs) {
			ok = false
		}
	}
	if err == nil && !ok {
		return fmt.Errorf("sqlite: profile record %q cites a turn that is not stored: %w", r.ID, store.ErrNotFound)
	}
	var v int64
	if err == nil {
		t.touch(sid)
		v, err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.exec(ctx, qProfilePut, sid, r.ID, r.Entity, r.Attribute, r.Value, r.Ended, tids, stated, r.Producer, created, v)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put profile record %q: %w", r.ID, err)
	}
	return nil
}

// DeleteProfileRecord implements store.Writer.
func (t *tx) DeleteProfileRecord(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	var n int64
	if err == nil && ok {
		t.touch(sid)
		n, err = t.affected(ctx, qProfileDelete, sid, id)
	}
	if err == nil && n > 0 {
		err = t.tombstone(ctx, sid, store.TombstoneProfile, id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete profile record %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: delete profile record %q: %w", id, store.ErrNotFound)
	}
	return nil
}
