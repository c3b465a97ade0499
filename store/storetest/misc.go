package storetest

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

// readCalls calls every Reader method once with sp and returns the errors
// by method name.
func (e *env) readCalls(r store.Reader, sp store.Space) map[string]error {
	errs := map[string]error{}
	_, errs["GetTurn"] = r.GetTurn(e.ctx, sp, "D1:1")
	_, errs["ListTurns"] = r.ListTurns(e.ctx, sp, store.TurnQuery{})
	_, errs["ListAnnotations"] = r.ListAnnotations(e.ctx, sp, nil)
	_, errs["ListEvents"] = r.ListEvents(e.ctx, sp)
	_, errs["ListLinks"] = r.ListLinks(e.ctx, sp, nil)
	_, errs["ListVectors"] = r.ListVectors(e.ctx, sp, store.VectorTurn, "e1")
	_, errs["History"] = r.History(e.ctx, sp, "", "")
	_, errs["Stats"] = r.Stats(e.ctx, sp)
	_, errs["ListProfileRecords"] = r.ListProfileRecords(e.ctx, sp, "")
	_, errs["Changes"] = r.Changes(e.ctx, sp, 0, "e1")
	return errs
}

// writeCalls calls every Writer method once with sp and returns the errors
// by method name.
func (e *env) writeCalls(tx store.Tx, sp store.Space) map[string]error {
	errs := map[string]error{}
	_, errs["PutTurn"] = tx.PutTurn(e.ctx, mkTurn(sp, "D1:1", 1))
	errs["PutAnnotation"] = tx.PutAnnotation(e.ctx, sp, mkAnnotation("D1:1", "p"))
	errs["PutEvent"] = tx.PutEvent(e.ctx, mkEvent(sp, "E1", base))
	errs["DeleteEvent"] = tx.DeleteEvent(e.ctx, sp, "E1")
	errs["PutLink"] = tx.PutLink(e.ctx, sp, mkLink("a", "b", "r"))
	errs["PutVectors"] = tx.PutVectors(e.ctx, sp, []store.Vector{mkVector(store.VectorTurn, "a", "e1", 1)})
	errs["AppendHistory"] = tx.AppendHistory(e.ctx, sp, store.Change{Kind: "turn", ID: "a", Action: "create"})
	errs["PutProfileRecord"] = tx.PutProfileRecord(e.ctx, sp, mkProfile("P1", "Caroline", "D1:1"))
	errs["DeleteProfileRecord"] = tx.DeleteProfileRecord(e.ctx, sp, "P1")
	errs["DeleteTurn"] = tx.DeleteTurn(e.ctx, sp, "D1:1")
	errs["DeleteSpace"] = tx.DeleteSpace(e.ctx, sp)
	return errs
}

var validationTests = []test{
	{name: "EmptyUser", fn: testValidationEmptyUser},
	{name: "EmptyIDs", fn: testValidationEmptyIDs},
}

func testValidationEmptyUser(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	before := e.snap(e.s, spaceA)
	for _, sp := range []store.Space{{}, {AgentID: "agent"}} {
		for name, err := range e.readCalls(e.s, sp) {
			e.wantErr(fmt.Sprintf("%s(%+v)", name, sp), err, store.ErrInvalid)
		}
		e.update(func(tx store.Tx) error {
			for name, err := range e.readCalls(tx, sp) {
				e.wantErr(fmt.Sprintf("tx.%s(%+v)", name, sp), err, store.ErrInvalid)
			}
			for name, err := range e.writeCalls(tx, sp) {
				e.wantErr(fmt.Sprintf("tx.%s(%+v)", name, sp), err, store.ErrInvalid)
			}
			return nil
		})
	}
	if d := diff(before, e.snap(e.s, spaceA)); d != "" {
		t.Errorf("invalid writes changed the store (-before +after):\n%s", d)
	}
}

