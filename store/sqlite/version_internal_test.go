package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/higmem/higmem/store"
)

// TestVersionCacheFileReplaced checks that the cache stops answering when
// the WAL index at the path is no longer the file it reads (deleted and
// made anew), even one with the same header, and when the header changes
// or its two copies differ.
func TestVersionCacheFileReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := store.Space{UserID: "u"}
	if _, err := s.SpaceVersion(t.Context(), sp); err != nil {
		t.Fatal(err)
	}
	shm, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A cache of a copy of the index, at a path of its own.
	cpath := filepath.Join(t.TempDir(), "c.db")
	if err := os.WriteFile(cpath+"-shm", shm, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openVersionCache(cpath)
	defer c.close()
	h, ok := c.header()
	if !ok {
		t.Fatal("header of a valid index not trusted")
	}
	c.put(h, sp, 7)
	if v, hit, _, _ := c.get(sp); !hit || v != 7 {
		t.Fatalf("get = %d, %v; want 7 from the cache", v, hit)
	}
	if _, hit, _, _ := c.get(store.Space{UserID: "other"}); hit {
		t.Error("a space never put is a hit")
	}
	// The same bytes in a new file at the path.
	if err := os.Remove(cpath + "-shm"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cpath+"-shm", shm, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, hit, _, ok := c.get(sp); hit || ok {
		t.Error("the cache answers for a replaced index file")
	}
	// A changed header in the file it reads.
	c2 := openVersionCache(cpath)
	defer c2.close()
	h2, ok := c2.header()
	if !ok {
		t.Fatal("header of the new file not trusted")
	}
	c2.put(h2, sp, 7)
	for _, off := range []int{8, 8 + 48} { // iChange of each copy
		b := append([]byte(nil), shm...)
		b[off]++
		if err := os.WriteFile(cpath+"-shm", b, 0o644); err != nil { // same file, rewritten
			t.Fatal(err)
		}
		if _, hit, _, _ := c2.get(sp); hit {
			t.Errorf("the cache answers after byte %d of the header changed", off)
		}
	}
}
