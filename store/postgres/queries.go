package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
)

// spaceSub selects the id of the space given by the first two arguments
// (user, agent); NULL when the space has no row, so nothing matches.
const spaceSub = `(SELECT id FROM spaces WHERE user_id = $1 AND agent_id = $2)`

const (
	turnCols  = `id, session_id, seq, speaker, text, attachments, occurred_at, occurred_raw, recorded_at, metadata`
	annCols   = `a.turn_id, a.keywords, a.tags, a.entities, a.context, a.time_refs, a.producer, a.updated_at`
	eventCols = `id, title, summary, facts, entities, keywords, tags, turn_ids, start_at, end_at, producer, version, created_at, updated_at`
	linkCols  = `source, target, relation, confidence, created_at, invalidated_at`
)

// Read queries. Each takes the space's user and agent ids first.
const (
	qGetTurn = `SELECT ` + turnCols + ` FROM turns WHERE space_id = ` + spaceSub + ` AND id = $3`
	// Zero (NULL) creation times sort like the zero time.
	qListEvents = `SELECT ` + eventCols + ` FROM events WHERE space_id = ` + spaceSub +
		` ORDER BY coalesce(created_at, '` + zeroTimeText + `'), id`
	qListVectors = `SELECT id, dim, data FROM vectors WHERE space_id = ` + spaceSub +
		` AND kind = $3 AND embedder = $4 ORDER BY id`
	qEmbedders = `SELECT DISTINCT embedder FROM vectors WHERE space_id = ` + spaceSub + ` AND kind = $3 ORDER BY embedder`
	qStats     = `WITH sp AS ` + spaceSub + ` SELECT
	(SELECT count(*) FROM turns WHERE space_id = (SELECT id FROM sp)),
	(SELECT count(*) FROM events WHERE space_id = (SELECT id FROM sp)),
	(SELECT count(*) FROM links WHERE space_id = (SELECT id FROM sp)),
	(SELECT coalesce(max(seq), 0) FROM turns WHERE space_id = (SELECT id FROM sp))`
	// Row counts, to size the result of a whole-space list up front.
	qCountTurns   = `SELECT count(*) FROM turns WHERE space_id = ` + spaceSub
	qCountEvents  = `SELECT count(*) FROM events WHERE space_id = ` + spaceSub
	qCountVectors = `SELECT count(*) FROM vectors WHERE space_id = ` + spaceSub + ` AND kind = $3 AND embedder = $4`
	qSpaces       = `SELECT user_id, agent_id FROM spaces s
	WHERE EXISTS (SELECT 1 FROM turns WHERE space_id = s.id) OR EXISTS (SELECT 1 FROM events WHERE space_id = s.id)
	ORDER BY user_id, agent_id`
)

// querier is what reads run on: the pool, or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// reader implements store.Reader on a querier. It does not validate the
// space or check for a closed store; its callers do.
type reader struct{ q querier }

// args builds a query's argument list and hands out their $n names.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// spaceArgs starts an argument list with the space (for spaceSub).
func spaceArgs(sp store.Space) args { return args{clean(sp.UserID), clean(sp.AgentID)} }

// collect scans every row with scan, with room for n rows made up front.
func collect[T any](rows pgx.Rows, err error, n int, scan func(pgx.Rows) (T, error)) ([]T, error) {
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
func (r reader) count(ctx context.Context, q string, a ...any) int {
	var n int
	if err := r.q.QueryRow(ctx, q, a...).Scan(&n); err != nil || n < 0 || n > 1<<26 {
		return 0
	}
	return n
}

// scanner is pgx.Row or pgx.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanTurn(sc scanner, sp store.Space) (store.Turn, error) {
	t := store.Turn{Space: sp}
	var att, meta []byte
	var occ, rec *string
	if err := sc.Scan(&t.ID, &t.SessionID, &t.Seq, &t.Speaker, &t.Text, &att, &occ, &t.OccurredRaw, &rec, &meta); err != nil {
		return t, err
	}
	var err1, err2 error
	t.OccurredAt, err1 = decodeTime(occ)
	t.RecordedAt, err2 = decodeTime(rec)
	return t, errors.Join(err1, err2, decodeJSON("attachments", att, &t.Attachments), decodeJSON("metadata", meta, &t.Metadata))
}

