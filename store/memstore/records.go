package memstore

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/higmem/higmem/store"
)

// space holds the records of one store.Space. A space reachable from
// Store.spaces is never modified: a transaction changes a clone and swaps
// it in on commit. Records are stored as private deep copies with
// normalised times.
type space struct {
	turns   map[string]store.Turn
	anns    map[string]store.Annotation
	events  map[string]store.Event
	links   map[linkKey]store.Link
	vectors map[vecKey]store.Vector
	history []store.Change
	// profiles holds the profile records by id (profiles.go).
	profiles map[string]store.ProfileRecord
	// version is the space's store.Store version (see SpaceVersion).
	version int64
	// written, tombs and floor are the space's journal (journal.go).
	written map[jkey]int64
	tombs   map[jkey]int64
	floor   int64
}

type linkKey struct{ source, target, relation string }

type vecKey struct {
	kind store.VectorKind
	id   string
}

func newSpace() *space {
	return &space{
		turns:    map[string]store.Turn{},
		anns:     map[string]store.Annotation{},
		events:   map[string]store.Event{},
		links:    map[linkKey]store.Link{},
		vectors:  map[vecKey]store.Vector{},
		profiles: map[string]store.ProfileRecord{},
		written:  map[jkey]int64{},
		tombs:    map[jkey]int64{},
	}
}

// clone returns a copy whose maps can be changed without touching sp. The
// records themselves are shared: they are replaced, never changed in place.
func (sp *space) clone() *space {
	if sp == nil {
		return newSpace()
	}
	return &space{
		turns:    maps.Clone(sp.turns),
		anns:     maps.Clone(sp.anns),
		events:   maps.Clone(sp.events),
		links:    maps.Clone(sp.links),
		vectors:  maps.Clone(sp.vectors),
		history:  slices.Clip(slices.Clone(sp.history)),
		profiles: maps.Clone(sp.profiles),
		version:  sp.version,
		written:  maps.Clone(sp.written),
		tombs:    maps.Clone(sp.tombs),
		floor:    sp.floor,
	}
}

// empty reports whether the space holds no record at all.
func (sp *space) empty() bool {
	return sp == nil || len(sp.turns)+len(sp.anns)+len(sp.events)+len(sp.links)+len(sp.vectors)+len(sp.history)+len(sp.profiles) == 0
}

// visible reports whether Spaces lists the space.
func (sp *space) visible() bool { return sp != nil && len(sp.turns)+len(sp.events) > 0 }

// normTime returns t in UTC without a monotonic reading, or an error when
// it lies outside the years 0 to 9999.
func normTime(what string, t time.Time) (time.Time, error) {
	t = t.UTC().Round(0)
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, fmt.Errorf("%w: %s %v outside the years 0 to 9999", store.ErrInvalid, what, t)
	}
	return t, nil
}

// normTimes normalises the times pointed to, stopping at the first error.
func normTimes(what string, ts ...*time.Time) error {
	for _, t := range ts {
		n, err := normTime(what, *t)
		if err != nil {
			return err
		}
		*t = n
	}
	return nil
}

func copyTurn(t store.Turn) store.Turn {
	t.Attachments = slices.Clone(t.Attachments)
	t.Metadata = maps.Clone(t.Metadata)
	return t
}

func copyAnnotation(a store.Annotation) store.Annotation {
	a.Keywords = slices.Clone(a.Keywords)
	a.Tags = slices.Clone(a.Tags)
	a.Entities = slices.Clone(a.Entities)
	a.TimeRefs = slices.Clone(a.TimeRefs)
	return a
}

func copyEvent(e store.Event) store.Event {
	e.Facts = slices.Clone(e.Facts)
	e.Entities = slices.Clone(e.Entities)
	e.Keywords = slices.Clone(e.Keywords)
	e.Tags = slices.Clone(e.Tags)
	e.TurnIDs = slices.Clone(e.TurnIDs)
	return e
}

func copyVector(v store.Vector) store.Vector {
	v.Values = slices.Clone(v.Values)
	return v
}

func copyChange(c store.Change) store.Change {
	c.Before = slices.Clone(c.Before)
	c.After = slices.Clone(c.After)
	return c
}

// sameTurn reports whether two turns have the same identity-defining
// content (see store.Writer.PutTurn).
func sameTurn(a, b store.Turn) bool {
	return a.SessionID == b.SessionID && a.Speaker == b.Speaker && a.Text == b.Text &&
		a.OccurredRaw == b.OccurredRaw && slices.Equal(a.Attachments, b.Attachments)
}

