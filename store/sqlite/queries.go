package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// spaceSub selects the id of the space given by the first two arguments
// (user, agent); NULL when the space has no row, so nothing matches.
const spaceSub = `(SELECT id FROM spaces WHERE user_id = ? AND agent_id = ?)`

const (
	turnCols  = `id, session_id, seq, speaker, text, attachments, occurred_at, occurred_raw, recorded_at, metadata`
	annCols   = `a.turn_id, a.keywords, a.tags, a.entities, a.context, a.time_refs, a.producer, a.updated_at`
	eventCols = `id, title, summary, facts, entities, keywords, tags, turn_ids, start_at, end_at, producer, version, created_at, updated_at`
	linkCols  = `source, target, relation, confidence, created_at, invalidated_at`
)

// Read queries. Each takes the space's user and agent ids first.
var (
	qGetTurn = `SELECT ` + turnCols + ` FROM turns WHERE space_id = ` + spaceSub + ` AND id = ?`
	// Zero (NULL) creation times sort like the zero time.
	qListEvents = `SELECT ` + eventCols + ` FROM events WHERE space_id = ` + spaceSub +
		` ORDER BY coalesce(created_at, '` + zeroTimeText + `'), id`
	qListVectors = `SELECT id, dim, data FROM vectors WHERE space_id = ` + spaceSub +
		` AND kind = ? AND embedder = ? ORDER BY id`
	// The vectors of one dimension, for VectorsInto: a column less to
	// convert per row (database/sql converts an integer into an int
	// through its text) when a space loads.
	qVectorsOfDim = `SELECT id, data FROM vectors WHERE space_id = ` + spaceSub +
		` AND kind = ? AND embedder = ? AND dim = ? ORDER BY id`
	qStats = `WITH sp AS ` + spaceSub + ` SELECT
	(SELECT count(*) FROM turns WHERE space_id = (SELECT id FROM sp)),
	(SELECT count(*) FROM events WHERE space_id = (SELECT id FROM sp)),
	(SELECT count(*) FROM links WHERE space_id = (SELECT id FROM sp)),
	(SELECT coalesce(max(seq), 0) FROM turns WHERE space_id = (SELECT id FROM sp))`
	// Row counts, to size the result of a whole-space list up front
	// (loading a space lists every turn, event and vector).
	qCountTurns   = `SELECT count(*) FROM turns WHERE space_id = ` + spaceSub
	qCountEvents  = `SELECT count(*) FROM events WHERE space_id = ` + spaceSub
	qCountVectors = `SELECT count(*) FROM vectors WHERE space_id = ` + spaceSub + ` AND kind = ? AND embedder = ?`
	// The time expressions of some turns' annotations (ListTimeRefs):
	// looked up by key, no join with the turns, no sort, and no row for
	// an annotation without any.
	qListTimeRefs = `SELECT turn_id, time_refs FROM annotations WHERE space_id = ` + spaceSub +
		` AND ` + inIDs("turn_id") + ` AND time_refs IS NOT NULL`
	// The time expressions of every annotation of a space that has any
	// (EachTimeRefs): no join with the turns, no sort.
	qSpaceTimeRefs = `SELECT turn_id, time_refs FROM annotations WHERE space_id = ` + spaceSub + ` AND time_refs IS NOT NULL`
	qSpaces        = `SELECT user_id, agent_id FROM spaces s
	WHERE EXISTS (SELECT 1 FROM turns WHERE space_id = s.id) OR EXISTS (SELECT 1 FROM events WHERE space_id = s.id)
	ORDER BY user_id, agent_id`
)

// inIDs filters column by a JSON array of ids passed as one argument.
func inIDs(col string) string { return col + ` IN (SELECT value FROM json_each(?))` }

