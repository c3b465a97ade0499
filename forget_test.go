package higmem_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

// secret is the word that must be found nowhere after its turn is deleted.
const secret = "hunter2"

// secretTurns is a small conversation with one turn to forget ("s1").
var secretTurns = []higmem.TurnInput{
	{ID: "b1", SessionID: "S1", Speaker: "Alice", Text: "I opened a new account at the river bank downtown yesterday.", Time: "1:00 pm on 8 May, 2023"},
	{ID: "b2", SessionID: "S1", Speaker: "Bob", Text: "Nice, which bank did you pick for the account?", Time: "1:01 pm on 8 May, 2023"},
	{ID: "s1", SessionID: "S1", Speaker: "Alice", Text: "My bank password is " + secret + ", please keep it secret. I love my new flat in Hunter2ville.", Time: "1:02 pm on 8 May, 2023"},
	{ID: "b3", SessionID: "S1", Speaker: "Bob", Text: "I will not tell anyone about your bank account.", Time: "1:03 pm on 8 May, 2023"},
	{ID: "h1", SessionID: "S2", Speaker: "Alice", Text: "Let's plan the hiking trip to the mountains next weekend.", Time: "9:00 am on 20 May, 2023"},
	{ID: "h2", SessionID: "S2", Speaker: "Bob", Text: "Great, I will bring the tent and the maps for hiking.", Time: "9:01 am on 20 May, 2023"},
}

// forgetBackend is a store with an LLM cache backend beside it, and a way
// to read every byte the backend keeps.
type forgetBackend struct {
	store store.Store
	cache cache.Backend
	// raw returns how many times secret occurs in everything the backend
	// stores (files, tables); nil when it keeps nothing outside the
	// process.
	raw func(t *testing.T) int
}

func memBackend(t *testing.T) forgetBackend {
	return forgetBackend{store: memstore.New(), cache: cache.NewMemory()}
}

func sqliteBackend(t *testing.T) forgetBackend {
	path := filepath.Join(t.TempDir(), "forget.db")
	st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := cache.OpenSQLite(t.Context(), st.DB())
	if err != nil {
		t.Fatal(err)
	}
	return forgetBackend{store: st, cache: c, raw: func(t *testing.T) int {
		n := 0
		for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
			b, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			n += bytes.Count(bytes.ToLower(b), []byte(secret))
		}
		return n
	}}
}

