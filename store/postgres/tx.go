package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// Write statements, all run inside Update.
const (
	qSpaceID     = `SELECT id FROM spaces WHERE user_id = $1 AND agent_id = $2`
	qSpaceCreate = `INSERT INTO spaces (user_id, agent_id) VALUES ($1, $2) ON CONFLICT (user_id, agent_id) DO NOTHING RETURNING id`
	qSpaceDelete = `DELETE FROM spaces WHERE user_id = $1 AND agent_id = $2`

	qTurnInsert = `INSERT INTO turns (space_id, ` + turnCols + `, written) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (space_id, id) DO NOTHING`
	qTurnIdentity = `SELECT session_id, speaker, text, occurred_raw, attachments FROM turns WHERE space_id = $1 AND id = $2`
	qTurnDelete   = `DELETE FROM turns WHERE space_id = $1 AND id = $2` // the annotation goes by cascade

	qAnnotationPut = `INSERT INTO annotations (space_id, turn_id, keywords, tags, entities, context, time_refs, producer, updated_at, written)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 WHERE EXISTS (SELECT 1 FROM turns WHERE space_id = $1 AND id = $2)
	ON CONFLICT (space_id, turn_id) DO UPDATE SET keywords = excluded.keywords, tags = excluded.tags,
		entities = excluded.entities, context = excluded.context, time_refs = excluded.time_refs,
		producer = excluded.producer, updated_at = excluded.updated_at, written = excluded.written`

	qEventPut = `INSERT INTO events (space_id, ` + eventCols + `, written) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
	ON CONFLICT (space_id, id) DO UPDATE SET title = excluded.title, summary = excluded.summary,
		facts = excluded.facts, entities = excluded.entities, keywords = excluded.keywords, tags = excluded.tags,
		turn_ids = excluded.turn_ids, start_at = excluded.start_at, end_at = excluded.end_at,
		producer = excluded.producer, version = excluded.version, created_at = excluded.created_at,
		updated_at = excluded.updated_at, written = excluded.written`
	qEventDelete = `DELETE FROM events WHERE space_id = $1 AND id = $2`

	qLinkPut = `INSERT INTO links (space_id, ` + linkCols + `, written) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
	ON CONFLICT (space_id, source, target, relation) DO UPDATE SET confidence = excluded.confidence,
		created_at = excluded.created_at, invalidated_at = excluded.invalidated_at, written = excluded.written`
	qLinksDelete = `DELETE FROM links WHERE space_id = $1 AND (source = $2 OR target = $2)`

	qVectorPut = `INSERT INTO vectors (space_id, kind, id, embedder, dim, data, written) VALUES ($1, $2, $3, $4, $5, $6, $7)
	ON CONFLICT (space_id, kind, id) DO UPDATE SET embedder = excluded.embedder, dim = excluded.dim, data = excluded.data,
		written = excluded.written`
	qVectorDelete = `DELETE FROM vectors WHERE space_id = $1 AND kind = $2 AND id = $3`

	qHistoryAppend = `INSERT INTO history (space_id, seq, kind, id, action, actor, before, after, at)
	SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8 FROM history WHERE space_id = $1`
	qHistoryRedact = `UPDATE history SET before = CASE WHEN before IS NULL THEN NULL ELSE $3::bytea END,
		after = CASE WHEN after IS NULL THEN NULL ELSE $3::bytea END WHERE space_id = $1 AND seq = ANY($2)`
)

// tx is a store.Tx over one pgx transaction.
type tx struct {
	reader
	pgTx    pgx.Tx
	done    atomic.Bool
	spaces  map[store.Space]int64 // space row ids seen in this transaction
	dirty   map[int64]bool        // space rows written in this transaction
	locked  map[int64]store.Head  // space rows locked (and given their version) by Lock
	schema  string                // the schema, part of every space lock key
	held    map[store.Space]bool  // spaces whose write lock is held
	deleted []store.Space         // spaces deleted by DeleteSpace
	vers    map[int64]int64       // the version each space row is written with (see version)
	tombs   map[int64]bool        // space rows the transaction left tombstones in
	bound   int                   // the store's Options.JournalTombstones
}

var (
	_ store.Tx             = (*tx)(nil)
	_ store.EmbedderLister = (*tx)(nil)
)

func newTx(pgTx pgx.Tx, schema string, bound int) *tx {
	return &tx{reader: reader{q: pgTx}, pgTx: pgTx, schema: schema, spaces: map[store.Space]int64{},
		dirty: map[int64]bool{}, locked: map[int64]store.Head{}, held: map[store.Space]bool{},
		vers: map[int64]int64{}, tombs: map[int64]bool{}, bound: bound}
}