// qListTurns returns the query for a TurnQuery with the given filters set.
// Arguments follow in this order: user, agent, ids, session, recorded
// before, after seq, limit.
func qListTurns(ids, session, before, after bool) string {
	var b strings.Builder
	b.WriteString(`SELECT ` + turnCols + ` FROM turns WHERE space_id = ` + spaceSub)
	if ids {
		b.WriteString(` AND ` + inIDs("id"))
	}
	if session {
		b.WriteString(` AND session_id = ?`)
	}
	if before {
		b.WriteString(` AND recorded_at <= ?`)
	}
	if after {
		b.WriteString(` AND seq > ?`)
	}
	b.WriteString(` ORDER BY seq, id LIMIT ?`)
	return b.String()
}

func qListAnnotations(ids bool) string {
	if ids {
		// Look the given turns up by key and sort those few rows: joined
		// the other way, SQLite walks the whole space in Seq order to skip
		// the sort.
		return `SELECT ` + annCols + ` FROM annotations a CROSS JOIN turns t ON t.space_id = a.space_id AND t.id = a.turn_id
	WHERE a.space_id = ` + spaceSub + ` AND ` + inIDs("a.turn_id") + ` ORDER BY t.seq, t.id`
	}
	return `SELECT ` + annCols + ` FROM annotations a JOIN turns t ON t.space_id = a.space_id AND t.id = a.turn_id
	WHERE a.space_id = ` + spaceSub + ` ORDER BY t.seq, t.id`
}

func qListLinks(ids bool) string {
	q := `SELECT ` + linkCols + ` FROM links WHERE space_id = ` + spaceSub
	if ids {
		q += ` AND (` + inIDs("source") + ` OR ` + inIDs("target") + `)`
	}
	return q + ` ORDER BY source, target, relation`
}

func qHistory(kind, id bool) string {
	q := `SELECT seq, kind, id, action, actor, before, after, at FROM history WHERE space_id = ` + spaceSub
	if kind {
		q += ` AND kind = ?`
	}
	if id {
		q += ` AND id = ?`
	}
	return q + ` ORDER BY seq`
}

// bools is every combination of n flags.
func bools(n int) [][]bool {
	var out [][]bool
	for m := range 1 << n {
		c := make([]bool, n)
		for i := range c {
			c[i] = m&(1<<i) != 0
		}
		out = append(out, c)
	}
	return out
}

// readQueries lists every read query, to prepare them up front.
func readQueries() []string {
	qs := []string{qGetTurn, qListEvents, qListVectors, qVectorsOfDim, qVectorsMaxRowid, qStats, qSpaces, qCountTurns, qCountEvents, qCountVectors, qListTimeRefs, qSpaceTimeRefs}
	qs = append(qs, journalReads...)
	for _, c := range bools(4) {
		qs = append(qs, qListTurns(c[0], c[1], c[2], c[3]))
	}
	for _, c := range bools(2) {
		qs = append(qs, qListAnnotations(c[0]), qListLinks(c[0]), qHistory(c[0], c[1]))
	}
	return append(qs, profileReadQueries()...)
}

// runner hands out prepared statements: from the store's read pool, or
// bound to a transaction.
type runner interface {
	stmt(ctx context.Context, query string) (*sql.Stmt, error)
}

// reader implements store.Reader on a runner. It does not validate the
// space or check for a closed store; its callers do.
type reader struct{ run runner }

func (r reader) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := r.run.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// turnScan scans rows of the columns turnCols into one scratch row, with
// the destinations handed to Scan made once for every row of a query (a
// space's turns are listed when it loads) rather than once per row.
type turnScan struct {
	sp                  store.Space
	t                   store.Turn
	att, meta, occ, rec sql.NullString
	dest                []any
}

// newTurnScan returns a turnScan for turns of space sp.
func newTurnScan(sp store.Space) *turnScan {
	s := &turnScan{sp: sp}
	s.dest = []any{&s.t.ID, &s.t.SessionID, &s.t.Seq, &s.t.Speaker, &s.t.Text, &s.att, &s.occ, &s.t.OccurredRaw, &s.rec, &s.meta}
	return s
}