func postgresBackend(t *testing.T) forgetBackend {
	dsn, schema := pgtest.Schema(t)
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := cache.OpenPostgres(t.Context(), st.Pool())
	if err != nil {
		t.Fatal(err)
	}
	return forgetBackend{store: st, cache: c, raw: func(t *testing.T) int {
		// Every table of the schema, every row as text (bytea columns in
		// escape form, where ASCII stays as it is).
		rows, err := st.Pool().Query(t.Context(), `SELECT c.table_name, string_agg(
			CASE WHEN c.data_type = 'bytea' THEN format('coalesce(encode(%I, ''escape''), '''')', c.column_name)
			ELSE format('coalesce(%I::text, '''')', c.column_name) END, ' || '' '' || ')
			FROM information_schema.columns c WHERE c.table_schema = $1 GROUP BY c.table_name`, schema)
		if err != nil {
			t.Fatal(err)
		}
		exprs := map[string]string{}
		for rows.Next() {
			var table, expr string
			if err := rows.Scan(&table, &expr); err != nil {
				t.Fatal(err)
			}
			exprs[table] = expr
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(exprs) < 7 {
			t.Fatalf("found %d tables in schema %s, want higmem's and llm_cache", len(exprs), schema)
		}
		n := 0
		for table, expr := range exprs {
			var k int
			q := fmt.Sprintf(`SELECT count(*) FROM %s.%s WHERE strpos(lower(%s), $1) > 0`, schema, table, expr)
			if err := st.Pool().QueryRow(t.Context(), q, secret).Scan(&k); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			if k > 0 {
				t.Logf("table %s: %d rows hold %q", table, k, secret)
			}
			n += k
		}
		return n
	}}
}

// everything returns all a memory shows of a space: turns, annotations,
// events, history, the export and an answer to a question about the
// secret.
func everything(t *testing.T, m *higmem.Memory) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	js := func(name string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	turns, err := m.List(ctx, sp, higmem.ListOptions{})
	js("turns", turns, err)
	anns, err := m.Annotations(ctx, sp, nil)
	js("annotations", anns, err)
	evs, err := m.Events(ctx, sp)
	js("events", evs, err)
	hist, err := m.History(ctx, sp, "", "")
	js("history", hist, err)
	ans, err := m.Ask(ctx, sp, "What is Alice's bank password?", higmem.RetrieveOptions{})
	js("ask", ans, err)
	var exp bytes.Buffer
	err = m.Export(ctx, sp, &exp)
	js("export", exp.String(), err)
	ps, err := m.Profiles(ctx, sp, higmem.ProfileOptions{})
	js("profiles", ps, err)
	return out
}

// secretRecords returns the profile records of the space that hold the
// secret (what a model stated of the turn that says it).
func secretRecords(t *testing.T, s store.Store) []store.ProfileRecord {
	t.Helper()
	rs, err := s.ListProfileRecords(t.Context(), sp, "")
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(rs, func(r store.ProfileRecord) bool {
		return !strings.Contains(strings.ToLower(r.Value), secret) && !slices.Contains(r.TurnIDs, "s1")
	})
}

// TestDeleteForgets adds a turn holding a secret, builds memory, deletes
// the turn and then finds the secret nowhere: not in what the API shows
// (events, annotations, history, export, answers, profiles), not in the LLM
// cache, and not in the bytes the store keeps (SQLite's database and log
// files, every PostgreSQL table, profile records included), in offline mode
// and with a (scripted) model. Profile records stating the secret are
// present before the delete in every mode: stated by the model in default
// mode and in paper mode (with its profile layer on), and stored as a
// model would have (or an import) in offline mode.
func TestDeleteForgets(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) forgetBackend
	}{
		{"memstore", memBackend},
		{"sqlite", sqliteBackend},
		{"postgres", postgresBackend},
	}
	for _, be := range backends {
		for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper} {
			t.Run(be.name+"/"+string(mode), func(t *testing.T) {
				ctx := t.Context()
				b := be.open(t)
				o := higmem.Options{Store: b.store, Mode: mode, Embedder: hashing.New(64), BatchSize: 3, PaperProfiles: true}
				var c *cache.Cache
				if mode != higmem.ModeOffline {
					c = cache.New(llmtest.NewScripted(), b.cache, cache.Options{Model: "scripted"})
					meter := llm.NewMeter(nil)
					o.MemoryModel = meter.Wrap(llm.RoleMemory, "scripted", c)
				}
				m := open(t, o)
				addRes, err := m.Add(ctx, sp, secretTurns)
				if err != nil {
					t.Fatal(err)
				}
				if mode == higmem.ModeOffline {
					// No model states profile facts offline: store one as a
					// model would have.
					err := b.store.Update(ctx, func(tx store.Tx) error {
						return tx.PutProfileRecord(ctx, sp, store.ProfileRecord{ID: "p-secret", Entity: "Alice", Attribute: "home",
							Value: "Hunter2ville", TurnIDs: []string{"s1", "b1"}, Producer: "llm:default:test"})
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if rs := secretRecords(t, b.store); len(rs) == 0 {
					evs, _ := m.Events(ctx, sp)
					for _, e := range evs {
						t.Logf("event %s %q %v", e.Event.ID, e.Event.Title, e.Event.TurnIDs)
					}
					all, _ := b.store.ListProfileRecords(ctx, sp, "")
					t.Logf("records %+v", all)
					for _, c := range addRes.Calls {
						t.Logf("call %s %s %s cached=%v", c.Operation, c.Check, c.Error, c.Cached)
					}
					t.Logf("warnings %q", addRes.Warnings)
					t.Fatalf("before the delete, no profile record holds %q or cites s1: the test proves nothing for them", secret)
				}
				before := everything(t, m)
				for _, where := range []string{"turns", "events", "history", "export", "profiles"} {
					if !strings.Contains(strings.ToLower(before[where]), secret) {
						t.Fatalf("before the delete, %s does not hold %q: the test proves nothing\n%s", where, secret, before[where])
					}
				}
				if b.raw != nil && b.raw(t) == 0 {
					t.Fatalf("before the delete, the store's bytes do not hold %q: the test proves nothing", secret)
				}

				if err := m.Delete(ctx, sp, "s1"); err != nil {
					t.Fatal(err)
				}
				if rs := secretRecords(t, b.store); len(rs) != 0 {
					t.Errorf("after the delete, profile records hold %q or cite s1: %+v", secret, rs)
				}
				after := everything(t, m)
				for where, s := range after {
					if strings.Contains(strings.ToLower(s), secret) {
						t.Errorf("after the delete, %s holds %q:\n%s", where, secret, s)
					}
				}
				if !strings.Contains(after["history"], `"action":"delete"`) || !strings.Contains(after["history"], `"id":"s1"`) {
					t.Errorf("the history does not record the deletion of s1:\n%s", after["history"])
				}
				if !strings.Contains(after["events"], `"b1"`) || !strings.Contains(after["turns"], `"b3"`) {
					t.Errorf("the other turns lost their events:\n%s", after["events"])
				}
				if c != nil {
					if n, err := c.Forget(ctx, []string{secret}); err != nil || n != 0 {
						t.Errorf("LLM cache: %d entries still held %q (%v)", n, secret, err)
					}
				}
				if b.raw != nil {
					if n := b.raw(t); n != 0 {
						t.Errorf("the store's bytes hold %q %d times after the delete", secret, n)
					}
				}
				// A fresh memory on the same store (nothing cached in
				// the process) sees the same.
				m2 := open(t, higmem.Options{Store: b.store, Mode: higmem.ModeOffline, Embedder: hashing.New(64)})
				for where, s := range everything(t, m2) {
					if strings.Contains(strings.ToLower(s), secret) {
						t.Errorf("reopened, %s holds %q", where, secret)
					}
				}
			})
		}
	}
}

// TestDeletesLeaveNoFactOfADeletedTurn: an event a model wrote facts for is
// rebuilt by rules after a first delete; a second delete of another member
// must still take the facts citing that turn with it, so that every fact
// cites a live turn and an export imports again (it did not: the rebuilt
// event's producer was the rules', whose facts were left alone).
func TestDeletesLeaveNoFactOfADeletedTurn(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: llmtest.NewScripted()})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	// An event with facts citing at least two of its members.
	evs, err := m.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	var victims []string
	for _, ev := range evs {
		cited := map[string]bool{}
		for _, f := range ev.Event.Facts {
			if f.TurnID != "" && slices.Contains(ev.Event.TurnIDs, f.TurnID) {
				cited[f.TurnID] = true
			}
		}
		if len(cited) >= 2 && len(ev.Event.TurnIDs) >= 3 {
			for _, id := range ev.Event.TurnIDs {
				if cited[id] && len(victims) < 2 {
					victims = append(victims, id)
				}
			}
			break
		}
	}
	if len(victims) < 2 {
		t.Fatalf("no event with facts citing two of its turns: %+v", evs)
	}
	for _, id := range victims {
		if err := m.Delete(ctx, sp, id); err != nil {
			t.Fatal(err)
		}
	}
	evs, err = m.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		for _, f := range ev.Event.Facts {
			if slices.Contains(victims, f.TurnID) {
				t.Errorf("event %s keeps fact %q citing deleted turn %s", ev.Event.ID, f.Text, f.TurnID)
			}
		}
	}
	var buf bytes.Buffer
	if err := m.Export(ctx, sp, &buf); err != nil {
		t.Fatal(err)
	}
	other := higmem.Space{UserID: "u2"}
	if _, err := m.Import(ctx, other, &buf); err != nil {
		t.Errorf("the export of the space after the deletes does not import: %v", err)
	}
}