func testValidationEmptyIDs(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "D1:1", 1))
	e.update(func(tx store.Tx) error {
		_, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "", 2))
		e.wantErr("PutTurn with an empty id", err, store.ErrInvalid)
		e.wantErr("PutAnnotation with an empty turn id", tx.PutAnnotation(e.ctx, spaceA, mkAnnotation("", "p")), store.ErrInvalid)
		e.wantErr("PutEvent with an empty id", tx.PutEvent(e.ctx, mkEvent(spaceA, "", base)), store.ErrInvalid)
		e.wantErr("PutLink with an empty source", tx.PutLink(e.ctx, spaceA, mkLink("", "D1:1", "r")), store.ErrInvalid)
		e.wantErr("PutLink with an empty target", tx.PutLink(e.ctx, spaceA, mkLink("D1:1", "", "r")), store.ErrInvalid)
		nan := mkLink("D1:1", "D1:1", "r")
		nan.Confidence = math.NaN()
		e.wantErr("PutLink with a NaN confidence", tx.PutLink(e.ctx, spaceA, nan), store.ErrInvalid)
		e.wantErr("DeleteTurn with an empty id", tx.DeleteTurn(e.ctx, spaceA, ""), store.ErrNotFound)
		e.wantErr("DeleteEvent with an empty id", tx.DeleteEvent(e.ctx, spaceA, ""), store.ErrNotFound)
		for name, p := range map[string]store.ProfileRecord{
			"an empty id":        mkProfile("", "Caroline", "D1:1"),
			"an empty entity":    mkProfile("P", "", "D1:1"),
			"no turn":            mkProfile("P", "Caroline"),
			"an empty turn id":   mkProfile("P", "Caroline", "D1:1", ""),
			"a turn cited twice": mkProfile("P", "Caroline", "D1:1", "D1:1"),
			"an empty attribute": func() store.ProfileRecord { p := mkProfile("P", "Caroline", "D1:1"); p.Attribute = ""; return p }(),
		} {
			e.wantErr("PutProfileRecord with "+name, tx.PutProfileRecord(e.ctx, spaceA, p), store.ErrInvalid)
		}
		e.wantErr("DeleteProfileRecord with an empty id", tx.DeleteProfileRecord(e.ctx, spaceA, ""), store.ErrNotFound)
		return nil
	})
	s := e.snap(e.s, spaceA)
	if len(s.Turns) != 1 || len(s.Annotations)+len(s.Events)+len(s.Links)+len(s.Profiles) != 0 {
		t.Errorf("invalid records were stored: %+v", s)
	}
}

var timeTests = []test{
	{name: "ZeroStaysZero", fn: testTimesZero},
	{name: "Extremes", fn: testTimesExtremes},
	{name: "OutOfRange", fn: testTimesOutOfRange},
}

func testTimesZero(t *testing.T, e *env) {
	tr := mkTurn(spaceA, "t", 1)
	tr.OccurredAt = time.Time{}
	a := mkAnnotation("t", "p")
	a.UpdatedAt = time.Time{}
	a.TimeRefs[0].Start, a.TimeRefs[0].End = time.Time{}, time.Time{}
	ev := store.Event{Space: spaceA, ID: "E"}
	l := store.Link{Source: "t", Target: "u"}
	pr := store.ProfileRecord{ID: "P", Entity: "Caroline", Attribute: "home", TurnIDs: []string{"t"}}
	e.update(func(tx store.Tx) error {
		if _, err := tx.PutTurn(e.ctx, tr); err != nil {
			return err
		}
		if err := tx.PutAnnotation(e.ctx, spaceA, a); err != nil {
			return err
		}
		if err := tx.PutEvent(e.ctx, ev); err != nil {
			return err
		}
		if err := tx.PutProfileRecord(e.ctx, spaceA, pr); err != nil {
			return err
		}
		return tx.PutLink(e.ctx, spaceA, l)
	})
	s := e.snap(e.s, spaceA)
	if len(s.Turns) != 1 || len(s.Annotations) != 1 || len(s.Events) != 1 || len(s.Links) != 1 || len(s.Profiles) != 1 {
		t.Fatalf("records missing: %+v", s)
	}
	zeros := map[string]time.Time{
		"Turn.OccurredAt":      s.Turns[0].OccurredAt,
		"Annotation.UpdatedAt": s.Annotations[0].UpdatedAt,
		"TimeRef.Start":        s.Annotations[0].TimeRefs[0].Start,
		"TimeRef.End":          s.Annotations[0].TimeRefs[0].End,
		"Event.Start":          s.Events[0].Start,
		"Event.End":            s.Events[0].End,
		"Event.CreatedAt":      s.Events[0].CreatedAt,
		"Event.UpdatedAt":      s.Events[0].UpdatedAt,
		"Link.CreatedAt":       s.Links[0].CreatedAt,
		"Link.InvalidatedAt":   s.Links[0].InvalidatedAt,
		"Profile.StatedAt":     s.Profiles[0].StatedAt,
		"Profile.CreatedAt":    s.Profiles[0].CreatedAt,
	}
	for name, tm := range zeros {
		if tm != (time.Time{}) {
			t.Errorf("%s = %v (%#v), want the zero time", name, tm, tm)
		}
	}
	if s.Turns[0].RecordedAt.IsZero() {
		t.Error("Turn.RecordedAt stayed zero; the store fills it")
	}
	e.checkTimes(s.Turns)
	e.checkTimes(s.Annotations)
	e.checkTimes(s.Events)
	e.checkTimes(s.Links)
	e.checkTimes(s.Profiles)
}

