package cli

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/llm/llmtest"
)

// TestVersion runs `higmem --version` on the built binary: it names the
// module version and the commit the checkout is at, as the go command
// recorded it.
func TestVersion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (or no git): the build records no revision to compare: %v", err)
	}
	if gitWorktree(t) {
		t.Skip("a linked git worktree: the go command records no revision there (it looks for a .git directory, and a worktree has a .git file)")
	}
	out, err := exec.Command(buildBinary(t), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("higmem --version: %v\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	rev := strings.TrimSpace(string(head))
	if !strings.HasPrefix(line, "higmem v") || !strings.Contains(line, "(revision "+rev) || strings.Count(line, "\n") != 0 {
		t.Fatalf("higmem --version printed %q; want one line \"higmem vVERSION (revision %s...\"", line, rev)
	}
	// The pseudo-version the go command derives names the same commit.
	if !strings.Contains(line, rev[:12]) {
		t.Errorf("higmem --version: %q does not name commit %s in its version", line, rev[:12])
	}
	t.Log(line)
}

// gitWorktree reports whether the checkout is a linked worktree (git
// worktree add), whose .git is a file.
func gitWorktree(t *testing.T) bool {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), ".git"))
	return err == nil && !fi.IsDir()
}

// TestServeMetricsFlag starts the real binary with --metrics and an LLM
// endpoint, and parses /metrics with the official parser: the requests and
// the memory model's calls (the CLI's meter) are there. Without the flag
// there is no /metrics.
func TestServeMetricsFlag(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	llmSrv := llmtest.NewServer(t, llmtest.NewScripted().Handler())
	env := baseEnv(t)
	env["HIGMEM_LLM_BASE_URL"] = llmSrv.BaseURL()
	env["HIGMEM_MEMORY_MODEL"] = "fake-model"
	env["HIGMEM_MODE"] = "default"

	_, off := startServe(t, env, "--no-auth")
	resp, err := http.Get(off + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics without --metrics: %s, want 404", resp.Status)
	}

	env["HIGMEM_DB"] += ".2"
	_, base := startServe(t, env, "--no-auth", "--metrics")
	c := api.NewClient(base, "", nil)
	if _, err := c.Add(t.Context(), api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{Speaker: "Alice", Text: "My greyhound Biscuit loves the beach."},
		{Speaker: "Bob", Text: "He ran all the way to the pier."},
	}}); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %s: the official parser refuses it: %v", resp.Status, err)
	}
	var adds, memCalls float64
	for _, m := range fams["higmem_http_requests_total"].GetMetric() {
		if labelsOf(m.GetLabel())["route"] == "POST /v1/turns" {
			adds += m.GetCounter().GetValue()
		}
	}
	for _, m := range fams["higmem_llm_calls_total"].GetMetric() {
		if labelsOf(m.GetLabel())["role"] == "memory" {
			memCalls += m.GetCounter().GetValue()
		}
	}
	if adds != 1 || memCalls == 0 || llmSrv.Calls() == 0 {
		t.Errorf("/metrics: %v adds, %v memory-model calls (the endpoint saw %d); want 1 and some", adds, memCalls, llmSrv.Calls())
	}
	if info := fams["higmem_build_info"].GetMetric(); len(info) != 1 || labelsOf(info[0].GetLabel())["revision"] == "" {
		t.Errorf("higmem_build_info: %v", info)
	}
}

// labelsOf returns label pairs as a map.
func labelsOf[L interface {
	GetName() string
	GetValue() string
}](pairs []L) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		m[p.GetName()] = p.GetValue()
	}
	return m
}
