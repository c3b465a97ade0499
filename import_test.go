package higmem_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/higmem/higmem"
)

const importHeader = `{"kind":"header","version":1}`

// importLines joins export lines after a header.
func importLines(lines ...string) string {
	return importHeader + "\n" + strings.Join(lines, "\n") + "\n"
}

const (
	impT1 = `{"kind":"turn","turn":{"id":"t1","seq":1,"speaker":"a","text":"one"}}`
	impT2 = `{"kind":"turn","turn":{"id":"t2","seq":2,"speaker":"b","text":"two"}}`
)

// TestImportRejectsDanglingReferences feeds exports whose records point at
// nothing, repeat ids or hold impossible times: each import fails with
// ErrInvalidInput naming the line and the problem, and nothing of it is
// stored (not even the good lines before the bad one).
func TestImportRejectsDanglingReferences(t *testing.T) {
	cases := []struct {
		name string
		in   string
		msg  []string
	}{
		{"event names a missing turn", importLines(impT1, `{"kind":"event","event":{"id":"e1","title":"x","turn_ids":["t1","ghost"],"version":1}}`),
			[]string{`line 3: event "e1" names turn "ghost", which is neither in the import nor stored`}},
		{"turn given twice", importLines(impT1, impT2, impT1), []string{`line 4: turn "t1" given twice (first on line 2)`}},
		{"event given twice", importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":["t1"]}}`, `{"kind":"event","event":{"id":"e1","turn_ids":["t1"]}}`),
			[]string{`line 4: event "e1" given twice (first on line 3)`}},
		{"event lists a turn twice", importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":["t1","t1"]}}`), []string{`event "e1" lists turn "t1" twice`}},
		{"event without turns", importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":[]}}`), []string{`event "e1" has no turns`}},
		{"event ends before it starts", importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":["t1"],"start":"2023-05-08T00:00:00Z","end":"2023-05-01T00:00:00Z"}}`),
			[]string{`event "e1" ends (2023-05-01T00:00:00Z) before it starts (2023-05-08T00:00:00Z)`}},
		{"fact cites a missing turn", importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":["t1"],"facts":[{"fact":"x","turn_id":"ghost"}]}}`),
			[]string{`a fact cites turn "ghost"`}},
		{"annotation of a missing turn", importLines(impT1, `{"kind":"annotation","annotation":{"turn_id":"ghost"}}`), []string{`line 3: annotation of turn "ghost"`}},
		{"annotation twice", importLines(impT1, `{"kind":"annotation","annotation":{"turn_id":"t1"}}`, `{"kind":"annotation","annotation":{"turn_id":"t1"}}`),
			[]string{`line 4: a second annotation of turn "t1" (first on line 3)`}},
		{"link to a missing turn", importLines(impT1, `{"kind":"link","link":{"source":"t1","target":"ghost","relation":"answers"}}`),
			[]string{`line 3: link t1 -> ghost names turn "ghost"`}},
		{"second header", importLines(impT1, importHeader), []string{"line 3: a second header line"}},
		{"bad time", importLines(`{"kind":"turn","turn":{"id":"t1","speaker":"a","text":"one","occurred_at":"2023-13-45T00:00:00Z"}}`), []string{"line 2", "month out of range"}},
		{"several problems, first ones listed", importLines(impT1,
			`{"kind":"event","event":{"id":"e1","turn_ids":["g1"]}}`, `{"kind":"event","event":{"id":"e2","turn_ids":["g2"]}}`,
			`{"kind":"event","event":{"id":"e3","turn_ids":["g3"]}}`, `{"kind":"event","event":{"id":"e4","turn_ids":["g4"]}}`,
			`{"kind":"event","event":{"id":"e5","turn_ids":["g5"]}}`, `{"kind":"event","event":{"id":"e6","turn_ids":["g6"]}}`,
			`{"kind":"event","event":{"id":"e7","turn_ids":["g7"]}}`, `{"kind":"event","event":{"id":"e8","turn_ids":["g8"]}}`,
			`{"kind":"event","event":{"id":"e9","turn_ids":["g9"]}}`, `{"kind":"event","event":{"id":"e10","turn_ids":["g10"]}}`,
			`{"kind":"event","event":{"id":"e11","turn_ids":["g11"]}}`, `{"kind":"event","event":{"id":"e12","turn_ids":["g12"]}}`),
			[]string{"12 problems, nothing imported", `line 3: event "e1"`, `line 12: event "e10"`, "; and 2 more"}},
		{"no header first", impT1 + "\n", []string{"line 1: want a header line first"}},
		{"profile record cites a missing turn", importLines(impT1, `{"kind":"profile","profile":{"id":"p1","entity":"a","attribute":"home","value":"Lisbon","turn_ids":["t1","ghost"]}}`),
			[]string{`line 3: profile record "p1" cites turn "ghost", which is neither in the import nor stored`}},
		{"profile record twice", importLines(impT1, `{"kind":"profile","profile":{"id":"p1","entity":"a","attribute":"home","turn_ids":["t1"]}}`,
			`{"kind":"profile","profile":{"id":"p1","entity":"a","attribute":"job","turn_ids":["t1"]}}`),
			[]string{`line 4: profile record "p1" given twice (first on line 3)`}},
		{"profile record without entity or turns", importLines(impT1, `{"kind":"profile","profile":{"id":"p1","attribute":"home"}}`),
			[]string{`line 3: profile record "p1": profile record needs an id, an entity and an attribute`}},
		{"profile line without its record", importLines(impT1, `{"kind":"profile"}`), []string{"line 3: profile line misses its record"}},
		{"two values on a line", importLines(impT1 + " " + impT2), []string{"line 2: more than one JSON value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			m := open(t, higmem.Options{})
			_, err := m.Import(ctx, sp, strings.NewReader(tc.in))
			if !errors.Is(err, higmem.ErrInvalidInput) {
				t.Fatalf("err = %v; want ErrInvalidInput", err)
			}
			for _, w := range tc.msg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q; want it to say %q", err, w)
				}
			}
			st, err := m.Stats(ctx, sp)
			if err != nil || st.Turns != 0 || st.Events != 0 {
				t.Errorf("after the refused import: %+v, %v; want nothing stored", st, err)
			}
		})
	}
}

