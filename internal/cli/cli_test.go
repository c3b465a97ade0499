package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/server"
)

// runCLI runs the command with env (nothing else of the process
// environment leaks in) and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(func(k string) string { return env[k] }, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func baseEnv(t *testing.T) map[string]string {
	dir := t.TempDir()
	return map[string]string{
		"HIGMEM_DB":         filepath.Join(dir, "m.db"),
		"HIGMEM_MODELS_DIR": filepath.Join(dir, "models"), // empty: BM25 only
		"HOME":              dir,
	}
}

const exampleFile = "../../examples/conversation.json"

func TestIngestAndAskOffline(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	out, errOut, code := runCLI(t, env, "ingest", exampleFile, "-q")
	if code != 0 {
		t.Fatalf("ingest: code %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "34 turns added") || !strings.Contains(errOut, "BM25 only") {
		t.Fatalf("ingest output:\n%s\nstderr:\n%s", out, errOut)
	}
	// Re-ingest is a no-op.
	out, _, code = runCLI(t, env, "ingest", exampleFile, "-q")
	if code != 0 || !strings.Contains(out, "0 turns added, 34 already stored") {
		t.Fatalf("re-ingest: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, env, "ask", "What is the name of Priya's dog?")
	if code != 0 || !strings.Contains(out, "[S2:1]") || !strings.Contains(out, "no LLM configured") {
		t.Fatalf("ask: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, env, "search", "--json", "greyhound Biscuit")
	if code != 0 {
		t.Fatalf("search: %d\n%s", code, out)
	}
	var res api.SearchResponse
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json: %v\n%s", err, out)
	}
	if !slices.Contains(res.IDs(), "S2:1") || len(res.Trace.Stages) == 0 {
		t.Fatalf("search result ids %v stages %v", res.IDs(), res.Trace.Stages)
	}
	out, _, code = runCLI(t, env, "events", "--turns")
	if code != 0 || !strings.Contains(out, "e1") || !strings.Contains(out, "[S1:1]") {
		t.Fatalf("events: %d\n%s", code, out)
	}
	// Export, then import into another user.
	exp := filepath.Join(t.TempDir(), "x.jsonl")
	if _, e, code := runCLI(t, env, "export", "-o", exp); code != 0 {
		t.Fatalf("export: %s", e)
	}
	out, e, code := runCLI(t, env, "import", "--user", "copy", exp)
	if code != 0 || !strings.Contains(out, "imported 34 turns") {
		t.Fatalf("import: %d %s %s", code, out, e)
	}
	out, _, code = runCLI(t, env, "delete", "--yes", "--user", "copy", "S1:1")
	if code != 0 || !strings.Contains(out, "deleted S1:1") {
		t.Fatalf("delete: %d %s", code, out)
	}
	out, _, code = runCLI(t, env, "history", "--user", "copy", "--kind", "turn")
	if code != 0 || !strings.Contains(out, "S1:1") {
		t.Fatalf("history: %d %s", code, out)
	}
}

func TestIngestErrorsNameTheProblem(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	dir := t.TempDir()
	cases := []struct {
		name, content, want string
	}{
		{"syntax.json", "{\"turns\": [\n  {\"speaker\": \"a\", \"text\": \"x\"},\n  {\"speaker\": \"b\" \"text\": \"y\"}\n]}", "line 3"},
		{"nospeaker.json", `{"turns": [{"speaker": "a", "text": "x"}, {"text": "y"}]}`, `line 1 (turn 2): field "speaker" is missing or empty`},
		{"nospeaker-lines.json", "{\"turns\": [\n  {\"speaker\": \"a\", \"text\": \"x\"},\n  {\"text\": \"y\"}\n]}", `line 3 (turn 2): field "speaker" is missing or empty`},
		{"wrongtype.jsonl", "{\"speaker\": \"a\", \"text\": \"x\"}\n{\"speaker\": \"a\", \"text\": 5}\n", `line 2: field "text": want a string, got a number`},
		{"unknown.jsonl", "{\"speaker\": \"a\", \"text\": \"x\"}\n{\"speaker\": \"a\", \"txt\": \"y\"}\n", `line 2: unknown field "txt"`},
		{"turns-number.json", `{"turns": 5}`, `line 1: field "turns": want an array, got a number`},
		{"session-clash.jsonl", `{"speaker": "a", "text": "x", "session": "1", "session_id": "2"}`, `"session" ("1") and "session_id" ("2") differ`},
		{"scalar.json", `"hello"`, `want a JSON object or array, got a string`},
		{"two-pretty-values.json", "{\n\"turns\": []\n}\n{}", `more JSON after the value that ends on line 3`},
		{"no-turns.json", `{"title": "x"}`, `without "turns"`},
		{"empty.json", "  ", "empty"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runCLI(t, env, "ingest", path)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: code %d, stderr %q, want it to mention %q", c.name, code, errOut, c.want)
		}
		for _, leak := range []string{"json.RawMessage", "Go struct", "TurnInput", "higmem: higmem:"} {
			if strings.Contains(errOut, leak) {
				t.Errorf("%s: stderr %q names %q", c.name, errOut, leak)
			}
		}
	}
	// Nothing was stored by the failed ingests: not even a database was
	// made, and a command that reads says so.
	if _, err := os.Stat(env["HIGMEM_DB"]); err == nil {
		t.Error("a failed ingest created the database")
	}
	if _, errOut, code := runCLI(t, env, "events"); code == 0 || !strings.Contains(errOut, "no database at") {
		t.Errorf("events after failed ingests: %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, env, "add", "hello"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := runCLI(t, env, "ask", "--mode", "paper", "q?"); code == 0 || !strings.Contains(errOut, "needs an LLM endpoint") {
		t.Errorf("paper mode without LLM: %d %s", code, errOut)
	}
}

// TestLLMPathThroughFakeServer runs ingest and ask with the real
// OpenAI-compatible client against a local fake server, and proves that the
// response cache makes a rerun cost zero HTTP calls.
func TestLLMPathThroughFakeServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"default", "paper"} {
		t.Run(mode, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScripted().Handler())
			env := baseEnv(t)
			env["HIGMEM_LLM_BASE_URL"] = srv.URL + "/v1"
			env["HIGMEM_MEMORY_MODEL"] = "fake-model"
			env["HIGMEM_MODE"] = mode

			out, errOut, code := runCLI(t, env, "ingest", exampleFile, "-q")
			if code != 0 {
				t.Fatalf("ingest: %d\n%s\n%s", code, out, errOut)
			}
			ingestCalls := srv.Calls()
			if ingestCalls == 0 {
				t.Fatal("ingest made no HTTP calls")
			}
			q := "Who looks after Biscuit when Priya travels to Lisbon?"
			out, errOut, code = runCLI(t, env, "ask", "--trace", q)
			if code != 0 || !strings.Contains(out, "Answer: ") || !strings.Contains(out, "LLM calls") {
				t.Fatalf("ask: %d\n%s\n%s", code, out, errOut)
			}
			askCalls := srv.Calls() - ingestCalls
			if askCalls == 0 {
				t.Fatal("ask made no HTTP calls")
			}

			// Same question again: answered from the cache.
			before := srv.Calls()
			out2, _, code := runCLI(t, env, "ask", "--trace", q)
			if code != 0 || srv.Calls() != before {
				t.Fatalf("cached ask made %d HTTP calls", srv.Calls()-before)
			}
			if answerLine(out2) != answerLine(out) {
				t.Fatalf("cached answer %q differs from %q", answerLine(out2), answerLine(out))
			}
			// Rebuild the memory from scratch: every prompt is the same, so
			// construction is free too.
			if _, e, code := runCLI(t, env, "delete", "--all", "--yes"); code != 0 {
				t.Fatal(e)
			}
			if _, e, code := runCLI(t, env, "ingest", exampleFile, "-q"); code != 0 {
				t.Fatal(e)
			}
			if srv.Calls() != before {
				t.Fatalf("re-ingest made %d HTTP calls, want 0 (cache)", srv.Calls()-before)
			}
			t.Logf("%s: ingest %d calls for 34 turns, ask %d calls", mode, ingestCalls, askCalls)
		})
	}
}

func answerLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Answer: ") {
			return l
		}
	}
	return ""
}