func testTimesExtremes(t *testing.T, e *env) {
	// The earliest and latest storable instants, and one before 1970.
	cases := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 5, time.UTC).In(zone),
	}
	e.update(func(tx store.Tx) error {
		for i, tm := range cases {
			tr := mkTurn(spaceA, fmt.Sprint(i), int64(i))
			tr.OccurredAt, tr.RecordedAt = tm, tm
			if _, err := tx.PutTurn(e.ctx, tr); err != nil {
				return err
			}
			ev := mkEvent(spaceA, fmt.Sprint(i), tm)
			ev.Start, ev.End, ev.UpdatedAt = tm, tm, tm
			if err := tx.PutEvent(e.ctx, ev); err != nil {
				return err
			}
			p := mkProfile(fmt.Sprint(i), "Caroline", fmt.Sprint(i))
			p.StatedAt, p.CreatedAt = tm, tm
			if err := tx.PutProfileRecord(e.ctx, spaceA, p); err != nil {
				return err
			}
		}
		return nil
	})
	for i, tm := range cases {
		tr, err := e.s.GetTurn(e.ctx, spaceA, fmt.Sprint(i))
		if err != nil {
			t.Fatalf("GetTurn: %v", err)
		}
		if !tr.OccurredAt.Equal(tm) || !tr.RecordedAt.Equal(tm) {
			t.Errorf("turn times %v, %v; want %v", tr.OccurredAt, tr.RecordedAt, tm)
		}
		e.checkTimes(tr)
		ev, err := e.event(spaceA, fmt.Sprint(i))
		if err != nil {
			t.Fatalf("event: %v", err)
		}
		if !ev.CreatedAt.Equal(tm) || !ev.Start.Equal(tm) || !ev.End.Equal(tm) {
			t.Errorf("event times %v, %v, %v; want %v", ev.CreatedAt, ev.Start, ev.End, tm)
		}
		e.checkTimes(ev)
	}
	ps, err := e.s.ListProfileRecords(e.ctx, spaceA, "")
	if err != nil || len(ps) != len(cases) {
		t.Fatalf("ListProfileRecords = %+v, %v", ps, err)
	}
	for i, p := range ps {
		if tm := cases[i]; !p.StatedAt.Equal(tm) || !p.CreatedAt.Equal(tm) {
			t.Errorf("profile record %s times %v, %v; want %v", p.ID, p.StatedAt, p.CreatedAt, tm)
		}
	}
	e.checkTimes(ps)
	// RecordedBefore works across the whole range.
	got := ids(e.listTurns(e.s, spaceA, store.TurnQuery{RecordedBefore: cases[2]}))
	if d := diff([]string{"0", "2"}, got); d != "" {
		t.Errorf("RecordedBefore 1969 (-want +got):\n%s", d)
	}
	evs, err := e.s.ListEvents(e.ctx, spaceA)
	if err != nil || len(evs) != 3 || evs[0].ID != "0" || evs[1].ID != "2" || evs[2].ID != "1" {
		t.Errorf("ListEvents across the range = %+v, %v; want ids 0, 2, 1", evs, err)
	}
}

func testTimesOutOfRange(t *testing.T, e *env) {
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC),
	} {
		e.update(func(tx store.Tx) error {
			tr := mkTurn(spaceA, "t", 1)
			tr.OccurredAt = tm
			_, err := tx.PutTurn(e.ctx, tr)
			e.wantErr(fmt.Sprintf("PutTurn with OccurredAt %v", tm), err, store.ErrInvalid)
			ev := mkEvent(spaceA, "E", tm)
			e.wantErr(fmt.Sprintf("PutEvent with CreatedAt %v", tm), tx.PutEvent(e.ctx, ev), store.ErrInvalid)
			if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "ok", 2)); err != nil {
				return err
			}
			p := mkProfile("P", "Caroline", "ok")
			p.StatedAt = tm
			e.wantErr(fmt.Sprintf("PutProfileRecord with StatedAt %v", tm), tx.PutProfileRecord(e.ctx, spaceA, p), store.ErrInvalid)
			return nil
		})
	}
	if ts := e.listTurns(e.s, spaceA, store.TurnQuery{}); len(ts) != 1 || ts[0].ID != "ok" {
		t.Errorf("turns with out-of-range times were stored: %+v", ts)
	}
	if ps, err := e.s.ListProfileRecords(e.ctx, spaceA, ""); err != nil || len(ps) != 0 {
		t.Errorf("profile records with out-of-range times were stored: %+v, %v", ps, err)
	}
}

