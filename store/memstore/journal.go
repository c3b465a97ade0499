package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/higmem/higmem/store"
)

// The journal (see store's "The journal"): every record a space holds is
// listed in space.written with the version that last wrote it, every
// deleted turn and event in space.tombs with the version that deleted it,
// and space.floor is the oldest version Changes answers from. Changes
// walks the whole space (this is the store for tests and small spaces, as
// its package doc says).

// DefaultJournalTombstones is the bound of Options.JournalTombstones when it
// is zero.
const DefaultJournalTombstones = 10000

// Options tunes NewWithOptions. The zero value is New's.
type Options struct {
	// JournalTombstones bounds the tombstones (ids of deleted turns and
	// events) a space keeps for Changes: past it, the older half is
	// dropped and the space's journal floor rises. Zero means
	// DefaultJournalTombstones.
	JournalTombstones int
}

// jkey names a record in the journal: its kind ("turn", "annotation",
// "event", "link" or "vector") and key (an id; a link's source, target and
// relation; a vector's kind and id).
type jkey struct {
	kind    string
	a, b, c string
}

func turnKey(id string) jkey            { return jkey{kind: "turn", a: id} }
func annKey(id string) jkey             { return jkey{kind: "annotation", a: id} }
func profileKey(id string) jkey         { return jkey{kind: "profile", a: id} }
func eventKey(id string) jkey           { return jkey{kind: "event", a: id} }
func linkJKey(k linkKey) jkey           { return jkey{kind: "link", a: k.source, b: k.target, c: k.relation} }
func vectorJKey(k vecKey) jkey          { return jkey{kind: "vector", a: string(k.kind), b: k.id} }
func tombKey(kind, id string) jkey      { return jkey{kind: kind, a: id} }
func (k jkey) link() linkKey            { return linkKey{k.a, k.b, k.c} }
func (k jkey) vector() vecKey           { return vecKey{store.VectorKind(k.a), k.b} }
func (k jkey) String() string           { return k.kind + ":" + k.a + "\x1f" + k.b + "\x1f" + k.c }
func (sp *space) stamp(k jkey, v int64) { sp.written[k] = v }

// changes returns what was written to the space after version since, as
// a transaction at version version sees it.
func (sp *space) changes(since, version int64, embedder string) store.Changes {
	ch := store.Changes{Since: since, Version: version}
	if sp.empty() {
		ch.Version = 0
		ch.Reset = since != 0
		return ch
	}
	if since < sp.floor || since > version {
		ch.Reset = true
		return ch
	}
	vecs := map[vecKey]bool{}
	for k, v := range sp.written {
		if v <= since {
			continue
		}
		switch k.kind {
		case "turn":
			ch.Turns = append(ch.Turns, copyTurn(sp.turns[k.a]))
		case "annotation":
			ch.Annotations = append(ch.Annotations, copyAnnotation(sp.anns[k.a]))
		case "event":
			ch.Events = append(ch.Events, copyEvent(sp.events[k.a]))
		case "link":
			ch.Links = append(ch.Links, sp.links[k.link()])
		case "profile":
			ch.ProfileRecords = append(ch.ProfileRecords, copyProfile(sp.profiles[k.a]))
		case "vector":
			vecs[k.vector()] = true
		}
	}
	for _, t := range ch.Turns {
		for _, k := range store.TurnVectorKinds {
			vecs[vecKey{k, t.ID}] = true
		}
	}
	for _, e := range ch.Events {
		vecs[vecKey{store.VectorEvent, e.ID}] = true
	}
	for k := range vecs {
		if x, ok := sp.vectors[k]; ok && store.MadeBy(x.Embedder, embedder) {
			ch.Vectors = append(ch.Vectors, copyVector(x))
		}
	}
	for k, v := range sp.tombs {
		if v <= since {
			continue
		}
		ch.AddDeleted(k.kind, k.a)
	}
	slices.SortFunc(ch.Turns, compareTurns)
	seq := func(id string) store.Turn { return sp.turns[id] }
	slices.SortFunc(ch.Annotations, func(a, b store.Annotation) int { return compareTurns(seq(a.TurnID), seq(b.TurnID)) })
	slices.SortFunc(ch.Events, compareEvents)
	slices.SortFunc(ch.Links, compareLinks)
	slices.SortFunc(ch.Vectors, func(a, b store.Vector) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID)) })
	slices.SortFunc(ch.ProfileRecords, func(a, b store.ProfileRecord) int {
		return cmp.Or(cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.ID, b.ID))
	})
	ch.SortDeleted()
	return ch
}

// prune drops the older half of the tombstones when there are more than
// bound, raising the floor past them.
func (sp *space) prune(bound int) {
	if len(sp.tombs) <= bound {
		return
	}
	vs := make([]int64, 0, len(sp.tombs))
	for _, v := range sp.tombs {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	cut := vs[len(vs)-bound/2-1] // keep the tombstones above cut
	for k, v := range sp.tombs {
		if v <= cut {
			delete(sp.tombs, k)
		}
	}
	sp.floor = max(sp.floor, cut)
}

// Changes implements store.Reader.
func (s *Store) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (ch store.Changes, err error) {
	err = s.read(sp, func(x *space) error {
		var v int64
		if x != nil {
			v = x.version
		}
		ch = x.changes(since, v, embedder)
		return nil
	})
	return ch, err
}

// Changes implements store.Reader: the transaction's own writes are
// among the changes, and Version is what it will commit.
func (t *tx) Changes(ctx context.Context, sp store.Space, since int64, embedder string) (ch store.Changes, err error) {
	err = t.read(sp, func(x *space) error {
		var v int64
		if x != nil {
			v = x.version
		}
		if w, ok := t.vers[sp]; ok {
			v = w
		}
		ch = x.changes(since, v, embedder)
		return nil
	})
	return ch, err
}