// scan scans one row.
func (s *turnScan) scan(sc scanner) (store.Turn, error) {
	s.t = store.Turn{Space: s.sp}
	if err := sc.Scan(s.dest...); err != nil {
		return s.t, err
	}
	t := s.t
	var err1, err2 error
	t.OccurredAt, err1 = decodeTime(s.occ)
	t.RecordedAt, err2 = decodeTime(s.rec)
	return t, errors.Join(err1, err2, decodeJSON("attachments", s.att, &t.Attachments), decodeJSON("metadata", s.meta, &t.Metadata))
}

// eventScan is turnScan for the columns eventCols.
type eventScan struct {
	sp                                                 store.Space
	e                                                  store.Event
	facts, ents, kws, tags, tids, start, end, crt, upd sql.NullString
	dest                                               []any
}

// newEventScan returns an eventScan for events of space sp.
func newEventScan(sp store.Space) *eventScan {
	s := &eventScan{sp: sp}
	s.dest = []any{&s.e.ID, &s.e.Title, &s.e.Summary, &s.facts, &s.ents, &s.kws, &s.tags, &s.tids, &s.start, &s.end,
		&s.e.Producer, &s.e.Version, &s.crt, &s.upd}
	return s
}

// scan scans one row.
func (s *eventScan) scan(sc scanner) (store.Event, error) {
	s.e = store.Event{Space: s.sp}
	if err := sc.Scan(s.dest...); err != nil {
		return s.e, err
	}
	e := s.e
	var errs [4]error
	e.Start, errs[0] = decodeTime(s.start)
	e.End, errs[1] = decodeTime(s.end)
	e.CreatedAt, errs[2] = decodeTime(s.crt)
	e.UpdatedAt, errs[3] = decodeTime(s.upd)
	return e, errors.Join(errors.Join(errs[:]...),
		decodeJSON("facts", s.facts, &e.Facts), decodeJSON("entities", s.ents, &e.Entities),
		decodeJSON("keywords", s.kws, &e.Keywords), decodeJSON("tags", s.tags, &e.Tags),
		decodeJSON("turn ids", s.tids, &e.TurnIDs))
}

// scanAnnotation scans the columns annCols.
func scanAnnotation(sc scanner) (store.Annotation, error) {
	var a store.Annotation
	var kws, tags, ents, trs, upd sql.NullString
	if err := sc.Scan(&a.TurnID, &kws, &tags, &ents, &a.Context, &trs, &a.Producer, &upd); err != nil {
		return a, err
	}
	var err error
	a.UpdatedAt, err = decodeTime(upd)
	return a, errors.Join(err, decodeJSON("keywords", kws, &a.Keywords), decodeJSON("tags", tags, &a.Tags),
		decodeJSON("entities", ents, &a.Entities), decodeJSON("time refs", trs, &a.TimeRefs))
}

// scanLink scans the columns linkCols.
func scanLink(sc scanner) (store.Link, error) {
	var l store.Link
	var created, inval sql.NullString
	if err := sc.Scan(&l.Source, &l.Target, &l.Relation, &l.Confidence, &created, &inval); err != nil {
		return l, err
	}
	var err1, err2 error
	l.CreatedAt, err1 = decodeTime(created)
	l.InvalidatedAt, err2 = decodeTime(inval)
	return l, errors.Join(err1, err2)
}

// collect scans every row with scan.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	return collectN(rows, err, 0, scan)
}

// collectN is collect with room for n rows made up front.
func collectN[T any](rows *sql.Rows, err error, n int, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]T, 0, n)
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// count runs a count query; on error it returns 0 (the count is only a
// hint for the size of a result).
func (r reader) count(ctx context.Context, q string, args ...any) int {
	rows, err := r.query(ctx, q, args...)
	ns, err := collect(rows, err, func(sc scanner) (int, error) {
		var n int
		return n, sc.Scan(&n)
	})
	if err != nil || len(ns) != 1 || ns[0] < 0 || ns[0] > 1<<26 {
		return 0
	}
	return ns[0]
}

// idsArg encodes an id list for json_each.
func idsArg(ids []string) string {
	b, _ := json.Marshal(ids) // []string always marshals
	return string(b)
}

