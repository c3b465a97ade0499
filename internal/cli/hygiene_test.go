package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/envconfig"
)

func TestSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain text, ünïcode → ok":   "plain text, ünïcode → ok",
		"\x1b[31mred\x1b[0m":         `\x1b[31mred\x1b[0m`,
		"a\nb\r\tc":                  `a\nb\r\tc`,
		"bell\a del\x7f":             `bell\x07 del\x7f`,
		"c1 \u009b31m":               `c1 \u009b31m`,
		"bidi \u202egnp.exe":         `bidi \u202egnp.exe`,
		"line\u2028sep":              `line\u2028sep`,
		"bad utf8 \xff\xfe":          `bad utf8 \xff\xfe`,
		"\x1b]8;;http://evil\x1b\\x": `\x1b]8;;http://evil\x1b\x`,
	} {
		if got := safe(in); got != want {
			t.Errorf("safe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := safeLines("one \x1b[2J\ntwo"); got != "one \\x1b[2J\ntwo" {
		t.Errorf("safeLines: %q", got)
	}
}

// TestHumanOutputEscapesStoredText stores terminal escape sequences in
// turns, speakers, ids, sessions and event titles, and checks that no human
// output of any command prints them raw, while --json stays exact.
func TestHumanOutputEscapesStoredText(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	const esc = "\x1b[2J\x1b]0;pwned\x07"
	dir := t.TempDir()
	conv := filepath.Join(dir, "c.jsonl")
	lines := []string{
		mustJSON(t, api.TurnInput{ID: "x1", SessionID: "s1", Speaker: "Mallory" + esc, Text: "my password vault is " + esc + " in the attic", Time: "2024-05-01T10:00:00Z"}),
		mustJSON(t, api.TurnInput{ID: "x2", Speaker: "Bob", Text: "which attic vault\u202e?", Time: "2024-05-01T10:01:00Z"}),
	}
	if err := os.WriteFile(conv, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var outputs []string
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		outputs = append(outputs, out, errOut)
		return out
	}
	cli("ingest", conv, "-q")
	cli("add", "--speaker", "Eve"+esc, "--id", "x3", "the attic vault has a red door"+esc)
	// An event whose title and summary hold the sequence, through import.
	exp := filepath.Join(dir, "x.jsonl")
	cli("export", "-o", exp)
	b, err := os.ReadFile(exp)
	if err != nil {
		t.Fatal(err)
	}
	var rewritten []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if ev, ok := rec["event"].(map[string]any); ok {
			ev["title"] = "Vault " + esc
			ev["summary"] = "summary " + esc
			ev["keywords"] = []string{"vault" + esc}
		}
		rewritten = append(rewritten, mustJSON(t, rec))
	}
	if err := os.WriteFile(exp, []byte(strings.Join(rewritten, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli("import", "--user", "copy", exp)
	for _, user := range []string{"default", "copy"} {
		cli("--user", user, "ask", "--trace", "where is the password vault attic?")
		cli("--user", user, "search", "attic vault")
		cli("--user", user, "events", "--turns")
		cli("--user", user, "events", "e1")
		cli("--user", user, "history")
	}
	cli("--user", "copy", "delete", "--yes", "x1")
	// Errors quoting what the user typed are escaped too.
	for _, args := range [][]string{{"events", "e9" + esc}, {"delete", "--yes", "x9" + esc}, {"add", "--id", "i" + esc, "text"}} {
		_, errOut, code := runCLI(t, env, args...)
		if code == 0 {
			t.Fatalf("%q succeeded", args)
		}
		outputs = append(outputs, errOut)
	}
	all := strings.Join(outputs, "")
	for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(all, raw) {
			t.Fatalf("human output holds %q raw:\n%s", raw, all)
		}
	}
	for _, want := range []string{`Mallory\x1b[2J\x1b]0;pwned\x07`, `Vault \x1b[2J`, `vault\u202e?`, `e9\x1b[2J`, `x9\x1b[2J`} {
		if !strings.Contains(all, want) {
			t.Errorf("human output lacks the escaped %q", want)
		}
	}
	// --json is exact.
	out := cli("--user", "copy", "--json", "events")
	var l api.EventList
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Events) == 0 || l.Events[0].Event.Title != "Vault "+esc {
		t.Fatalf("events --json: %v %q", err, out)
	}
	out = cli("--json", "search", "attic vault")
	var sr api.SearchResponse
	if err := json.Unmarshal([]byte(out), &sr); err != nil || !strings.Contains(out, `\u001b[2J`) {
		t.Fatalf("search --json: %v %s", err, out)
	}
	found := false
	for _, e := range sr.Evidence {
		found = found || e.Turn.Speaker == "Mallory"+esc
	}
	if !found {
		t.Fatalf("search --json lost the exact speaker: %s", out)
	}
}

// TestFlagUsagePlaceholders walks every command's flags: pflag prints the
// first `backquoted` text of a usage string as the flag's value name
// ("--embedder name"), so a backquoted command or JSON example in a usage
// string garbles the help. Each such name must be one short word.
func TestFlagUsagePlaceholders(t *testing.T) {
	t.Parallel()
	env := envconfig.Load(func(string) string { return "" })
	a := newApp(env, strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			n++
			// pflag.UnquoteUsage: the text between the first two backquotes.
			_, rest, _ := strings.Cut(f.Usage, "`")
			name, _, _ := strings.Cut(rest, "`")
			if strings.ContainsAny(name, " {}\"") || len(name) > 12 {
				t.Errorf("%s --%s: its help shows the value name %q (a backquoted text in its usage)", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.rootCommand())
	if n < 50 {
		t.Fatalf("walked only %d flags", n)
	}
}
