package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/storecopy"
)

// exampleQuestions are the questions of examples/conversation.json.
func exampleQuestions(t *testing.T) []string {
	t.Helper()
	var f struct {
		Questions []struct{ Question string } `json:"questions"`
	}
	mustReadJSON(t, exampleFile, &f)
	var qs []string
	for _, q := range f.Questions {
		qs = append(qs, q.Question)
	}
	if len(qs) == 0 {
		t.Fatal("no questions in the example file")
	}
	return qs
}

// searchJSON runs `search --json q` and returns the result with what
// differs between two ingests of the same input (store times, timing)
// cleared.
func searchJSON(t *testing.T, env map[string]string, q string) higmem.Result {
	t.Helper()
	out, errOut, code := runCLI(t, env, "search", "--json", "--embedder", "hashing", q)
	if code != 0 {
		t.Fatalf("search %q: code %d\n%s", q, code, errOut)
	}
	var res higmem.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	res.Trace.Elapsed = 0
	for i := range res.Evidence {
		res.Evidence[i].Turn.RecordedAt = time.Time{}
	}
	return res
}

// The CLI with --db postgres://... ingests the example conversation and
// retrieves exactly what it retrieves from a SQLite file.
func TestPostgresCLIMatchesSQLite(t *testing.T) {
	t.Parallel()
	lite := baseEnv(t)
	pg := baseEnv(t)
	pg["HIGMEM_DB"] = pgtest.SchemaDSN(t)
	for _, env := range []map[string]string{lite, pg} {
		out, errOut, code := runCLI(t, env, "ingest", "--embedder", "hashing", "-q", exampleFile)
		if code != 0 {
			t.Fatalf("ingest into %s: code %d\n%s\n%s", env["HIGMEM_DB"], code, out, errOut)
		}
	}
	for _, q := range exampleQuestions(t) {
		want, got := searchJSON(t, lite, q), searchJSON(t, pg, q)
		if len(want.Evidence) == 0 {
			t.Errorf("%q: no evidence from SQLite", q)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%q: PostgreSQL result differs from SQLite (-sqlite +postgres):\n%s", q, d)
		}
	}
	evs := func(env map[string]string) string {
		out, errOut, code := runCLI(t, env, "events", "--json", "--embedder", "hashing")
		if code != 0 {
			t.Fatalf("events: code %d\n%s", code, errOut)
		}
		return out
	}
	decode := func(out string) []api.EventView {
		var r struct {
			Events []api.EventView `json:"events"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for i := range r.Events {
			r.Events[i].Event.CreatedAt, r.Events[i].Event.UpdatedAt = time.Time{}, time.Time{}
			for j := range r.Events[i].Turns {
				r.Events[i].Turns[j].RecordedAt = time.Time{}
			}
		}
		return r.Events
	}
	wantEvents, gotEvents := decode(evs(lite)), decode(evs(pg))
	if len(wantEvents) == 0 || !cmp.Equal(wantEvents, gotEvents) {
		t.Errorf("events differ (-sqlite +postgres):\n%s", cmp.Diff(wantEvents, gotEvents))
	}
}

// migrateJSON runs `migrate --json` and returns what it reports copied.
func migrateJSON(t *testing.T, from, to string) storecopy.Summary {
	t.Helper()
	out, errOut, code := runCLI(t, map[string]string{"HOME": t.TempDir()}, "migrate", "--json", "--from", from, "--to", to)
	if code != 0 {
		t.Fatalf("migrate %s -> %s: code %d\n%s\n%s", from, to, code, out, errOut)
	}
	var res struct{ Copied storecopy.Summary }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("migrate --json: %v\n%s", err, out)
	}
	return res.Copied
}

// SQLite -> PostgreSQL -> SQLite through `higmem migrate`: both copies
// report the same counts and checksum, which is also the checksum of the
// original file and of the final one, and the final file answers as the
// original does.
func TestMigrateRoundTripSQLitePostgres(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	a := env["HIGMEM_DB"]
	for _, args := range [][]string{
		{"ingest", "--embedder", "hashing", "--links", "-q", exampleFile},
		{"add", "--embedder", "hashing", "--user", "bob", "--agent", "helper", "--speaker", "bob", "I moved to Lisbon last week."},
		{"delete", "--yes", "--embedder", "hashing", "S1:3"},
	} {
		if out, errOut, code := runCLI(t, env, args...); code != 0 {
			t.Fatalf("%v: code %d\n%s\n%s", args, code, out, errOut)
		}
	}
	pg := pgtest.SchemaDSN(t)
	c := filepath.Join(t.TempDir(), "back.db")
	there := migrateJSON(t, a, pg)
	back := migrateJSON(t, pg, c)
	if there != back {
		t.Fatalf("round trip changed the content:\n  to PostgreSQL: %s\n  back:          %s", there, back)
	}
	if there.Spaces != 2 || there.Turns != 34 || there.Vectors == 0 || there.Changes == 0 || there.Annotations == 0 || there.Events == 0 {
		t.Errorf("copied %s: want 2 spaces, 34 turns and some of every derived record", there)
	}
	// Into a database that is not empty: refused, nothing written.
	out, errOut, code := runCLI(t, map[string]string{"HOME": t.TempDir()}, "migrate", "--from", a, "--to", pg)
	if code == 0 {
		t.Errorf("migrate into a non-empty database succeeded:\n%s", out)
	}
	if got := migrateJSON(t, pg, filepath.Join(t.TempDir(), "again.db")); got != there {
		t.Errorf("failed migrate changed the destination: %s, want %s (stderr of the failed run: %s)", got, there, errOut)
	}
	final := baseEnv(t)
	final["HIGMEM_DB"] = c
	for _, q := range exampleQuestions(t) {
		if d := cmp.Diff(searchJSON(t, env, q), searchJSON(t, final, q)); d != "" {
			t.Errorf("%q: migrated database answers differently (-original +migrated):\n%s", q, d)
		}
	}
}

func mustReadJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// `higmem serve --keys-db` on PostgreSQL: keys made with `serve keygen
// --keys-db` are accepted, by a server started before they were made too,
// listed by `serve keys`, and refused once `serve revoke` dropped them and
// the server re-read its keys; the memory lives in the same database.
func TestServeKeysInPostgres(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	env["HIGMEM_DB"] = pgtest.SchemaDSN(t)
	keygen := func(name, user string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, "serve", "keygen", "--keys-db", "--name", name, "--users", user, "--json")
		var kg struct {
			Key string `json:"key"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &kg) != nil || kg.Key == "" {
			t.Fatalf("keygen: %d %s %s", code, out, errOut)
		}
		return kg.Key
	}
	alice := keygen("alice-key", "alice")
	if _, errOut, code := runCLI(t, env, "serve", "--keys-db", "--keys-file", "k.json"); code == 0 || !strings.Contains(errOut, "one of") {
		t.Errorf("--keys-db with --keys-file: %d %s", code, errOut)
	}
	stderr := &syncBuffer{}
	srv := startCommand(t, env, strings.NewReader(""), io.Discard, stderr, "serve", "--addr", "127.0.0.1:0", "--keys-db", "--keys-refresh", "50ms")
	var base string
	for base == "" {
		if m := listenRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if srv.exited() {
			t.Fatalf("serve exited: %v\n%s", srv.err, stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	bob := keygen("bob-key", "bob") // after the server started
	ctx := t.Context()
	if _, err := api.NewClient(base, alice, nil).Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{ID: "x1", Speaker: "Alice", Text: "My greyhound Biscuit loves the beach."},
	}}); err != nil {
		t.Fatalf("add with alice's key: %v", err)
	}
	if _, err := api.NewClient(base, bob, nil).Stats(ctx, api.Scope{UserID: "bob"}); err != nil {
		t.Fatalf("bob's key made after the server started: %v", err)
	}
	if _, err := api.NewClient(base, bob, nil).Stats(ctx, api.Scope{UserID: "alice"}); !api.IsStatus(err, http.StatusForbidden) {
		t.Fatalf("bob's key on alice: %v", err)
	}
	out, _, code := runCLI(t, env, "serve", "keys", "--json")
	if code != 0 || !strings.Contains(out, `"alice-key"`) || !strings.Contains(out, `"bob-key"`) || strings.Contains(out, alice) {
		t.Fatalf("serve keys: %d %s", code, out)
	}
	// Revoking cannot be undone: without --yes (and no terminal to ask
	// on) it is refused, and the key still works.
	if _, errOut, code := runCLI(t, env, "serve", "revoke", "alice-key"); code == 0 || !strings.Contains(errOut, "give --yes to confirm") {
		t.Fatalf("revoke without --yes: %d %s", code, errOut)
	}
	if _, err := api.NewClient(base, alice, nil).Key(ctx); err != nil {
		t.Fatalf("the key stopped working after a refused revoke: %v", err)
	}
	if _, errOut, code := runCLI(t, env, "serve", "revoke", "--yes", "alice-key"); code != 0 {
		t.Fatalf("revoke: %s", errOut)
	}
	if _, errOut, code := runCLI(t, env, "serve", "revoke", "--yes", "alice-key"); code == 0 || !strings.Contains(errOut, "no key named") {
		t.Errorf("second revoke: %d %s", code, errOut)
	}
	// The server re-reads its keys every --keys-refresh: wait for the
	// revocation to show (the deadline only guards against a hang).
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := api.NewClient(base, alice, nil).Stats(ctx, api.Scope{UserID: "alice"})
		if api.IsStatus(err, http.StatusUnauthorized) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked key still accepted after a minute: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := srv.stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	out, errOut, code := runCLI(t, env, "--user", "alice", "search", "--json", "Biscuit")
	if code != 0 || !strings.Contains(out, `"x1"`) {
		t.Fatalf("turn added through the server not in PostgreSQL: %d %s %s", code, out, errOut)
	}
}

// A password in HIGMEM_DB never shows in help (the --db default) or where
// the database is printed.
func TestDatabasePasswordMasked(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HIGMEM_DB": "postgres://u:s3cret@127.0.0.1:1/db"}
	a := newApp(envconfig.Load(func(k string) string { return env[k] }), strings.NewReader(""), io.Discard, io.Discard)
	f := a.rootCommand().PersistentFlags().Lookup("db")
	if f.DefValue != "postgres://u:xxxxx@127.0.0.1:1/db" || f.Value.String() != env["HIGMEM_DB"] {
		t.Errorf("--db shows %q as its default (value %q)", f.DefValue, f.Value.String())
	}
	if got := displayDB("postgresql://u:s3cret@h/db?sslmode=require"); strings.Contains(got, "s3cret") {
		t.Errorf("displayDB = %q", got)
	}
}