func scanEvent(sc scanner, sp store.Space) (store.Event, error) {
	e := store.Event{Space: sp}
	var facts []byte
	var start, end, created, updated *string
	if err := sc.Scan(&e.ID, &e.Title, &e.Summary, &facts, &e.Entities, &e.Keywords, &e.Tags, &e.TurnIDs, &start, &end,
		&e.Producer, &e.Version, &created, &updated); err != nil {
		return e, err
	}
	var errs [4]error
	e.Start, errs[0] = decodeTime(start)
	e.End, errs[1] = decodeTime(end)
	e.CreatedAt, errs[2] = decodeTime(created)
	e.UpdatedAt, errs[3] = decodeTime(updated)
	return e, errors.Join(errors.Join(errs[:]...), decodeJSON("facts", facts, &e.Facts))
}

// scanAnnotation scans the columns annCols.
func scanAnnotation(rows pgx.Rows) (store.Annotation, error) {
	var an store.Annotation
	var trs []byte
	var upd *string
	if err := rows.Scan(&an.TurnID, &an.Keywords, &an.Tags, &an.Entities, &an.Context, &trs, &an.Producer, &upd); err != nil {
		return an, err
	}
	var err error
	an.UpdatedAt, err = decodeTime(upd)
	return an, errors.Join(err, decodeJSON("time refs", trs, &an.TimeRefs))
}

// scanLink scans the columns linkCols.
func scanLink(rows pgx.Rows) (store.Link, error) {
	var l store.Link
	var created, inval *string
	if err := rows.Scan(&l.Source, &l.Target, &l.Relation, &l.Confidence, &created, &inval); err != nil {
		return l, err
	}
	var err1, err2 error
	l.CreatedAt, err1 = decodeTime(created)
	l.InvalidatedAt, err2 = decodeTime(inval)
	return l, errors.Join(err1, err2)
}

func (r reader) GetTurn(ctx context.Context, sp store.Space, id string) (store.Turn, error) {
	rows, err := r.q.Query(ctx, qGetTurn, clean(sp.UserID), clean(sp.AgentID), clean(id))
	ts, err := collect(rows, err, 1, func(rows pgx.Rows) (store.Turn, error) { return scanTurn(rows, sp) })
	if err != nil {
		return store.Turn{}, fmt.Errorf("postgres: get turn %q: %w", id, err)
	}
	if len(ts) == 0 {
		return store.Turn{}, fmt.Errorf("postgres: turn %q: %w", id, store.ErrNotFound)
	}
	return ts[0], nil
}