func (r reader) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	rows, err := r.query(ctx, qGetTurn, sp.UserID, sp.AgentID, id)
	ts, err := collect(rows, err, newTurnScan(sp).scan)
	if err != nil {
		return store.Turn{}, fmt.Errorf("sqlite: get turn %q: %w", id, err)
	}
	if len(ts) == 0 {
		return store.Turn{}, fmt.Errorf("sqlite: turn %q: %w", id, store.ErrNotFound)
	}
	return ts[0], nil
}

func (r reader) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	if q.IDs != nil && len(q.IDs) == 0 {
		return nil, nil
	}
	args := []any{sp.UserID, sp.AgentID}
	if q.IDs != nil {
		args = append(args, idsArg(q.IDs))
	}
	if q.SessionID != "" {
		args = append(args, q.SessionID)
	}
	before := !q.RecordedBefore.IsZero()
	if before {
		switch y := q.RecordedBefore.UTC().Year(); {
		case y < 0:
			return nil, nil // nothing was recorded that early
		case y > 9999:
			before = false // everything was recorded before
		default:
			b, _ := encodeTime("recorded before", q.RecordedBefore)
			args = append(args, b)
		}
	}
	if q.AfterSeq != 0 { // the zero query selects all turns, even Seq <= 0
		args = append(args, q.AfterSeq)
	}
	limit := int64(-1)
	if q.Limit > 0 {
		limit = int64(q.Limit)
	}
	args = append(args, limit)
	hint := 0
	if q.IDs == nil && q.SessionID == "" && !before && q.AfterSeq == 0 && q.Limit <= 0 {
		hint = r.count(ctx, qCountTurns, sp.UserID, sp.AgentID)
	}
	rows, err := r.query(ctx, qListTurns(q.IDs != nil, q.SessionID != "", before, q.AfterSeq != 0), args...)
	ts, err := collectN(rows, err, hint, newTurnScan(sp).scan)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list turns: %w", err)
	}
	return ts, nil
}

func (r reader) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	args := []any{sp.UserID, sp.AgentID}
	if ids != nil {
		args = append(args, idsArg(ids))
	}
	rows, err := r.query(ctx, qListAnnotations(ids != nil), args...)
	as, err := collect(rows, err, scanAnnotation)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list annotations: %w", err)
	}
	return as, nil
}

func (r reader) ListTimeRefs(ctx context.Context, sp store.Space, ids []string) ([][]store.TimeRef, error) {
	out := make([][]store.TimeRef, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.query(ctx, qListTimeRefs, sp.UserID, sp.AgentID, idsArg(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list time refs: %w", err)
	}
	defer rows.Close()
	put := store.TimeRefsPlacer(ids, out)
	var id string
	var trs sql.NullString
	for rows.Next() {
		if err := rows.Scan(&id, &trs); err != nil {
			return nil, fmt.Errorf("sqlite: list time refs: %w", err)
		}
		var refs []store.TimeRef
		if err := decodeJSON("time refs", trs, &refs); err != nil {
			return nil, err
		}
		put(id, refs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list time refs: %w", err)
	}
	return out, nil
}

func (r reader) EachTimeRefs(ctx context.Context, sp store.Space, fn func(id string, refs []store.TimeRef)) error {
	rows, err := r.query(ctx, qSpaceTimeRefs, sp.UserID, sp.AgentID)
	if err != nil {
		return fmt.Errorf("sqlite: list time refs: %w", err)
	}
	defer rows.Close()
	var id string
	var trs sql.NullString
	for rows.Next() {
		if err := rows.Scan(&id, &trs); err != nil {
			return fmt.Errorf("sqlite: list time refs: %w", err)
		}
		var refs []store.TimeRef
		if err := decodeJSON("time refs", trs, &refs); err != nil {
			return err
		}
		fn(id, refs)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: list time refs: %w", err)
	}
	return nil
}

func (r reader) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	hint := r.count(ctx, qCountEvents, sp.UserID, sp.AgentID)
	rows, err := r.query(ctx, qListEvents, sp.UserID, sp.AgentID)
	es, err := collectN(rows, err, hint, newEventScan(sp).scan)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list events: %w", err)
	}
	return es, nil
}

func (r reader) ListLinks(ctx context.Context, sp store.Space, ids []string) ([]store.Link, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	args := []any{sp.UserID, sp.AgentID}
	if ids != nil {
		arg := idsArg(ids)
		args = append(args, arg, arg)
	}
	rows, err := r.query(ctx, qListLinks(ids != nil), args...)
	ls, err := collect(rows, err, scanLink)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list links: %w", err)
	}
	return ls, nil
}

