package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/higmem/higmem/store"
)

// Spaces used by the fixtures. spaceC and spaceD would collide if a backend
// keyed records by Space.String().
var (
	spaceA = store.Space{UserID: "alice", AgentID: "agent"}
	spaceB = store.Space{UserID: "bob", AgentID: "agent"}
	spaceC = store.Space{UserID: "a/b", AgentID: ""}
	spaceD = store.Space{UserID: "a", AgentID: "b/"}
)

// base is a fixed instant with nanoseconds, so precision loss shows.
var base = time.Date(2023, 5, 8, 13, 56, 0, 123456789, time.UTC)

// zone is a non-UTC location used to check that times come back in UTC.
var zone = time.FixedZone("UTC+2", 2*60*60)

// errBoom is returned by transaction functions that must roll back.
var errBoom = errors.New("storetest: boom")

// cmpOpts compares records: times as instants (time.Time.Equal), empty and
// nil slices and maps alike.
var cmpOpts = []cmp.Option{cmpopts.EquateEmpty()}

// diff reports the difference between want and got, or "".
func diff(want, got any) string { return cmp.Diff(want, got, cmpOpts...) }

// mkTurn returns a turn with every field set.
func mkTurn(sp store.Space, id string, seq int64) store.Turn {
	return store.Turn{
		Space:     sp,
		ID:        id,
		SessionID: "S1",
		Seq:       seq,
		Speaker:   "Caroline",
		Text:      "I went to the LGBTQ support group yesterday (" + id + ").",
		Attachments: []store.Attachment{
			{Kind: "image", URL: "https://example.com/" + id + ".jpg", Caption: "a rainbow flag"},
		},
		OccurredAt:  base.Add(time.Duration(seq) * time.Minute),
		OccurredRaw: "1:56 pm on 8 May, 2023",
		RecordedAt:  base.Add(time.Duration(seq) * time.Hour),
		Metadata:    map[string]string{"source": "locomo", "dia_id": id},
	}
}

// mkAnnotation returns an annotation of turn id with every field set.
func mkAnnotation(id, producer string) store.Annotation {
	return store.Annotation{
		TurnID:   id,
		Keywords: []string{"support group", "lgbtq"},
		Tags:     []string{"community"},
		Entities: []string{"Caroline"},
		Context:  "Caroline talks about a support group.",
		TimeRefs: []store.TimeRef{{
			Text:        "yesterday",
			Start:       time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC),
			End:         time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC),
			Granularity: "day",
			Fuzzy:       true,
		}},
		Producer:  producer,
		UpdatedAt: base.Add(time.Second),
	}
}

// mkEvent returns an event with every field set.
func mkEvent(sp store.Space, id string, created time.Time) store.Event {
	return store.Event{
		Space:   sp,
		ID:      id,
		Title:   "Support group " + id,
		Summary: "Caroline attended a support group.",
		Facts: []store.Fact{
			{Time: "7 May 2023", Text: "Caroline went to a support group", TurnID: "D1:3"},
			{Text: "It was powerful"},
		},
		Entities:  []string{"Caroline"},
		Keywords:  []string{"support", "group"},
		Tags:      []string{"identity"},
		TurnIDs:   []string{"D1:3", "D1:5"},
		Start:     base,
		End:       base.Add(time.Hour),
		Producer:  "test/v1",
		Version:   3,
		CreatedAt: created,
		UpdatedAt: created.Add(time.Minute),
	}
}

// mkLink returns a link with every field set.
func mkLink(src, dst, rel string) store.Link {
	return store.Link{
		Source:     src,
		Target:     dst,
		Relation:   rel,
		Confidence: 0.75,
		CreatedAt:  base,
	}
}

// mkProfile returns a profile record with every field set, citing turns.
func mkProfile(id, entity string, turns ...string) store.ProfileRecord {
	return store.ProfileRecord{
		ID:        id,
		Entity:    entity,
		Attribute: "home",
		Value:     "Lisbon",
		Ended:     true,
		TurnIDs:   turns,
		StatedAt:  base.Add(2 * time.Minute),
		Producer:  "test/v1",
		CreatedAt: base.Add(time.Hour),
	}
}

