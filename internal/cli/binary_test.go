package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem/internal/pgtest"
)

// bin is the higmem binary that the tests running the real program (the
// docs' scripts, other users, killed processes) share: built once per test
// run, started by TestMain in the background so that the build overlaps
// the in-process tests, or by the first buildBinary when TestMain did not
// start it (a -run filter, -short).
var bin struct {
	once   sync.Once
	done   chan struct{} // closed when the build ended
	cancel context.CancelFunc
	dir    string
	path   string
	err    error
}

// binUsed is set once a test asked for the binary.
var binUsed atomic.Bool

// startBuild starts building cmd/higmem into a temporary directory, once.
func startBuild() {
	bin.once.Do(func() {
		bin.done = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		bin.cancel = cancel
		if bin.dir, bin.err = os.MkdirTemp("", "higmem-bin-"); bin.err != nil {
			close(bin.done)
			return
		}
		bin.path = filepath.Join(bin.dir, "higmem")
		// Without -race even under go test -race: the scripts embed and
		// evaluate, several times slower instrumented (the README script
		// took 28 s plain, 247 s with -race), and CI's `go run ./cmd/higmem
		// models fetch` has compiled these packages already.
		// -buildvcs=auto: the commit is recorded (higmem --version) even
		// where GOFLAGS turns stamping off.
		cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", bin.path, "github.com/higmem/higmem/cmd/higmem")
		go func() {
			defer close(bin.done)
			if out, err := cmd.CombinedOutput(); err != nil {
				bin.err = fmt.Errorf("go build: %v\n%s", err, out)
			}
		}()
	})
}

// buildBinary returns the path of the higmem binary, waiting for its build.
func buildBinary(t testing.TB) string {
	t.Helper()
	startBuild()
	binUsed.Store(true)
	<-bin.done
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.path
}

func TestMain(m *testing.M) {
	pgtest.Check()
	flag.Parse()
	if !testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		// A whole run: most of the package's time goes to tests that run
		// the binary, the first of them after a minute of in-process
		// tests.
		startBuild()
	}
	code := m.Run()
	if bin.done != nil {
		if !binUsed.Load() {
			bin.cancel() // no test needed it
		}
		<-bin.done
		bin.cancel()
		os.RemoveAll(bin.dir)
	}
	os.Exit(code)
}
