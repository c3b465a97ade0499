package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store/sqlite"
)

// TestDeleteForgetsThroughEveryDoor adds a secret through each door of the
// server (POST /v1/import, POST /v1/turns, the MCP add_memory tool),
// deletes each (DELETE /v1/turns/{id}, the MCP delete_memory tool), and
// then finds none of them in any answer of the server nor in the bytes of
// the SQLite files: in offline mode and with a scripted model whose replies
// are cached in the same database.
func TestDeleteForgetsThroughEveryDoor(t *testing.T) {
	secrets := map[string]string{"imp": "tr0ub4dor", "rest": "hunter2", "mcp": "swordfish9"}
	for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "doors.db")
			st, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			o := higmem.Options{Store: st, Mode: mode, Embedder: hashing.New(64), BatchSize: 2}
			if mode != higmem.ModeOffline {
				backend, err := cache.OpenSQLite(ctx, st.DB())
				if err != nil {
					t.Fatal(err)
				}
				o.MemoryModel = cache.New(llmtest.NewScripted(), backend, cache.Options{Model: "scripted"})
			}
			mem := newMem(t, o)
			_, ts, _ := start(t, mem, Options{DefaultSpace: higmem.Space{UserID: "alice"}})
			c := api.NewClient(ts.URL, aliceKey, nil)
			alice := api.Scope{UserID: "alice"}

			// Import: an export made elsewhere.
			src := newMem(t, higmem.Options{})
			other := higmem.Space{UserID: "x"}
			if _, err := src.Add(ctx, other, []higmem.TurnInput{
				{ID: "i1", Speaker: "Alice", Text: "We moved the server room to the second floor."},
				{ID: "imp", Speaker: "Alice", Text: "The admin passphrase for the server room is " + secrets["imp"] + "."},
				{ID: "i2", Speaker: "Bob", Text: "Good, the second floor has better cooling for the server room."},
			}); err != nil {
				t.Fatal(err)
			}
			var exp bytes.Buffer
			if err := src.Export(ctx, other, &exp); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Import(ctx, alice, &exp); err != nil {
				t.Fatal(err)
			}
			// REST add.
			if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
				{ID: "r1", Speaker: "Alice", Text: "I opened an account at the river bank downtown."},
				{ID: "rest", Speaker: "Alice", Text: "My bank password is " + secrets["rest"] + ", keep it secret."},
				{ID: "r2", Speaker: "Bob", Text: "I will not tell anyone about your bank account."},
			}}); err != nil {
				t.Fatal(err)
			}
			// MCP add.
			cs, err := connectHTTP(t, ts.URL, aliceKey)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, a := range []map[string]any{
				{"id": "m1", "speaker": "Bob", "text": "The wifi at the cabin needs a password too."},
				{"id": "mcp", "speaker": "Bob", "text": "The cabin wifi password is " + secrets["mcp"] + "."},
			} {
				if e := callTool(t, cs, ToolAdd, a, &map[string]any{}); e != "" {
					t.Fatal(e)
				}
			}

			show := func() map[string]string {
				out := map[string]string{}
				js := func(name string, v any, err error) {
					t.Helper()
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					b, _ := json.Marshal(v)
					out[name] = string(b)
				}
				evs, err := c.Events(ctx, alice)
				js("GET /v1/events", evs, err)
				h, err := c.History(ctx, api.HistoryRequest{Scope: alice})
				js("GET /v1/history", h, err)
				tl, err := c.Turns(ctx, api.ListTurnsRequest{Scope: alice})
				js("GET /v1/turns", tl, err)
				var e bytes.Buffer
				err = c.Export(ctx, alice, &e)
				js("GET /v1/export", e.String(), err)
				var le map[string]any
				if msg := callTool(t, cs, ToolEvents, map[string]any{}, &le); msg != "" {
					t.Fatal(msg)
				}
				js("MCP list_events", le, nil)
				for _, q := range []string{"What is the bank password?", "What is the wifi password?", "What is the admin passphrase?"} {
					r, err := c.Search(ctx, api.SearchRequest{UserID: "alice", Question: q})
					js("POST /v1/search "+q, r, err)
				}
				raw := ""
				for _, p := range []string{path, path + "-wal", path + "-journal"} {
					b, err := os.ReadFile(p)
					if err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					raw += string(b)
				}
				out["database files"] = raw
				return out
			}
			before := show()
			for id, s := range secrets {
				for _, where := range []string{"GET /v1/events", "GET /v1/turns", "GET /v1/export", "database files"} {
					if !strings.Contains(strings.ToLower(before[where]), s) {
						t.Fatalf("before deleting %s, %s does not hold %q: the test proves nothing", id, where, s)
					}
				}
			}

			if _, err := c.DeleteTurn(ctx, alice, "imp"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.DeleteTurn(ctx, alice, "rest"); err != nil {
				t.Fatal(err)
			}
			if e := callTool(t, cs, ToolDelete, map[string]any{"turn_id": "mcp"}, &map[string]any{}); e != "" {
				t.Fatal(e)
			}
			after := show()
			for where, text := range after {
				for id, s := range secrets {
					if n := strings.Count(strings.ToLower(text), s); n > 0 {
						t.Errorf("after deleting %s, %s holds %q %d times", id, where, s, n)
					}
				}
			}
			for _, id := range []string{"i1", "r1", "m1"} {
				if !strings.Contains(after["GET /v1/turns"], `"`+id+`"`) {
					t.Errorf("turn %s is gone too", id)
				}
			}
		})
	}
}
