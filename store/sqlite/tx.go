package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Write statements, all run inside Update.
const (
	qSpaceID     = `SELECT id FROM spaces WHERE user_id = ? AND agent_id = ?`
	qSpaceCreate = `INSERT INTO spaces (user_id, agent_id) VALUES (?, ?)
	ON CONFLICT (user_id, agent_id) DO UPDATE SET user_id = excluded.user_id RETURNING id`
	qSpaceDelete = `DELETE FROM spaces WHERE user_id = ? AND agent_id = ?`

	qTurnInsert = `INSERT INTO turns (space_id, ` + turnCols + `, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (space_id, id) DO NOTHING`
	qTurnIdentity = `SELECT session_id, speaker, text, occurred_raw, attachments FROM turns WHERE space_id = ? AND id = ?`
	qTurnDelete   = `DELETE FROM turns WHERE space_id = ? AND id = ?` // the annotation goes by cascade

	qAnnotationPut = `INSERT INTO annotations (space_id, turn_id, keywords, tags, entities, context, time_refs, producer, updated_at, written)
	SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE EXISTS (SELECT 1 FROM turns WHERE space_id = ?1 AND id = ?2)
	ON CONFLICT (space_id, turn_id) DO UPDATE SET keywords = excluded.keywords, tags = excluded.tags,
		entities = excluded.entities, context = excluded.context, time_refs = excluded.time_refs,
		producer = excluded.producer, updated_at = excluded.updated_at, written = excluded.written`

	qEventPut = `INSERT INTO events (space_id, ` + eventCols + `, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (space_id, id) DO UPDATE SET title = excluded.title, summary = excluded.summary,
		facts = excluded.facts, entities = excluded.entities, keywords = excluded.keywords, tags = excluded.tags,
		turn_ids = excluded.turn_ids, start_at = excluded.start_at, end_at = excluded.end_at,
		producer = excluded.producer, version = excluded.version, created_at = excluded.created_at,
		updated_at = excluded.updated_at, written = excluded.written`
	qEventDelete = `DELETE FROM events WHERE space_id = ? AND id = ?`

	qLinkPut = `INSERT INTO links (space_id, ` + linkCols + `, written) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (space_id, source, target, relation) DO UPDATE SET confidence = excluded.confidence,
		created_at = excluded.created_at, invalidated_at = excluded.invalidated_at, written = excluded.written`
	qLinksDelete = `DELETE FROM links WHERE space_id = ?1 AND (source = ?2 OR target = ?2)`

	qVectorPut = `INSERT INTO vectors (space_id, kind, id, embedder, dim, data, written) VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (space_id, kind, id) DO UPDATE SET embedder = excluded.embedder, dim = excluded.dim, data = excluded.data,
		written = excluded.written`
	qVectorDelete = `DELETE FROM vectors WHERE space_id = ? AND kind = ? AND id = ?`

	qSpaceVersion = `SELECT version FROM spaces WHERE id = ?`
	qClockTick    = `UPDATE space_clock SET version = version + 1 RETURNING version`
	qLastSeq      = `SELECT coalesce(max(seq), 0) FROM turns WHERE space_id = ?`

	qHistoryAppend = `INSERT INTO history (space_id, seq, kind, id, action, actor, before, after, at)
	SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 FROM history WHERE space_id = ?1`
	qHistoryRedact = `UPDATE history SET before = CASE WHEN before IS NULL THEN NULL ELSE ?3 END,
		after = CASE WHEN after IS NULL THEN NULL ELSE ?3 END WHERE space_id = ?1 AND seq = ?2`
)

// writeQueries lists every statement a transaction runs, to prepare them
// on the write connection up front.
func writeQueries() []string {
	qs := append(readQueries(), qSpaceID, qSpaceCreate, qSpaceDelete, qTurnInsert, qTurnIdentity, qTurnDelete,
		qAnnotationPut, qEventPut, qEventDelete, qLinkPut, qLinksDelete, qVectorPut, qVectorDelete, qHistoryAppend,
		qSpaceVersion, qClockTick, qLastSeq, qHistoryRedact)
	qs = append(qs, profileWriteQueries()...)
	return append(qs, journalWrites...)
}

