package storetest

import (
	"testing"
	"time"

	"github.com/higmem/higmem/store"
)

var turnTests = []test{
	{name: "PutGet", fn: testTurnPutGet},
	{name: "GetMissing", fn: testTurnGetMissing},
	{name: "Idempotent", fn: testTurnIdempotent},
	{name: "Conflict", fn: testTurnConflict},
	{name: "RecordedAtDefault", fn: testTurnRecordedAtDefault},
	{name: "OrderBySeq", fn: testTurnOrder},
	{name: "Query", fn: testTurnQuery},
	{name: "Delete", fn: testTurnDelete},
	{name: "Copies", fn: testTurnCopies},
}

func testTurnPutGet(t *testing.T, e *env) {
	want := mkTurn(spaceA, "D1:1", 1)
	in := want
	// Non-UTC inputs with a monotonic reading must come back normalised.
	in.OccurredAt = want.OccurredAt.In(zone)
	in.RecordedAt = time.Now()
	want.RecordedAt = in.RecordedAt
	e.update(func(tx store.Tx) error {
		created, err := tx.PutTurn(e.ctx, in)
		if err != nil {
			return err
		}
		if !created {
			t.Error("PutTurn of a new turn: created = false")
		}
		return nil
	})
	got, err := e.s.GetTurn(e.ctx, spaceA, "D1:1")
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("GetTurn mismatch (-want +got):\n%s", d)
	}
	e.checkTimes(got)

	// A turn with only the required fields round-trips too.
	bare := store.Turn{Space: spaceA, ID: "bare"}
	e.putTurns(bare)
	got, err = e.s.GetTurn(e.ctx, spaceA, "bare")
	if err != nil {
		t.Fatalf("GetTurn(bare): %v", err)
	}
	bare.RecordedAt = got.RecordedAt // filled by the store
	if d := diff(bare, got); d != "" {
		t.Errorf("GetTurn(bare) mismatch (-want +got):\n%s", d)
	}
}

func testTurnGetMissing(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "D1:1", 1))
	for _, id := range []string{"D1:2", "", "d1:1"} {
		_, err := e.s.GetTurn(e.ctx, spaceA, id)
		e.wantErr("GetTurn("+id+")", err, store.ErrNotFound)
	}
}

func testTurnIdempotent(t *testing.T, e *env) {
	orig := mkTurn(spaceA, "D1:1", 7)
	e.putTurns(orig)

	// Same content; Seq, RecordedAt, OccurredAt and Metadata differ and are
	// not part of a turn's identity. Nil and empty attachments are equal.
	again := orig
	again.Seq = 99
	again.RecordedAt = orig.RecordedAt.Add(time.Hour)
	again.Metadata = map[string]string{"other": "x"}
	again.Attachments = append([]store.Attachment{}, orig.Attachments...)
	for round := range 2 {
		e.update(func(tx store.Tx) error {
			created, err := tx.PutTurn(e.ctx, again)
			if err != nil {
				t.Errorf("round %d: PutTurn of identical turn: %v", round, err)
			}
			if created {
				t.Errorf("round %d: PutTurn of identical turn: created = true", round)
			}
			// Twice in the same transaction is still a no-op.
			created, err = tx.PutTurn(e.ctx, again)
			if err != nil || created {
				t.Errorf("round %d: second PutTurn in one Update = %v, %v; want false, nil", round, created, err)
			}
			return nil
		})
	}
	ts := e.listTurns(e.s, spaceA, store.TurnQuery{})
	if len(ts) != 1 {
		t.Fatalf("ListTurns after re-puts: %d turns, want 1", len(ts))
	}
	if d := diff(orig, ts[0]); d != "" {
		t.Errorf("stored turn changed by no-op re-put (-want +got):\n%s", d)
	}

	// Bytes that are not UTF-8 may be changed by a backend's encoding, but
	// re-putting the same turn is still a no-op.
	odd := store.Turn{Space: spaceA, ID: "odd", Speaker: "x\xff", Text: "caf\xe9",
		Attachments: []store.Attachment{{Kind: "image", Caption: "\xff\xfe"}}}
	e.putTurns(odd)
	e.update(func(tx store.Tx) error {
		created, err := tx.PutTurn(e.ctx, odd)
		if err != nil || created {
			t.Errorf("re-put of a turn with invalid UTF-8 = %v, %v; want false, nil", created, err)
		}
		return nil
	})

	// Nil attachments on both sides, and empty versus nil.
	plain := store.Turn{Space: spaceA, ID: "p", Speaker: "x", Text: "y"}
	e.putTurns(plain)
	plain.Attachments = []store.Attachment{}
	e.update(func(tx store.Tx) error {
		created, err := tx.PutTurn(e.ctx, plain)
		if err != nil || created {
			t.Errorf("PutTurn with empty instead of nil attachments = %v, %v; want false, nil", created, err)
		}
		return nil
	})
}

