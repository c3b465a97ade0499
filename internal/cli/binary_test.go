package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/higmem/higmem/internal/pgtest"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// buildBinary builds cmd/higmem once per test run, for the tests that run
// the real program (the README script, other users).
func buildBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "higmem-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "higmem")
		// Without -race even under go test -race: the scripts embed and
		// evaluate, several times slower instrumented (the README script
		// took 28 s plain, 247 s with -race), and CI's `go run ./cmd/higmem
		// models fetch` has compiled these packages already.
		// -buildvcs=auto: the commit is recorded (higmem --version) even
		// where GOFLAGS turns stamping off.
		out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", binPath, "github.com/higmem/higmem/cmd/higmem").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	pgtest.Check()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