func (r reader) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) ([]store.Turn, error) {
	if q.IDs != nil && len(q.IDs) == 0 {
		return nil, nil
	}
	a := spaceArgs(sp)
	var b strings.Builder
	b.WriteString(`SELECT ` + turnCols + ` FROM turns WHERE space_id = ` + spaceSub)
	if q.IDs != nil {
		b.WriteString(` AND id = ANY(` + a.add(cleanIDs(q.IDs)) + `)`)
	}
	if q.SessionID != "" {
		b.WriteString(` AND session_id = ` + a.add(clean(q.SessionID)))
	}
	if !q.RecordedBefore.IsZero() {
		switch y := q.RecordedBefore.UTC().Year(); {
		case y < 0:
			return nil, nil // nothing was recorded that early
		case y > 9999:
			// everything was recorded before
		default:
			before, _ := encodeTime("recorded before", q.RecordedBefore)
			b.WriteString(` AND recorded_at <= ` + a.add(*before))
		}
	}
	if q.AfterSeq != 0 { // the zero query selects all turns, even Seq <= 0
		b.WriteString(` AND seq > ` + a.add(q.AfterSeq))
	}
	b.WriteString(` ORDER BY seq, id`)
	if q.Limit > 0 {
		b.WriteString(` LIMIT ` + a.add(int64(q.Limit)))
	}
	hint := 0
	if len(a) == 2 {
		hint = r.count(ctx, qCountTurns, a...)
	}
	rows, err := r.q.Query(ctx, b.String(), a...)
	ts, err := collect(rows, err, hint, func(rows pgx.Rows) (store.Turn, error) { return scanTurn(rows, sp) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list turns: %w", err)
	}
	return ts, nil
}

func (r reader) ListAnnotations(ctx context.Context, sp store.Space, ids []string) ([]store.Annotation, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	a := spaceArgs(sp)
	q := `SELECT ` + annCols + ` FROM annotations a JOIN turns t ON t.space_id = a.space_id AND t.id = a.turn_id
	WHERE a.space_id = ` + spaceSub
	if ids != nil {
		q += ` AND a.turn_id = ANY(` + a.add(cleanIDs(ids)) + `)`
	}
	q += ` ORDER BY t.seq, t.id`
	rows, err := r.q.Query(ctx, q, a...)
	as, err := collect(rows, err, 0, scanAnnotation)
	if err != nil {
		return nil, fmt.Errorf("postgres: list annotations: %w", err)
	}
	return as, nil
}

// qListTimeRefs reads the time expressions of some turns' annotations
// (ListTimeRefs): looked up by key, no join with the turns, no sort, and
// no row for an annotation without any.
const qListTimeRefs = `SELECT turn_id, time_refs FROM annotations WHERE space_id = ` + spaceSub +
	` AND turn_id = ANY($3) AND time_refs IS NOT NULL`

func (r reader) ListTimeRefs(ctx context.Context, sp store.Space, ids []string) ([][]store.TimeRef, error) {
	out := make([][]store.TimeRef, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// The ids as stored (clean), to match the rows' to.
	clean := cleanIDs(ids)
	a := spaceArgs(sp)
	a.add(clean)
	rows, err := r.q.Query(ctx, qListTimeRefs, a...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list time refs: %w", err)
	}
	defer rows.Close()
	put := store.TimeRefsPlacer(clean, out)
	var id string
	var trs []byte
	for rows.Next() {
		if err := rows.Scan(&id, &trs); err != nil {
			return nil, fmt.Errorf("postgres: list time refs: %w", err)
		}
		var refs []store.TimeRef
		if err := decodeJSON("time refs", trs, &refs); err != nil {
			return nil, err
		}
		put(id, refs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list time refs: %w", err)
	}
	return out, nil
}

// qSpaceTimeRefs reads the time expressions of every annotation of a
// space that has any (EachTimeRefs): no join with the turns, no sort.
const qSpaceTimeRefs = `SELECT turn_id, time_refs FROM annotations WHERE space_id = ` + spaceSub + ` AND time_refs IS NOT NULL`

func (r reader) EachTimeRefs(ctx context.Context, sp store.Space, fn func(id string, refs []store.TimeRef)) error {
	rows, err := r.q.Query(ctx, qSpaceTimeRefs, spaceArgs(sp)...)
	if err != nil {
		return fmt.Errorf("postgres: list time refs: %w", err)
	}
	defer rows.Close()
	var id string
	var trs []byte
	for rows.Next() {
		if err := rows.Scan(&id, &trs); err != nil {
			return fmt.Errorf("postgres: list time refs: %w", err)
		}
		var refs []store.TimeRef
		if err := decodeJSON("time refs", trs, &refs); err != nil {
			return err
		}
		fn(id, refs)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: list time refs: %w", err)
	}
	return nil
}

func (r reader) ListEvents(ctx context.Context, sp store.Space) ([]store.Event, error) {
	a := spaceArgs(sp)
	hint := r.count(ctx, qCountEvents, a...)
	rows, err := r.q.Query(ctx, qListEvents, a...)
	es, err := collect(rows, err, hint, func(rows pgx.Rows) (store.Event, error) { return scanEvent(rows, sp) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list events: %w", err)
	}
	return es, nil
}

func (r reader) ListLinks(ctx context.Context, sp store.Space, ids []string) ([]store.Link, error) {
	if ids != nil && len(ids) == 0 {
		return nil, nil
	}
	a := spaceArgs(sp)
	q := `SELECT ` + linkCols + ` FROM links WHERE space_id = ` + spaceSub
	if ids != nil {
		p := a.add(cleanIDs(ids))
		q += ` AND (source = ANY(` + p + `) OR target = ANY(` + p + `))`
	}
	q += ` ORDER BY source, target, relation`
	rows, err := r.q.Query(ctx, q, a...)
	ls, err := collect(rows, err, 0, scanLink)
	if err != nil {
		return nil, fmt.Errorf("postgres: list links: %w", err)
	}
	return ls, nil
}

// vectorRow reads the current row of a qListVectors query without copying
// the vector's bytes (valid until the next row).
func vectorRow(rows pgx.Rows) (id string, dim int, data []byte, err error) {
	raw := rows.RawValues()
	if len(raw) != 3 || raw[1] == nil || raw[2] == nil {
		return "", 0, nil, errors.New("unexpected row shape")
	}
	var d int32
	if err := rows.Scan(&id, &d, nil); err != nil {
		return "", 0, nil, err
	}
	return id, int(d), raw[2], nil
}

func (r reader) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) ([]store.Vector, error) {
	hint := r.count(ctx, qCountVectors, clean(sp.UserID), clean(sp.AgentID), clean(string(kind)), clean(embedder))
	rows, err := r.q.Query(ctx, qListVectors, clean(sp.UserID), clean(sp.AgentID), clean(string(kind)), clean(embedder))
	// Rows are decoded into shared slabs rather than one allocation each
	// (loading a space reads every vector).
	var slab []float32
	vs, err := collect(rows, err, hint, func(rows pgx.Rows) (store.Vector, error) {
		v := store.Vector{Kind: kind, Embedder: embedder}
		id, dim, data, err := vectorRow(rows)
		if err != nil {
			return v, err
		}
		v.ID = id
		if len(data) != 4*dim || dim < 0 || dim > 1<<16 {
			return v, fmt.Errorf("stored vector %q has %d bytes for dimension %d", id, len(data), dim)
		}
		if dim == 0 {
			return v, nil
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
		return nil, fmt.Errorf("postgres: list vectors: %w", err)
	}
	return vs, nil
}

// VectorsInto implements Store.VectorsInto: the one set through
// VectorSetsInto's query, in the table's order. It used to read
// qListVectors, whose ORDER BY id had the server sort every vector of the
// set (a parallel scan and an external sort on a large space) for a caller
// that puts the rows in place by id anyway.
func (r reader) VectorsInto(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error) {
	if dim <= 0 {
		return 0, fmt.Errorf("postgres: vectors into a matrix: dimension %d: %w", dim, store.ErrInvalid)
	}
	sets := []store.VectorSet{{Kind: kind, Embedder: embedder, Dim: dim, Dst: dst, Row: row}}
	err := r.VectorSetsInto(ctx, sp, sets)
	return sets[0].N, err
}

// qVectorSets reads the vectors of several sets of a space in one query:
// its arguments are the space's user and agent, then the kinds, embedders
// and dimensions of the sets, as arrays of one element a set. Each row
// carries the ordinal of its set (from 1). The rows come in no particular
// order: the planner may probe vectors_embedder once a set or scan the
// space's rows once, whichever it finds cheaper.
const qVectorSets = `SELECT s.i, v.id, v.data
	FROM unnest($3::text[], $4::text[], $5::integer[]) WITH ORDINALITY AS s (kind, embedder, dim, i)
	JOIN vectors v ON v.space_id = ` + spaceSub + ` AND v.kind = s.kind AND v.embedder = s.embedder AND v.dim = s.dim`

// VectorSetsInto implements Store.VectorSetsInto.
func (r reader) VectorSetsInto(ctx context.Context, sp store.Space, sets []store.VectorSet) error {
	kinds := make([]string, len(sets))
	embs := make([]string, len(sets))
	dims := make([]int32, len(sets))
	for i := range sets {
		s := &sets[i]
		if s.Dim <= 0 {
			return fmt.Errorf("postgres: vector sets into matrices: dimension %d: %w", s.Dim, store.ErrInvalid)
		}
		// A dimension past int32 matches no stored vector (the dim column's
		// type), as it matches none of bytea's at most 1 GiB.
		kinds[i], embs[i], dims[i] = clean(string(s.Kind)), clean(s.Embedder), int32(min(s.Dim, math.MaxInt32))
		for _, o := range sets[:i] {
			if o.Kind == s.Kind && o.Embedder == s.Embedder {
				return fmt.Errorf("postgres: vector sets into matrices: %s vectors of %q twice: %w", s.Kind, s.Embedder, store.ErrInvalid)
			}
		}
		s.N = 0
	}
	if len(sets) == 0 {
		return nil
	}
	rows, err := r.q.Query(ctx, qVectorSets, clean(sp.UserID), clean(sp.AgentID), kinds, embs, dims)
	if err != nil {
		return fmt.Errorf("postgres: list vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		set, id, data, err := vectorSetRow(rows)
		if err != nil {
			return fmt.Errorf("postgres: list vectors: %w", err)
		}
		if set < 1 || set > int64(len(sets)) {
			continue
		}
		if s := &sets[set-1]; vec.DecodeLERow(s.Dst, s.Dim, s.Row, id, data) {
			s.N++
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: list vectors: %w", err)
	}
	return nil
}

// vectorSetRow reads the current row of a qVectorSets query without
// copying the vector's bytes (valid until the next row).
func vectorSetRow(rows pgx.Rows) (set int64, id string, data []byte, err error) {
	raw := rows.RawValues()
	if len(raw) != 3 || raw[0] == nil || raw[2] == nil {
		return 0, "", nil, errors.New("unexpected row shape")
	}
	if err := rows.Scan(&set, &id, nil); err != nil {
		return 0, "", nil, err
	}
	return set, id, raw[2], nil
}

func (r reader) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	rows, err := r.q.Query(ctx, qEmbedders, clean(sp.UserID), clean(sp.AgentID), clean(string(kind)))
	es, err := collect(rows, err, 0, func(rows pgx.Rows) (string, error) {
		var e string
		return e, rows.Scan(&e)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: embedders: %w", err)
	}
	return es, nil
}

func (r reader) History(ctx context.Context, sp store.Space, kind, id string) ([]store.Change, error) {
	a := spaceArgs(sp)
	q := `SELECT seq, kind, id, action, actor, before, after, at FROM history WHERE space_id = ` + spaceSub
	if kind != "" {
		q += ` AND kind = ` + a.add(clean(kind))
	}
	if id != "" {
		q += ` AND id = ` + a.add(clean(id))
	}
	rows, err := r.q.Query(ctx, q+` ORDER BY seq`, a...)
	cs, err := collect(rows, err, 0, func(rows pgx.Rows) (store.Change, error) {
		var c store.Change
		var before, after []byte
		var at *string
		if err := rows.Scan(&c.Seq, &c.Kind, &c.ID, &c.Action, &c.Actor, &before, &after, &at); err != nil {
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
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	return cs, nil
}

func (r reader) Spaces(ctx context.Context) ([]store.Space, error) {
	rows, err := r.q.Query(ctx, qSpaces)
	sps, err := collect(rows, err, 0, func(rows pgx.Rows) (store.Space, error) {
		var sp store.Space
		return sp, rows.Scan(&sp.UserID, &sp.AgentID)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: spaces: %w", err)
	}
	return sps, nil
}

func (r reader) Stats(ctx context.Context, sp store.Space) (store.Stats, error) {
	var st store.Stats
	var turns, events, links int64
	if err := r.q.QueryRow(ctx, qStats, clean(sp.UserID), clean(sp.AgentID)).Scan(&turns, &events, &links, &st.LastSeq); err != nil {
		return store.Stats{}, fmt.Errorf("postgres: stats: %w", err)
	}
	st.Turns, st.Events, st.Links = int(turns), int(events), int(links)
	return st, nil
}

// cleanIDs cleans an id list for a query (as the ids were when stored).
func cleanIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = clean(id)
	}
	return out
}
