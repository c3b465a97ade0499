package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/higmem/higmem/api"
)

// TestProfilesCommand runs `higmem profiles` on the example conversation:
// the text output is the one docs/PROFILES.md shows, --json is the REST
// response, an ENTITY selects one person, --as-of and --current filter,
// and a delete is forgotten.
func TestProfilesCommand(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	if _, e, code := runCLI(t, env, "ingest", exampleFile, "-q"); code != 0 {
		t.Fatalf("ingest: %s", e)
	}
	out, e, code := runCLI(t, env, "profiles")
	if code != 0 {
		t.Fatalf("profiles: %d %s", code, e)
	}
	doc, err := os.ReadFile("../../docs/PROFILES.md")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, ok := strings.Cut(string(doc), "`higmem profiles` prints, for the example conversation:\n\n```\n")
	shown, _, _ = strings.Cut(shown, "```\n")
	if !ok || out != shown {
		t.Errorf("higmem profiles prints:\n%s\ndocs/PROFILES.md shows:\n%s", out, shown)
	}

	out, _, code = runCLI(t, env, "profiles", "--json")
	var l api.ProfileList
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || len(l.Profiles) != 4 {
		t.Fatalf("profiles --json: %d %v\n%s", code, err, out)
	}
	out, _, code = runCLI(t, env, "profiles", "--json", "priya")
	var p api.Profile
	if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil || p.Entity != "Priya" || len(p.Attributes) != 2 {
		t.Fatalf("profiles priya --json: %d %v\n%s", code, err, out)
	}
	out, _, code = runCLI(t, env, "profiles", "Priya", "--as-of", "2024-05-01")
	if code != 0 || !strings.Contains(out, "Biscuit (dog)") || strings.Contains(out, "Lisbon") {
		t.Fatalf("profiles Priya --as-of 2024-05-01: %d\n%s", code, out)
	}
	if _, e, code := runCLI(t, env, "profiles", "--as-of", "May"); code == 0 || !strings.Contains(e, "--as-of") {
		t.Fatalf("bad --as-of: %d %s", code, e)
	}
	if _, e, code := runCLI(t, env, "profiles", "Nobody"); code == 0 || !strings.Contains(e, `profile "Nobody" not found`) {
		t.Fatalf("unknown entity: %d %s", code, e)
	}
	if _, e, code := runCLI(t, env, "delete", "--yes", "S3:6"); code != 0 {
		t.Fatalf("delete: %s", e)
	}
	out, _, _ = runCLI(t, env, "profiles", "Priya", "--current")
	if strings.Contains(out, "Lisbon") || !strings.Contains(out, "Biscuit") {
		t.Fatalf("after deleting S3:6:\n%s", out)
	}
}

// TestPrintProfileProducers: the text output names the producers of a
// value a model stated, the model that closed one, and a summary; a value
// only the rules read names none.
func TestPrintProfileProducers(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printProfile(&b, api.Profile{Entity: "Jo", Speaker: true,
		Summary: &api.ProfileSummary{Text: "Jo moved to York [j2].", Evidence: []string{"j2"}, Producer: "llm:paper:p3"},
		Attributes: []api.ProfileAttribute{{Name: "home", Values: []api.ProfileValue{
			{Value: "Leeds", Evidence: []string{"j1"}, ClosedBy: "j2", ClosedByProducer: "llm:default:p3", Producers: []string{"rules"}},
			{Value: "York", Current: true, Evidence: []string{"j2"}, Producers: []string{"llm:default:p3", "rules"}},
		}}}}, false)
	want := "Jo (speaker)\n" +
		"    summary:         Jo moved to York [j2].  [j2] by llm:paper:p3\n" +
		"    home:            Leeds                    ?..? (ended by j2 per llm:default:p3)  [j1]\n" +
		"    home:            York                     ?..now  [j2] by llm:default:p3, rules\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
