package higmem_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/sqlite"
)

// writerStores opens n stores on one database, standing for n processes:
// n memstore handles of one store, or n SQLite stores on one file.
func writerStores(t *testing.T, kind string, n int) []store.Store {
	t.Helper()
	var out []store.Store
	switch kind {
	case "memstore":
		s := memstore.New()
		t.Cleanup(func() { _ = s.Close() })
		for range n {
			out = append(out, s)
		}
	case "sqlite":
		path := filepath.Join(t.TempDir(), "shared.db")
		for range n {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			out = append(out, s)
		}
	}
	return out
}

// checkInvariants checks what many writers must leave (see spacecheck):
// want turns (any number when negative, and then Seq need not be dense, as
// deletes leave holes), every turn in an event when events is set.
func checkInvariants(t *testing.T, s store.Store, sp store.Space, want int, events bool) {
	t.Helper()
	for _, err := range spacecheck.Check(t.Context(), s, sp, spacecheck.Want{Turns: want, Dense: want >= 0, InEvent: events}) {
		t.Error(err)
	}
}

// TestManyWritersOneSpace runs several memories ("processes") on one
// database, each with several goroutines adding to one space, with and
// without ids, one turn or a batch at a time.
func TestManyWritersOneSpace(t *testing.T) {
	for _, kind := range []string{"memstore", "sqlite"} {
		for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault} {
			t.Run(kind+"/"+string(mode), func(t *testing.T) {
				const procs, goroutines, adds = 3, 3, 4
				stores := writerStores(t, kind, procs)
				var mems []*higmem.Memory
				for _, s := range stores {
					o := higmem.Options{Store: s, Mode: mode}
					if mode != higmem.ModeOffline {
						o.MemoryModel = llmtest.NewScripted()
					}
					mems = append(mems, open(t, o))
				}
				var wg sync.WaitGroup
				var mu sync.Mutex
				var errs []error
				for p, m := range mems {
					for g := range goroutines {
						wg.Go(func() {
							for i := range adds {
								var in []higmem.TurnInput
								for j := range 1 + i%3 {
									ti := higmem.TurnInput{Speaker: "Ann", Text: fmt.Sprintf("process %d goroutine %d add %d part %d about hiking", p, g, i, j)}
									if (g+j)%2 == 0 {
										ti.ID = fmt.Sprintf("p%d-g%d-%d-%d", p, g, i, j)
									}
									in = append(in, ti)
								}
								if _, err := m.Add(t.Context(), sp, in); err != nil {
									mu.Lock()
									errs = append(errs, err)
									mu.Unlock()
								}
							}
						})
					}
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				want := procs * goroutines * (1 + 2 + 3 + 1)
				checkInvariants(t, stores[0], sp, want, true)
				// Every process sees the same memory.
				var first []string
				for p, m := range mems {
					st, err := m.Stats(t.Context(), sp)
					if err != nil || st.Turns != want {
						t.Errorf("process %d: Stats %+v, %v", p, st, err)
					}
					res, err := m.Retrieve(t.Context(), sp, "who went hiking?", higmem.RetrieveOptions{})
					if err != nil {
						t.Fatal(err)
					}
					evs, err := m.Events(t.Context(), sp)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, e := range evs {
						n += len(e.Turns)
					}
					if n < want {
						t.Errorf("process %d: its events hold %d turns, want at least %d", p, n, want)
					}
					if p == 0 {
						first = res.IDs()
					} else if !slices.Equal(first, res.IDs()) {
						t.Errorf("process %d retrieves %v, process 0 %v", p, res.IDs(), first)
					}
				}
			})
		}
	}
}

// TestOtherProcessSeesWrites checks coherent reads: what one memory adds,
// another on the same database finds at once, and an id-less add right
// after never conflicts.
func TestOtherProcessSeesWrites(t *testing.T) {
	for _, kind := range []string{"memstore", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			stores := writerStores(t, kind, 2)
			server := open(t, higmem.Options{Store: stores[0]})
			cli := open(t, higmem.Options{Store: stores[1]})
			ctx := t.Context()
			// The CLI reads the space while it is still empty.
			if _, err := cli.Events(ctx, sp); err != nil {
				t.Fatal(err)
			}
			if _, err := server.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: "I bake sourdough bread."}}); err != nil {
				t.Fatal(err)
			}
			if _, err := server.Retrieve(ctx, sp, "bread", higmem.RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			res, err := cli.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: "My cat is called Miso."}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := server.Retrieve(ctx, sp, "what is the cat called?", higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(r.IDs(), res.Added[0]) {
				t.Errorf("the server retrieves %v, without the other process's turn %s", r.IDs(), res.Added[0])
			}
			again, err := server.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: "I also knit."}})
			if err != nil {
				t.Fatalf("id-less add after another process's add: %v", err)
			}
			if slices.Contains(res.Added, again.Added[0]) {
				t.Errorf("both adds got id %s", again.Added[0])
			}
			// A conflicting user id is reported as such.
			if _, err := cli.Add(ctx, sp, []higmem.TurnInput{{ID: again.Added[0], Speaker: "Bob", Text: "Something else"}}); !errors.Is(err, higmem.ErrConflict) {
				t.Errorf("add with a taken id = %v, want ErrConflict", err)
			}
			checkInvariants(t, stores[0], sp, 3, true)
		})
	}
}