func (r reader) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	hint := r.count(ctx, qCountVectors, sp.UserID, sp.AgentID, string(kind), embedder)
	rows, err := r.query(ctx, qListVectors, sp.UserID, sp.AgentID, string(kind), embedder)
	// Rows are decoded into shared slabs rather than one allocation each
	// (loading a space reads every vector).
	var slab []float32
	vs, err := collectN(rows, err, hint, func(sc scanner) (store.Vector, error) {
		// Kind and embedder are the query's own (not read per row).
		v := store.Vector{Kind: kind, Embedder: embedder}
		var dim int
		var data sql.RawBytes
		if err := sc.Scan(&v.ID, &dim, &data); err != nil {
			return v, err
		}
		if len(data) != 4*dim || dim <= 0 || dim > 1<<16 {
			var err error
			v.Values, err = decodeVector(data, dim)
			return v, err
		}
		if len(slab) < dim {
			slab = make([]float32, 256*dim)
		}
		v.Values = slab[:dim:dim]
		slab = slab[dim:]
		vec.DecodeLEInto(v.Values, data)
		return v, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: list vectors: %w", err)
	}
	return vs, nil
}

// VectorsInto implements store.VectorsIntoReader.
func (r reader) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	if dim <= 0 {
		return 0, fmt.Errorf("sqlite: vectors into a matrix: dimension %d: %w", dim, store.ErrInvalid)
	}
	rows, err := r.query(ctx, qVectorsOfDim, sp.UserID, sp.AgentID, string(kind), embedder, dim)
	if err != nil {
		return 0, fmt.Errorf("sqlite: list vectors: %w", err)
	}
	defer rows.Close()
	n := 0
	var id string
	var data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &data); err != nil {
			return n, fmt.Errorf("sqlite: list vectors: %w", err)
		}
		if vec.DecodeLERow(dst, dim, row, id, data) {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("sqlite: list vectors: %w", err)
	}
	return n, nil
}

// maxVectorSets bounds the sets VectorSetsInto reads in one pass (each
// count of sets is a statement of its own); more are read set by set.
const maxVectorSets = 8

// qVectorSets returns the query that reads the vectors of n sets of a space
// in one pass over the vectors table, in rowid order, with the index of the
// row's set: its arguments are the kind, embedder and dimension of each
// set, then the space's user and agent. Reading through vectors_embedder
// looks every row up in the table from the index; a space that holds most
// of the table is read with fewer page visits by scanning the table once
// for all its kinds (see VectorSetsInto).
func qVectorSets(n int) string {
	var b strings.Builder
	b.WriteString(`SELECT CASE`)
	for i := range n {
		fmt.Fprintf(&b, ` WHEN kind = ? AND embedder = ? AND dim = ? THEN %d`, i)
	}
	b.WriteString(` END AS s, id, data FROM vectors NOT INDEXED WHERE space_id = ` + spaceSub + ` AND s IS NOT NULL`)
	return b.String()
}

// qVectorsMaxRowid is the largest rowid of the vectors table (0 when it is
// empty), a bound on its row count found without reading the rows.
const qVectorsMaxRowid = `SELECT coalesce(max(rowid), 0) FROM vectors`