// TestIngestLoCoMoSample ingests part of a LoCoMo-format sample (the
// harness's test file) and asks one of its questions.
func TestIngestLoCoMoSample(t *testing.T) {
	t.Parallel()
	data := evalTestData
	env := baseEnv(t)
	out, errOut, code := runCLI(t, env, "ingest", data, "--sample", "0", "--max-turns", "10", "-q")
	if code != 0 || !strings.Contains(out, "conv-a → space default/: 10 turns added") {
		t.Fatalf("ingest: %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runCLI(t, env, "ask", "Which trail did Ann hike?")
	if code != 0 || !strings.Contains(out, "[D1:3]") {
		t.Fatalf("ask: %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, env, "ingest", data, "--sample", "99"); code == 0 || !strings.Contains(errOut, "no conversation \"99\"") {
		t.Fatalf("bad sample: %d %s", code, errOut)
	}
}

// TestCommandsAgainstServer runs the everyday commands with --server
// against a higmem server (the api client), keyed to one user.
func TestCommandsAgainstServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem, err := higmem.Open(ctx, higmem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	secret, key, err := server.NewKey("cli", []string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := server.ParseKeys([]byte(`{"keys":[` + mustJSON(t, key) + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(mem, server.Options{Keys: keys}))
	defer srv.Close()
	env := baseEnv(t)
	env["HIGMEM_SERVER"] = srv.URL
	env["HIGMEM_API_KEY"] = secret
	env["HIGMEM_USER"] = "alice"

	out, e, code := runCLI(t, env, "ingest", exampleFile, "-q")
	if code != 0 || !strings.Contains(out, "34 turns added") {
		t.Fatalf("ingest: %d %s %s", code, out, e)
	}
	out, _, code = runCLI(t, env, "ask", "What is the name of Priya's dog?")
	if code != 0 || !strings.Contains(out, "[S2:1]") {
		t.Fatalf("ask: %d %s", code, out)
	}
	out, _, code = runCLI(t, env, "events")
	if code != 0 || !strings.Contains(out, "e1") {
		t.Fatalf("events: %d %s", code, out)
	}
	// The data is in the server's memory, not in a local database.
	if st, _ := mem.Stats(ctx, higmem.Space{UserID: "alice"}); st.Turns != 34 {
		t.Fatalf("server memory holds %d turns", st.Turns)
	}
	// Another user is refused by the server.
	_, e, code = runCLI(t, env, "ask", "--user", "bob", "anything?")
	if code == 0 || !strings.Contains(e, "403") && !strings.Contains(strings.ToLower(e), "forbidden") {
		t.Fatalf("other user: %d %s", code, e)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServerKeyNamesTheUser checks that commands against a server use the
// API key's only user when no user is named, as a user of `higmem ask
// --server URL --api-key KEY` expects, and say what to do when the key has
// several.
func TestServerKeyNamesTheUser(t *testing.T) {
	t.Parallel()
	mem, err := higmem.Open(t.Context(), higmem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	aliceSecret, aliceKey, _ := server.NewKey("alice-laptop", []string{"alice"})
	twoSecret, twoKey, _ := server.NewKey("family", []string{"alice", "bob"})
	keys, err := server.ParseKeys([]byte(`{"keys":[` + mustJSON(t, aliceKey) + `,` + mustJSON(t, twoKey) + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(mem, server.Options{Keys: keys}))
	defer srv.Close()
	env := baseEnv(t)
	out, e, code := runCLI(t, env, "--server", srv.URL, "--api-key", aliceSecret, "add", "--speaker", "alice", "My dog is called Biscuit.")
	if code != 0 || !strings.Contains(out, "added 1 turn") {
		t.Fatalf("add: %d %s %s", code, out, e)
	}
	if st, _ := mem.Stats(t.Context(), higmem.Space{UserID: "alice"}); st.Turns != 1 {
		t.Fatalf("alice holds %d turns", st.Turns)
	}
	out, e, code = runCLI(t, env, "--server", srv.URL, "--api-key", aliceSecret, "ask", "What is my dog called?")
	if code != 0 || !strings.Contains(out, "Biscuit") {
		t.Fatalf("ask: %d %s %s", code, out, e)
	}
	_, e, code = runCLI(t, env, "--server", srv.URL, "--api-key", twoSecret, "ask", "What is my dog called?")
	if code == 0 || !strings.Contains(e, `API key "family" may use users [alice bob], not "default": pass --user`) || strings.Contains(e, "higmem: higmem:") {
		t.Fatalf("two-user key without --user: %d %s", code, e)
	}
	out, e, code = runCLI(t, env, "--server", srv.URL, "--api-key", twoSecret, "--user", "alice", "ask", "What is my dog called?")
	if code != 0 || !strings.Contains(out, "Biscuit") {
		t.Fatalf("two-user key with --user: %d %s %s", code, out, e)
	}
}

func TestErrorLine(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{
		errors.New("higmem: higmem: invalid input: x"):                                                             "higmem: invalid input: x",
		fmt.Errorf("import f: %w", errors.New("higmem: bad")):                                                      "higmem: import f: bad",
		fmt.Errorf("ingest f: %w", fmt.Errorf("higmem: add: %w", errors.New("higmem: build_batch call: timeout"))): "higmem: ingest f: add: build_batch call: timeout",
		errors.New("id \"a\x1b[2J\" not found\nsecond line"):                                                       "higmem: id \"a\\x1b[2J\" not found\nsecond line",
		&api.StatusError{StatusCode: 403, Code: "forbidden", Message: "no"}:                                        "higmem: server answered 403 forbidden: no",
	} {
		if got := errorLine(err); got != want {
			t.Errorf("errorLine(%q) = %q, want %q", err, got, want)
		}
	}
}

// TestBenchWriters runs `higmem bench --writers` on tiny sizes.
func TestBenchWriters(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	out, errOut, code := runCLI(t, env, "bench", "--writers", "--sizes", "120", "--queries", "3", "--foreign", "1,20", "--foreign-deletes", "2",
		"--writer-turns", "40", "--spaces", "5", "--space-turns", "20", "--cache-mib", "1", "--dir", t.TempDir(), "-q")
	if code != 0 {
		t.Fatalf("bench --writers: code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Version check", "| 120 |", "| 120 | add 20 | 5 |", "| 120 | delete 2 | 5 |", "| 120 | import 20 | 5 |", "| 4 | 1 | 40 |", "| 5 | 20 | 1 MiB |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := runCLI(t, env, "bench", "--writers", "--foreign", "x"); code == 0 || !strings.Contains(errOut, "--foreign") {
		t.Errorf("bad --foreign: code %d, %s", code, errOut)
	}
}
