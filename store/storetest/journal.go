package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

var journalTests = []test{
	{name: "ChangesSinceEveryVersion", fn: func(t *testing.T, e *env) { journal(t, e.opts.JournalTombstones, e.s) }},
	{name: "NoSpace", fn: testJournalNoSpace},
	{name: "InsideTx", fn: testJournalInsideTx},
	{name: "Floor", fn: testJournalFloor},
}

// jmodel is what the suite expects a space to hold, with the version that
// last wrote each record and the tombstones of deleted turns and events.
type jmodel struct {
	turns   map[string]store.Turn
	anns    map[string]store.Annotation
	events  map[string]store.Event
	links   map[[3]string]store.Link
	vecs    map[[2]string]store.Vector // by kind, id
	recs    map[string]store.ProfileRecord
	written map[string]int64 // by record key (see jkey)
	tombs   map[string]int64 // "turn\x1fid", "event\x1fid", "profile\x1fid"
}

func newJModel() *jmodel {
	return &jmodel{turns: map[string]store.Turn{}, anns: map[string]store.Annotation{}, events: map[string]store.Event{},
		links: map[[3]string]store.Link{}, vecs: map[[2]string]store.Vector{}, recs: map[string]store.ProfileRecord{},
		written: map[string]int64{}, tombs: map[string]int64{}}
}

func (m *jmodel) clone() *jmodel {
	return &jmodel{turns: maps.Clone(m.turns), anns: maps.Clone(m.anns), events: maps.Clone(m.events),
		links: maps.Clone(m.links), vecs: maps.Clone(m.vecs), recs: maps.Clone(m.recs), written: maps.Clone(m.written), tombs: maps.Clone(m.tombs)}
}

func jkey(parts ...string) string { return strings.Join(parts, "\x1f") }

// stamp marks the records of keys as written at version v.
func (m *jmodel) stamp(keys map[string]bool, v int64) {
	for k := range keys {
		if strings.HasPrefix(k, "tomb\x1f") {
			m.tombs[strings.TrimPrefix(k, "tomb\x1f")] = v
		} else {
			m.written[k] = v
		}
	}
}

// want returns the Changes a store must report since version since, at
// version version.
func (m *jmodel) want(since, version int64, embedder string) store.Changes {
	ch := store.Changes{Since: since, Version: version}
	vecs := map[[2]string]bool{}
	for k, v := range m.written {
		if v <= since {
			continue
		}
		parts := strings.Split(k, "\x1f")
		switch parts[0] {
		case "turn":
			ch.Turns = append(ch.Turns, m.turns[parts[1]])
		case "annotation":
			ch.Annotations = append(ch.Annotations, m.anns[parts[1]])
		case "event":
			ch.Events = append(ch.Events, m.events[parts[1]])
		case "link":
			ch.Links = append(ch.Links, m.links[[3]string{parts[1], parts[2], parts[3]}])
		case "vector":
			vecs[[2]string{parts[1], parts[2]}] = true
		case "profile":
			ch.ProfileRecords = append(ch.ProfileRecords, m.recs[parts[1]])
		}
	}
	// The vectors of the turns and events among the changes too.
	for _, t := range ch.Turns {
		for _, kind := range store.TurnVectorKinds {
			vecs[[2]string{string(kind), t.ID}] = true
		}
	}
	for _, e := range ch.Events {
		vecs[[2]string{string(store.VectorEvent), e.ID}] = true
	}
	for k := range vecs {
		if vec, ok := m.vecs[k]; ok && store.MadeBy(vec.Embedder, embedder) {
			ch.Vectors = append(ch.Vectors, vec)
		}
	}
	for k, v := range m.tombs {
		if v <= since {
			continue
		}
		switch kind, id, _ := strings.Cut(k, "\x1f"); kind {
		case "turn":
			ch.DeletedTurns = append(ch.DeletedTurns, id)
		case "event":
			ch.DeletedEvents = append(ch.DeletedEvents, id)
		case "profile":
			ch.DeletedProfileRecords = append(ch.DeletedProfileRecords, id)
		}
	}
	byTurn := func(a, b store.Turn) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID)) }
	slices.SortFunc(ch.Turns, byTurn)
	slices.SortFunc(ch.Annotations, func(a, b store.Annotation) int { return byTurn(m.turns[a.TurnID], m.turns[b.TurnID]) })
	slices.SortFunc(ch.Events, func(a, b store.Event) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(ch.Links, func(a, b store.Link) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Relation, b.Relation))
	})
	slices.SortFunc(ch.Vectors, func(a, b store.Vector) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID)) })
	slices.SortFunc(ch.ProfileRecords, func(a, b store.ProfileRecord) int {
		return cmp.Or(cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.ID, b.ID))
	})
	slices.Sort(ch.DeletedTurns)
	slices.Sort(ch.DeletedEvents)
	slices.Sort(ch.DeletedProfileRecords)
	return ch
}

