package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/higmem/higmem/eval/locomo/harness"
	"github.com/higmem/higmem/internal/envconfig"
)

const evalTestData = "../../eval/locomo/harness/testdata/mini_locomo.json"

// runCLI runs the higmem command with an empty environment (no LLM
// endpoint) and returns stdout, stderr and the error.
func evalCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := envconfig.Load(func(string) string { return "" })
	env.DB = filepath.Join(t.TempDir(), "higmem.db")
	a := newApp(env, strings.NewReader(""), &out, &errb)
	cmd := a.rootCommand()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if cerr := a.close(); err == nil {
		err = cerr
	}
	return out.String(), errb.String(), err
}

// A judge that grades everything CORRECT (the base 270M model did; the
// real-junk fake does) fails its calibration: the summary prints no J and
// says why, and so does the report.
func TestEvalJudgeFailingCalibration(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	out, errOut, err := evalCLI(t, "eval", "locomo", evalTestData, "--fake-llm", "real-junk", "--embedder", "none",
		"--systems", "full-context", "--max-questions", "3", "--samples", "0", "--out", dir, "-q")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "J withheld") || !strings.Contains(out, "FAILED") {
		t.Errorf("summary does not withhold J:\n%s\n%s", out, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "full-context" && f[3] != "–" {
			t.Errorf("J printed for an uncalibrated judge: %q", l)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, harness.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**J withheld**") {
		t.Error("report does not withhold J")
	}
}

func TestEvalLoCoMoScripted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	out, _, err := evalCLI(t, "eval", "locomo", evalTestData, "--fake-llm", "scripted", "--embedder", "none",
		"--systems", "higmem,amem,oracle,offline", "--max-questions", "3", "--samples", "0", "--out", dir, "-q")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"higmem", "amem", "oracle", "offline", "report: " + filepath.Join(dir, "report.md")} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, harness.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "fake LLM: scripted") {
		t.Error("report does not say the LLM was fake")
	}

	// Rerunning the same command resumes: nothing is asked again.
	before, _ := os.ReadFile(filepath.Join(dir, harness.QuestionsFile))
	if _, _, err := evalCLI(t, "eval", "locomo", evalTestData, "--fake-llm", "scripted", "--embedder", "none",
		"--systems", "higmem,amem,oracle,offline", "--max-questions", "3", "--samples", "0", "--out", dir, "-q"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, harness.QuestionsFile))
	if !bytes.Equal(before, after) {
		t.Error("a rerun of a finished run added records")
	}

	// A second run, then the side-by-side report.
	dir2 := filepath.Join(t.TempDir(), "run2")
	if _, _, err := evalCLI(t, "eval", "locomo", evalTestData, "--fake-llm", "scripted", "--embedder", "none",
		"--systems", "oracle", "--max-questions", "3", "--samples", "0", "--out", dir2, "-q"); err != nil {
		t.Fatal(err)
	}
	out, _, err = evalCLI(t, "eval", "report", dir, dir2)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"oracle @ run", "oracle @ run2", "amem @ run", "## Answer quality: official LoCoMo F1"} {
		if !strings.Contains(out, want) {
			t.Errorf("compared report lacks %q", want)
		}
	}
	cmp := filepath.Join(t.TempDir(), "cmp")
	if _, _, err := evalCLI(t, "eval", "report", dir, dir2, "--out", cmp); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{harness.ReportFile, harness.ResultsFile, harness.ChartRecall, harness.ChartF1, harness.ChartTokens, harness.ChartCalls} {
		if _, err := os.Stat(filepath.Join(cmp, f)); err != nil {
			t.Errorf("compare --out: %v", err)
		}
	}
}

func TestEvalLoCoMoWithoutLLM(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	out, stderr, err := evalCLI(t, "eval", "locomo", evalTestData, "--embedder", "none",
		"--systems", "higmem,vector-topk", "--out", dir, "-q")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "skipping higmem") {
		t.Errorf("no skip message on stderr: %q", stderr)
	}
	if !strings.Contains(out, "higmem           skipped") || !strings.Contains(out, "hybrid-topk") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestEvalLoCoMoBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"eval", "locomo", evalTestData, "--systems", "nope", "--embedder", "none"},
		{"eval", "locomo", evalTestData, "--fake-llm", "oracle", "--embedder", "none"},
		{"eval", "report", filepath.Join(t.TempDir(), "missing")},
	} {
		if _, _, err := evalCLI(t, append(args, "--out", t.TempDir())...); err == nil && args[1] != "report" {
			t.Errorf("%v: no error", args)
		} else if args[1] == "report" && err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// --fake-llm scripted-http serves the scripted fake on a loopback port to
// the real OpenAI-compatible client: every logical call is an HTTP
// request, counted in questions.jsonl as such.
func TestEvalScriptedOverHTTP(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if _, errOut, err := evalCLI(t, "eval", "locomo", evalTestData, "--fake-llm", "scripted-http", "--embedder", "none",
		"--systems", "higmem", "--max-questions", "2", "--samples", "0", "--out", dir, "-q"); err != nil {
		t.Fatal(err, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, harness.QuestionsFile))
	if err != nil {
		t.Fatal(err)
	}
	var calls, requests int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Calls []harness.CallStat `json:"calls"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, c := range rec.Calls {
			calls += c.Calls
			requests += c.Requests
		}
	}
	if calls == 0 || requests != calls {
		t.Errorf("%d logical calls, %d HTTP requests: want one request per call", calls, requests)
	}
}

// TestEvalPrintsTheFloor: the printed summary shows each top-k system's
// recall at offline mode's K beside offline's, and whether offline holds.
func TestEvalPrintsTheFloor(t *testing.T) {
	t.Parallel()
	out, _, err := evalCLI(t, "eval", "locomo", evalTestData, "--embedder", "none",
		"--systems", "offline,bm25-topk", "--out", filepath.Join(t.TempDir(), "run"), "-q")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "at offline's K") || !strings.Contains(out, "bm25-topk@K") ||
		!strings.Contains(out, "offline holds the floor") && !strings.Contains(out, "offline BELOW by") {
		t.Errorf("no floor line in the summary:\n%s", out)
	}
	t.Log(out)
}

// TestEvalVectorCache: the embedder's vectors are kept in the run
// directory's vectors/, or in the directory --vector-cache names.
func TestEvalVectorCache(t *testing.T) {
	t.Parallel()
	run := func(extra ...string) string {
		dir := filepath.Join(t.TempDir(), "run")
		args := append([]string{"eval", "locomo", evalTestData, "--embedder", "hashing",
			"--systems", "offline", "--max-questions", "2", "--samples", "0", "--out", dir, "-q"}, extra...)
		if _, errOut, err := evalCLI(t, args...); err != nil {
			t.Fatal(err, errOut)
		}
		return dir
	}
	dir := run()
	if files, _ := filepath.Glob(filepath.Join(dir, harness.VectorsDir, "*.vec")); len(files) != 1 {
		t.Errorf("run directory's vector cache: %q, want one file", files)
	}
	shared := filepath.Join(t.TempDir(), "vectors")
	dir = run("--vector-cache", shared)
	if files, _ := filepath.Glob(filepath.Join(shared, "*.vec")); len(files) != 1 {
		t.Errorf("--vector-cache: %q, want one file", files)
	}
	if _, err := os.Stat(filepath.Join(dir, harness.VectorsDir)); !os.IsNotExist(err) {
		t.Errorf("with --vector-cache, the run directory has its own vectors too (%v)", err)
	}
}
