package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// stressModel is what one worker of TestStress knows must exist: the turn
// ids of each space it writes, by space user id. Each worker adds and
// deletes only turns whose ids carry its own prefix, in the shared spaces,
// and alone writes its own import targets, so its knowledge is exact
// whatever the other workers do.
type stressModel struct {
	mu    sync.Mutex
	turns map[string]map[string]bool // space -> turn id -> stored
}

func (m *stressModel) set(space, id string, stored bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns[space] == nil {
		m.turns[space] = map[string]bool{}
	}
	m.turns[space][id] = stored
}

// TestStress runs workers that interleave random adds, batch adds,
// asynchronous adds, deletes, exports and imports (into another space and
// into the same space), searches and asks against two servers, each over
// its own Memory, on one SQLite file. At the end every space holds exactly
// the turns the workers' model says, passes spacecheck (unique Seq, every
// member stored, every turn in an event), and both servers and a freshly
// opened Memory see the same turns and the same event membership.
//
// HIGMEM_STRESS_N sets the operations per worker (default 15);
// HIGMEM_STRESS_SEED replays a run (the seed is logged).
func TestStress(t *testing.T) {
	ops := 15
	if v := os.Getenv("HIGMEM_STRESS_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("HIGMEM_STRESS_N=%q: want a positive integer", v)
		}
		ops = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("HIGMEM_STRESS_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("HIGMEM_STRESS_SEED=%q: %v", v, err)
		}
	}
	t.Logf("HIGMEM_STRESS_SEED=%d HIGMEM_STRESS_N=%d", seed, ops)

	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stress.db")
	openStore := func() store.Store {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	var clients []*api.Client
	for range 2 {
		mem := newMem(t, higmem.Options{Store: openStore()})
		_, ts, _ := start(t, mem, Options{})
		clients = append(clients, api.NewClient(ts.URL, adminKey, nil))
	}

	shared := []string{"shared-a", "shared-b"}
	model := &stressModel{turns: map[string]map[string]bool{}}
	for _, sp := range shared {
		model.turns[sp] = map[string]bool{}
	}
	const workers = 4
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() { errs[w] = stressWorker(ctx, w, rng, ops, clients, shared, model) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	st := openStore()
	fresh := newMem(t, higmem.Options{Store: st})
	_, fts, _ := start(t, fresh, Options{})
	views := append(slices.Clone(clients), api.NewClient(fts.URL, adminKey, nil))
	for space, want := range model.turns {
		var ids []string
		for id, stored := range want {
			if stored {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		sp := store.Space{UserID: space}
		for _, err := range spacecheck.Check(ctx, st, sp, spacecheck.Want{Turns: len(ids), InEvent: true}) {
			t.Errorf("%s: %v", space, err)
		}
		stored, err := st.ListTurns(ctx, sp, store.TurnQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range stored {
			got = append(got, tr.ID)
		}
		slices.Sort(got)
		if d := cmp.Diff(ids, got); d != "" {
			t.Errorf("%s: stored turn ids differ from the model (-want +got):\n%s", space, d)
		}
		// Every server, and a Memory opened afresh, reads the same
		// turns and the same event membership.
		var first map[string][]string
		for i, c := range views {
			m, err := membership(ctx, c, api.Scope{UserID: space})
			if err != nil {
				t.Fatalf("%s: view %d: %v", space, i, err)
			}
			if i == 0 {
				first = m
				if d := cmp.Diff(ids, slices.Sorted(maps.Keys(m))); d != "" {
					t.Errorf("%s: events of view 0 hold other turns than the model (-want +got):\n%s", space, d)
				}
				continue
			}
			if d := cmp.Diff(first, m); d != "" {
				t.Errorf("%s: view %d differs from view 0 (-0 +%d):\n%s", space, i, i, d)
			}
		}
	}
}

// membership reads, through c, every event of space s and returns the
// events each turn is in. It fails when an event's turns and turn ids
// disagree.
func membership(ctx context.Context, c *api.Client, s api.Scope) (map[string][]string, error) {
	evs, err := c.Events(ctx, s)
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, e := range evs.Events {
		if len(e.Event.TurnIDs) != len(e.Turns) {
			return nil, fmt.Errorf("event %s lists %d turn ids but carries %d turns", e.Event.ID, len(e.Event.TurnIDs), len(e.Turns))
		}
		for _, id := range e.Event.TurnIDs {
			m[id] = append(m[id], e.Event.ID)
		}
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m, nil
}

// stressWorker runs ops random operations as worker w.
func stressWorker(ctx context.Context, w int, rng *rand.Rand, ops int, clients []*api.Client, shared []string, model *stressModel) error {
	var mine []string // this worker's stored turns in the shared spaces, as "space/id"
	n := 0
	newTurn := func() api.TurnInput {
		n++
		topics := []string{"the garden", "a trip to Porto", "the new bike", "cello lessons", "the sourdough starter"}
		return api.TurnInput{ID: fmt.Sprintf("w%d-%d", w, n), SessionID: fmt.Sprintf("w%d-s%d", w, n/8),
			Speaker: []string{"Ann", "Bob"}[rng.IntN(2)], Text: fmt.Sprintf("worker %d turn %d: news about %s", w, n, topics[rng.IntN(len(topics))])}
	}
	// pending async jobs: job id, space and turn ids.
	type job struct {
		c     *api.Client
		id    string
		space string
		ids   []string
	}
	var jobs []job
	waitJobs := func() error {
		for _, j := range jobs {
			got, err := j.c.WaitJob(ctx, api.Scope{UserID: j.space}, j.id, 2*time.Millisecond)
			if err != nil {
				return fmt.Errorf("job %s: %w", j.id, err)
			}
			if got.Status != api.JobSucceeded {
				return fmt.Errorf("job %s: %+v", j.id, got)
			}
			for _, id := range j.ids {
				model.set(j.space, id, true)
				mine = append(mine, j.space+"/"+id)
			}
		}
		jobs = nil
		return nil
	}
	ownSpace := fmt.Sprintf("own-%d", w)
	var ownExport []byte
	for op := range ops {
		c := clients[rng.IntN(len(clients))]
		space := shared[rng.IntN(len(shared))]
		scope := api.Scope{UserID: space}
		what := rng.IntN(100)
		fail := func(err error) error { return fmt.Errorf("worker %d op %d (%d): %w", w, op, what, err) }
		switch {
		case what < 20: // one add
			tr := newTurn()
			if _, err := c.Add(ctx, api.AddRequest{UserID: space, Turn: &tr}); err != nil {
				return fail(err)
			}
			model.set(space, tr.ID, true)
			mine = append(mine, space+"/"+tr.ID)
		case what < 35: // a batch add
			var in []api.TurnInput
			for range 2 + rng.IntN(5) {
				in = append(in, newTurn())
			}
			if _, err := c.Add(ctx, api.AddRequest{UserID: space, Turns: in}); err != nil {
				return fail(err)
			}
			for _, tr := range in {
				model.set(space, tr.ID, true)
				mine = append(mine, space+"/"+tr.ID)
			}
		case what < 50: // an asynchronous add, waited for later
			in := []api.TurnInput{newTurn(), newTurn()}
			j, err := c.AddAsync(ctx, api.AddRequest{UserID: space, Turns: in})
			if err != nil {
				return fail(err)
			}
			jobs = append(jobs, job{c, j.ID, space, []string{in[0].ID, in[1].ID}})
		case what < 65: // delete one of this worker's turns
			if len(mine) == 0 {
				continue
			}
			i := rng.IntN(len(mine))
			key := mine[i]
			mine = slices.Delete(mine, i, i+1)
			sp, id, _ := strings.Cut(key, "/")
			if _, err := c.DeleteTurn(ctx, api.Scope{UserID: sp}, id); err != nil {
				return fail(err)
			}
			model.set(sp, id, false)
		case what < 75: // export a shared space, import it into a fresh space of this worker's
			var buf bytes.Buffer
			if err := c.Export(ctx, scope, &buf); err != nil {
				return fail(err)
			}
			ids, err := exportedTurns(buf.Bytes())
			if err != nil {
				return fail(err)
			}
			target := fmt.Sprintf("imp-%d-%d", w, op)
			if _, err := clients[rng.IntN(len(clients))].Import(ctx, api.Scope{UserID: target}, &buf); err != nil {
				return fail(err)
			}
			for _, id := range ids {
				model.set(target, id, true)
			}
			if len(ids) == 0 {
				model.set(target, "", false) // still checked: empty
			}
		case what < 85: // own space: add, export, delete, then re-import into the same space
			if ownExport == nil || rng.IntN(2) == 0 {
				tr := newTurn()
				if _, err := c.Add(ctx, api.AddRequest{UserID: ownSpace, Turn: &tr}); err != nil {
					return fail(err)
				}
				model.set(ownSpace, tr.ID, true)
				var buf bytes.Buffer
				if err := c.Export(ctx, api.Scope{UserID: ownSpace}, &buf); err != nil {
					return fail(err)
				}
				ownExport = buf.Bytes()
				continue
			}
			// Re-importing the last export restores what it held.
			ids, err := exportedTurns(ownExport)
			if err != nil {
				return fail(err)
			}
			if _, err := c.Import(ctx, api.Scope{UserID: ownSpace}, bytes.NewReader(ownExport)); err != nil {
				return fail(err)
			}
			for _, id := range ids {
				model.set(ownSpace, id, true)
			}
		case what < 93:
			if _, err := c.Search(ctx, api.SearchRequest{UserID: space, Question: "what is new about the garden?"}); err != nil {
				return fail(err)
			}
		default:
			if _, err := c.Ask(ctx, api.AskRequest{UserID: space, Question: "who talked about the bike?"}); err != nil {
				return fail(err)
			}
		}
		if rng.IntN(8) == 0 {
			if err := waitJobs(); err != nil {
				return fail(err)
			}
		}
	}
	return waitJobs()
}

// exportedTurns returns the turn ids of an export.
func exportedTurns(b []byte) ([]string, error) {
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Kind string `json:"kind"`
			Turn *struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, err
		}
		if l.Kind == "turn" && l.Turn != nil {
			ids = append(ids, l.Turn.ID)
		}
	}
	return ids, sc.Err()
}