// VectorSetsInto implements store.VectorSetsIntoReader. When the sets hold
// at least half as many rows as the vectors table can hold (its largest
// rowid), the table is read once, in its own order, for every set.
// Otherwise each set is read through the index, as VectorsInto reads it.
//
// Rows come in the order they were first written, which is that of the
// records they belong to when those were added in order, as the engine adds
// turns and events: a caller that puts the rows in order afterwards (see
// higmem's storeRows) then moves none.
func (r reader) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	want := 0
	for i := range sets {
		s := &sets[i]
		if s.Dim <= 0 {
			return fmt.Errorf("sqlite: vector sets into matrices: dimension %d: %w", s.Dim, store.ErrInvalid)
		}
		for _, o := range sets[:i] {
			if o.Kind == s.Kind && o.Embedder == s.Embedder {
				return fmt.Errorf("sqlite: vector sets into matrices: %s vectors of %q twice: %w", s.Kind, s.Embedder, store.ErrInvalid)
			}
		}
		s.N = 0
		want += len(s.Dst) / s.Dim
	}
	if len(sets) == 0 {
		return nil
	}
	if len(sets) > maxVectorSets || 2*int64(want) < r.count64(ctx, qVectorsMaxRowid) {
		for i := range sets {
			s := &sets[i]
			n, err := r.VectorsInto(ctx, sp, s.Kind, s.Embedder, s.Dim, s.Dst, s.Row)
			s.N = n
			if err != nil {
				return err
			}
		}
		return nil
	}
	args := make([]any, 0, 3*len(sets)+2)
	for _, s := range sets {
		args = append(args, string(s.Kind), s.Embedder, s.Dim)
	}
	rows, err := r.query(ctx, qVectorSets(len(sets)), append(args, sp.UserID, sp.AgentID)...)
	if err != nil {
		return fmt.Errorf("sqlite: list vectors: %w", err)
	}
	defer rows.Close()
	var set int64
	var id, data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&set, &id, &data); err != nil {
			return fmt.Errorf("sqlite: list vectors: %w", err)
		}
		if set < 0 || set >= int64(len(sets)) {
			continue
		}
		if s := &sets[set]; vec.DecodeLERow(s.Dst, s.Dim, s.Row, string(id), data) {
			s.N++
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: list vectors: %w", err)
	}
	return nil
}

// count64 runs a query of one integer; on error it returns 0.
func (r reader) count64(ctx context.Context, q string, args ...any) int64 {
	rows, err := r.query(ctx, q, args...)
	ns, err := collect(rows, err, func(sc scanner) (int64, error) {
		var n int64
		return n, sc.Scan(&n)
	})
	if err != nil || len(ns) != 1 {
		return 0
	}
	return ns[0]
}

func (r reader) History(ctx context.Context, sp store.Space, kind, id string) ([]store.Change, error) {
	args := []any{sp.UserID, sp.AgentID}
	if kind != "" {
		args = append(args, kind)
	}
	if id != "" {
		args = append(args, id)
	}
	rows, err := r.query(ctx, qHistory(kind != "", id != ""), args...)
	cs, err := collect(rows, err, func(sc scanner) (store.Change, error) {
		var c store.Change
		var before, after []byte
		var at sql.NullString
		if err := sc.Scan(&c.Seq, &c.Kind, &c.ID, &c.Action, &c.Actor, &before, &after, &at); err != nil {
			return c, err
		}
		if len(before) > 0 {
			c.Before = before
		}
		if len(after) > 0 {
			c.After = after
		}
		var err error
		c.At, err = decodeTime(at)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: history: %w", err)
	}
	return cs, nil
}

func (r reader) Spaces(ctx context.Context) ([]store.Space, error) {
	rows, err := r.query(ctx, qSpaces)
	sps, err := collect(rows, err, func(sc scanner) (store.Space, error) {
		var sp store.Space
		return sp, sc.Scan(&sp.UserID, &sp.AgentID)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: spaces: %w", err)
	}
	return sps, nil
}

func (r reader) Stats(ctx context.Context, sp store.Space) (store.Stats, error) {
	rows, err := r.query(ctx, qStats, sp.UserID, sp.AgentID)
	st, err := collect(rows, err, func(sc scanner) (store.Stats, error) {
		var st store.Stats
		return st, sc.Scan(&st.Turns, &st.Events, &st.Links, &st.LastSeq)
	})
	if err == nil && len(st) != 1 {
		err = fmt.Errorf("%d rows, want 1", len(st))
	}
	if err != nil {
		return store.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	return st[0], nil
}
