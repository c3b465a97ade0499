package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemoDatesResolveForward runs the demo on its example conversation and
// checks the time notes it shows beside the evidence (the notes the answer
// model reads). The conversation runs from March to June 2024, and its bare
// dates name plans: a race "on May 19" said on 2 March, a job that starts
// "on June 3" said on 25 May, a wedding "in June" being planned in March.
// They must resolve forward, into 2024, not to the year before.
func TestDemoDatesResolveForward(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	out, errOut, code := runCLI(t, env, "demo", "--fetch=false", "--db", filepath.Join(t.TempDir(), "d.db"))
	if code != 0 {
		t.Fatalf("demo: code %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []struct{ turn, note string }{
		{"[S1:5]", "May 19 = 19 May 2024"},
		{"[S3:3]", "June 3 = 3 June 2024"},
		{"[S1:9]", "in June = June 2024"},
		{"[S3:5]", "June 15 = 15 June 2024"},
	} {
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, c.turn) {
				line = l
				break
			}
		}
		if line == "" {
			t.Errorf("demo output shows no evidence line for %s:\n%s", c.turn, out)
			continue
		}
		if !strings.Contains(line, "("+c.note) && !strings.Contains(line, "; "+c.note) {
			t.Errorf("evidence %s: want the note %q, got\n%s", c.turn, c.note, line)
		}
	}
	// Every date in the conversation lies in 2024 or later; a note in 2023
	// is a future date resolved into the past.
	if m := regexp.MustCompile(`\([^()]*= [^()]*2023[^()]*\)`).FindAllString(out, -1); len(m) > 0 {
		t.Errorf("demo time notes in 2023: %q", m)
	}
}
