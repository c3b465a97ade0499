package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

// procEnv is the environment of a real higmem process: this one's, without
// HIGMEM_ variables, plus env.
func procEnv(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HIGMEM_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// runProcs runs the binary once per argument list, all at once, and
// returns their outputs; any failure fails the test.
func runProcs(t *testing.T, bin string, env map[string]string, argss ...[]string) []string {
	t.Helper()
	outs := make([]string, len(argss))
	errs := make([]error, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		wg.Go(func() {
			cmd := exec.Command(bin, args...)
			cmd.Env = procEnv(env)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			outs[i] = string(out)
			if err != nil {
				errs[i] = fmt.Errorf("higmem %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return outs
}

// writeConversation writes a conversation file of n turns in the simple
// format, with ids prefix-1... when withIDs is set.
func writeConversation(t *testing.T, prefix string, n int, withIDs bool) string {
	t.Helper()
	type turn struct {
		ID      string `json:"id,omitempty"`
		Session string `json:"session_id"`
		Speaker string `json:"speaker"`
		Text    string `json:"text"`
	}
	var f struct {
		Turns []turn `json:"turns"`
	}
	topics := []string{"hiking in the Alps", "baking sourdough", "a new puppy", "learning the cello", "moving to Lisbon"}
	for i := range n {
		tr := turn{Session: fmt.Sprintf("%s-s%d", prefix, i/10), Speaker: []string{"Ann", "Bob"}[i%2],
			Text: fmt.Sprintf("%s %d: more about %s.", prefix, i, topics[(i/7)%len(topics)])}
		if withIDs {
			tr.ID = fmt.Sprintf("%s-%d", prefix, i+1)
		}
		f.Turns = append(f.Turns, tr)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), prefix+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openShared opens the database of env as a store, to check what the
// processes left.
func openShared(t *testing.T, env map[string]string) store.Store {
	t.Helper()
	db := env["HIGMEM_DB"]
	var s store.Store
	var err error
	if strings.HasPrefix(db, "postgres") {
		s, err = postgres.Open(t.Context(), db, postgres.Options{})
	} else {
		s, err = sqlite.Open(t.Context(), db, sqlite.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// checkShared checks the invariants of the default space.
func checkShared(t *testing.T, s store.Store, want int) {
	t.Helper()
	sp := store.Space{UserID: "default"}
	for _, err := range spacecheck.Check(t.Context(), s, sp, spacecheck.Want{Turns: want, Dense: true, InEvent: true}) {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// processBackends runs fn against a fresh SQLite file and, when the test
// PostgreSQL server is configured, a fresh PostgreSQL schema.
func processBackends(t *testing.T, fn func(t *testing.T, env map[string]string)) {
	t.Run("sqlite", func(t *testing.T) {
		env := baseEnv(t)
		fn(t, env)
	})
	t.Run("postgres", func(t *testing.T) {
		env := baseEnv(t)
		env["HIGMEM_DB"] = pgtest.SchemaDSN(t)
		fn(t, env)
	})
}

// TestProcessesIngestOneSpace runs two real ingests of different files into
// one space at once, then both again.
func TestProcessesIngestOneSpace(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	processBackends(t, func(t *testing.T, env map[string]string) {
		a := writeConversation(t, "a", 300, true)
		b := writeConversation(t, "b", 300, true)
		runProcs(t, bin, env, []string{"ingest", a, "-q", "--embedder", "none"}, []string{"ingest", b, "-q", "--embedder", "none"})
		s := openShared(t, env)
		checkShared(t, s, 600)
		// Rerunning both at once adds nothing and repairs nothing, as
		// there is nothing to repair.
		outs := runProcs(t, bin, env, []string{"--json", "ingest", a, "-q", "--embedder", "none"}, []string{"--json", "ingest", b, "-q", "--embedder", "none"})
		for _, out := range outs {
			var sum struct {
				Added   int `json:"turns_added"`
				Skipped int `json:"turns_skipped"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Added != 0 || sum.Skipped != 300 {
				t.Errorf("rerun: %v %s", err, out)
			}
		}
		checkShared(t, s, 600)
	})
}

// TestProcessesParallelAdds runs six real `higmem add` at once, three with
// --id and three without.
func TestProcessesParallelAdds(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	processBackends(t, func(t *testing.T, env map[string]string) {
		var argss [][]string
		for i := range 6 {
			args := []string{"--json", "--embedder", "none", "add", fmt.Sprintf("parallel turn %d about gardening", i)}
			if i%2 == 0 {
				args = append(args, "--id", fmt.Sprint("p", i))
			}
			argss = append(argss, args)
		}
		// And, at the same time, three into another space.
		for i := range 3 {
			argss = append(argss, []string{"--json", "--embedder", "none", "--user", "other", "add", fmt.Sprintf("other space turn %d", i)})
		}
		outs := runProcs(t, bin, env, argss...)
		outs = outs[:6]
		var ids []string
		for _, out := range outs {
			var r api.AddResponse
			if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Added) != 1 {
				t.Fatalf("add: %v %s", err, out)
			}
			ids = append(ids, r.Added[0])
		}
		slices.Sort(ids)
		if len(slices.Compact(ids)) != 6 {
			t.Errorf("ids reported: %v", ids)
		}
		s := openShared(t, env)
		checkShared(t, s, 6)
		for _, err := range spacecheck.Check(t.Context(), s, store.Space{UserID: "other"}, spacecheck.Want{Turns: 3, Dense: true, InEvent: true}) {
			t.Error(err)
		}
	})
}

// TestServeBesideCLI runs `higmem serve` and CLI adds on one database: the
// server's next search finds the CLI's turn, and its id-less adds work.
func TestServeBesideCLI(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	processBackends(t, func(t *testing.T, env map[string]string) {
		ctx := t.Context()
		srv := exec.Command(bin, "--embedder", "none", "serve", "--addr", "127.0.0.1:0", "--no-auth")
		srv.Env = procEnv(env)
		stderr, err := srv.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = srv.Process.Signal(syscall.SIGINT)
			_ = srv.Wait()
		})
		base := ""
		sc := bufio.NewScanner(stderr)
		for base == "" && sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				base = m[1]
			}
		}
		if base == "" {
			t.Fatal("serve did not say where it listens")
		}
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
		c := api.NewClient(base, "", nil)
		sp := api.Scope{UserID: "default"}
		if _, err := c.Add(ctx, api.AddRequest{UserID: sp.UserID, Turns: []api.TurnInput{{Speaker: "Ann", Text: "I bake sourdough bread on Sundays."}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Search(ctx, api.SearchRequest{UserID: sp.UserID, Question: "bread"}); err != nil {
			t.Fatal(err)
		}
		out := runProcs(t, bin, env, []string{"--json", "--embedder", "none", "add", "My cat is called Miso."})
		var added api.AddResponse
		if err := json.Unmarshal([]byte(out[0]), &added); err != nil || len(added.Added) != 1 {
			t.Fatalf("CLI add: %v %s", err, out[0])
		}
		sr, err := c.Search(ctx, api.SearchRequest{UserID: sp.UserID, Question: "what is the cat called?"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(sr.IDs(), added.Added[0]) {
			t.Errorf("the server's search returns %v, not the CLI's turn %s", sr.IDs(), added.Added[0])
		}
		var restIDs []string
		for i := range 3 {
			r, err := c.Add(ctx, api.AddRequest{UserID: sp.UserID, Turns: []api.TurnInput{{Speaker: "Ann", Text: fmt.Sprintf("REST turn %d after the CLI's: the bread rose well.", i)}}})
			if err != nil {
				t.Fatalf("REST add without id after a CLI add: %v", err)
			}
			restIDs = append(restIDs, r.Added...)
		}
		checkShared(t, openShared(t, env), 5)
		// A CLI delete of a turn the server added: the server's next reads
		// no longer show it, in search or in any event.
		runProcs(t, bin, env, []string{"--embedder", "none", "delete", "--yes", restIDs[0]})
		sr, err = c.Search(ctx, api.SearchRequest{UserID: sp.UserID, Question: "did the bread rise?"})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(sr.IDs(), restIDs[0]) {
			t.Errorf("the server's search still returns %s, deleted by the CLI", restIDs[0])
		}
		evs, err := c.Events(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Events {
			if slices.Contains(e.Event.TurnIDs, restIDs[0]) || len(e.Event.TurnIDs) != len(e.Turns) {
				t.Errorf("event %s after the CLI's delete: turn ids %v, %d turns", e.Event.ID, e.Event.TurnIDs, len(e.Turns))
			}
		}
		for _, err := range spacecheck.Check(ctx, openShared(t, env), store.Space{UserID: "default"}, spacecheck.Want{Turns: 4, InEvent: true}) {
			t.Error(err)
		}
	})
}

// TestProcessKilledMidIngest kills (SIGKILL) one of two ingests into one
// space while it runs: what it committed holds the invariants, and
// rerunning it converges to both files stored once.
func TestProcessKilledMidIngest(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	processBackends(t, func(t *testing.T, env map[string]string) {
		const n = 1500
		a := writeConversation(t, "a", n, true)
		b := writeConversation(t, "b", 300, true)
		victim := exec.Command(bin, "ingest", a, "-q", "--embedder", "none")
		victim.Env = procEnv(env)
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		other := make(chan []string, 1)
		go func() { other <- runProcs(t, bin, env, []string{"ingest", b, "-q", "--embedder", "none"}) }()
		s := openShared(t, env)
		sp := store.Space{UserID: "default"}
		for {
			// Kill once some of the file is stored, or give up when it
			// finished first (then there was nothing to kill).
			if _, err := s.GetTurn(t.Context(), sp, "a-200"); err == nil {
				break
			}
			if victim.ProcessState != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_ = victim.Process.Kill()
		err := victim.Wait()
		<-other
		ts, lerr := s.ListTurns(t.Context(), sp, store.TurnQuery{})
		if lerr != nil {
			t.Fatal(lerr)
		}
		stored := 0
		for _, tr := range ts {
			if strings.HasPrefix(tr.ID, "a-") {
				stored++
			}
		}
		t.Logf("ingest: %v, with %d of its %d turns stored", err, stored, n)
		checkShared(t, s, -1)
		runProcs(t, bin, env, []string{"ingest", a, "-q", "--embedder", "none"})
		checkShared(t, s, n+300)
	})
}

// TestProcessesKilledAtRandom runs three real ingests of different files
// into one space at once and kills (SIGKILL) one or more of them at random
// moments: each victim dies once a random turn of its file is stored, or
// at once. What the processes committed must hold the invariants (Seq
// unique and dense, every event's members stored, every turn in an
// event); rerunning the three ingests must converge to what a clean ingest
// of the same files into a fresh database stores: the same turns (id,
// session, speaker, text), each file's turns in file order by Seq, every
// turn in an event. Event ids and boundaries are not compared: they depend
// on how the writers interleaved. HIGMEM_KILL_SEED replays a run (the seed
// is logged).
func TestProcessesKilledAtRandom(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("HIGMEM_KILL_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("HIGMEM_KILL_SEED=%q: %v", v, err)
		}
	}
	t.Logf("HIGMEM_KILL_SEED=%d", seed)
	files := []struct {
		prefix string
		n      int
	}{{"a", 900}, {"b", 600}, {"c", 400}}
	var paths []string
	total := 0
	for _, f := range files {
		paths = append(paths, writeConversation(t, f.prefix, f.n, true))
		total += f.n
	}
	ingest := func(path string) []string { return []string{"ingest", path, "-q", "--embedder", "none"} }
	var want []turnRecord
	processBackends(t, func(t *testing.T, env map[string]string) {
		rng := rand.New(rand.NewPCG(seed, 0))
		s := openShared(t, env)
		sp := store.Space{UserID: "default"}
		// Who dies, and when: at least one victim; a victim dies once
		// turn k of its file is stored (k = 0: as soon as it started).
		kill := make([]int, len(files))
		for i := range kill {
			kill[i] = -1
		}
		for _, i := range rng.Perm(len(files))[:1+rng.IntN(len(files))] {
			kill[i] = rng.IntN(files[i].n)
		}
		t.Logf("kill points (turn of the file, -1 = not killed): %v", kill)
		cmds := make([]*exec.Cmd, len(files))
		done := make([]chan error, len(files))
		for i := range files {
			cmds[i] = exec.Command(bin, ingest(paths[i])...)
			cmds[i].Env = procEnv(env)
			var stderr strings.Builder
			cmds[i].Stderr = &stderr
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
			done[i] = make(chan error, 1)
			go func() {
				err := cmds[i].Wait()
				if err != nil && kill[i] < 0 {
					err = fmt.Errorf("%v\n%s", err, stderr.String())
				}
				done[i] <- err
			}()
		}
		var wg sync.WaitGroup
		for i := range files {
			wg.Go(func() {
				if kill[i] < 0 {
					if err := <-done[i]; err != nil {
						t.Errorf("ingest %s (not killed): %v", files[i].prefix, err)
					}
					return
				}
				id := fmt.Sprintf("%s-%d", files[i].prefix, kill[i])
				for kill[i] > 0 {
					if _, err := s.GetTurn(context.Background(), sp, id); err == nil {
						break
					}
					select {
					case err := <-done[i]:
						t.Logf("ingest %s finished before turn %s was seen (%v)", files[i].prefix, id, err)
						return
					case <-time.After(time.Millisecond):
					}
				}
				_ = cmds[i].Process.Kill()
				t.Logf("ingest %s killed at turn %s: %v", files[i].prefix, id, <-done[i])
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		ts, err := s.ListTurns(t.Context(), sp, store.TurnQuery{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d of %d turns stored after the kills", len(ts), total)
		checkShared(t, s, -1)
		checkFileOrder(t, ts)

		runProcs(t, bin, env, ingest(paths[0]), ingest(paths[1]), ingest(paths[2]))
		checkShared(t, s, total)
		got := turnRecords(t, s)

		// The clean ingest, one file after another, into a fresh
		// database of the same backend (once: both backends must
		// converge to the same turns).
		if want == nil {
			clean := baseEnv(t)
			if strings.HasPrefix(env["HIGMEM_DB"], "postgres") {
				clean["HIGMEM_DB"] = pgtest.SchemaDSN(t)
			}
			for _, p := range paths {
				runProcs(t, bin, clean, ingest(p))
			}
			cs := openShared(t, clean)
			checkShared(t, cs, total)
			want = turnRecords(t, cs)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("after the kills and the reruns, the turns differ from a clean ingest (-clean +got):\n%s", d)
		}
	})
}

// turnRecord is what a clean ingest and a converged one must agree on for
// one turn.
type turnRecord struct{ ID, Session, Speaker, Text string }

// turnRecords returns the turns of the default space, sorted by id, after
// checking that each file's turns are in file order by Seq.
func turnRecords(t *testing.T, s store.Store) []turnRecord {
	t.Helper()
	ts, err := s.ListTurns(t.Context(), store.Space{UserID: "default"}, store.TurnQuery{})
	if err != nil {
		t.Fatal(err)
	}
	checkFileOrder(t, ts)
	var out []turnRecord
	for _, tr := range ts {
		out = append(out, turnRecord{tr.ID, tr.SessionID, tr.Speaker, tr.Text})
	}
	slices.SortFunc(out, func(a, b turnRecord) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// checkFileOrder checks that the turns of each file (ids prefix-k, k from
// 1), listed in Seq order, come in file order.
func checkFileOrder(t *testing.T, ts []store.Turn) {
	t.Helper()
	last := map[string]int{}
	for _, tr := range ts {
		prefix, k, ok := strings.Cut(tr.ID, "-")
		n, err := strconv.Atoi(k)
		if !ok || err != nil {
			t.Errorf("turn id %q is not prefix-k", tr.ID)
			continue
		}
		if n <= last[prefix] {
			t.Errorf("turn %s (seq %d) comes after %s-%d", tr.ID, tr.Seq, prefix, last[prefix])
		}
		last[prefix] = n
	}
}