// mkVector returns a small vector.
func mkVector(kind store.VectorKind, id, embedder string, x float32) store.Vector {
	return store.Vector{Kind: kind, ID: id, Embedder: embedder, Values: []float32{x, -x, 0.5, 1e-30}}
}

// update runs fn in s.Update and fails the test on an error.
func (e *env) update(fn func(tx store.Tx) error) {
	e.Helper()
	if err := e.s.Update(e.ctx, fn); err != nil {
		e.Fatalf("Update: %v", err)
	}
}

// putTurns stores turns in one Update.
func (e *env) putTurns(ts ...store.Turn) {
	e.Helper()
	e.update(func(tx store.Tx) error {
		for _, t := range ts {
			created, err := tx.PutTurn(e.ctx, t)
			if err != nil {
				return fmt.Errorf("PutTurn(%s %s): %w", t.Space, t.ID, err)
			}
			if !created {
				return fmt.Errorf("PutTurn(%s %s): created = false for a new turn", t.Space, t.ID)
			}
		}
		return nil
	})
}

// listTurns returns every turn of sp.
func (e *env) listTurns(r store.Reader, sp store.Space, q store.TurnQuery) []store.Turn {
	e.Helper()
	ts, err := r.ListTurns(e.ctx, sp, q)
	if err != nil {
		e.Fatalf("ListTurns(%s, %+v): %v", sp, q, err)
	}
	return ts
}

// ids returns the ids of turns, in order.
func ids(ts []store.Turn) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// snapshot is everything a Reader shows about one space, for comparing a
// store before and after a rolled-back transaction.
type snapshot struct {
	Turns       []store.Turn
	Annotations []store.Annotation
	Events      []store.Event
	Links       []store.Link
	Vectors     map[string][]store.Vector
	History     []store.Change
	Profiles    []store.ProfileRecord
	Stats       store.Stats
	Spaces      []store.Space
}

// embedders are the embedder ids the fixtures use.
var embedders = []string{"e1", "e2"}

// snap reads everything the suite's fixtures can write in sp.
func (e *env) snap(r store.Reader, sp store.Space) snapshot {
	e.Helper()
	var s snapshot
	var err error
	must := func(what string) {
		if err != nil {
			e.Fatalf("snapshot of %s: %s: %v", sp, what, err)
		}
	}
	s.Turns, err = r.ListTurns(e.ctx, sp, store.TurnQuery{})
	must("ListTurns")
	s.Annotations, err = r.ListAnnotations(e.ctx, sp, nil)
	must("ListAnnotations")
	s.Events, err = r.ListEvents(e.ctx, sp)
	must("ListEvents")
	s.Links, err = r.ListLinks(e.ctx, sp, nil)
	must("ListLinks")
	s.Vectors = map[string][]store.Vector{}
	for _, k := range []store.VectorKind{store.VectorTurn, store.VectorEvent} {
		for _, em := range embedders {
			var vs []store.Vector
			vs, err = r.ListVectors(e.ctx, sp, k, em)
			must("ListVectors")
			if len(vs) > 0 {
				s.Vectors[string(k)+"/"+em] = vs
			}
		}
	}
	s.History, err = r.History(e.ctx, sp, "", "")
	must("History")
	s.Profiles, err = r.ListProfileRecords(e.ctx, sp, "")
	must("ListProfileRecords")
	s.Stats, err = r.Stats(e.ctx, sp)
	must("Stats")
	s.Spaces, err = r.Spaces(e.ctx)
	must("Spaces")
	return s
}

