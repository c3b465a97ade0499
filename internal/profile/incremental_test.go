package profile_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/higmem/higmem/internal/profile"
)

// chunkStatements makes statements as a model reading only chunk might:
// the values the rules read in the chunk alone, opened where first stated,
// and ended where closed by a turn that states no other value.
func chunkStatements(chunk []profile.Turn, producer string) []profile.Statement {
	var out []profile.Statement
	for _, p := range profile.Derive(chunk) {
		for _, a := range p.Attributes {
			opened := map[string]bool{}
			for _, v := range a.Values {
				opened[v.Evidence[0]] = true
			}
			for _, v := range a.Values {
				out = append(out, profile.Statement{Entity: p.Entity, Attribute: a.Label(), Value: v.Value, Turns: v.Evidence[:1], Producer: producer})
				if v.ClosedBy != "" && !opened[v.ClosedBy] {
					out = append(out, profile.Statement{Entity: p.Entity, Attribute: a.Label(), Value: v.Value, Ended: true, Turns: []string{v.ClosedBy}, Producer: producer})
				}
			}
		}
	}
	return out
}

// conversations returns the knowledge-update dialogues and the example
// conversation as profile turns.
func conversations(t *testing.T) map[string][]profile.Turn {
	t.Helper()
	out := map[string][]profile.Turn{}
	type turnIn struct {
		ID, Speaker, Text, Time string
	}
	conv := func(name string, ts []turnIn) {
		var pts []profile.Turn
		for i, tu := range ts {
			at, _ := time.Parse(time.RFC3339, tu.Time)
			id := tu.ID
			if id == "" {
				id = fmt.Sprint("t", i+1)
			}
			pts = append(pts, profile.Turn{ID: id, Seq: int64(i + 1), Speaker: tu.Speaker, Text: tu.Text, OccurredAt: at, RecordedAt: at.Add(time.Minute)})
		}
		out[name] = pts
	}
	var ku struct {
		Cases []struct {
			Name  string
			Turns []turnIn
		}
	}
	b, err := os.ReadFile("../../testdata/profiles/knowledge_update.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ku); err != nil {
		t.Fatal(err)
	}
	var all []turnIn
	for _, c := range ku.Cases {
		conv(c.Name, c.Turns)
		all = append(all, c.Turns...)
	}
	for i := range all {
		all[i].ID = fmt.Sprint("k", i)
	}
	conv("all-cases", all)
	var ex struct {
		Turns []turnIn
	}
	b, err = os.ReadFile("../../examples/conversation.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatal(err)
	}
	conv("example", ex.Turns)
	return out
}

// TestExtendIsBuild: reading a conversation chunk by chunk (Start, then
// Extend with each next chunk and the statements made so far) gives the
// profiles Build gives for the whole, at every chunk size.
func TestExtendIsBuild(t *testing.T) {
	for name, ts := range conversations(t) {
		for _, size := range []int{1, 2, 3, 8} {
			var stmts []profile.Statement
			var x *profile.Derivation
			extended := 0
			for from := 0; from < len(ts); from += size {
				chunk := ts[from:min(from+size, len(ts))]
				stmts = append(stmts, chunkStatements(chunk, "model")...)
				var got []profile.Profile
				if x == nil {
					x, got = profile.Start(chunk, stmts)
				} else {
					var ok bool
					if got, ok = x.Extend(chunk, stmts); ok {
						extended++
					} else {
						x, got = profile.Start(ts[:from+len(chunk)], stmts)
					}
				}
				want := profile.Build(ts[:from+len(chunk)], stmts)
				if !reflect.DeepEqual(got, want) {
					gj, _ := json.Marshal(got)
					wj, _ := json.Marshal(want)
					t.Fatalf("%s, chunks of %d, after %d turns:\n got %s\nwant %s", name, size, from+len(chunk), gj, wj)
				}
			}
			if name == "example" && extended == 0 {
				t.Errorf("%s, chunks of %d: never extended", name, size)
			}
		}
	}
}

// Extend refuses what it cannot read in order, and changes nothing then.
func TestExtendRefuses(t *testing.T) {
	at := func(d int) time.Time { return time.Date(2023, 1, d, 0, 0, 0, 0, time.UTC) }
	ts := []profile.Turn{
		{ID: "a", Seq: 1, Speaker: "Ana", Text: "I live in Porto.", OccurredAt: at(2)},
		{ID: "b", Seq: 2, Speaker: "Ana", Text: "I moved to Lisbon.", OccurredAt: at(3)},
	}
	s := profile.Statement{Entity: "Ana", Attribute: "job", Value: "nurse", Turns: []string{"a"}, Producer: "m"}
	for name, tc := range map[string]struct {
		turns []profile.Turn
		stmts []profile.Statement
	}{
		"an earlier turn":               {[]profile.Turn{{ID: "c", Seq: 3, Speaker: "Ana", Text: "hi", OccurredAt: at(1)}}, nil},
		"a new speaker":                 {[]profile.Turn{{ID: "c", Seq: 3, Speaker: "Ben", Text: "hi", OccurredAt: at(4)}}, nil},
		"a statement about a read turn": {nil, []profile.Statement{s}},
		"a turn read before":            {ts[1:], nil},
	} {
		x, before := profile.Start(ts, nil)
		if _, ok := x.Extend(tc.turns, tc.stmts); ok {
			t.Errorf("%s: extended", name)
		}
		if got, ok := x.Extend(nil, nil); !ok || !reflect.DeepEqual(got, before) {
			t.Errorf("%s: a refused Extend changed the derivation", name)
		}
	}
	// A statement gone (a deleted record) cannot be unapplied.
	x, _ := profile.Start(ts, []profile.Statement{s})
	if _, ok := x.Extend(nil, nil); ok {
		t.Error("extended without a statement applied before")
	}
}