// alive fails once Update has returned.
func (t *tx) alive() error {
	if t.done.Load() {
		return fmt.Errorf("postgres: transaction used after Update returned: %w", store.ErrClosed)
	}
	return nil
}

// check validates sp and that the transaction is still open.
// check fails once Update has returned or when sp is invalid; the first
// time a transaction names a space it takes the space's write lock (see
// lockSpace).
func (t *tx) check(ctx context.Context, sp store.Space) error {
	if err := t.alive(); err != nil {
		return err
	}
	if err := sp.Validate(); err != nil {
		return err
	}
	return t.lockSpace(ctx, sp)
}

// lockSpace takes the write lock of sp until the transaction ends: a
// transaction-scoped advisory lock keyed by a hash of the schema and the
// space, so that writers of one space run one at a time (in every process
// on the database) while writers of other spaces go on. Reads inside the
// transaction take it too: what a writer reads, no other writer changes
// before it commits. It works for spaces that have no row yet. Two spaces
// whose keys collide merely wait for each other.
func (t *tx) lockSpace(ctx context.Context, sp store.Space) error {
	if t.held[sp] {
		return nil
	}
	key := t.schema + "\x1f" + clean(sp.UserID) + "\x1f" + clean(sp.AgentID)
	if _, err := t.pgTx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("postgres: locking space %s: %w", sp, err)
	}
	t.held[sp] = true
	return nil
}

// spaceID returns the row id of sp, creating the row when create is set.
// ok is false when the space has no row (and create is not set).
func (t *tx) spaceID(ctx context.Context, sp store.Space, create bool) (id int64, ok bool, err error) {
	id, ok = t.spaces[sp]
	if !ok {
		user, agent := clean(sp.UserID), clean(sp.AgentID)
		err = t.pgTx.QueryRow(ctx, qSpaceID, user, agent).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) && create {
			// The space's lock is held, so no other writer creates it now.
			err = t.pgTx.QueryRow(ctx, qSpaceCreate, user, agent).Scan(&id)
		}
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return 0, false, nil
		case err != nil:
			return 0, false, fmt.Errorf("space %s: %w", sp, err)
		}
		t.spaces[sp] = id
	}
	return id, true, nil
}

// bumpVersions gives every space the transaction changed without locking
// it its new version and bounds the tombstones, just before the commit,
// and tells the watchers (see Store.Watch): the
// notifications go out when the transaction commits, and not at all when
// it rolls back. A no-op PutTurn changes nothing.
func (t *tx) bumpVersions(ctx context.Context) error {
	if err := t.notify(ctx); err != nil {
		return err
	}
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

// notify queues one notification per written space on the schema's
// channel.
func (t *tx) notify(ctx context.Context) error {
	var payloads []string
	for _, sp := range t.deleted {
		payloads = append(payloads, notifyPayload(sp))
	}
	for sp, id := range t.spaces {
		if t.dirty[id] {
			payloads = append(payloads, notifyPayload(sp))
		}
	}
	if len(payloads) == 0 {
		return nil
	}
	if _, err := t.pgTx.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, notifyChannel(t.schema), payloads); err != nil {
		return fmt.Errorf("notifying watchers: %w", err)
	}
	return nil
}

// Read methods: check, then read through the transaction.

// GetTurn implements store.Reader.
func (t *tx) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	if err := t.check(ctx, sp); err != nil {
		return store.Turn{}, err
	}
	return t.reader.GetTurn(ctx, sp, id)
}

// ListTurns implements store.Reader.
func (t *tx) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListTurns(ctx, sp, q)
}

// ListAnnotations implements store.Reader.
func (t *tx) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListAnnotations(ctx, sp, ids)
}

// ListEvents implements store.Reader.
func (t *tx) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListEvents(ctx, sp)
}

// ListLinks implements store.Reader.
func (t *tx) ListLinks(ctx context.Context, sp store.Space, ids []string) ([]store.Link, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListLinks(ctx, sp, ids)
}

// ListVectors implements store.Reader.
func (t *tx) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.ListVectors(ctx, sp, kind, embedder)
}

// VectorsInto is Store.VectorsInto inside the transaction.
func (t *tx) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	if err := t.check(ctx, sp); err != nil {
		return 0, err
	}
	return t.reader.VectorsInto(ctx, sp, kind, embedder, dim, dst, row)
}