// tx is a store.Tx over a *sql.Tx on the write connection.
type tx struct {
	reader
	s      *Store
	sqlTx  *sql.Tx
	done   atomic.Bool
	stmts  map[string]*sql.Stmt  // statements bound to sqlTx
	spaces map[store.Space]int64 // space row ids seen in this transaction
	dirty  map[int64]bool        // space rows written in this transaction
	locked map[int64]store.Head  // space rows locked (and given their version) by Lock
	vers   map[int64]int64       // the version each space row is written with (see version)
	tombs  map[int64]bool        // space rows the transaction left tombstones in
}

var (
	_ store.Tx             = (*tx)(nil)
	_ store.EmbedderLister = (*tx)(nil)
)

func newTx(s *Store, sqlTx *sql.Tx) *tx {
	t := &tx{s: s, sqlTx: sqlTx, stmts: map[string]*sql.Stmt{}, spaces: map[store.Space]int64{},
		dirty: map[int64]bool{}, locked: map[int64]store.Head{}, vers: map[int64]int64{}, tombs: map[int64]bool{}}
	t.reader = reader{run: t}
	return t
}

// stmt implements runner: the store's prepared statement bound to the
// transaction, or a statement prepared on it.
func (t *tx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if p := t.s.wstmts.lookup(q); p != nil {
		st = t.sqlTx.StmtContext(ctx, p)
	} else {
		var err error
		if st, err = t.sqlTx.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
	}
	t.stmts[q] = st
	return st, nil
}

func (t *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// affected runs q and returns how many rows it changed.
func (t *tx) affected(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// alive fails once Update has returned.
func (t *tx) alive() error {
	if t.done.Load() {
		return fmt.Errorf("sqlite: transaction used after Update returned: %w", store.ErrClosed)
	}
	return nil
}

// check validates sp and that the transaction is still open.
func (t *tx) check(sp store.Space) error {
	if err := t.alive(); err != nil {
		return err
	}
	return sp.Validate()
}

// spaceID returns the row id of sp, creating the row when create is set.
// ok is false when the space has no row (and create is not set).
func (t *tx) spaceID(ctx context.Context, sp store.Space, create bool) (id int64, ok bool, err error) {
	if id, ok := t.spaces[sp]; ok {
		return id, true, nil
	}
	q := qSpaceID
	if create {
		q = qSpaceCreate
	}
	st, err := t.stmt(ctx, q)
	if err != nil {
		return 0, false, err
	}
	switch err := st.QueryRowContext(ctx, sp.UserID, sp.AgentID).Scan(&id); err {
	case nil:
		t.spaces[sp] = id
		return id, true, nil
	case sql.ErrNoRows:
		return 0, false, nil
	default:
		return 0, false, fmt.Errorf("space %s: %w", sp, err)
	}
}

// Read methods: check, then read through the transaction.

// GetTurn implements store.Reader.
func (t *tx) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	if err := t.check(sp); err != nil {
		return store.Turn{}, err
	}
	return t.reader.GetTurn(ctx, sp, id)
}

// ListTurns implements store.Reader.
func (t *tx) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListTurns(ctx, sp, q)
}

// ListAnnotations implements store.Reader.
func (t *tx) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListAnnotations(ctx, sp, ids)
}

// ListEvents implements store.Reader.
func (t *tx) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListEvents(ctx, sp)
}

// ListLinks implements store.Reader.
func (t *tx) ListLinks(ctx context.Context, sp store.Space, ids []string) ([]store.Link, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListLinks(ctx, sp, ids)
}

// ListVectors implements store.Reader.
func (t *tx) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.ListVectors(ctx, sp, kind, embedder)
}

// History implements store.Reader.
func (t *tx) History(ctx context.Context, sp store.Space, kind, id string) ([]store.Change, error) {
	if err := t.check(sp); err != nil {
		return nil, err
	}
	return t.reader.History(ctx, sp, kind, id)
}

// Spaces implements store.Reader.
func (t *tx) Spaces(ctx context.Context) ([]store.Space, error) {
	if err := t.alive(); err != nil {
		return nil, err
	}
	return t.reader.Spaces(ctx)
}

// Stats implements store.Reader.
func (t *tx) Stats(ctx context.Context, sp store.Space) (store.Stats, error) {
	if err := t.check(sp); err != nil {
		return store.Stats{}, err
	}
	return t.reader.Stats(ctx, sp)
}