// jwriter makes random writes to one space and keeps the model of what
// they left.
type jwriter struct {
	t        *testing.T
	ctx      context.Context
	sp       store.Space
	rng      *rand.Rand
	m        *jmodel
	n        int64 // turns ever put (ids and Seq)
	versions []int64
	// bound is the store's tombstone bound (0: never reached); tombs
	// counts the tombstones made since begin.
	bound, tombs int
}

// pick returns a random key of m, or "" when it is empty.
func pick[K cmp.Ordered, V any](rng *rand.Rand, m map[K]V) (K, bool) {
	var zero K
	if len(m) == 0 {
		return zero, false
	}
	ks := slices.Sorted(maps.Keys(m))
	return ks[rng.IntN(len(ks))], true
}

// op makes one random write through tx to the pending model p, recording
// the keys it writes in keys.
func (w *jwriter) op(tx store.Tx, p *jmodel, keys map[string]bool) error {
	ctx, sp, rng := w.ctx, w.sp, w.rng
	switch r := rng.IntN(23); {
	case r < 5 || len(p.turns) == 0: // a new turn, or one deleted before stored again
		id := fmt.Sprint("t", w.n+1)
		if gone, ok := pick(rng, p.tombs); ok && rng.IntN(3) == 0 && strings.HasPrefix(gone, "turn\x1f") {
			if _, live := p.turns[strings.TrimPrefix(gone, "turn\x1f")]; !live {
				id = strings.TrimPrefix(gone, "turn\x1f")
			}
		}
		w.n++
		tr := mkTurn(sp, id, w.n)
		tr.Text = fmt.Sprintf("turn %s, number %d", id, w.n)
		if _, err := tx.PutTurn(ctx, tr); err != nil {
			return err
		}
		p.turns[id] = tr
		keys[jkey("turn", id)] = true
	case r < 6: // an identical turn again: no write
		id, _ := pick(rng, p.turns)
		if created, err := tx.PutTurn(ctx, p.turns[id]); err != nil || created {
			return fmt.Errorf("re-putting turn %s: created %v, %v", id, created, err)
		}
	case r < 8:
		id, _ := pick(rng, p.turns)
		a := mkAnnotation(id, fmt.Sprint("p", rng.IntN(100)))
		if err := tx.PutAnnotation(ctx, sp, a); err != nil {
			return err
		}
		p.anns[id] = a
		keys[jkey("annotation", id)] = true
	case r < 11:
		id := fmt.Sprint("e", rng.IntN(8))
		ev := mkEvent(sp, id, base.Add(time.Duration(rng.IntN(3))*time.Hour))
		ev.Version = int64(rng.IntN(1000))
		t1, _ := pick(rng, p.turns)
		ev.TurnIDs = []string{t1}
		if err := tx.PutEvent(ctx, ev); err != nil {
			return err
		}
		p.events[id] = ev
		keys[jkey("event", id)] = true
	case r < 12:
		id, ok := pick(rng, p.events)
		if !ok {
			return nil
		}
		if err := tx.DeleteEvent(ctx, sp, id); err != nil {
			return err
		}
		delete(p.events, id)
		delete(p.written, jkey("event", id))
		delete(keys, jkey("event", id))
		delete(p.vecs, [2]string{string(store.VectorEvent), id})
		delete(p.written, jkey("vector", string(store.VectorEvent), id))
		delete(keys, jkey("vector", string(store.VectorEvent), id))
		keys[jkey("tomb", "event", id)] = true
	case r < 14:
		src, _ := pick(rng, p.turns)
		dst, _ := pick(rng, p.turns)
		l := mkLink(src, dst, []string{"answer_to", "continues"}[rng.IntN(2)])
		l.Confidence = float64(rng.IntN(100)) / 100
		if err := tx.PutLink(ctx, sp, l); err != nil {
			return err
		}
		k := [3]string{l.Source, l.Target, l.Relation}
		p.links[k] = l
		keys[jkey("link", k[0], k[1], k[2])] = true
	case r < 16:
		kind, id := store.VectorTurn, ""
		switch rng.IntN(5) {
		case 0:
			kind = store.VectorEvent
			id, _ = pick(rng, p.events)
		case 1:
			kind = store.VectorWindow
			id, _ = pick(rng, p.turns)
		case 2:
			kind = store.VectorPassage
			id, _ = pick(rng, p.turns)
		default:
			id, _ = pick(rng, p.turns)
		}
		if id == "" {
			return nil
		}
		// A vector made by an embedder, by one derived from it (as window
		// vectors are: MadeBy), or by one whose id only starts alike.
		emb := embedders[rng.IntN(2)] + []string{"", "", "+w1", "x"}[rng.IntN(4)]
		v := mkVector(kind, id, emb, float32(rng.IntN(50)))
		if err := tx.PutVectors(ctx, sp, []store.Vector{v}); err != nil {
			return err
		}
		p.vecs[[2]string{string(kind), id}] = v
		keys[jkey("vector", string(kind), id)] = true
	case r < 18:
		id, _ := pick(rng, p.turns)
		if err := tx.DeleteTurn(ctx, sp, id); err != nil {
			return err
		}
		drop := func(k string) { delete(p.written, k); delete(keys, k) }
		delete(p.turns, id)
		drop(jkey("turn", id))
		delete(p.anns, id)
		drop(jkey("annotation", id))
		for _, kind := range store.TurnVectorKinds {
			delete(p.vecs, [2]string{string(kind), id})
			drop(jkey("vector", string(kind), id))
		}
		for k := range p.links {
			if k[0] == id || k[1] == id {
				delete(p.links, k)
				drop(jkey("link", k[0], k[1], k[2]))
			}
		}
		for rid, rec := range p.recs {
			if slices.Contains(rec.TurnIDs, id) {
				delete(p.recs, rid)
				drop(jkey("profile", rid))
			}
		}
		keys[jkey("tomb", "turn", id)] = true
	case r < 19:
		return tx.AppendHistory(ctx, sp, store.Change{Kind: "turn", ID: "x", Action: "note"})
	case r < 21:
		id := fmt.Sprint("p", rng.IntN(6))
		t1, _ := pick(rng, p.turns)
		rec := mkProfile(id, []string{"Caroline", "Melanie"}[rng.IntN(2)], t1)
		rec.Value = fmt.Sprint("value ", rng.IntN(100))
		if err := tx.PutProfileRecord(ctx, sp, rec); err != nil {
			return err
		}
		p.recs[id] = rec
		keys[jkey("profile", id)] = true
	case r < 22:
		id, ok := pick(rng, p.recs)
		if !ok {
			return nil
		}
		if err := tx.DeleteProfileRecord(ctx, sp, id); err != nil {
			return err
		}
		delete(p.recs, id)
		delete(p.written, jkey("profile", id))
		delete(keys, jkey("profile", id))
		keys[jkey("tomb", "profile", id)] = true
	default:
		_, err := tx.Lock(ctx, sp)
		return err
	}
	return nil
}