// TestDeletesRaceAdds deletes turns while others are added, in one memory
// and from a second one: no event may keep a deleted turn.
func TestDeletesRaceAdds(t *testing.T) {
	for _, kind := range []string{"memstore", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			stores := writerStores(t, kind, 2)
			a := open(t, higmem.Options{Store: stores[0]})
			b := open(t, higmem.Options{Store: stores[1]})
			ctx := t.Context()
			var seed []higmem.TurnInput
			for i := range 30 {
				seed = append(seed, higmem.TurnInput{ID: fmt.Sprint("s", i), Speaker: "Ann", Text: fmt.Sprintf("seed turn %d about gardening", i)})
			}
			if _, err := a.Add(ctx, sp, seed); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			fail := func(err error) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			for w, m := range []*higmem.Memory{a, b, a, b} {
				wg.Go(func() {
					for i := range 8 {
						if _, err := m.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Bob", Text: fmt.Sprintf("writer %d turn %d about gardening", w, i)}}); err != nil {
							fail(err)
						}
						if err := m.Delete(ctx, sp, fmt.Sprint("s", w*8+i-i%2)); err != nil && !errors.Is(err, higmem.ErrNotFound) {
							fail(err)
						}
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, stores[0], sp, -1, true)
			for _, m := range []*higmem.Memory{a, b} {
				evs, err := m.Events(ctx, sp)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if len(e.Turns) != len(e.Event.TurnIDs) {
						t.Errorf("event %s lists %d turn ids but has %d turns", e.Event.ID, len(e.Event.TurnIDs), len(e.Turns))
					}
				}
			}
		})
	}
}

