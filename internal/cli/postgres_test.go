package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/storecopy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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
	var wantEvents, gotEvents []higmem.Event
	if err := json.Unmarshal([]byte(evs(lite)), &wantEvents); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(evs(pg)), &gotEvents); err != nil {
		t.Fatal(err)
	}
	for _, es := range [][]higmem.Event{wantEvents, gotEvents} {
		for i := range es {
			es[i].CreatedAt, es[i].UpdatedAt = time.Time{}, time.Time{}
		}
	}
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
	env := baseEnv(t)
	a := env["HIGMEM_DB"]
	for _, args := range [][]string{
		{"ingest", "--embedder", "hashing", "--links", "-q", exampleFile},
		{"add", "--embedder", "hashing", "--user", "bob", "--agent", "helper", "--speaker", "bob", "I moved to Lisbon last week."},
		{"delete", "--embedder", "hashing", "S1:3"},
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