// step runs one transaction of a few random writes (rolled back one time
// in eight) and returns the version it committed (0 when rolled back or
// when it wrote nothing).
func (w *jwriter) step(s store.Store) int64 {
	w.t.Helper()
	p := w.m.clone()
	keys := map[string]bool{}
	rollback := w.rng.IntN(8) == 0
	var head store.Head
	locked := false
	err := s.Update(w.ctx, func(tx store.Tx) error {
		p = w.m.clone()
		clear(keys)
		if w.rng.IntN(2) == 0 {
			var err error
			if head, err = tx.Lock(w.ctx, w.sp); err != nil {
				return err
			}
			locked = true
		}
		for range 1 + w.rng.IntN(4) {
			if err := w.op(tx, p, keys); err != nil {
				return err
			}
		}
		if locked && len(w.versions) > 0 {
			// Inside the transaction: the changes since the last version
			// include its own writes, at the version it will commit.
			since := w.versions[len(w.versions)-1]
			q := p.clone()
			q.stamp(keys, head.Next)
			got, err := tx.Changes(w.ctx, w.sp, since, "e1")
			if err != nil {
				return err
			}
			want := q.want(since, head.Next, "e1")
			if d := diff(want, got); d != "" {
				return fmt.Errorf("tx.Changes since %d (-want +got):\n%s", since, d)
			}
		}
		if rollback {
			return errBoom
		}
		return nil
	})
	if rollback && errors.Is(err, errBoom) {
		return 0
	}
	if err != nil {
		w.t.Fatalf("Update: %v", err)
	}
	v, err := s.SpaceVersion(w.ctx, w.sp)
	if err != nil {
		w.t.Fatal(err)
	}
	if n := len(w.versions); n > 0 && v == w.versions[n-1] {
		if len(keys) > 0 {
			w.t.Fatalf("a transaction writing %v left the version at %d", slices.Sorted(maps.Keys(keys)), v)
		}
		w.m = p
		return 0
	}
	if locked && v != head.Next {
		w.t.Fatalf("committed version %d, Lock said Next %d", v, head.Next)
	}
	p.stamp(keys, v)
	for k := range keys {
		if strings.HasPrefix(k, "tomb\x1f") {
			w.tombs++
		}
	}
	w.m = p
	w.versions = append(w.versions, v)
	return v
}

