package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/server"
)

// runTTY runs the command as runCLI does, with stdin taken for a terminal
// on which the user types input.
func runTTY(t *testing.T, env map[string]string, input string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(envconfig.Load(func(k string) string { return env[k] }), strings.NewReader(input), &out, &errb)
	a.isTerminal = func() bool { return true }
	cmd := a.rootCommand()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		errb.WriteString(errorLine(err) + "\n")
		return out.String(), errb.String(), 1
	}
	return out.String(), errb.String(), 0
}

// countTurns returns how many turns `export` prints for the space of args.
func countTurns(t *testing.T, env map[string]string, args ...string) int {
	t.Helper()
	out, e, code := runCLI(t, env, append(args, "export")...)
	if code != 0 {
		t.Fatalf("export: %s", e)
	}
	return strings.Count(out, `"kind":"turn"`)
}

// TestDeleteAsksFirst: delete (of turns, or --all of the space) refuses
// without --yes when stdin is not a terminal, and asks on a terminal; only
// "y" or "yes" deletes. (serve revoke: TestServeKeysInPostgres.)
func TestDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	if _, e, code := runCLI(t, env, "-q", "ingest", exampleFile); code != 0 {
		t.Fatal(e)
	}
	n := countTurns(t, env)
	if n != 34 {
		t.Fatalf("%d turns exported, want 34", n)
	}
	for _, args := range [][]string{{"delete", "--all"}, {"delete", "S1:1"}, {"delete", "S1:1", "S1:2"}} {
		_, e, code := runCLI(t, env, args...)
		if code == 0 || !strings.Contains(e, "give --yes to confirm") {
			t.Errorf("%v without --yes: code %d, stderr %q", args, code, e)
		}
	}
	if got := countTurns(t, env); got != n {
		t.Fatalf("refused deletes deleted: %d turns left of %d", got, n)
	}
	for _, in := range []string{"", "\n", "n\n", "no\n", "nope\n"} {
		_, e, code := runTTY(t, env, in, "delete", "--all")
		if code == 0 || !strings.Contains(e, "delete every turn, event and record of space default/? This cannot be undone. [y/N]") ||
			!strings.Contains(e, "not confirmed: nothing was changed") {
			t.Errorf("answer %q: code %d, stderr %q", in, code, e)
		}
	}
	if got := countTurns(t, env); got != n {
		t.Fatalf("unconfirmed deletes deleted: %d turns left of %d", got, n)
	}
	if out, e, code := runTTY(t, env, "y\n", "delete", "S1:1"); code != 0 || !strings.Contains(out, "deleted S1:1") {
		t.Fatalf("confirmed delete: %d %q %q", code, out, e)
	}
	if out, e, code := runCLI(t, env, "delete", "--yes", "S1:2"); code != 0 || !strings.Contains(out, "deleted S1:2") {
		t.Fatalf("delete --yes: %d %q %q", code, out, e)
	}
	if got := countTurns(t, env); got != n-2 {
		t.Fatalf("%d turns left, want %d", got, n-2)
	}
	if out, e, code := runTTY(t, env, "YES\n", "delete", "--all"); code != 0 || !strings.Contains(out, "deleted space default/") {
		t.Fatalf("confirmed delete --all: %d %q %q", code, out, e)
	}
	if got := countTurns(t, env); got != 0 {
		t.Fatalf("%d turns left after delete --all", got)
	}
}

