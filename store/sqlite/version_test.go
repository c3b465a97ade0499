package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// trueVersion reads sp's version with SQL on db, past any cache.
func trueVersion(t *testing.T, s *sqlite.Store, sp store.Space) int64 {
	t.Helper()
	var v int64
	err := s.DB().QueryRowContext(t.Context(), `SELECT coalesce(max(version), 0) FROM spaces WHERE user_id = ? AND agent_id = ?`, sp.UserID, sp.AgentID).Scan(&v)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// putTurn commits one turn to sp through s and returns the version it
// committed.
func putTurn(ctx context.Context, s *sqlite.Store, sp store.Space, id string) (int64, error) {
	var next int64
	err := s.Update(ctx, func(tx store.Tx) error {
		h, err := tx.Lock(ctx, sp)
		if err != nil {
			return err
		}
		next = h.Next
		_, err = tx.PutTurn(ctx, store.Turn{Space: sp, ID: id, Seq: h.LastSeq + 1, Speaker: "A", Text: id})
		return err
	})
	return next, err
}

// TestSpaceVersionCache checks that SpaceVersion, which answers from a
// cache while nothing commits to the file, always reports the committed
// version: after writes through the same Store, through another Store on
// the file (as another process), to other spaces, to another table through
// DB, and after a checkpoint that truncates the log. It also checks that
// the cache answers at all.
func TestSpaceVersionCache(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v.db")
	a, b := openAt(t, path), openAt(t, path)
	spaces := []store.Space{{UserID: "u1"}, {UserID: "u2", AgentID: "bot"}, {UserID: "u3"}}
	if _, err := b.DB().ExecContext(ctx, `CREATE TABLE vtest_other (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(step string) {
		t.Helper()
		for _, sp := range spaces {
			want := trueVersion(t, b, sp)
			for _, s := range []*sqlite.Store{a, b, a} {
				if v, err := s.SpaceVersion(ctx, sp); err != nil || v != want {
					t.Fatalf("after %s: SpaceVersion(%v) = %d, %v; want %d", step, sp, v, err, want)
				}
			}
		}
	}
	check("open")
	for i := range 60 {
		sp := spaces[rng.IntN(len(spaces))]
		var step string
		switch k := rng.IntN(5); k {
		case 0, 1:
			s := []*sqlite.Store{a, b}[k]
			step = fmt.Sprintf("write %d to %v through store %d", i, sp, k)
			if _, err := putTurn(ctx, s, sp, fmt.Sprint("t", i)); err != nil {
				t.Fatal(err)
			}
		case 2:
			step = fmt.Sprintf("delete of %v", sp)
			if err := a.Update(ctx, func(tx store.Tx) error { return tx.DeleteSpace(ctx, sp) }); err != nil {
				t.Fatal(err)
			}
		case 3:
			step = "write to another table"
			if _, err := a.DB().ExecContext(ctx, `INSERT INTO vtest_other VALUES (?)`, i); err != nil {
				t.Fatal(err)
			}
		case 4:
			step = fmt.Sprintf("checkpoint, then write %d to %v", i, sp)
			if err := b.Purge(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := putTurn(ctx, b, sp, fmt.Sprint("t", i)); err != nil {
				t.Fatal(err)
			}
		}
		check(step)
	}
	if sqlite.VersionCacheHits(a) == 0 || sqlite.VersionCacheHits(b) == 0 {
		t.Errorf("version cache hits: %d, %d; want some in both stores", sqlite.VersionCacheHits(a), sqlite.VersionCacheHits(b))
	}
	if mem, err := sqlite.Open(ctx, sqlite.Memory, sqlite.Options{}); err != nil {
		t.Fatal(err)
	} else {
		defer mem.Close()
		for range 3 {
			if v, err := mem.SpaceVersion(ctx, spaces[0]); err != nil || v != 0 {
				t.Fatalf("in memory: SpaceVersion = %d, %v", v, err)
			}
		}
	}
}

// TestSpaceVersionCacheConcurrent reads versions through one Store while
// another commits: every read is at least the version of every commit
// that returned before it began, and never goes back.
func TestSpaceVersionCacheConcurrent(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	r, w := openAt(t, path), openAt(t, path)
	sp := store.Space{UserID: "u"}
	var committed atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 150 {
			v, err := putTurn(ctx, w, sp, fmt.Sprint("t", i))
			if err != nil {
				t.Error(err)
				return
			}
			committed.Store(v)
		}
	})
	for range 2 {
		wg.Go(func() {
			last := int64(0)
			for {
				select {
				case <-done:
					return
				default:
				}
				floor := committed.Load()
				v, err := r.SpaceVersion(ctx, sp)
				if err != nil {
					t.Error(err)
					return
				}
				if v < floor || v < last {
					t.Errorf("SpaceVersion = %d after commits up to %d, and %d read before", v, floor, last)
					return
				}
				last = v
			}
		})
	}
	wg.Wait()
	if v, err := r.SpaceVersion(ctx, sp); err != nil || v != committed.Load() {
		t.Errorf("SpaceVersion at the end = %d, %v; want %d", v, err, committed.Load())
	}
}

// TestSpaceVersionCacheOtherProcess writes from another process while this
// one holds a cached version.
func TestSpaceVersionCacheOtherProcess(t *testing.T) {
	if path := os.Getenv("HIGMEM_SQLITE_VERSION_CHILD"); path != "" {
		s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v, err := putTurn(t.Context(), s, store.Space{UserID: "u"}, os.Getenv("HIGMEM_SQLITE_VERSION_ID"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("committed %d\n", v)
		return
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "p.db")
	s := openAt(t, path)
	sp := store.Space{UserID: "u"}
	for i := range 3 {
		before, err := s.SpaceVersion(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := s.SpaceVersion(ctx, sp); err != nil || again != before {
			t.Fatalf("SpaceVersion twice = %d, %d, %v", before, again, err)
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSpaceVersionCacheOtherProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "HIGMEM_SQLITE_VERSION_CHILD="+path, fmt.Sprint("HIGMEM_SQLITE_VERSION_ID=p", i))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		var want int64
		for _, line := range strings.Split(string(out), "\n") {
			if _, err := fmt.Sscanf(line, "committed %d", &want); err == nil {
				break
			}
		}
		if v, err := s.SpaceVersion(ctx, sp); err != nil || v != want || v <= before {
			t.Fatalf("after the other process's commit %d: SpaceVersion = %d, %v (before %d)", want, v, err, before)
		}
	}
	if sqlite.VersionCacheHits(s) == 0 {
		t.Error("no version cache hits")
	}
}

// openAt opens a store at path, closed with the test.
func openAt(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