// compareTurns orders turns by Seq, then ID.
func compareTurns(a, b store.Turn) int {
	return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
}

// set returns ids as a set, or nil when ids is nil (no restriction).
func set(ids []string) map[string]bool {
	if ids == nil {
		return nil
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// The read side, shared by Store and tx. Every method accepts a nil space.

// turn returns the stored turn id itself (not a copy).
func (sp *space) turn(id string) (store.Turn, bool) {
	if sp == nil {
		return store.Turn{}, false
	}
	t, ok := sp.turns[id]
	return t, ok
}

func (sp *space) getTurn(id string) (store.Turn, error) {
	if sp != nil {
		if t, ok := sp.turns[id]; ok {
			return copyTurn(t), nil
		}
	}
	return store.Turn{}, fmt.Errorf("memstore: turn %q: %w", id, store.ErrNotFound)
}

func (sp *space) listTurns(q store.TurnQuery) []store.Turn {
	if sp == nil {
		return nil
	}
	want := set(q.IDs)
	var out []store.Turn
	for _, t := range sp.turns {
		switch {
		case want != nil && !want[t.ID],
			q.SessionID != "" && t.SessionID != q.SessionID,
			!q.RecordedBefore.IsZero() && t.RecordedAt.After(q.RecordedBefore),
			q.AfterSeq != 0 && t.Seq <= q.AfterSeq: // the zero query selects all turns, even Seq <= 0
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, compareTurns)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	for i := range out {
		out[i] = copyTurn(out[i])
	}
	return out
}

func (sp *space) listAnnotations(ids []string) []store.Annotation {
	if sp == nil {
		return nil
	}
	want := set(ids)
	var turns []store.Turn
	for id := range sp.anns {
		if want == nil || want[id] {
			turns = append(turns, sp.turns[id])
		}
	}
	slices.SortFunc(turns, compareTurns)
	out := make([]store.Annotation, 0, len(turns))
	for _, t := range turns {
		out = append(out, copyAnnotation(sp.anns[t.ID]))
	}
	return out
}

func (sp *space) getEvent(id string) (store.Event, error) {
	if sp != nil {
		if e, ok := sp.events[id]; ok {
			return copyEvent(e), nil
		}
	}
	return store.Event{}, fmt.Errorf("memstore: event %q: %w", id, store.ErrNotFound)
}

func (sp *space) listEvents() []store.Event {
	if sp == nil {
		return nil
	}
	out := make([]store.Event, 0, len(sp.events))
	for _, e := range sp.events {
		out = append(out, copyEvent(e))
	}
	slices.SortFunc(out, compareEvents)
	return out
}

// compareEvents orders events by CreatedAt, then ID.
func compareEvents(a, b store.Event) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
}

// compareLinks orders links by Source, Target, then Relation.
func compareLinks(a, b store.Link) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Relation, b.Relation))
}

func (sp *space) listLinks(ids []string) []store.Link {
	if sp == nil {
		return nil
	}
	want := set(ids)
	var out []store.Link
	for _, l := range sp.links {
		if want == nil || want[l.Source] || want[l.Target] {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, compareLinks)
	return out
}

func (sp *space) listVectors(kind store.VectorKind, embedder string) []store.Vector {
	if sp == nil {
		return nil
	}
	var out []store.Vector
	for _, v := range sp.vectors {
		if v.Kind == kind && v.Embedder == embedder {
			out = append(out, copyVector(v))
		}
	}
	slices.SortFunc(out, func(a, b store.Vector) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (sp *space) listHistory(kind, id string) []store.Change {
	if sp == nil {
		return nil
	}
	var out []store.Change
	for _, c := range sp.history {
		if (kind == "" || c.Kind == kind) && (id == "" || c.ID == id) {
			out = append(out, copyChange(c))
		}
	}
	return out
}

func (sp *space) stats() store.Stats {
	if sp == nil {
		return store.Stats{}
	}
	st := store.Stats{Turns: len(sp.turns), Events: len(sp.events), Links: len(sp.links)}
	for _, t := range sp.turns {
		st.LastSeq = max(st.LastSeq, t.Seq)
	}
	return st
}

// spaceList returns the visible spaces among those look reports, ordered by
// (UserID, AgentID).
func spaceList(keys []store.Space, look func(store.Space) *space) []store.Space {
	var out []store.Space
	for _, k := range keys {
		if look(k).visible() {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b store.Space) int {
		return cmp.Or(cmp.Compare(a.UserID, b.UserID), cmp.Compare(a.AgentID, b.AgentID))
	})
	return slices.Compact(out)
}