// TestReadCommandsCreateNothing: a command that reads (ask, search,
// events, history, profiles, export) or deletes, given a database that does
// not exist, fails saying so, and creates no file or folder.
func TestReadCommandsCreateNothing(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "typo", "dir", "x.db")
	out := filepath.Join(dir, "out.jsonl")
	for _, args := range [][]string{
		{"ask", "What is my dog called?"},
		{"search", "dog"},
		{"events"},
		{"events", "e1"},
		{"history"},
		{"profiles"},
		{"profiles", "Priya"},
		{"export"},
		{"export", "-o", out},
		{"delete", "--yes", "S1:1"},
		{"delete", "--all", "--yes"},
	} {
		_, e, code := runCLI(t, env, append([]string{"--db", db}, args...)...)
		if code == 0 || !strings.Contains(e, "no database at "+db) {
			t.Errorf("%v: code %d, stderr %q", args, code, e)
		}
		for _, p := range []string{filepath.Join(dir, "typo"), out} {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("%v created %s", args, p)
			}
		}
	}
	// The database named by HIGMEM_DB, in a folder that does not exist.
	if _, e, code := runCLI(t, env, "events"); code == 0 || !strings.Contains(e, "no database at") {
		t.Errorf("events on a new HIGMEM_DB: %d %q", code, e)
	}
	if _, err := os.Stat(env["HIGMEM_DB"]); err == nil {
		t.Fatal("events created HIGMEM_DB")
	}
	// Writes still create the database and its folder.
	if _, e, code := runCLI(t, env, "--db", db, "add", "I adopted a greyhound called Biscuit."); code != 0 {
		t.Fatalf("add: %s", e)
	}
	if out, e, code := runCLI(t, env, "--db", db, "search", "greyhound"); code != 0 || !strings.Contains(out, "Biscuit") {
		t.Fatalf("search after add: %d %q %q", code, out, e)
	}
}

