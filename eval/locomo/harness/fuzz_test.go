package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenJSONL feeds arbitrary file contents to the resume reader: it
// must not panic, and when it accepts a file, what is left on disk is
// exactly the complete records it read.
func FuzzOpenJSONL(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"a\":2}\n"))
	f.Add([]byte("{\"a\":1}\n{\"a\":"))
	f.Add([]byte("\n\n{\"a\":1}\nxx\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "q.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		w, err := openJSONL(path, func(b []byte) error {
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				return err
			}
			got = append(got, bytes.Clone(b))
			return nil
		})
		if err != nil {
			return
		}
		w.Close()
		left, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, left) {
			t.Fatalf("repair rewrote the file: %q -> %q", data, left)
		}
		if len(left) > 0 && left[len(left)-1] != '\n' {
			t.Fatalf("file left with a partial line: %q", left)
		}
		recs, err := readJSONL[map[string]any](path)
		if err != nil || len(recs) != len(got) {
			t.Fatalf("after repair: %d records (%v), the reader saw %d", len(recs), err, len(got))
		}
	})
}