// begin starts the space (or starts it anew) with a history entry, which
// stays (a space of no record is no space to some stores), and records
// the first version.
func (w *jwriter) begin(s store.Store) {
	w.t.Helper()
	w.m, w.versions, w.n, w.tombs = newJModel(), nil, 0, 0
	err := s.Update(w.ctx, func(tx store.Tx) error {
		return tx.AppendHistory(w.ctx, w.sp, store.Change{Kind: "turn", ID: "x", Action: "begin"})
	})
	if err != nil {
		w.t.Fatal(err)
	}
	v, err := s.SpaceVersion(w.ctx, w.sp)
	if err != nil || v <= 0 {
		w.t.Fatalf("SpaceVersion after the first write = %d, %v", v, err)
	}
	w.versions = []int64{v}
}

// check compares the changes since versions seen with the model, through
// r: every one when all is set, else 0, the first, the last three and two
// others at random (so that a run stays linear in its steps).
func (w *jwriter) check(r store.Reader, what string, all bool) {
	w.t.Helper()
	now := w.versions[len(w.versions)-1]
	answered := false
	sinces := append([]int64{0}, w.versions...)
	if !all && len(sinces) > 7 {
		pick := map[int]bool{0: true, 1: true, len(sinces) - 1: true, len(sinces) - 2: true, len(sinces) - 3: true,
			1 + w.rng.IntN(len(sinces)-1): true, 1 + w.rng.IntN(len(sinces)-1): true}
		var some []int64
		for i, v := range sinces {
			if pick[i] {
				some = append(some, v)
			}
		}
		sinces = some
	}
	for i, since := range sinces {
		emb := embedders[(i+len(w.versions))%2]
		if i%3 == 2 {
			emb = ""
		}
		got, err := r.Changes(w.ctx, w.sp, since, emb)
		if err != nil {
			w.t.Fatalf("%s: Changes(%d): %v", what, since, err)
		}
		want := w.m.want(since, now, emb)
		switch {
		case since < w.versions[0]:
			// Before the space existed: a cache of nothing must read it
			// afresh.
			want = store.Changes{Since: since, Version: now, Reset: true}
		case got.Reset && !answered && w.bound > 0 && w.tombs > w.bound:
			// Below the journal floor, which rose past the oldest
			// tombstones.
			want = store.Changes{Since: since, Version: now, Reset: true}
		default:
			answered = true
		}
		if d := diff(want, got); d != "" {
			w.t.Fatalf("%s: Changes since %d of %v, at %d, embedder %q (-want +got):\n%s", what, since, w.versions, now, emb, d)
		}
	}
}

// Journal checks Reader.Changes against a model of random writes made
// through the first store: after every transaction, the changes since
// every earlier version, read through each store, are exactly the writes
// made after it (records as they stand, tombstones of deleted turns and
// events); a transaction sees its own writes; a DeleteSpace makes every
// earlier version Reset, also once the space is written anew. Give it
// several stores opened on one database to check that they agree.
//
// The stores must keep the default number of tombstones (the test expects
// no Reset but after a DeleteSpace).
func Journal(t *testing.T, stores ...store.Store) {
	t.Helper()
	journal(t, 0, stores...)
}

