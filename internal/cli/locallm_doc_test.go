package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/llm/llmtest"
)

const localLLMDoc = "../../docs/LOCAL_LLM.md"

// shellBlocks returns the lines of the ```sh blocks of a Markdown file.
func shellBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			if i := strings.Index(l, " # "); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// shellWords splits a command line on spaces, keeping "quoted words".
func shellWords(s string) []string {
	return regexp.MustCompile(`"[^"]*"|\S+`).FindAllString(s, -1)
}

// The walkthroughs of docs/LOCAL_LLM.md run: their higmem commands, with
// the settings `scripts/local-llm.sh [ollama] env` prints, against fake
// servers that behave like llama-cpp-python (500 on json_schema, one slot,
// streams) and like Ollama (json_schema as sent), answering with the
// scripted model. A line naming `local-llm.sh ollama` switches the lines
// after it to Ollama, one naming `local-llm.sh` alone back.
func TestLocalLLMDocWalkthrough(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewLlamaCpp(t, llmtest.NewScripted().Handler())
	ollama := llmtest.NewServer(t, llmtest.NewScripted().Handler())
	lines := shellBlocks(t, localLLMDoc)

	envs := map[string]map[string]string{"llamacpp": baseEnv(t), "ollama": baseEnv(t)}
	docEnv := map[string][]string{}
	backend := "llamacpp"
	switchOn := func(l string) {
		switch {
		case strings.Contains(l, "local-llm.sh ollama"):
			backend = "ollama"
		case strings.Contains(l, "local-llm.sh "):
			backend = "llamacpp"
		}
	}
	for _, l := range lines {
		switchOn(l)
		if strings.HasPrefix(l, "export ") {
			docEnv[backend] = append(docEnv[backend], l)
		}
	}
	for b, args := range map[string][]string{"llamacpp": {"env"}, "ollama": {"ollama", "env"}} {
		out, err := exec.Command("bash", append([]string{"../../scripts/local-llm.sh"}, args...)...).Output()
		if err != nil {
			t.Fatalf("local-llm.sh %v: %v", args, err)
		}
		if strings.TrimSpace(string(out)) != strings.Join(docEnv[b], "\n") {
			t.Errorf("doc's %s env block differs from the script's:\n%s\n---\n%s", b, strings.Join(docEnv[b], "\n"), out)
		}
		for _, l := range docEnv[b] {
			k, v, _ := strings.Cut(strings.TrimPrefix(l, "export "), "=")
			envs[b][k] = v
		}
	}
	envs["llamacpp"]["HIGMEM_LLM_BASE_URL"] = srv.BaseURL()
	envs["ollama"]["HIGMEM_LLM_BASE_URL"] = ollama.BaseURL()

	data := "../../../shared/data/locomo_dev.json"
	if _, err := os.Stat(data); err != nil {
		data = "../../eval/locomo/harness/testdata/mini_locomo.json"
	}
	db := filepath.Join(t.TempDir(), "memory.db")
	ran := map[string]int{}
	backend = "llamacpp"
	for _, l := range lines {
		switchOn(l)
		if !strings.HasPrefix(l, "higmem ") {
			continue
		}
		var args []string
		systems := ""
		for _, w := range shellWords(l)[1:] {
			switch {
			case strings.HasSuffix(w, "locomo_dev.json"):
				w = data
			case len(args) > 0 && args[len(args)-1] == "--out":
				w = filepath.Join(t.TempDir(), "eval")
			case len(args) > 0 && args[len(args)-1] == "--systems":
				systems = w
			case strings.HasPrefix(w, "/tmp/local-llm/"):
				w = db
			}
			args = append(args, strings.Trim(w, `"`))
		}
		args = append(args, "-q")
		out, errOut, code := runCLI(t, envs[backend], args...)
		if code != 0 {
			t.Fatalf("%s (%s): exit %d\n%s\n%s", l, backend, code, out, errOut)
		}
		for _, sys := range strings.Split(systems, ",") {
			if args[0] == "eval" && !strings.Contains(out, sys) {
				t.Errorf("%s: the report names no %s run:\n%s", l, sys, out)
			}
		}
		ran[backend]++
	}
	if ran["llamacpp"] < 3 || ran["ollama"] < 1 {
		t.Fatalf("ran %v higmem commands from the doc", ran)
	}
	// The one-slot server never saw two requests at once, and the client
	// learned the json_object+schema form.
	if srv.MaxInFlight() != 1 {
		t.Errorf("%d requests in the server at once", srv.MaxInFlight())
	}
	sawSchemaForm := false
	for _, r := range srv.Requests() {
		sawSchemaForm = sawSchemaForm || r.Format() == "json_object_schema"
		if !r.Stream || r.MaxTokens == 0 {
			t.Errorf("request not streamed or unbounded: stream %v, max_tokens %d", r.Stream, r.MaxTokens)
			break
		}
	}
	if !sawSchemaForm {
		t.Error("no json_object+schema request")
	}
	// With the README's settings Ollama is sent json_schema.
	if len(ollama.Requests()) == 0 || ollama.Requests()[0].Format() != "json_schema" {
		t.Error("the Ollama walkthrough sent no json_schema request")
	}
}