func testTurnConflict(t *testing.T, e *env) {
	orig := mkTurn(spaceA, "D1:1", 1)
	e.putTurns(orig)
	cases := []struct {
		name   string
		change func(*store.Turn)
	}{
		{"text", func(t *store.Turn) { t.Text += "!" }},
		{"speaker", func(t *store.Turn) { t.Speaker = "Melanie" }},
		{"session", func(t *store.Turn) { t.SessionID = "S2" }},
		{"occurred_raw", func(t *store.Turn) { t.OccurredRaw = "2 pm" }},
		{"attachment caption", func(t *store.Turn) {
			t.Attachments = []store.Attachment{{Kind: "image", URL: orig.Attachments[0].URL, Caption: "other"}}
		}},
		{"attachment removed", func(t *store.Turn) { t.Attachments = nil }},
		{"attachment added", func(t *store.Turn) {
			t.Attachments = append(append([]store.Attachment{}, orig.Attachments...), store.Attachment{Kind: "file"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			changed := orig
			tc.change(&changed)
			err := e.s.Update(e.ctx, func(tx store.Tx) error {
				created, err := tx.PutTurn(e.ctx, changed)
				if created {
					t.Error("conflicting PutTurn: created = true")
				}
				return err
			})
			e.wantErr("conflicting PutTurn", err, store.ErrConflict)
			got, err := e.s.GetTurn(e.ctx, spaceA, orig.ID)
			if err != nil {
				t.Fatalf("GetTurn: %v", err)
			}
			if d := diff(orig, got); d != "" {
				t.Errorf("stored turn changed by conflicting put (-want +got):\n%s", d)
			}
		})
	}
	// A conflict inside a transaction that goes on does not poison it.
	e.update(func(tx store.Tx) error {
		changed := orig
		changed.Text = "different"
		_, err := tx.PutTurn(e.ctx, changed)
		e.wantErr("conflicting PutTurn", err, store.ErrConflict)
		_, err = tx.PutTurn(e.ctx, mkTurn(spaceA, "D1:2", 2))
		return err
	})
	if ts := e.listTurns(e.s, spaceA, store.TurnQuery{}); len(ts) != 2 {
		t.Errorf("after conflict then put in one Update: %d turns, want 2", len(ts))
	}
}

func testTurnRecordedAtDefault(t *testing.T, e *env) {
	tr := mkTurn(spaceA, "D1:1", 1)
	tr.RecordedAt = time.Time{}
	before := time.Now().Add(-time.Second)
	e.putTurns(tr)
	after := time.Now().Add(time.Second)
	got, err := e.s.GetTurn(e.ctx, spaceA, tr.ID)
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if got.RecordedAt.Before(before) || got.RecordedAt.After(after) {
		t.Errorf("RecordedAt = %v, want the time of the put (between %v and %v)", got.RecordedAt, before, after)
	}
	e.checkTimes(got)
}

func testTurnOrder(t *testing.T, e *env) {
	// Put out of order, with a tie on Seq broken by ID.
	e.putTurns(
		mkTurn(spaceA, "c", 3),
		mkTurn(spaceA, "a", 10),
		mkTurn(spaceA, "b", 1),
		mkTurn(spaceA, "y", 2),
		mkTurn(spaceA, "x", 2),
	)
	got := ids(e.listTurns(e.s, spaceA, store.TurnQuery{}))
	want := []string{"b", "x", "y", "c", "a"}
	if d := diff(want, got); d != "" {
		t.Errorf("ListTurns order (-want +got):\n%s", d)
	}
}

func testTurnQuery(t *testing.T, e *env) {
	// Seq 1..6; sessions S1 (1-3) and S2 (4-6); recorded at base+seq hours.
	var all []store.Turn
	for i := 1; i <= 6; i++ {
		tr := mkTurn(spaceA, string(rune('a'+i-1)), int64(i))
		if i > 3 {
			tr.SessionID = "S2"
		}
		all = append(all, tr)
	}
	e.putTurns(all...)
	hour := func(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
	cases := []struct {
		name string
		q    store.TurnQuery
		want []string
	}{
		{"zero", store.TurnQuery{}, []string{"a", "b", "c", "d", "e", "f"}},
		{"ids", store.TurnQuery{IDs: []string{"e", "b"}}, []string{"b", "e"}},
		{"ids missing and repeated", store.TurnQuery{IDs: []string{"zz", "c", "c", "a"}}, []string{"a", "c"}},
		{"ids empty", store.TurnQuery{IDs: []string{}}, nil},
		{"session", store.TurnQuery{SessionID: "S2"}, []string{"d", "e", "f"}},
		{"session missing", store.TurnQuery{SessionID: "S9"}, nil},
		{"recorded before inclusive", store.TurnQuery{RecordedBefore: hour(3)}, []string{"a", "b", "c"}},
		{"recorded before non-UTC", store.TurnQuery{RecordedBefore: hour(2).In(zone)}, []string{"a", "b"}},
		{"recorded before between", store.TurnQuery{RecordedBefore: hour(3).Add(-time.Nanosecond)}, []string{"a", "b"}},
		{"after seq", store.TurnQuery{AfterSeq: 4}, []string{"e", "f"}},
		{"after seq past end", store.TurnQuery{AfterSeq: 6}, nil},
		{"limit", store.TurnQuery{Limit: 2}, []string{"a", "b"}},
		{"limit over", store.TurnQuery{Limit: 100}, []string{"a", "b", "c", "d", "e", "f"}},
		{"session after seq limit", store.TurnQuery{SessionID: "S2", AfterSeq: 4, Limit: 1}, []string{"e"}},
		{"ids session", store.TurnQuery{IDs: []string{"a", "d"}, SessionID: "S1"}, []string{"a"}},
		{"ids after seq limit", store.TurnQuery{IDs: []string{"a", "c", "e", "f"}, AfterSeq: 1, Limit: 2}, []string{"c", "e"}},
		{"all fields", store.TurnQuery{IDs: []string{"b", "c", "d", "e"}, SessionID: "S2", RecordedBefore: hour(5), AfterSeq: 3, Limit: 5}, []string{"d", "e"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.listTurns(e.s, spaceA, tc.q)
			if d := diff(tc.want, ids(got)); d != "" {
				t.Errorf("ListTurns(%+v) ids (-want +got):\n%s", tc.q, d)
			}
			for _, g := range got {
				if d := diff(all[g.Seq-1], g); d != "" {
					t.Errorf("turn %s (-want +got):\n%s", g.ID, d)
				}
			}
		})
	}
}

func testTurnDelete(t *testing.T, e *env) {
	e.populate(spaceA, "A")
	// A vector of an event with the same id as the turn must survive.
	e.update(func(tx store.Tx) error {
		return tx.PutVectors(e.ctx, spaceA, []store.Vector{mkVector(store.VectorEvent, "D1:2", "e1", 9)})
	})
	before := e.snap(e.s, spaceA)
	e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, "D1:2") })
	after := e.snap(e.s, spaceA)

	if d := diff([]string{"D1:1", "D1:3"}, ids(after.Turns)); d != "" {
		t.Errorf("turns after delete (-want +got):\n%s", d)
	}
	var annIDs []string
	for _, a := range after.Annotations {
		annIDs = append(annIDs, a.TurnID)
	}
	if d := diff([]string{"D1:1", "D1:3"}, annIDs); d != "" {
		t.Errorf("annotations after delete (-want +got):\n%s", d)
	}
	// Both links touch D1:2 (one as source, one as target).
	if len(after.Links) != 0 {
		t.Errorf("links after delete: %+v, want none", after.Links)
	}
	wantVecs := map[string][]store.Vector{
		"turn/e1":  {before.Vectors["turn/e1"][0]},
		"event/e1": before.Vectors["event/e1"],
	}
	if d := diff(wantVecs, after.Vectors); d != "" {
		t.Errorf("vectors after delete (-want +got):\n%s", d)
	}
	// Event membership and history are the engine's business.
	if d := diff(before.Events, after.Events); d != "" {
		t.Errorf("events changed by DeleteTurn (-want +got):\n%s", d)
	}
	if d := diff(before.History, after.History); d != "" {
		t.Errorf("history changed by DeleteTurn (-want +got):\n%s", d)
	}
	if after.Stats.Turns != 2 || after.Stats.Links != 0 {
		t.Errorf("Stats after delete = %+v, want 2 turns, 0 links", after.Stats)
	}

	err := e.s.Update(e.ctx, func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, "D1:2") })
	e.wantErr("second DeleteTurn", err, store.ErrNotFound)

	// The id can be used again, with new content.
	re := mkTurn(spaceA, "D1:2", 2)
	re.Text = "reborn"
	e.putTurns(re)
	if _, err := e.s.GetTurn(e.ctx, spaceA, "D1:2"); err != nil {
		t.Errorf("GetTurn after re-put: %v", err)
	}
	anns, err := e.s.ListAnnotations(e.ctx, spaceA, []string{"D1:2"})
	if err != nil || len(anns) != 0 {
		t.Errorf("re-put turn has annotations %+v (err %v), want none", anns, err)
	}
}

func testTurnCopies(t *testing.T, e *env) {
	in := mkTurn(spaceA, "D1:1", 1)
	want := mkTurn(spaceA, "D1:1", 1)
	e.putTurns(in)
	// Changing what was put, or what was returned, must not change the store.
	in.Attachments[0].Caption = "mutated"
	in.Metadata["source"] = "mutated"
	got, err := e.s.GetTurn(e.ctx, spaceA, "D1:1")
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	got.Attachments[0].Caption = "mutated again"
	got.Metadata["source"] = "mutated again"
	ts := e.listTurns(e.s, spaceA, store.TurnQuery{})
	ts[0].Metadata["dia_id"] = "x"
	got, err = e.s.GetTurn(e.ctx, spaceA, "D1:1")
	if err != nil {
		t.Fatalf("GetTurn: %v", err)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("store shares memory with callers (-want +got):\n%s", d)
	}
}