// VectorSetsInto is Store.VectorSetsInto inside the transaction.
func (t *tx) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	return t.reader.VectorSetsInto(ctx, sp, sets)
}

// Embedders is Store.Embedders inside the transaction.
func (t *tx) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	if err := t.check(ctx, sp); err != nil {
		return nil, err
	}
	return t.reader.Embedders(ctx, sp, kind)
}

// History implements store.Reader.
func (t *tx) History(ctx context.Context, sp store.Space, kind, id string) ([]store.Change, error) {
	if err := t.check(ctx, sp); err != nil {
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
	if err := t.check(ctx, sp); err != nil {
		return store.Stats{}, err
	}
	return t.reader.Stats(ctx, sp)
}

// PutTurn implements store.Writer.
func (t *tx) PutTurn(ctx context.Context, tr store.Turn) (bool, error) {
	if err := t.check(ctx, tr.Space); err != nil {
		return false, err
	}
	if err := tr.Validate(); err != nil {
		return false, err
	}
	if tr.RecordedAt.IsZero() {
		tr.RecordedAt = time.Now()
	}
	tr.ID, tr.SessionID, tr.Speaker, tr.Text, tr.OccurredRaw = clean(tr.ID), clean(tr.SessionID), clean(tr.Speaker), clean(tr.Text), clean(tr.OccurredRaw)
	tr.Attachments = cleanAttachments(tr.Attachments)
	occ, err1 := encodeTime("occurred at", tr.OccurredAt)
	rec, err2 := encodeTime("recorded at", tr.RecordedAt)
	att, err3 := encodeJSON("attachments", tr.Attachments, len(tr.Attachments) == 0)
	meta := cleanMap(tr.Metadata)
	metaJSON, err4 := encodeJSON("metadata", meta, len(meta) == 0)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return false, fmt.Errorf("postgres: put turn %q: %w", tr.ID, err)
		}
	}
	sid, _, err := t.spaceID(ctx, tr.Space, true)
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: put turn %q: %w", tr.ID, err)
	}
	tag, err := t.pgTx.Exec(ctx, qTurnInsert, sid, tr.ID, tr.SessionID, tr.Seq, tr.Speaker, tr.Text, att, occ, tr.OccurredRaw, rec, metaJSON, v)
	if err != nil {
		return false, fmt.Errorf("postgres: put turn %q: %w", tr.ID, err)
	}
	if tag.RowsAffected() == 1 {
		t.dirty[sid] = true
		return true, nil
	}
	// The id is taken: a no-op if the content is the same.
	var old store.Turn
	var oldAtt []byte
	if err := t.pgTx.QueryRow(ctx, qTurnIdentity, sid, tr.ID).Scan(&old.SessionID, &old.Speaker, &old.Text, &old.OccurredRaw, &oldAtt); err != nil {
		return false, fmt.Errorf("postgres: put turn %q: reading the stored turn: %w", tr.ID, err)
	}
	if err := decodeJSON("attachments", oldAtt, &old.Attachments); err != nil {
		return false, fmt.Errorf("postgres: put turn %q: %w", tr.ID, err)
	}
	if old.SessionID == tr.SessionID && old.Speaker == tr.Speaker && old.Text == tr.Text &&
		old.OccurredRaw == tr.OccurredRaw && slices.Equal(old.Attachments, tr.Attachments) {
		return false, nil
	}
	return false, fmt.Errorf("postgres: turn %q: %w", tr.ID, store.ErrConflict)
}