// journal is Journal for stores that keep bound tombstones per space (0:
// more than the test makes): once more than bound were made, changes
// since the oldest versions may be Reset.
func journal(t *testing.T, bound int, stores ...store.Store) {
	t.Helper()
	ctx := t.Context()
	for round := range 2 {
		w := &jwriter{t: t, ctx: ctx, sp: store.Space{UserID: "journal", AgentID: fmt.Sprint(round)}, bound: bound,
			rng: rand.New(rand.NewPCG(uint64(round), 12))}
		w.begin(stores[0])
		for i := range 40 {
			if w.step(stores[i%len(stores)]) == 0 {
				continue
			}
			for j, s := range stores {
				w.check(s, fmt.Sprintf("round %d, step %d, store %d", round, i, j), false)
			}
		}
		for j, s := range stores {
			w.check(s, fmt.Sprintf("round %d, at the end, store %d", round, j), true)
		}
		if len(w.versions) < 10 {
			t.Fatalf("only %d committed versions", len(w.versions))
		}
		// The space goes: every version is Reset, with version 0.
		old := w.versions
		if err := stores[0].Update(ctx, func(tx store.Tx) error { return tx.DeleteSpace(ctx, w.sp) }); err != nil {
			t.Fatal(err)
		}
		for _, s := range stores {
			for _, since := range old {
				ch, err := s.Changes(ctx, w.sp, since, "e1")
				if err != nil || !ch.Reset || ch.Version != 0 || len(ch.Turns)+len(ch.DeletedTurns) > 0 {
					t.Fatalf("Changes since %d of a deleted space = %+v, %v; want Reset at version 0", since, ch, err)
				}
			}
		}
		// Written anew, with the same ids: the old versions stay Reset.
		w.begin(stores[0])
		for range 5 {
			w.step(stores[0])
		}
		for _, s := range stores {
			for _, since := range old {
				ch, err := s.Changes(ctx, w.sp, since, "e1")
				if now := w.versions[len(w.versions)-1]; err != nil || !ch.Reset || ch.Version != now || len(ch.Turns)+len(ch.DeletedTurns) > 0 {
					t.Fatalf("Changes since %d (before a DeleteSpace) of the space written anew = %+v, %v; want Reset at %d", since, ch, err, now)
				}
			}
			w.check(s, "after the space was written anew", true)
		}
	}
}

// testJournalNoSpace checks Changes of a space without records.
func testJournalNoSpace(t *testing.T, e *env) {
	ch, err := e.s.Changes(e.ctx, spaceA, 0, "e1")
	if err != nil || ch.Reset || ch.Version != 0 || !ch.Empty() {
		t.Errorf("Changes(0) of a space never written = %+v, %v; want nothing at version 0", ch, err)
	}
	ch, err = e.s.Changes(e.ctx, spaceA, 7, "e1")
	if err != nil || !ch.Reset || ch.Version != 0 {
		t.Errorf("Changes(7) of a space never written = %+v, %v; want Reset at version 0", ch, err)
	}
	e.populate(spaceB, "B")
	v := e.version(spaceB)
	ch, err = e.s.Changes(e.ctx, spaceB, v, "e1")
	if err != nil || ch.Reset || ch.Version != v || !ch.Empty() {
		t.Errorf("Changes since the current version = %+v, %v; want nothing at %d", ch, err, v)
	}
	ch, err = e.s.Changes(e.ctx, spaceA, 0, "e1")
	if err != nil || ch.Reset || !ch.Empty() {
		t.Errorf("Changes(0) of a space never written, beside another = %+v, %v; want nothing", ch, err)
	}
}

// testJournalInsideTx checks Changes in a transaction that wrote without
// Lock: its own writes are there, at the version it commits.
func testJournalInsideTx(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "a", 1))
	v1 := e.version(spaceA)
	var got store.Changes
	e.update(func(tx store.Tx) error {
		if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "b", 2)); err != nil {
			return err
		}
		var err error
		got, err = tx.Changes(e.ctx, spaceA, v1, "")
		return err
	})
	v2 := e.version(spaceA)
	if got.Reset || got.Version != v2 || len(got.Turns) != 1 || got.Turns[0].ID != "b" {
		t.Errorf("tx.Changes since %d after writing b = %+v; want turn b at the committed version %d", v1, got, v2)
	}
	// A store read during the transaction sees none of it.
	if e.opts.SerialReads {
		return
	}
	e.update(func(tx store.Tx) error {
		if err := tx.DeleteTurn(e.ctx, spaceA, "a"); err != nil {
			return err
		}
		ch, err := e.s.Changes(e.ctx, spaceA, v1, "")
		if err == nil && (ch.Version != v2 || len(ch.DeletedTurns) != 0 || len(ch.Turns) != 1) {
			err = fmt.Errorf("store.Changes during a transaction = %+v; want only the committed turn b at %d", ch, v2)
		}
		return err
	})
}