// populate writes one of every record kind into sp and returns nothing;
// the records use ids shared by every space so that scope leaks show.
func (e *env) populate(sp store.Space, tag string) {
	e.Helper()
	e.update(func(tx store.Tx) error {
		for i, id := range []string{"D1:1", "D1:2", "D1:3"} {
			t := mkTurn(sp, id, int64(i+1))
			t.Text = tag + " says " + id
			if _, err := tx.PutTurn(e.ctx, t); err != nil {
				return err
			}
			a := mkAnnotation(id, tag)
			if err := tx.PutAnnotation(e.ctx, sp, a); err != nil {
				return err
			}
		}
		ev := mkEvent(sp, "E1", base)
		ev.Title = tag + " event"
		if err := tx.PutEvent(e.ctx, ev); err != nil {
			return err
		}
		if err := tx.PutLink(e.ctx, sp, mkLink("D1:2", "D1:1", "answer_to")); err != nil {
			return err
		}
		if err := tx.PutLink(e.ctx, sp, mkLink("D1:3", "D1:2", tag)); err != nil {
			return err
		}
		if err := tx.PutVectors(e.ctx, sp, []store.Vector{
			mkVector(store.VectorTurn, "D1:1", "e1", 1),
			mkVector(store.VectorTurn, "D1:2", "e1", 2),
			mkVector(store.VectorEvent, "E1", "e1", 3),
		}); err != nil {
			return err
		}
		p := mkProfile("P1", "Caroline", "D1:1", "D1:3")
		p.Value = tag
		if err := tx.PutProfileRecord(e.ctx, sp, p); err != nil {
			return err
		}
		return tx.AppendHistory(e.ctx, sp, store.Change{
			Kind: "event", ID: "E1", Action: "create", Actor: tag,
			After: json.RawMessage(`{"title":"` + tag + `"}`),
		})
	})
}

// isNorm reports whether tm is in UTC without a monotonic reading.
func isNorm(tm time.Time) bool { return tm == tm.UTC().Round(0) }

// checkTimes fails the test for every time field of v (a record or a slice
// of records) that is not normalised.
func (e *env) checkTimes(v any) {
	e.Helper()
	check := func(what string, tm time.Time) {
		e.Helper()
		if !isNorm(tm) {
			e.Errorf("%s = %v (location %q): not UTC without monotonic reading", what, tm, tm.Location())
		}
	}
	switch r := v.(type) {
	case store.Turn:
		check("Turn.OccurredAt", r.OccurredAt)
		check("Turn.RecordedAt", r.RecordedAt)
	case []store.Turn:
		for _, x := range r {
			e.checkTimes(x)
		}
	case store.Annotation:
		check("Annotation.UpdatedAt", r.UpdatedAt)
		for _, tr := range r.TimeRefs {
			check("TimeRef.Start", tr.Start)
			check("TimeRef.End", tr.End)
		}
	case []store.Annotation:
		for _, x := range r {
			e.checkTimes(x)
		}
	case store.Event:
		check("Event.Start", r.Start)
		check("Event.End", r.End)
		check("Event.CreatedAt", r.CreatedAt)
		check("Event.UpdatedAt", r.UpdatedAt)
	case []store.Event:
		for _, x := range r {
			e.checkTimes(x)
		}
	case store.Link:
		check("Link.CreatedAt", r.CreatedAt)
		check("Link.InvalidatedAt", r.InvalidatedAt)
	case []store.Link:
		for _, x := range r {
			e.checkTimes(x)
		}
	case store.ProfileRecord:
		check("ProfileRecord.StatedAt", r.StatedAt)
		check("ProfileRecord.CreatedAt", r.CreatedAt)
	case []store.ProfileRecord:
		for _, x := range r {
			e.checkTimes(x)
		}
	case store.Change:
		check("Change.At", r.At)
	case []store.Change:
		for _, x := range r {
			e.checkTimes(x)
		}
	default:
		e.Fatalf("checkTimes: unexpected %T", v)
	}
}

// wantErr fails the test unless errors.Is(err, target).
func (e *env) wantErr(what string, err, target error) {
	e.Helper()
	if !errors.Is(err, target) {
		e.Errorf("%s: error = %v, want %v", what, err, target)
	}
}

// event returns the event with the given id from ListEvents, or
// store.ErrNotFound.
func (e *env) event(sp store.Space, id string) (store.Event, error) {
	evs, err := e.s.ListEvents(e.ctx, sp)
	if err != nil {
		return store.Event{}, err
	}
	for _, ev := range evs {
		if ev.ID == id {
			return ev, nil
		}
	}
	return store.Event{}, fmt.Errorf("event %q: %w", id, store.ErrNotFound)
}