// TestImportResolvesStoredTurns checks that an import may refer to turns
// already stored, and reads lines longer than a bufio.Scanner would.
func TestImportResolvesStoredTurns(t *testing.T) {
	ctx := t.Context()
	m := open(t, higmem.Options{MaxTurnBytes: -1})
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "t1", Speaker: "a", Text: "one"}}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("long words ", 200_000) // a 2.2 MB line
	in := importLines(`{"kind":"turn","turn":{"id":"t3","speaker":"a","text":"`+big+`"}}`,
		`{"kind":"event","event":{"id":"e7","title":"x","turn_ids":["t1","t3"],"version":1}}`,
		`{"kind":"link","link":{"source":"t3","target":"t1","relation":"answers"}}`,
		`{"kind":"profile","profile":{"id":"p1","entity":"a","attribute":"home","value":"Lisbon","turn_ids":["t1"],"producer":"llm:default:p2"}}`,
		`{"kind":"profile","profile":{"id":"p0","entity":"a","attribute":"pet","value":"Max (dog)","turn_ids":["t4"]}}`,
		`{"kind":"turn","turn":{"id":"t4","speaker":"a","text":"my dog Max"}}`)
	res, err := m.Import(ctx, sp, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || res.Events != 1 || res.Links != 1 || res.Profiles != 2 {
		t.Errorf("import result %+v; want 2 turns, 1 event, 1 link, 2 profile records", res)
	}
	got, err := m.Get(ctx, sp, "t3")
	if err != nil || got.Text != big {
		t.Errorf("t3: %d bytes, %v; want the whole line's text", len(got.Text), err)
	}
}

// FuzzImport feeds arbitrary bytes to Import: it never panics, either
// imports or refuses with ErrInvalidInput or ErrConflict, writes nothing
// when it refuses, and what it imported exports and imports again.
func FuzzImport(f *testing.F) {
	f.Add([]byte(importLines(impT1, impT2, `{"kind":"event","event":{"id":"e1","title":"x","turn_ids":["t1","t2"],"version":1}}`,
		`{"kind":"annotation","annotation":{"turn_id":"t1","keywords":["one"]}}`, `{"kind":"link","link":{"source":"t2","target":"t1","relation":"answers"}}`)))
	f.Add([]byte(importLines(impT1, `{"kind":"event","event":{"id":"e1","turn_ids":["ghost"]}}`)))
	f.Add([]byte(importLines(impT1, impT1)))
	f.Add([]byte(importHeader + "\n\n\r\n" + `{"kind":"turn","turn":{"id":"t1","text":"x","occurred_at":"0000-01-01T00:00:00Z"}}`))
	f.Add([]byte(`{"kind":"header","version":99}`))
	f.Add([]byte("{bad}\n"))
	f.Add([]byte(importLines(`{"kind":"event","event":{"id":"e1","turn_ids":["t1"],"start":"2023-05-08T00:00:00Z","end":"2023-05-01T00:00:00Z"}}`, impT1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := t.Context()
		m := open(t, higmem.Options{MaxTurnBytes: 4096})
		_, err := m.Import(ctx, sp, bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, higmem.ErrInvalidInput) && !errors.Is(err, higmem.ErrConflict) {
				t.Fatalf("err = %v; want ErrInvalidInput or ErrConflict", err)
			}
			if st, serr := m.Stats(ctx, sp); serr != nil || st.Turns != 0 || st.Events != 0 || st.Links != 0 {
				t.Fatalf("a refused import stored %+v (%v)", st, serr)
			}
			return
		}
		var out bytes.Buffer
		if err := m.Export(ctx, sp, &out); err != nil {
			t.Fatal(err)
		}
		m2 := open(t, higmem.Options{MaxTurnBytes: 4096})
		if _, err := m2.Import(ctx, sp, bytes.NewReader(out.Bytes())); err != nil {
			t.Fatalf("re-importing an export of what was imported: %v\n%s", err, out.Bytes())
		}
	})
}
