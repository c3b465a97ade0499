package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/higmem/higmem/store"
)

// Profile records live in the table profile_records (migration 2), their
// evidence turn ids as text[].

const profileCols = `id, entity, attribute, value, ended, turn_ids, stated_at, producer, created_at`

const (
	qProfilePut = `INSERT INTO profile_records (space_id, ` + profileCols + `, written) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (space_id, id) DO UPDATE SET entity = excluded.entity, attribute = excluded.attribute,
		value = excluded.value, ended = excluded.ended, turn_ids = excluded.turn_ids, stated_at = excluded.stated_at,
		producer = excluded.producer, created_at = excluded.created_at, written = excluded.written`
	qProfileDelete = `DELETE FROM profile_records WHERE space_id = $1 AND id = $2`
	// qProfilesCiting deletes the records that cite a turn (DeleteTurn).
	qProfilesCiting = `DELETE FROM profile_records WHERE space_id = $1 AND $2 = ANY(turn_ids)`
	// qTurnsStored counts the stored turns among an id list.
	qTurnsStored = `SELECT count(*) FROM turns WHERE space_id = $1 AND id = ANY($2)`
)

func (r reader) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	a := spaceArgs(sp)
	q := `SELECT ` + profileCols + ` FROM profile_records WHERE space_id = ` + spaceSub
	if entity != "" {
		q += ` AND entity = ` + a.add(clean(entity))
	}
	rows, err := r.q.Query(ctx, q+` ORDER BY entity, id`, a...)
	rs, err := collect(rows, err, 0, scanProfile)
	if err != nil {
		return nil, fmt.Errorf("postgres: list profile records: %w", err)
	}
	return rs, nil
}

// scanProfile scans the columns profileCols.
func scanProfile(rows pgx.Rows) (store.ProfileRecord, error) {
	var p store.ProfileRecord
	var stated, created *string
	if err := rows.Scan(&p.ID, &p.Entity, &p.Attribute, &p.Value, &p.Ended, &p.TurnIDs, &stated, &p.Producer, &created); err != nil {
		return p, err
	}
	var err1, err2 error
	p.StatedAt, err1 = decodeTime(stated)
	p.CreatedAt, err2 = decodeTime(created)
	return p, errors.Join(err1, err2)
}

// ListProfileRecords implements store.Reader.
func (s *Store) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	return read(s, &sp, func(r reader) ([]store.ProfileRecord, error) { return r.ListProfileRecords(ctx, sp, entity) })
}

// ListProfileRecords implements store.Reader.
func (t *tx) ListProfileRecords(ctx context.Context, sp store.Space, entity string) ([]store.ProfileRecord, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListProfileRecords(ctx, sp, entity)
}

// PutProfileRecord implements store.Writer.
func (t *tx) PutProfileRecord(ctx context.Context, sp store.Space, r store.ProfileRecord) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	tids := cleanList(r.TurnIDs)
	stated, err1 := encodeTime("stated at", r.StatedAt)
	created, err2 := encodeTime("created at", r.CreatedAt)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("postgres: put profile record %q: %w", r.ID, err)
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	if err == nil && ok {
		var n int
		if err = t.pgTx.QueryRow(ctx, qTurnsStored, sid, tids).Scan(&n); err == nil && n != len(tids) {
			ok = false
		}
	}
	if err == nil && !ok {
		return fmt.Errorf("postgres: profile record %q cites a turn that is not stored: %w", r.ID, store.ErrNotFound)
	}
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.pgTx.Exec(ctx, qProfilePut, sid, clean(r.ID), clean(r.Entity), clean(r.Attribute), clean(r.Value), r.Ended,
			tids, stated, clean(r.Producer), created, v)
	}
	if err != nil {
		return fmt.Errorf("postgres: put profile record %q: %w", r.ID, err)
	}
	t.dirty[sid] = true
	return nil
}

// DeleteProfileRecord implements store.Writer.
func (t *tx) DeleteProfileRecord(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	var n int64
	if err == nil && ok {
		tag, e := t.pgTx.Exec(ctx, qProfileDelete, sid, clean(id))
		err, n = e, tag.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("postgres: delete profile record %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: delete profile record %q: %w", id, store.ErrNotFound)
	}
	t.dirty[sid] = true
	if err := t.tombstone(ctx, sid, store.TombstoneProfile, clean(id)); err != nil {
		return fmt.Errorf("postgres: delete profile record %q: %w", id, err)
	}
	return nil
}
