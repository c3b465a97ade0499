package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputAtTheCLI runs commands with bad flags, arguments and files:
// each fails with a message naming the problem (no Go type or function, no
// storage wording, one "higmem:" prefix, no time layout), writes nothing,
// and the database keeps working.
func TestBadInputAtTheCLI(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	if out, e, code := runCLI(t, env, "ingest", exampleFile, "-q"); code != 0 {
		t.Fatalf("ingest: %s %s", out, e)
	}
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ghost := file("ghost.jsonl", `{"kind":"header","version":1}`+"\n"+`{"kind":"annotation","annotation":{"turn_id":"ghost"}}`+"\n")
	garbage := file("garbage.jsonl", "not json\n")
	bigIngest := file("big.jsonl", `{"speaker":"a","text":"hello"}`+"\n"+`{"speaker":"b","text":"`+strings.Repeat("w", 3<<10)+`"}`+"\n")
	dangling := file("dangling.jsonl", `{"kind":"header","version":1}`+"\n"+`{"kind":"turn","turn":{"id":"z1","speaker":"a","text":"x"}}`+"\n"+`{"kind":"event","event":{"id":"e99","turn_ids":["z1","ghost"]}}`+"\n")
	state := func() string {
		events, _, _ := runCLI(t, env, "--json", "events", "--turns")
		history, _, _ := runCLI(t, env, "--json", "history")
		return events + history
	}
	before := state()
	long := strings.Repeat("i", 300)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ask", "--k-turn", "1.5", "q?"}, `--k-turn: want an integer, got "1.5"`},
		{[]string{"ask", "--k-turn", "-1", "q?"}, "k_turn: want 0 (the default) to 1000, got -1"},
		{[]string{"search", "--max-evidence", "5000", "q?"}, "max_evidence is 5000, over the limit of 1000"},
		{[]string{"ask", "--as-of", "yesterday", "q?"}, `"yesterday" is not a time: want RFC 3339`},
		{[]string{"ask", "--json=maybe", "q?"}, `--json: want true or false, got "maybe"`},
		{[]string{"ask", "   "}, "question is required"},
		{[]string{"ask", "???"}, `question "???" has no words to search for`},
		{[]string{"search", strings.Repeat("q", 9000)}, "question is 9000 bytes, over the limit of 8192"},
		{[]string{"ask"}, "accepts 1 arg(s), received 0"},
		{[]string{"events", "e999"}, `event "e999" not found in space user "default"`},
		{[]string{"--agent", "bot", "events", "e1"}, `event "e1" not found in space user "default", agent "bot"`},
		{[]string{"delete", "--yes", "nope"}, `turn "nope" not found in space user "default"`},
		{[]string{"delete"}, "name turn ids, or give --all"},
		{[]string{"delete", "--all", "S1:1"}, "name turn ids, or give --all"},
		{[]string{"add", "  "}, "turn 1: empty text"},
		{[]string{"add", "--id", long, "text"}, "turn 1 id is longer than 256 bytes"},
		{[]string{"add", "--id", "S1:1", "different text"}, `conflicting turn with the same id`},
		{[]string{"--user", "", "ask", "q?"}, "user_id is required"},
		{[]string{"--user", "a\tb", "ask", "q?"}, "user_id contains control characters"},
		{[]string{"history", "--kind", "turns"}, `kind: want event, annotation, link, turn or profile, got "turns"`},
		{[]string{"import", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{[]string{"import", garbage}, "line 1"},
		{[]string{"import", ghost}, `"ghost"`},
		{[]string{"import", dangling}, `line 3: event "e99" names turn "ghost", which is neither in the import nor stored`},
		{[]string{"--max-turn-kib", "2", "add", strings.Repeat("w", 3<<10)}, "turn 1: text is 3072 bytes, over the limit of 2048 bytes per turn: cut or split that turn, or raise the cap with --max-turn-kib N"},
		{[]string{"--max-turn-kib", "2", "import", bigTurnExport(t, dir)}, "over the limit of 2048 bytes per turn"},
		{[]string{"--max-turn-kib", "2", "ingest", "-q", bigIngest}, "turn 2: text is 3072 bytes, over the limit of 2048 bytes per turn (cut or split that turn in the file, or raise the cap with --max-turn-kib N (in KiB, -1 for no limit), and rerun"},
		{[]string{"--max-turn-kib", "0", "add", "x"}, "--max-turn-kib 0 would refuse every turn"},
		{[]string{"--mode", "fast", "ask", "q?"}, "fast"},
		{[]string{"--embedder", "bert", "ask", "q?"}, `unknown --embedder "bert"`},
		{[]string{"--embedder", "e5", "ask", "q?"}, "e5-small-v2 is not in " + env["HIGMEM_MODELS_DIR"] + ": run `higmem models fetch --model e5-small-v2`"},
		{[]string{"--embedder", "e5-int8", "ask", "q?"}, "e5-small-v2 is not in " + env["HIGMEM_MODELS_DIR"] + ": run `higmem models fetch --model e5-small-v2`"},
		{[]string{"models", "fetch", "--model", "bert"}, `--model "bert": want e5-small-v2 or all-MiniLM-L6-v2`},
		{[]string{"export", "-o", filepath.Join(dir, "no", "such", "dir", "x.jsonl")}, "no such file or directory"},
		{[]string{"eval", "locomo", "--systems", "offline", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"eval", "locomo", "--systems", "offline"}, "no LoCoMo file given: pass FILE"},
		{[]string{"serve", "--addr", "0.0.0.0:0", "--no-auth"}, "--no-auth is only allowed on a loopback address"},
		{[]string{"serve", "--request-timeout", "soon"}, `--request-timeout: want a duration such as 90s, 2m or 1h30m, got "soon"`},
		{[]string{"ask", "--server", "http://127.0.0.1:1", "q?"}, "127.0.0.1:1"},
	} {
		out, errOut, code := runCLI(t, env, tc.args...)
		if code == 0 {
			t.Errorf("%q succeeded:\n%s", tc.args, out)
			continue
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: stderr %q, want it to contain %q", tc.args, errOut, tc.want)
		}
		for _, leak := range []string{"higmem: higmem:", "sqlite:", "store: ", "memstore", "Go struct", "json.RawMessage", "strconv.", "2006-01-02T15:04:05Z07:00", "TurnInput"} {
			if strings.Contains(errOut, leak) {
				t.Errorf("%q: stderr %q names %q", tc.args, errOut, leak)
			}
		}
		if strings.Count(errOut, "\nhigmem: ")+strings.Count("\n"+errOut, "\nhigmem: ") > 2 && !strings.Contains(errOut, "embedding model") {
			t.Errorf("%q: several error lines:\n%s", tc.args, errOut)
		}
	}
	if after := state(); after != before {
		t.Fatalf("bad commands changed the memory:\nbefore %s\nafter %s", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Fatal("a failed export left a directory behind")
	}
	if out, _, code := runCLI(t, env, "ask", "What is the name of Priya's dog?"); code != 0 || !strings.Contains(out, "[S2:1]") {
		t.Fatalf("the database after bad input: %d %s", code, out)
	}
}

// bigTurnExport writes an export holding one 3 KiB turn into dir.
func bigTurnExport(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "bigturn.jsonl")
	data := `{"kind":"header","version":1}` + "\n" + `{"kind":"turn","turn":{"id":"big","speaker":"a","text":"` + strings.Repeat("w", 3<<10) + `"}}` + "\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