// PutAnnotation implements store.Writer.
func (t *tx) PutAnnotation(ctx context.Context, sp store.Space, a store.Annotation) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	trs, err1 := encodeTimeRefs(a.TimeRefs)
	upd, err2 := encodeTime("updated at", a.UpdatedAt)
	for _, err := range []error{err1, err2} {
		if err != nil {
			return fmt.Errorf("postgres: annotate turn %q: %w", a.TurnID, err)
		}
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	var n, v int64
	if err == nil && ok {
		v, err = t.version(ctx, sid)
	}
	if err == nil && ok {
		var tag pgconn.CommandTag
		tag, err = t.pgTx.Exec(ctx, qAnnotationPut, sid, clean(a.TurnID), cleanList(a.Keywords), cleanList(a.Tags),
			cleanList(a.Entities), clean(a.Context), trs, clean(a.Producer), upd, v)
		n = tag.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("postgres: annotate turn %q: %w", a.TurnID, err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: annotate turn %q: %w", a.TurnID, store.ErrNotFound)
	}
	t.dirty[sid] = true
	return nil
}

// PutEvent implements store.Writer.
func (t *tx) PutEvent(ctx context.Context, e store.Event) error {
	if err := t.check(ctx, e.Space); err != nil {
		return err
	}
	if err := e.Validate(); err != nil {
		return err
	}
	facts := cleanFacts(e.Facts)
	factsJSON, err := encodeJSON("facts", facts, len(facts) == 0)
	if err != nil {
		return fmt.Errorf("postgres: put event %q: %w", e.ID, err)
	}
	var times [4]*string
	for i, tm := range []struct {
		what string
		t    time.Time
	}{{"start", e.Start}, {"end", e.End}, {"created at", e.CreatedAt}, {"updated at", e.UpdatedAt}} {
		if times[i], err = encodeTime(tm.what, tm.t); err != nil {
			return fmt.Errorf("postgres: put event %q: %w", e.ID, err)
		}
	}
	sid, _, err := t.spaceID(ctx, e.Space, true)
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.pgTx.Exec(ctx, qEventPut, sid, clean(e.ID), clean(e.Title), clean(e.Summary), factsJSON,
			cleanList(e.Entities), cleanList(e.Keywords), cleanList(e.Tags), cleanList(e.TurnIDs), times[0], times[1],
			clean(e.Producer), e.Version, times[2], times[3], v)
	}
	if err != nil {
		return fmt.Errorf("postgres: put event %q: %w", e.ID, err)
	}
	t.dirty[sid] = true
	return nil
}

// DeleteEvent implements store.Writer.
func (t *tx) DeleteEvent(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if err := t.deleteRecord(ctx, sp, qEventDelete, clean(id), []store.VectorKind{store.VectorEvent}, false); err != nil {
		return fmt.Errorf("postgres: delete event %q: %w", id, err)
	}
	return nil
}

// deleteRecord deletes the turn or event id with q, then its vector of
// kinds, then (links set: a turn) the links touching it and the profile
// records citing it; store.ErrNotFound when q deletes nothing.
func (t *tx) deleteRecord(ctx context.Context, sp store.Space, q, id string, kinds []store.VectorKind, links bool) error {
	sid, ok, err := t.spaceID(ctx, sp, false)
	if err != nil {
		return err
	}
	var tag pgconn.CommandTag
	if ok {
		if tag, err = t.pgTx.Exec(ctx, q, sid, id); err != nil {
			return err
		}
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	for _, kind := range kinds {
		if _, err := t.pgTx.Exec(ctx, qVectorDelete, sid, string(kind), id); err != nil {
			return err
		}
	}
	if links {
		if _, err := t.pgTx.Exec(ctx, qLinksDelete, sid, id); err != nil {
			return err
		}
		if _, err := t.pgTx.Exec(ctx, qProfilesCiting, sid, id); err != nil {
			return err
		}
	}
	t.dirty[sid] = true
	return t.tombstone(ctx, sid, string(kinds[0]), id) // the record's own kind: turn or event
}

// PutLink implements store.Writer.
func (t *tx) PutLink(ctx context.Context, sp store.Space, l store.Link) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if err := l.Validate(); err != nil {
		return err
	}
	created, err1 := encodeTime("created at", l.CreatedAt)
	inval, err2 := encodeTime("invalidated at", l.InvalidatedAt)
	for _, err := range []error{err1, err2} {
		if err != nil {
			return fmt.Errorf("postgres: put link: %w", err)
		}
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	var v int64
	if err == nil {
		v, err = t.version(ctx, sid)
	}
	if err == nil {
		_, err = t.pgTx.Exec(ctx, qLinkPut, sid, clean(l.Source), clean(l.Target), clean(l.Relation), l.Confidence, created, inval, v)
	}
	if err != nil {
		return fmt.Errorf("postgres: put link %s -> %s: %w", l.Source, l.Target, err)
	}
	t.dirty[sid] = true
	return nil
}

// PutVectors implements store.Writer. The whole batch is validated before
// any vector is stored, and sent to the server in one round trip.
func (t *tx) PutVectors(ctx context.Context, sp store.Space, vs []store.Vector) error {
	if err := t.check(ctx, sp); err != nil {
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
	var ver int64
	if err == nil {
		ver, err = t.version(ctx, sid)
	}
	if err != nil {
		return fmt.Errorf("postgres: put vectors: %w", err)
	}
	var b pgx.Batch
	for _, v := range vs {
		b.Queue(qVectorPut, sid, clean(string(v.Kind)), clean(v.ID), clean(v.Embedder), len(v.Values), vec.EncodeLE(v.Values), ver)
	}
	if err := t.pgTx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("postgres: put vectors: %w", err)
	}
	t.dirty[sid] = true
	return nil
}

// AppendHistory implements store.Writer.
func (t *tx) AppendHistory(ctx context.Context, sp store.Space, c store.Change) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if c.At.IsZero() {
		c.At = time.Now()
	}
	at, err := encodeTime("change time", c.At)
	if err != nil {
		return fmt.Errorf("postgres: append history: %w", err)
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	if err == nil {
		_, err = t.pgTx.Exec(ctx, qHistoryAppend, sid, clean(c.Kind), clean(c.ID), clean(c.Action), clean(c.Actor),
			rawJSON(c.Before), rawJSON(c.After), *at)
	}
	if err != nil {
		return fmt.Errorf("postgres: append history: %w", err)
	}
	t.dirty[sid] = true
	return nil
}

// rawJSON returns a change's before/after bytes as stored: nil when empty.
func rawJSON(m []byte) []byte {
	if len(m) == 0 {
		return nil
	}
	return m
}

// DeleteTurn implements store.Writer. The annotation goes by cascade.
func (t *tx) DeleteTurn(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if err := t.deleteRecord(ctx, sp, qTurnDelete, clean(id), store.TurnVectorKinds, true); err != nil {
		return fmt.Errorf("postgres: delete turn %q: %w", id, err)
	}
	return nil
}

// DeleteSpace implements store.Writer.
func (t *tx) DeleteSpace(ctx context.Context, sp store.Space) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	// Every table refers to the space row with ON DELETE CASCADE.
	if _, err := t.pgTx.Exec(ctx, qSpaceDelete, clean(sp.UserID), clean(sp.AgentID)); err != nil {
		return fmt.Errorf("postgres: delete space %s: %w", sp, err)
	}
	t.deleted = append(t.deleted, sp)
	if id, ok := t.spaces[sp]; ok {
		delete(t.dirty, id)
		delete(t.locked, id)
		delete(t.vers, id)
		delete(t.tombs, id)
		delete(t.spaces, sp)
	}
	return nil
}

