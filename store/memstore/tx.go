package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem/store"
)

// tx is a transaction: it reads through dirty (the spaces it has written,
// copied on first write; nil for a deleted space) to base (the committed
// spaces).
type tx struct {
	base  map[store.Space]*space
	dirty map[store.Space]*space
	done  atomic.Bool
	// clock is the store's version counter as this transaction advanced
	// it; locked holds the heads Lock gave out.
	clock  int64
	locked map[store.Space]store.Head
	// vers holds the version each written space gets at commit (given
	// on its first write, see write); bound is the store's
	// Options.JournalTombstones.
	vers  map[store.Space]int64
	bound int
}

var _ store.Tx = (*tx)(nil)

// check validates sp and that the transaction is still open.
func (t *tx) check(sp store.Space) error {
	if t.done.Load() {
		return fmt.Errorf("memstore: transaction used after Update returned: %w", store.ErrClosed)
	}
	return sp.Validate()
}

// view returns the space as the transaction sees it (nil when absent).
func (t *tx) view(sp store.Space) *space {
	if x, ok := t.dirty[sp]; ok {
		return x
	}
	return t.base[sp]
}

// write returns the transaction's own copy of the space, and the version
// its records are written with: the version the space gets at commit,
// given on the first write (a space created now starts its journal
// there).
func (t *tx) write(sp store.Space) (*space, int64) {
	v, ok := t.vers[sp]
	if !ok {
		t.clock++
		v = t.clock
		t.vers[sp] = v
	}
	x, ok := t.dirty[sp]
	if !ok || x == nil {
		if !ok && t.base[sp] != nil {
			x = t.base[sp].clone()
		} else {
			x = newSpace()
			x.floor = v
		}
		t.dirty[sp] = x
	}
	return x, v
}

func (t *tx) read(sp store.Space, fn func(*space) error) error {
	if err := t.check(sp); err != nil {
		return err
	}
	return fn(t.view(sp))
}

// GetTurn implements store.Reader.
func (t *tx) GetTurn(ctx context.Context, sp store.Space, id string) (tr store.Turn, err error) {
	err = t.read(sp, func(x *space) error { tr, err = x.getTurn(id); return err })
	return tr, err
}

// ListTurns implements store.Reader.
func (t *tx) ListTurns(ctx context.Context, sp store.Space, q store.TurnQuery) (ts []store.Turn, err error) {
	err = t.read(sp, func(x *space) error { ts = x.listTurns(q); return nil })
	return ts, err
}

// ListAnnotations implements store.Reader.
func (t *tx) ListAnnotations(ctx context.Context, sp store.Space, ids []string) (as []store.Annotation, err error) {
	err = t.read(sp, func(x *space) error { as = x.listAnnotations(ids); return nil })
	return as, err
}

// ListEvents implements store.Reader.
func (t *tx) ListEvents(ctx context.Context, sp store.Space) (es []store.Event, err error) {
	err = t.read(sp, func(x *space) error { es = x.listEvents(); return nil })
	return es, err
}

// ListLinks implements store.Reader.
func (t *tx) ListLinks(ctx context.Context, sp store.Space, ids []string) (ls []store.Link, err error) {
	err = t.read(sp, func(x *space) error { ls = x.listLinks(ids); return nil })
	return ls, err
}

// ListVectors implements store.Reader.
func (t *tx) ListVectors(ctx context.Context, sp store.Space, kind store.VectorKind, embedder string) (vs []store.Vector, err error) {
	err = t.read(sp, func(x *space) error { vs = x.listVectors(kind, embedder); return nil })
	return vs, err
}

// History implements store.Reader.
func (t *tx) History(ctx context.Context, sp store.Space, kind, id string) (cs []store.Change, err error) {
	err = t.read(sp, func(x *space) error { cs = x.listHistory(kind, id); return nil })
	return cs, err
}

// Stats implements store.Reader.
func (t *tx) Stats(ctx context.Context, sp store.Space) (st store.Stats, err error) {
	err = t.read(sp, func(x *space) error { st = x.stats(); return nil })
	return st, err
}

// Spaces implements store.Reader.
func (t *tx) Spaces(ctx context.Context) ([]store.Space, error) {
	if t.done.Load() {
		return nil, fmt.Errorf("memstore: transaction used after Update returned: %w", store.ErrClosed)
	}
	keys := slices.Collect(maps.Keys(t.base))
	keys = slices.AppendSeq(keys, maps.Keys(t.dirty))
	return spaceList(keys, t.view), nil
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
	if err := normTimes("turn time", &tr.OccurredAt, &tr.RecordedAt); err != nil {
		return false, err
	}
	if old, ok := t.view(tr.Space).turn(tr.ID); ok {
		if sameTurn(old, tr) {
			return false, nil
		}
		return false, fmt.Errorf("memstore: turn %q: %w", tr.ID, store.ErrConflict)
	}
	x, v := t.write(tr.Space)
	x.turns[tr.ID] = copyTurn(tr)
	x.stamp(turnKey(tr.ID), v)
	return true, nil
}