// Every HIGMEM_ variable the doc names is read by higmem or by the script.
func TestLocalLLMDocVariables(t *testing.T) {
	t.Parallel()
	doc, _ := os.ReadFile(localLLMDoc)
	script, err := os.ReadFile("../../scripts/local-llm.sh")
	if err != nil {
		t.Fatal(err)
	}
	backend, err := os.ReadFile("../../scripts/local-llm/ollama.sh")
	if err != nil {
		t.Fatal(err)
	}
	script = append(script, backend...)
	known := map[string]bool{}
	for _, v := range envconfig.Vars() {
		known[v.Name] = true
	}
	for _, name := range regexp.MustCompile(`HIGMEM_[A-Z_]+`).FindAllString(string(doc), -1) {
		if !known[name] && !strings.Contains(string(script), name) {
			t.Errorf("%s is neither an envconfig variable nor read by the script", name)
		}
	}
	for _, f := range []string{"../../scripts/local-llm.sh", "../../scripts/local-llm/ollama.sh"} {
		if out, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v %s", f, err, out)
		}
	}
}

// --llm-record keeps what the server answered; --llm-replay gives the same
// memory and answer with the server gone, and fails on anything new.
func TestRecordReplayCLI(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewLlamaCpp(t, llmtest.NewScripted().Handler())
	env := baseEnv(t)
	env["HIGMEM_LLM_BASE_URL"] = srv.BaseURL()
	env["HIGMEM_MEMORY_MODEL"] = "gemma-3-270m"
	cas := filepath.Join(t.TempDir(), "cassette.jsonl")
	q := "Who looks after Biscuit when Priya travels to Lisbon?"
	if out, e, code := runCLI(t, env, "ingest", exampleFile, "-q", "--llm-record", cas); code != 0 {
		t.Fatalf("%s %s", out, e)
	}
	want, e, code := runCLI(t, env, "ask", q, "--llm-record", cas)
	if code != 0 {
		t.Fatal(e)
	}
	served := len(srv.Requests())

	env2 := baseEnv(t)
	env2["HIGMEM_LLM_BASE_URL"] = "http://127.0.0.1:9/v1" // nothing there
	env2["HIGMEM_MEMORY_MODEL"] = "gemma-3-270m"
	if out, e, code := runCLI(t, env2, "ingest", exampleFile, "-q", "--llm-replay", cas); code != 0 {
		t.Fatalf("replayed ingest: %s %s", out, e)
	}
	got, e, code := runCLI(t, env2, "ask", q, "--llm-replay", cas)
	if code != 0 || answerLine(got) != answerLine(want) {
		t.Fatalf("replayed answer %q, recorded %q (%s)", answerLine(got), answerLine(want), e)
	}
	if len(srv.Requests()) != served {
		t.Error("replay reached the server")
	}
	if _, e, code := runCLI(t, env2, "ask", "Something never asked?", "--llm-replay", cas); code == 0 || !strings.Contains(e, "not in cassette") {
		t.Errorf("new question replayed: exit %d, %s", code, e)
	}
}
