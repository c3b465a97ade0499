package storetest

import (
	"testing"

	"github.com/higmem/higmem/store"
)

var profileTests = []test{
	{name: "PutListReplace", fn: testProfilePutList},
	{name: "MissingTurn", fn: testProfileMissingTurn},
	{name: "Delete", fn: testProfileDelete},
	{name: "DeleteTurnRemovesCiting", fn: testProfileDeleteTurn},
}

// profileIDs returns the ids of rs, in order.
func profileIDs(rs []store.ProfileRecord) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func (e *env) listProfiles(r store.Reader, sp store.Space, entity string) []store.ProfileRecord {
	e.Helper()
	rs, err := r.ListProfileRecords(e.ctx, sp, entity)
	if err != nil {
		e.Fatalf("ListProfileRecords(%s, %q): %v", sp, entity, err)
	}
	return rs
}

func testProfilePutList(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "t1", 1), mkTurn(spaceA, "t2", 2))
	p1 := mkProfile("p1", "Mel", "t2", "t1") // evidence keeps its order
	p2 := mkProfile("p2", "Caroline", "t1")
	p2.Attribute, p2.Value, p2.Ended = store.ProfileSummary, "Caroline moved to Lisbon [t1].", false
	p3 := mkProfile("a3", "Mel", "t2")
	p3.StatedAt, p3.CreatedAt, p3.Producer = p3.StatedAt.In(zone), p3.CreatedAt.In(zone), ""
	e.update(func(tx store.Tx) error {
		for _, p := range []store.ProfileRecord{p1, p2, p3} {
			if err := tx.PutProfileRecord(e.ctx, spaceA, p); err != nil {
				return err
			}
		}
		return nil
	})
	all := e.listProfiles(e.s, spaceA, "")
	if d := diff([]store.ProfileRecord{p2, p3, p1}, all); d != "" {
		t.Errorf("ListProfileRecords, ordered by entity then id (-want +got):\n%s", d)
	}
	e.checkTimes(all)
	if d := diff([]string{"a3", "p1"}, profileIDs(e.listProfiles(e.s, spaceA, "Mel"))); d != "" {
		t.Errorf("ListProfileRecords(Mel) (-want +got):\n%s", d)
	}
	if got := e.listProfiles(e.s, spaceA, "mel"); len(got) != 0 {
		t.Errorf("ListProfileRecords(mel) = %+v: entities are compared exactly", got)
	}
	if got := e.listProfiles(e.s, spaceB, ""); len(got) != 0 {
		t.Errorf("another space lists %+v", got)
	}
	// Put with the same id replaces the record.
	repl := store.ProfileRecord{ID: "p1", Entity: "Ana", Attribute: "job", Value: "nurse", TurnIDs: []string{"t1"}}
	e.update(func(tx store.Tx) error { return tx.PutProfileRecord(e.ctx, spaceA, repl) })
	if got := e.listProfiles(e.s, spaceA, "Ana"); len(got) != 1 || diff(repl, got[0]) != "" {
		t.Errorf("after replace, ListProfileRecords(Ana) = %+v, want %+v", got, repl)
	}
	if d := diff([]string{"a3"}, profileIDs(e.listProfiles(e.s, spaceA, "Mel"))); d != "" {
		t.Errorf("after replace, ListProfileRecords(Mel) (-want +got):\n%s", d)
	}
}

func testProfileMissingTurn(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "t1", 1), mkTurn(spaceB, "t2", 1))
	for name, p := range map[string]store.ProfileRecord{
		"a missing turn":             mkProfile("p", "Mel", "t1", "nope"),
		"a turn of another space":    mkProfile("p", "Mel", "t2"),
		"a turn in an unknown space": mkProfile("p", "Mel", "t1"),
	} {
		sp := spaceA
		if name == "a turn in an unknown space" {
			sp = spaceC
		}
		err := e.s.Update(e.ctx, func(tx store.Tx) error { return tx.PutProfileRecord(e.ctx, sp, p) })
		e.wantErr("PutProfileRecord citing "+name, err, store.ErrNotFound)
	}
	// A turn put earlier in the same transaction can be cited.
	e.update(func(tx store.Tx) error {
		if _, err := tx.PutTurn(e.ctx, mkTurn(spaceA, "t9", 9)); err != nil {
			return err
		}
		return tx.PutProfileRecord(e.ctx, spaceA, mkProfile("p", "Mel", "t9", "t1"))
	})
	if d := diff([]string{"p"}, profileIDs(e.listProfiles(e.s, spaceA, ""))); d != "" {
		t.Errorf("profile records (-want +got):\n%s", d)
	}
	for _, sp := range []store.Space{spaceB, spaceC} {
		if got := e.listProfiles(e.s, sp, ""); len(got) != 0 {
			t.Errorf("%s holds %+v", sp, got)
		}
	}
}