// PutTurn implements store.Writer.
func (t *tx) PutTurn(ctx context.Context, tr store.Turn) (bool, error) {
	if err := t.check(tr.Space); err != nil {
		return false, err
	}
	if err := tr.Validate(); err != nil {
		return false, err
	}
	if tr.RecordedAt.IsZero() {
		tr.RecordedAt = time.Now()
	}
	occ, err1 := encodeTime("occurred at", tr.OccurredAt)
	rec, err2 := encodeTime("recorded at", tr.RecordedAt)
	att, err3 := encodeList("attachments", tr.Attachments)
	meta, err4 := encodeMap(tr.Metadata)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return false, fmt.Errorf("sqlite: put turn %q: %w", tr.ID, err)
		}
	}
	sid, _, err := t.spaceID(ctx, tr.Space, true)
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: put turn %q: %w", tr.ID, err)
	}
	n, err := t.affected(ctx, qTurnInsert, sid, tr.ID, tr.SessionID, tr.Seq, tr.Speaker, tr.Text, att, occ, tr.OccurredRaw, rec, meta, v)
	if err != nil {
		return false, fmt.Errorf("sqlite: put turn %q: %w", tr.ID, err)
	}
	if n == 1 {
		t.touch(sid)
		return true, nil
	}
	// The id is taken: a no-op if the content is the same.
	st, err := t.stmt(ctx, qTurnIdentity)
	if err != nil {
		return false, fmt.Errorf("sqlite: put turn %q: %w", tr.ID, err)
	}
	var old store.Turn
	var oldAtt sql.NullString
	if err := st.QueryRowContext(ctx, sid, tr.ID).Scan(&old.SessionID, &old.Speaker, &old.Text, &old.OccurredRaw, &oldAtt); err != nil {
		return false, fmt.Errorf("sqlite: put turn %q: reading the stored turn: %w", tr.ID, err)
	}
	// Attachments are compared in their stored JSON form, so that what JSON
	// changes (invalid UTF-8) changes both sides alike.
	newAtt, _ := att.(string)
	if old.SessionID == tr.SessionID && old.Speaker == tr.Speaker && old.Text == tr.Text &&
		old.OccurredRaw == tr.OccurredRaw && oldAtt.String == newAtt {
		return false, nil
	}
	return false, fmt.Errorf("sqlite: turn %q: %w", tr.ID, store.ErrConflict)
}

// PutAnnotation implements store.Writer.
func (t *tx) PutAnnotation(ctx context.Context, sp store.Space, a store.Annotation) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	kws, err1 := encodeList("keywords", a.Keywords)
	tags, err2 := encodeList("tags", a.Tags)
	ents, err3 := encodeList("entities", a.Entities)
	trs, err4 := encodeTimeRefs(a.TimeRefs)
	upd, err5 := encodeTime("updated at", a.UpdatedAt)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return fmt.Errorf("sqlite: annotate turn %q: %w", a.TurnID, err)
		}
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	t.touch(sid)
	var n, v int64
	if err == nil && ok {
		if v, err = t.version(ctx, sid); err == nil {
			n, err = t.affected(ctx, qAnnotationPut, sid, a.TurnID, kws, tags, ents, a.Context, trs, a.Producer, upd, v)
		}
	}
	if err != nil {
		return fmt.Errorf("sqlite: annotate turn %q: %w", a.TurnID, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: annotate turn %q: %w", a.TurnID, store.ErrNotFound)
	}
	return nil
}

// PutEvent implements store.Writer.
func (t *tx) PutEvent(ctx context.Context, e store.Event) error {
	if err := t.check(e.Space); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	args := make([]any, 0, 16)
	var errs []error
	add := func(v any, err error) {
		args = append(args, v)
		errs = append(errs, err)
	}
	add(nil, nil) // the space id, below
	add(e.ID, nil)
	add(e.Title, nil)
	add(e.Summary, nil)
	add(encodeList("facts", e.Facts))
	add(encodeList("entities", e.Entities))
	add(encodeList("keywords", e.Keywords))
	add(encodeList("tags", e.Tags))
	add(encodeList("turn ids", e.TurnIDs))
	add(encodeTime("start", e.Start))
	add(encodeTime("end", e.End))
	add(e.Producer, nil)
	add(e.Version, nil)
	add(encodeTime("created at", e.CreatedAt))
	add(encodeTime("updated at", e.UpdatedAt))
	add(nil, nil) // the version, below
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("sqlite: put event %q: %w", e.ID, err)
		}
	}
	sid, _, err := t.spaceID(ctx, e.Space, true)
	t.touch(sid)
	if err == nil {
		args[0] = sid
		args[len(args)-1], err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.exec(ctx, qEventPut, args...)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put event %q: %w", e.ID, err)
	}
	return nil
}

