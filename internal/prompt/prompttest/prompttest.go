// Package prompttest reads the select calls recorded from the bench (the
// scripted model on the 100k-turn space: internal/prompt's
// testdata/select_bench.jsonl), for the tests of the packages that render,
// answer, parse and check them.
package prompttest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Call is one recorded select call: its prompts and the scripted model's
// reply.
type Call struct {
	System string `json:"system"`
	User   string `json:"user"`
	Reply  string `json:"reply"`
}

// BenchSelects returns the recorded select calls; it fails tb when the
// file cannot be read or holds none.
func BenchSelects(tb testing.TB) []Call {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("prompttest: no source path")
	}
	f, err := os.Open(filepath.Join(filepath.Dir(self), "..", "testdata", "select_bench.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatal(err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		tb.Fatalf("prompttest: %d recorded select calls, %v", len(out), err)
	}
	return out
}