// TestImportAndIngestReadBOMAndRefuseEmpty: a file that starts with a
// UTF-8 byte order mark is read by ingest and import; importing an empty
// file (or one of white space) is an error that says so, and stores
// nothing.
func TestImportAndIngestReadBOMAndRefuseEmpty(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	dir := t.TempDir()
	bom := []byte{0xEF, 0xBB, 0xBF}
	example, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	ingestFile := filepath.Join(dir, "bom.json")
	if err := os.WriteFile(ingestFile, append(bom, example...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, e, code := runCLI(t, env, "-q", "ingest", ingestFile); code != 0 || !strings.Contains(out, "34 turns added") {
		t.Fatalf("ingest of a file with a BOM: %d %q %q", code, out, e)
	}
	export, e, code := runCLI(t, env, "export")
	if code != 0 {
		t.Fatal(e)
	}
	importFile := filepath.Join(dir, "bom.jsonl")
	if err := os.WriteFile(importFile, append(bom, export...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, e, code := runCLI(t, env, "--user", "copy", "import", importFile); code != 0 || !strings.Contains(out, "imported 34 turns") {
		t.Fatalf("import of a file with a BOM: %d %q %q", code, out, e)
	}
	for name, data := range map[string]string{"empty": "", "blank": " \n\r\n\t\n", "bom only": string(bom), "bom and blank": string(bom) + "\n\n"} {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		out, e, code := runCLI(t, env, "--user", "empty", "import", f)
		if code == 0 || !strings.Contains(e, "import "+f+": the file is empty: nothing to import") {
			t.Errorf("import of a %s file: %d %q %q", name, code, out, e)
		}
	}
	var out, errb bytes.Buffer
	if code := run(func(k string) string { return env[k] }, []string{"--user", "empty", "import", "-"}, strings.NewReader(""), &out, &errb); code == 0 ||
		!strings.Contains(errb.String(), "import stdin: the file is empty") {
		t.Errorf("import of empty stdin: %d %q", code, errb.String())
	}
	if n := countTurns(t, env, "--user", "empty"); n != 0 {
		t.Errorf("%d turns imported from empty files", n)
	}
}

// TestFailedFetchLeavesNoFolders: `models fetch` that cannot download
// removes the folders it created on the way to the model's.
func TestFailedFetchLeavesNoFolders(t *testing.T) {
	t.Parallel()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no downloads in tests", http.StatusForbidden)
	}))
	defer refuse.Close()
	env := baseEnv(t)
	env["HIGMEM_MAVEN_REPO"] = refuse.URL
	dir := t.TempDir()
	models := filepath.Join(dir, "new", "models")
	_, e, code := runCLI(t, env, "--models-dir", models, "models", "fetch", "-q")
	if code == 0 || e == "" {
		t.Fatalf("fetch from a refusing repository: %d %q", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Fatalf("a failed fetch left %s behind", filepath.Join(dir, "new"))
	}
	// A models folder that existed stays, as does what it held.
	if err := os.MkdirAll(filepath.Join(models, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, env, "--models-dir", models, "models", "fetch", "-q"); code == 0 {
		t.Fatal("fetch succeeded")
	}
	if _, err := os.Stat(filepath.Join(models, "other")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(models, "e5-small-v2")); err == nil {
		t.Fatal("a failed fetch left the model folder behind")
	}
}

// TestErrorsSayHigmemOnce: the command line says "higmem:" once per error,
// however deep the engine's errors wrap each other.
func TestErrorsSayHigmemOnce(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	// An endpoint that refuses every call: the add cannot be built.
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"bad key","type":"invalid_request_error"}}`))
	}))
	defer refuse.Close()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	llm := map[string]string{"HIGMEM_LLM_BASE_URL": refuse.URL + "/v1", "HIGMEM_MEMORY_MODEL": "m", "HIGMEM_LLM_API_KEY": "k"}
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{llm, []string{"--mode", "default", "add", "I adopted a greyhound called Biscuit."}},
		{nil, []string{"import", bad}},
		{nil, []string{"ingest", bad}},
		{nil, []string{"--db", dir, "add", "x"}},
		{nil, []string{"--embedder", "e5", "add", "x"}},
		{nil, []string{"delete", "--yes", "nope"}},
	} {
		e2 := map[string]string{}
		for k, v := range env {
			e2[k] = v
		}
		for k, v := range c.env {
			e2[k] = v
		}
		_, e, _ := runCLI(t, e2, c.args...)
		for _, line := range strings.Split(e, "\n") {
			if strings.Count(line, "higmem:") > 1 {
				t.Errorf("%v: %q", c.args, line)
			}
		}
	}
}

// TestMCPHelpNamesEveryTool: `higmem mcp --help` names every tool the
// server offers (server.Tools, which TestToolsListsEveryTool checks
// against tools/list).
func TestMCPHelpNamesEveryTool(t *testing.T) {
	t.Parallel()
	out, e, code := runCLI(t, baseEnv(t), "mcp", "--help")
	if code != 0 {
		t.Fatal(e)
	}
	for _, tool := range append([]string{"get_profiles"}, server.Tools...) {
		if !strings.Contains(out, tool) {
			t.Errorf("mcp --help does not name %s", tool)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// queryFake embeds questions and passages differently, as e5-small-v2 does.
type queryFake struct{}

func (queryFake) Dim() int   { return 1 }
func (queryFake) ID() string { return "query-fake" }
func (queryFake) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{1}}, len(texts)), nil
}
func (queryFake) EmbedQuery(_ context.Context, texts []string) ([][]float32, error) {
	return slices.Repeat([][]float32{{-1}}, len(texts)), nil
}

// TestCLIEmbedderEmbedsQuestionsAsQueries: the embedder the commands
// give the engine (wrapped to announce long embeddings) keeps the model's
// query embedding, so that e5-small-v2 questions get "query: ", not
// "passage: ".
func TestCLIEmbedderEmbedsQuestionsAsQueries(t *testing.T) {
	t.Parallel()
	a := newApp(envconfig.Config{}, nil, io.Discard, io.Discard)
	e := a.announcing(queryFake{})
	qe, ok := e.(embed.QueryEmbedder)
	if !ok {
		t.Fatal("the wrapped embedder hides EmbedQuery: questions would be embedded as passages")
	}
	v, err := qe.EmbedQuery(t.Context(), []string{"when?"})
	if err != nil || len(v) != 1 || v[0][0] != -1 {
		t.Fatalf("EmbedQuery: %v %v", v, err)
	}
	v, err = e.Embed(t.Context(), []string{"a turn"})
	if err != nil || len(v) != 1 || v[0][0] != 1 {
		t.Fatalf("Embed: %v %v", v, err)
	}
	// A model that embeds questions as passages is not said to have a
	// query embedding.
	if _, ok := a.announcing(hashing.New(8)).(embed.QueryEmbedder); ok {
		t.Error("the wrapped embedder claims a query embedding its model does not have")
	}
}