// DeleteEvent implements store.Writer.
func (t *tx) DeleteEvent(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	t.touch(sid)
	var n int64
	if err == nil && ok {
		n, err = t.affected(ctx, qEventDelete, sid, id)
	}
	if err == nil && n > 0 {
		_, err = t.exec(ctx, qVectorDelete, sid, string(store.VectorEvent), id)
	}
	if err == nil && n > 0 {
		err = t.tombstone(ctx, sid, store.TombstoneEvent, id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete event %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: delete event %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// PutLink implements store.Writer.
func (t *tx) PutLink(ctx context.Context, sp store.Space, l store.Link) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return err
	}
	created, err1 := encodeTime("created at", l.CreatedAt)
	inval, err2 := encodeTime("invalidated at", l.InvalidatedAt)
	for _, err := range []error{err1, err2} {
		if err != nil {
			return fmt.Errorf("sqlite: put link: %w", err)
		}
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	t.touch(sid)
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.exec(ctx, qLinkPut, sid, l.Source, l.Target, l.Relation, l.Confidence, created, inval, v)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put link %s -> %s: %w", l.Source, l.Target, err)
	}
	return nil
}

// PutVectors implements store.Writer. The whole batch is validated before
// any vector is stored.
func (t *tx) PutVectors(ctx context.Context, sp store.Space, vs []store.Vector) error {
	if err := t.check(sp); err != nil {
		return err
	}
	for _, v := range vs {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if len(vs) == 0 {
		return nil
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	t.touch(sid)
	var ver int64
	if err == nil {
		ver, err = t.version(ctx, sid)
	}
	if err != nil {
		return fmt.Errorf("sqlite: put vectors: %w", err)
	}
	st, err := t.stmt(ctx, qVectorPut)
	if err != nil {
		return fmt.Errorf("sqlite: put vectors: %w", err)
	}
	for _, v := range vs {
		if _, err := st.ExecContext(ctx, sid, string(v.Kind), v.ID, v.Embedder, len(v.Values), vec.EncodeLE(v.Values), ver); err != nil {
			return fmt.Errorf("sqlite: put vector %s %q: %w", v.Kind, v.ID, err)
		}
	}
	return nil
}

// AppendHistory implements store.Writer.
func (t *tx) AppendHistory(ctx context.Context, sp store.Space, c store.Change) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if c.At.IsZero() {
		c.At = time.Now()
	}
	at, err := encodeTime("change time", c.At)
	if err != nil {
		return fmt.Errorf("sqlite: append history: %w", err)
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	t.touch(sid)
	if err == nil {
		_, err = t.exec(ctx, qHistoryAppend, sid, c.Kind, c.ID, c.Action, c.Actor, rawJSON(c.Before), rawJSON(c.After), at)
	}
	if err != nil {
		return fmt.Errorf("sqlite: append history: %w", err)
	}
	return nil
}

// DeleteTurn implements store.Writer.
func (t *tx) DeleteTurn(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	t.touch(sid)
	var n int64
	if err == nil && ok {
		n, err = t.affected(ctx, qTurnDelete, sid, id)
	}
	for _, k := range store.TurnVectorKinds {
		if err == nil && n > 0 {
			_, err = t.exec(ctx, qVectorDelete, sid, string(k), id)
		}
	}
	if err == nil && n > 0 {
		_, err = t.exec(ctx, qLinksDelete, sid, id)
	}
	if err == nil && n > 0 {
		_, err = t.exec(ctx, qProfilesCiting, sid, id)
	}
	if err == nil && n > 0 {
		err = t.tombstone(ctx, sid, store.TombstoneTurn, id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete turn %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: delete turn %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// DeleteSpace implements store.Writer.
func (t *tx) DeleteSpace(ctx context.Context, sp store.Space) error {
	if err := t.check(sp); err != nil {
		return err
	}
	// Every table refers to the space row with ON DELETE CASCADE.
	if _, err := t.exec(ctx, qSpaceDelete, sp.UserID, sp.AgentID); err != nil {
		return fmt.Errorf("sqlite: delete space %s: %w", sp, err)
	}
	if sid, ok := t.spaces[sp]; ok {
		delete(t.dirty, sid)
		delete(t.locked, sid)
		delete(t.vers, sid)
		delete(t.tombs, sid)
	}
	delete(t.spaces, sp)
	return nil
}

// touch records that the transaction wrote space row sid, whose version
// the commit then bumps.
func (t *tx) touch(sid int64) {
	if sid != 0 {
		t.dirty[sid] = true
	}
}

// tick advances the store's version counter and returns its new value.
func (t *tx) tick(ctx context.Context) (int64, error) {
	st, err := t.stmt(ctx, qClockTick)
	if err != nil {
		return 0, err
	}
	var v int64
	if err := st.QueryRowContext(ctx).Scan(&v); err != nil {
		return 0, fmt.Errorf("advancing the version counter: %w", err)
	}
	return v, nil
}

// Lock implements store.Writer. The transaction already holds SQLite's one
// write lock (BEGIN IMMEDIATE), for this process and every other one on the
// file, so Lock only creates the space row and gives it its new version.
func (t *tx) Lock(ctx context.Context, sp store.Space) (store.Head, error) {
	if err := t.check(sp); err != nil {
		return store.Head{}, err
	}
	h, err := t.lock(ctx, sp)
	if err != nil {
		return store.Head{}, fmt.Errorf("sqlite: lock space %s: %w", sp, err)
	}
	return h, nil
}

func (t *tx) lock(ctx context.Context, sp store.Space) (store.Head, error) {
	sid, _, err := t.spaceID(ctx, sp, true)
	if err != nil {
		return store.Head{}, err
	}
	h, ok := t.locked[sid]
	if !ok {
		st, err := t.stmt(ctx, qSpaceVersion)
		if err != nil {
			return store.Head{}, err
		}
		if err := st.QueryRowContext(ctx, sid).Scan(&h.Version); err != nil {
			return store.Head{}, err
		}
		if h.Next, err = t.version(ctx, sid); err != nil {
			return store.Head{}, err
		}
		if err := t.setVersion(ctx, sid, h.Next); err != nil {
			return store.Head{}, err
		}
		t.locked[sid] = h
	}
	st, err := t.stmt(ctx, qLastSeq)
	if err != nil {
		return store.Head{}, err
	}
	if err := st.QueryRowContext(ctx, sid).Scan(&h.LastSeq); err != nil {
		return store.Head{}, err
	}
	return h, nil
}

// bumpVersions gives every space the transaction wrote without locking it
// its new version, and bounds the tombstones, just before the commit.
func (t *tx) bumpVersions(ctx context.Context) error {
	for sid := range t.dirty {
		if _, ok := t.locked[sid]; ok {
			continue
		}
		v, err := t.version(ctx, sid)
		if err == nil {
			err = t.setVersion(ctx, sid, v)
		}
		if err != nil {
			return fmt.Errorf("bumping space versions: %w", err)
		}
	}
	return t.pruneTombstones(ctx)
}

// RedactHistory implements store.Writer. With secure_delete on (see Open)
// the replaced bytes are overwritten in the page, not only unlinked.
func (t *tx) RedactHistory(ctx context.Context, sp store.Space, seqs []int64, note json.RawMessage) error {
	if err := t.check(sp); err != nil {
		return err
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	if err != nil {
		return fmt.Errorf("sqlite: redact history: %w", err)
	}
	if !ok {
		return nil
	}
	for _, seq := range seqs {
		if _, err := t.exec(ctx, qHistoryRedact, sid, seq, rawJSON(note)); err != nil {
			return fmt.Errorf("sqlite: redact history entry %d: %w", seq, err)
		}
	}
	if len(seqs) > 0 {
		t.touch(sid)
	}
	return nil
}
