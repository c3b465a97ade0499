package api

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoEngine keeps the client self-contained: package api (and so
// every program that only talks to a server) depends on nothing else of
// higmem, and on nothing outside the standard library.
func TestImportsNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/higmem/higmem/api" {
			t.Errorf("package api depends on %s", p)
		}
	}
}