var closeTests = []test{
	{name: "ErrClosed", fn: testClose},
}

func testClose(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	if err := e.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, err := range e.readCalls(e.s, spaceA) {
		e.wantErr(name+" after Close", err, store.ErrClosed)
	}
	_, err := e.s.Spaces(e.ctx)
	e.wantErr("Spaces after Close", err, store.ErrClosed)
	called := false
	err = e.s.Update(e.ctx, func(tx store.Tx) error { called = true; return nil })
	e.wantErr("Update after Close", err, store.ErrClosed)
	if called {
		t.Error("Update after Close ran its function")
	}
	e.wantErr("second Close", e.s.Close(), store.ErrClosed)
}

var concurrencyTests = []test{
	{name: "ReadersDuringWrites", fn: testConcurrentReaders},
	{name: "ConcurrentUpdates", fn: testConcurrentUpdates},
}

// testConcurrentReaders checks that readers running alongside Updates see
// whole transactions: every Update adds two turns and one event, so a
// reader must never see an odd number of turns, or turns without their
// event. Run with -race.
func testConcurrentReaders(t *testing.T, e *env) {
	const updates, readers, reads = 20, 3, 30
	var wg sync.WaitGroup
	errc := make(chan error, readers+1)
	wg.Go(func() {
		for i := range updates {
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				for j := range 2 {
					seq := int64(2*i + j + 1)
					if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, fmt.Sprintf("t%03d", seq), seq)); err != nil {
						return err
					}
				}
				return tx.PutEvent(e.ctx, mkEvent(spaceA, fmt.Sprintf("E%03d", i), base))
			})
			if err != nil {
				errc <- err
				return
			}
		}
	})
	for range readers {
		wg.Go(func() {
			for range reads {
				ts, err := e.s.ListTurns(e.ctx, spaceA, store.TurnQuery{})
				if err != nil {
					errc <- err
					return
				}
				if len(ts)%2 != 0 || !slices.IsSortedFunc(ts, func(a, b store.Turn) int { return int(a.Seq - b.Seq) }) {
					errc <- fmt.Errorf("reader saw %d turns (want even, sorted): %v", len(ts), ids(ts))
					return
				}
				st, err := e.s.Stats(e.ctx, spaceA)
				if err != nil {
					errc <- err
					return
				}
				if st.Turns%2 != 0 || st.Turns < len(ts) || st.Events*2 != st.Turns || st.LastSeq != int64(st.Turns) {
					errc <- fmt.Errorf("reader saw a half-written transaction: %+v", st)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if st, err := e.s.Stats(e.ctx, spaceA); err != nil || st.Turns != 2*updates {
		t.Errorf("final Stats = %+v, %v; want %d turns", st, err, 2*updates)
	}
}

// testConcurrentUpdates runs Updates from several goroutines; each reads
// the last Seq and appends after it, so lost or interleaved updates show as
// duplicate or missing Seqs.
func testConcurrentUpdates(t *testing.T, e *env) {
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := e.s.Update(e.ctx, func(tx store.Tx) error {
					st, err := tx.Stats(e.ctx, spaceA)
					if err != nil {
						return err
					}
					seq := st.LastSeq + 1
					if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, fmt.Sprintf("w%d-%d", w, i), seq)); err != nil {
						return err
					}
					return tx.AppendHistory(e.ctx, spaceA, store.Change{Kind: "turn", ID: fmt.Sprint(seq), Action: "create"})
				})
				if err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	ts := e.listTurns(e.s, spaceA, store.TurnQuery{})
	if len(ts) != writers*each {
		t.Fatalf("%d turns, want %d", len(ts), writers*each)
	}
	for i, tr := range ts {
		if tr.Seq != int64(i+1) {
			t.Fatalf("turn %d has Seq %d: concurrent Updates interleaved", i, tr.Seq)
		}
	}
	hist, err := e.s.History(e.ctx, spaceA, "turn", "")
	if err != nil || len(hist) != writers*each {
		t.Fatalf("History: %d changes, %v; want %d", len(hist), err, writers*each)
	}
	for i, c := range hist {
		if c.ID != fmt.Sprint(i+1) {
			t.Errorf("change %d is for seq %s: history out of order", i, c.ID)
		}
	}
}