func testProfileDelete(t *testing.T, e *env) {
	e.putTurns(mkTurn(spaceA, "t1", 1), mkTurn(spaceB, "t1", 1))
	e.update(func(tx store.Tx) error {
		for _, sp := range []store.Space{spaceA, spaceB} {
			for _, id := range []string{"p1", "p2"} {
				if err := tx.PutProfileRecord(e.ctx, sp, mkProfile(id, "Mel", "t1")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	e.update(func(tx store.Tx) error { return tx.DeleteProfileRecord(e.ctx, spaceA, "p1") })
	if d := diff([]string{"p2"}, profileIDs(e.listProfiles(e.s, spaceA, ""))); d != "" {
		t.Errorf("after delete (-want +got):\n%s", d)
	}
	if d := diff([]string{"p1", "p2"}, profileIDs(e.listProfiles(e.s, spaceB, ""))); d != "" {
		t.Errorf("a delete in %s changed %s (-want +got):\n%s", spaceA, spaceB, d)
	}
	if ts := e.listTurns(e.s, spaceA, store.TurnQuery{}); len(ts) != 1 {
		t.Errorf("deleting a profile record removed turns: %+v", ts)
	}
	err := e.s.Update(e.ctx, func(tx store.Tx) error { return tx.DeleteProfileRecord(e.ctx, spaceA, "p1") })
	e.wantErr("second DeleteProfileRecord", err, store.ErrNotFound)
	err = e.s.Update(e.ctx, func(tx store.Tx) error { return tx.DeleteProfileRecord(e.ctx, spaceD, "p2") })
	e.wantErr("DeleteProfileRecord in an unknown space", err, store.ErrNotFound)
}

// testProfileDeleteTurn checks that deleting a turn removes every profile
// record citing it, in that space only: delete forgets.
func testProfileDeleteTurn(t *testing.T, e *env) {
	for _, sp := range []store.Space{spaceA, spaceB} {
		e.putTurns(mkTurn(sp, "t1", 1), mkTurn(sp, "t2", 2), mkTurn(sp, "t3", 3))
		e.update(func(tx store.Tx) error {
			for _, p := range []store.ProfileRecord{
				mkProfile("both", "Mel", "t2", "t1"),
				mkProfile("second", "Mel", "t2"),
				mkProfile("first", "Caroline", "t1"),
				mkProfile("third", "Caroline", "t3"),
			} {
				if err := tx.PutProfileRecord(e.ctx, sp, p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	e.update(func(tx store.Tx) error {
		if err := tx.DeleteTurn(e.ctx, spaceA, "t1"); err != nil {
			return err
		}
		// The transaction sees it at once.
		if d := diff([]string{"third", "second"}, profileIDs(e.listProfiles(tx, spaceA, ""))); d != "" {
			t.Errorf("inside the tx, after DeleteTurn(t1) (-want +got):\n%s", d)
		}
		return nil
	})
	if d := diff([]string{"third", "second"}, profileIDs(e.listProfiles(e.s, spaceA, ""))); d != "" {
		t.Errorf("after DeleteTurn(t1) (-want +got):\n%s", d)
	}
	if d := diff([]string{"first", "third", "both", "second"}, profileIDs(e.listProfiles(e.s, spaceB, ""))); d != "" {
		t.Errorf("DeleteTurn in %s changed %s (-want +got):\n%s", spaceA, spaceB, d)
	}
	// A record put again without the deleted turn stays.
	e.update(func(tx store.Tx) error { return tx.PutProfileRecord(e.ctx, spaceA, mkProfile("both", "Mel", "t2")) })
	e.update(func(tx store.Tx) error { return tx.DeleteTurn(e.ctx, spaceA, "t3") })
	if d := diff([]string{"both", "second"}, profileIDs(e.listProfiles(e.s, spaceA, ""))); d != "" {
		t.Errorf("after DeleteTurn(t3) (-want +got):\n%s", d)
	}
}
