package higmem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// TestOfflineWritesOnlyChangedEvents checks that offline construction
// writes only the events a batch changes: the older events it weighs for
// a turn to rejoin, and the open event of the session it does not
// continue, are read, not written again with a new version. Every event
// update in the history changes more than its version and time, and
// every event an Add reports was written by it.
func TestOfflineWritesOnlyChangedEvents(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := higmem.Open(ctx, higmem.Options{Store: st, Mode: higmem.ModeOffline, Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := higmem.Space{UserID: "events"}
	conv := synth.Generate(synth.Options{Turns: 600, Seed: 3})
	turns := conv.Turns
	for len(turns) > 0 {
		k := 1
		for k < len(turns) && turns[k].SessionID == turns[0].SessionID {
			k++
		}
		before, err := st.History(ctx, sp, "event", "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Add(ctx, sp, turns[:k])
		if err != nil {
			t.Fatal(err)
		}
		after, err := st.History(ctx, sp, "event", "")
		if err != nil {
			t.Fatal(err)
		}
		var written []string
		for _, c := range after[len(before):] {
			written = append(written, c.ID)
		}
		slices.Sort(written)
		if !slices.Equal(written, res.Events) {
			t.Fatalf("Add reported events %v, wrote %v", res.Events, written)
		}
		turns = turns[k:]
	}
	hist, err := st.History(ctx, sp, "event", "")
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, c := range hist {
		if c.Action != "update" {
			continue
		}
		updates++
		if bytes.Equal(stamped(t, c.Before), stamped(t, c.After)) {
			t.Fatalf("event %s written again unchanged (history seq %d)", c.ID, c.Seq)
		}
	}
	if updates == 0 {
		t.Fatal("no event was updated (no turn rejoined an older event): the test checks nothing")
	}
}

// stamped returns an event's JSON without its version and update time.
func stamped(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var e store.Event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	e.Version = 0
	e.UpdatedAt = e.CreatedAt
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