// PutAnnotation implements store.Writer.
func (t *tx) PutAnnotation(ctx context.Context, sp store.Space, a store.Annotation) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	a = copyAnnotation(a)
	if err := normTimes("annotation time", &a.UpdatedAt); err != nil {
		return err
	}
	for i := range a.TimeRefs {
		if err := normTimes("time ref", &a.TimeRefs[i].Start, &a.TimeRefs[i].End); err != nil {
			return err
		}
	}
	if _, ok := t.view(sp).turn(a.TurnID); !ok {
		return fmt.Errorf("memstore: annotating turn %q: %w", a.TurnID, store.ErrNotFound)
	}
	x, v := t.write(sp)
	x.anns[a.TurnID] = a
	x.stamp(annKey(a.TurnID), v)
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
	if err := normTimes("event time", &e.Start, &e.End, &e.CreatedAt, &e.UpdatedAt); err != nil {
		return err
	}
	x, v := t.write(e.Space)
	x.events[e.ID] = copyEvent(e)
	x.stamp(eventKey(e.ID), v)
	return nil
}

// DeleteEvent implements store.Writer.
func (t *tx) DeleteEvent(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if _, err := t.view(sp).getEvent(id); err != nil {
		return fmt.Errorf("memstore: deleting event %q: %w", id, store.ErrNotFound)
	}
	x, v := t.write(sp)
	delete(x.events, id)
	delete(x.vectors, vecKey{store.VectorEvent, id})
	delete(x.written, eventKey(id))
	delete(x.written, vectorJKey(vecKey{store.VectorEvent, id}))
	x.tombs[tombKey(store.TombstoneEvent, id)] = v
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
	if err := normTimes("link time", &l.CreatedAt, &l.InvalidatedAt); err != nil {
		return err
	}
	x, v := t.write(sp)
	k := linkKey{l.Source, l.Target, l.Relation}
	x.links[k] = l
	x.stamp(linkJKey(k), v)
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
	x, ver := t.write(sp)
	for _, v := range vs {
		k := vecKey{v.Kind, v.ID}
		x.vectors[k] = copyVector(v)
		x.stamp(vectorJKey(k), ver)
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
	if err := normTimes("change time", &c.At); err != nil {
		return err
	}
	x, _ := t.write(sp)
	c.Seq = 1
	if n := len(x.history); n > 0 {
		c.Seq = x.history[n-1].Seq + 1
	}
	x.history = append(x.history, copyChange(c))
	return nil
}

// DeleteTurn implements store.Writer.
func (t *tx) DeleteTurn(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if _, ok := t.view(sp).turn(id); !ok {
		return fmt.Errorf("memstore: deleting turn %q: %w", id, store.ErrNotFound)
	}
	x, v := t.write(sp)
	delete(x.turns, id)
	delete(x.anns, id)
	for _, k := range store.TurnVectorKinds {
		delete(x.vectors, vecKey{k, id})
		delete(x.written, vectorJKey(vecKey{k, id}))
	}
	maps.DeleteFunc(x.links, func(k linkKey, _ store.Link) bool {
		if k.source == id || k.target == id {
			delete(x.written, linkJKey(k))
			return true
		}
		return false
	})
	delete(x.written, turnKey(id))
	delete(x.written, annKey(id))
	x.tombs[tombKey(store.TombstoneTurn, id)] = v
	x.dropProfilesCiting(id)
	return nil
}

// DeleteSpace implements store.Writer.
func (t *tx) DeleteSpace(ctx context.Context, sp store.Space) error {
	if err := t.check(sp); err != nil {
		return err
	}
	t.dirty[sp] = nil
	delete(t.locked, sp)
	delete(t.vers, sp)
	return nil
}

// Lock implements store.Writer. Update already runs one at a time, so Lock
// only gives the space its new version.
func (t *tx) Lock(ctx context.Context, sp store.Space) (store.Head, error) {
	if err := t.check(sp); err != nil {
		return store.Head{}, err
	}
	h, ok := t.locked[sp]
	x, v := t.write(sp)
	if !ok {
		h.Version = x.version
		h.Next = v
		x.version = h.Next
		t.locked[sp] = h
	}
	h.LastSeq = 0
	for _, tr := range x.turns {
		h.LastSeq = max(h.LastSeq, tr.Seq)
	}
	return h, nil
}

// bumpVersions gives every space written without Lock its new version,
// and bounds the tombstones of every written space.
func (t *tx) bumpVersions() {
	for sp, x := range t.dirty {
		if x == nil {
			continue
		}
		x.version = t.vers[sp]
		x.prune(t.bound)
	}
}

// RedactHistory implements store.Writer.
func (t *tx) RedactHistory(ctx context.Context, sp store.Space, seqs []int64, note json.RawMessage) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if len(seqs) == 0 {
		return nil
	}
	set := make(map[int64]bool, len(seqs))
	for _, q := range seqs {
		set[q] = true
	}
	x, _ := t.write(sp)
	for i, c := range x.history {
		if set[c.Seq] {
			if len(c.Before) > 0 {
				c.Before = slices.Clone(note)
			}
			if len(c.After) > 0 {
				c.After = slices.Clone(note)
			}
			x.history[i] = c
		}
	}
	return nil
}