// TestCacheBytesBoundsLoadedSpaces fills more spaces than the cache holds:
// the least recently used are dropped, and come back intact on use, with
// what another process wrote meanwhile.
func TestCacheBytesBoundsLoadedSpaces(t *testing.T) {
	stores := writerStores(t, "sqlite", 2)
	ctx := t.Context()
	// About two spaces of 20 turns fit.
	m := open(t, higmem.Options{Store: stores[0], CacheBytes: 2 * 20 * 700})
	other := open(t, higmem.Options{Store: stores[1], CacheBytes: -1})
	spaces := make([]higmem.Space, 6)
	for i := range spaces {
		spaces[i] = higmem.Space{UserID: fmt.Sprint("user", i)}
		var in []higmem.TurnInput
		for j := range 20 {
			in = append(in, higmem.TurnInput{Speaker: "Ann", Text: fmt.Sprintf("user %d turn %d: I play chess on Fridays.", i, j)})
		}
		if _, err := m.Add(ctx, spaces[i], in); err != nil {
			t.Fatal(err)
		}
		if n := higmem.LoadedSpaces(m); n > 3 {
			t.Fatalf("after %d spaces, %d loaded", i+1, n)
		}
	}
	if _, err := other.Add(ctx, spaces[0], []higmem.TurnInput{{ID: "late", Speaker: "Bob", Text: "I moved to Oslo."}}); err != nil {
		t.Fatal(err)
	}
	for i, s := range spaces {
		r, err := m.Retrieve(ctx, s, "who plays chess?", higmem.RetrieveOptions{})
		if err != nil || len(r.Evidence) == 0 {
			t.Fatalf("space %d after eviction: %v, %v", i, r, err)
		}
		want := 20
		if i == 0 {
			want = 21
			r, err := m.Retrieve(ctx, s, "where did Bob move?", higmem.RetrieveOptions{})
			if err != nil || !slices.Contains(r.IDs(), "late") {
				t.Errorf("space 0 reloaded without the other process's turn: %v %v", r.IDs(), err)
			}
		}
		checkInvariants(t, stores[0], s, want, true)
	}
	unbounded := open(t, higmem.Options{Store: stores[0], CacheBytes: -1})
	for _, s := range spaces {
		if _, err := unbounded.Retrieve(ctx, s, "chess", higmem.RetrieveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := higmem.LoadedSpaces(unbounded); n != len(spaces) {
		t.Errorf("CacheBytes -1 keeps %d spaces loaded, want %d", n, len(spaces))
	}
}

// TestCatchUpEqualsFreshLoad has one memory follow what another adds (and
// sometimes deletes) on the same database, catching up on each read, and
// compares everything it serves with a memory that loads the space afresh.
func TestCatchUpEqualsFreshLoad(t *testing.T) {
	for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault} {
		t.Run(string(mode), func(t *testing.T) {
			stores := writerStores(t, "sqlite", 3)
			ctx := t.Context()
			opts := func(s store.Store) higmem.Options {
				o := higmem.Options{Store: s, Mode: mode, Embedder: hashing.New(64)}
				if mode != higmem.ModeOffline {
					o.MemoryModel = llmtest.NewScripted()
				}
				return o
			}
			follower := open(t, opts(stores[0]))
			writer := open(t, opts(stores[1]))
			topics := []string{"sailing on the lake", "my sister's wedding", "the new job at the bakery", "training for a marathon"}
			questions := []string{"when is the wedding?", "what about sailing?", "how is the bakery job?", "marathon training"}
			n := 0
			for step := range 12 {
				var in []higmem.TurnInput
				for j := range 1 + step%4 {
					n++
					in = append(in, higmem.TurnInput{ID: fmt.Sprint("w", n), SessionID: fmt.Sprint("s", step/3), Speaker: []string{"Ann", "Bob"}[j%2],
						Text: fmt.Sprintf("turn %d: more on %s", n, topics[(step+j)%len(topics)])})
				}
				if _, err := writer.Add(ctx, sp, in); err != nil {
					t.Fatal(err)
				}
				if step%5 == 4 {
					if err := writer.Delete(ctx, sp, fmt.Sprint("w", n-2)); err != nil {
						t.Fatal(err)
					}
				}
				fresh := open(t, opts(stores[2]))
				for _, q := range questions {
					got, err := follower.Retrieve(ctx, sp, q, higmem.RetrieveOptions{})
					if err != nil {
						t.Fatal(err)
					}
					want, err := fresh.Retrieve(ctx, sp, q, higmem.RetrieveOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want.Evidence, got.Evidence); d != "" {
						t.Fatalf("step %d, %q: caught-up evidence differs from a fresh load (-fresh +caught up):\n%s", step, q, d)
					}
				}
				gotEv, err := follower.Events(ctx, sp)
				if err != nil {
					t.Fatal(err)
				}
				wantEv, err := fresh.Events(ctx, sp)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(wantEv, gotEv); d != "" {
					t.Fatalf("step %d: caught-up events differ from a fresh load (-fresh +caught up):\n%s", step, d)
				}
			}
			// Most steps only appended: the follower caught up in place.
			if n := higmem.CatchUps(follower); n < 6 {
				t.Errorf("the follower caught up in place %d times in 12 steps", n)
			}
		})
	}
}

// TestCatchUpAfterSpaceRewritten deletes a space from another memory and
// writes it anew with more turns under the same generated ids: the first
// memory must not take that for an append.
func TestCatchUpAfterSpaceRewritten(t *testing.T) {
	stores := writerStores(t, "sqlite", 2)
	ctx := t.Context()
	a := open(t, higmem.Options{Store: stores[0]})
	b := open(t, higmem.Options{Store: stores[1]})
	add := func(m *higmem.Memory, n int, what string) {
		t.Helper()
		var in []higmem.TurnInput
		for i := range n {
			in = append(in, higmem.TurnInput{Speaker: "Ann", Text: fmt.Sprintf("%s %d", what, i)})
		}
		if _, err := m.Add(ctx, sp, in); err != nil {
			t.Fatal(err)
		}
	}
	add(a, 5, "I collect stamps")
	if _, err := a.Retrieve(ctx, sp, "stamps", higmem.RetrieveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSpace(ctx, sp); err != nil {
		t.Fatal(err)
	}
	add(b, 8, "I grow orchids")
	evs, err := a.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		for _, tr := range e.Turns {
			if strings.Contains(tr.Text, "stamps") {
				t.Fatalf("event %s still shows the deleted turn %s %q", e.Event.ID, tr.ID, tr.Text)
			}
		}
	}
	r, err := a.Retrieve(ctx, sp, "stamps", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Evidence {
		if strings.Contains(e.Turn.Text, "stamps") {
			t.Fatalf("retrieved the deleted turn %s %q", e.Turn.ID, e.Turn.Text)
		}
	}
}