// testJournalFloor checks that tombstones are bounded: past
// Options.JournalTombstones deletes, changes since a version before the
// oldest kept tombstone are Reset, and the recent ones are still there.
func testJournalFloor(t *testing.T, e *env) {
	bound := e.opts.JournalTombstones
	if bound == 0 {
		t.Skip("the store's tombstone bound is not given (Options.JournalTombstones)")
	}
	n := 2*bound + 3
	var ts []store.Turn
	for i := range n + 1 { // one stays, so that the space does
		ts = append(ts, mkTurn(spaceA, fmt.Sprint("t", i), int64(i+1)))
	}
	e.putTurns(ts...)
	versions := []int64{e.version(spaceA)}
	for i := range n {
		e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, fmt.Sprint("t", i)) })
		versions = append(versions, e.version(spaceA))
	}
	// versions[k] is the version after k deletes.
	now := versions[n]
	resets := 0
	for k, since := range versions {
		ch, err := e.s.Changes(e.ctx, spaceA, since, "")
		if err != nil {
			t.Fatal(err)
		}
		if ch.Reset {
			resets++
			if len(ch.DeletedTurns)+len(ch.Turns) > 0 {
				t.Errorf("a Reset carries changes: %+v", ch)
			}
			if k > n-bound/2 {
				t.Errorf("Changes since %d deletes of %d: Reset, but the last %d tombstones must be kept", k, n, bound/2)
			}
			continue
		}
		var want []string
		for i := k; i < n; i++ {
			want = append(want, fmt.Sprint("t", i))
		}
		slices.Sort(want)
		if d := diff(want, ch.DeletedTurns); d != "" || ch.Version != now {
			t.Errorf("Changes since %d deletes: version %d (want %d), deleted turns (-want +got):\n%s", k, ch.Version, now, d)
		}
	}
	if resets == 0 {
		t.Errorf("%d deletes with a bound of %d tombstones: no version is below the journal floor", n, bound)
	}
}

// UnjournalledWrite checks what a store does after a write that did not
// keep the journal, as a build of higmem without it wrote: oldWrite must
// store turn "b" (Seq 2) of the space it is given and bump the space's
// version, without the journal, the way that build did. Changes from
// before it must then report Reset; a write that keeps the journal again
// starts a floor that caches at or after it pass.
func UnjournalledWrite(t *testing.T, s store.Store, oldWrite func(sp store.Space)) {
	t.Helper()
	ctx := t.Context()
	sp := store.Space{UserID: "u"}
	put := func(id string, seq int64) {
		t.Helper()
		if err := s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, Seq: seq, Speaker: "A", Text: id})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	version := func() int64 {
		t.Helper()
		v, err := s.SpaceVersion(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	changes := func(since int64) store.Changes {
		t.Helper()
		ch, err := s.Changes(ctx, sp, since, "")
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	put("a", 1)
	v1 := version()
	oldWrite(sp)
	v2 := version()
	if v2 <= v1 {
		t.Fatalf("the old write left the version at %d", v2)
	}
	for _, since := range []int64{v1, v2} {
		if ch := changes(since); !ch.Reset || ch.Version != v2 {
			t.Errorf("Changes since %d after a write without the journal = %+v; want Reset at %d", since, ch, v2)
		}
	}
	put("c", 3)
	v3 := version()
	if ch := changes(v1); !ch.Reset {
		t.Errorf("Changes since %d (before the old write) = %+v; want Reset", v1, ch)
	}
	if ch := changes(v3); ch.Reset || !ch.Empty() || ch.Version != v3 {
		t.Errorf("Changes since %d, the write that kept the journal again = %+v; want nothing", v3, ch)
	}
	put("d", 4)
	if ch := changes(v3); ch.Reset || len(ch.Turns) != 1 || ch.Turns[0].ID != "d" {
		t.Errorf("Changes since %d = %+v; want turn d", v3, ch)
	}
}