// Lock implements store.Writer: it locks the space's row (SELECT ... FOR
// UPDATE, on top of the space's advisory lock every first touch takes) and
// gives it its new version from the sequence space_version.
func (t *tx) Lock(ctx context.Context, sp store.Space) (store.Head, error) {
	if err := t.check(ctx, sp); err != nil {
		return store.Head{}, err
	}
	h, err := t.lock(ctx, sp)
	if err != nil {
		return store.Head{}, fmt.Errorf("postgres: lock space %s: %w", sp, err)
	}
	return h, nil
}

func (t *tx) lock(ctx context.Context, sp store.Space) (store.Head, error) {
	_, existed, err := t.spaceID(ctx, sp, false)
	if err != nil {
		return store.Head{}, err
	}
	sid, _, err := t.spaceID(ctx, sp, true)
	if err != nil {
		return store.Head{}, err
	}
	h, ok := t.locked[sid]
	if !ok {
		// A row created now has a version from its DEFAULT, but the space
		// had none.
		if err := t.pgTx.QueryRow(ctx, `SELECT version FROM spaces WHERE id = $1 FOR UPDATE`, sid).Scan(&h.Version); err != nil {
			return store.Head{}, err
		}
		if !existed {
			h.Version = 0
		}
		if h.Next, err = t.version(ctx, sid); err != nil {
			return store.Head{}, err
		}
		if err := t.setVersion(ctx, sid, h.Next); err != nil {
			return store.Head{}, err
		}
		t.locked[sid] = h
	}
	if err := t.pgTx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM turns WHERE space_id = $1`, sid).Scan(&h.LastSeq); err != nil {
		return store.Head{}, err
	}
	return h, nil
}

// RedactHistory implements store.Writer. The old row versions stay in the
// table's pages as dead tuples until VACUUM reclaims them (see
// docs/PRIVACY.md).
func (t *tx) RedactHistory(ctx context.Context, sp store.Space, seqs []int64, note json.RawMessage) error {
	if err := t.check(ctx, sp); err != nil {
		return err
	}
	if len(seqs) == 0 {
		return nil
	}
	sid, ok, err := t.spaceID(ctx, sp, false)
	if err == nil && ok {
		_, err = t.pgTx.Exec(ctx, qHistoryRedact, sid, seqs, rawJSON(note))
		t.dirty[sid] = true
	}
	if err != nil {
		return fmt.Errorf("postgres: redact history: %w", err)
	}
	return nil
}
