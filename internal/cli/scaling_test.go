package cli

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/postgres"
)

// TestThreeServersOnePostgres runs three `higmem serve` processes on one
// PostgreSQL database and drives them at once: adds with and without ids,
// deletes and searches, to a space all three share and to one space each.
// Afterwards every space holds exactly the turns added and not deleted,
// with unique Seq, every turn in an event and no event naming a deleted
// turn; and a turn written through one server is returned by the next
// search through another.
func TestThreeServersOnePostgres(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Schema(t)
	env := baseEnv(t)
	env["HIGMEM_DB"] = pgtest.WithSearchPath(t, dsn, schema)
	var servers []*api.Client
	var procs []*os.Process
	for range 3 {
		cmd, url := startServe(t, env, "--no-auth")
		servers = append(servers, api.NewClient(url, "", nil))
		procs = append(procs, cmd.Process)
	}
	ctx := t.Context()
	live := map[string]map[string]bool{"alice": {}}
	for i := range 3 {
		live[fmt.Sprintf("own%d", i)] = map[string]bool{}
	}

	// A write through one server is seen by the next search through the
	// next one.
	for i, via := range servers {
		next := servers[(i+1)%len(servers)]
		text := fmt.Sprintf("The quokka number %d lives on Rottnest island and likes figs %d.", 7000+i, i)
		res, err := via.Add(ctx, api.AddRequest{UserID: "alice", Turn: &api.TurnInput{Speaker: "Alice", Text: text}})
		if err != nil || len(res.Added) != 1 {
			t.Fatalf("add through server %d: %v %+v", i, err, res)
		}
		live["alice"][res.Added[0]] = true
		found, err := next.Search(ctx, api.SearchRequest{UserID: "alice", Question: fmt.Sprintf("quokka number %d figs", 7000+i)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(found.IDs(), res.Added[0]) {
			t.Errorf("turn %s added through server %d not found through server %d: %v", res.Added[0], i, (i+1)%3, found.IDs())
		}
	}

	const rounds = 8
	var mu sync.Mutex
	keep := func(user string, ids []string, deleted string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			live[user][id] = true
		}
		if deleted != "" {
			delete(live[user], deleted)
		}
	}
	var wg sync.WaitGroup
	for i, c := range servers {
		for _, user := range []string{"alice", fmt.Sprintf("own%d", i)} {
			wg.Go(func() {
				for r := range rounds {
					turns := []api.TurnInput{
						{Speaker: "Alice", Text: fmt.Sprintf("Server %d round %d: I planted %d tomatoes.", i, r, r+i), SessionID: fmt.Sprintf("s%d", r%3)},
						{Speaker: "Bob", Text: fmt.Sprintf("Server %d round %d: the tomatoes need water.", i, r), SessionID: fmt.Sprintf("s%d", r%3)},
					}
					if r%2 == 0 {
						turns[0].ID, turns[1].ID = fmt.Sprintf("%s-%d-%d-a", user, i, r), fmt.Sprintf("%s-%d-%d-b", user, i, r)
					}
					res, err := c.Add(ctx, api.AddRequest{UserID: user, Turns: turns})
					if err != nil {
						t.Errorf("server %d add to %s: %v", i, user, err)
						return
					}
					var del string
					if r%3 == 2 { // delete this round's first turn
						if _, err := c.DeleteTurn(ctx, api.Scope{UserID: user}, res.Added[0]); err != nil {
							t.Errorf("server %d delete in %s: %v", i, user, err)
							return
						}
						del = res.Added[0]
					}
					keep(user, res.Added, del)
					if _, err := c.Search(ctx, api.SearchRequest{UserID: user, Question: "how many tomatoes were planted?"}); err != nil {
						t.Errorf("server %d search in %s: %v", i, user, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, p := range procs {
		_ = p.Signal(os.Interrupt)
	}
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for user, ids := range live {
		for _, err := range spacecheck.Check(ctx, st, store.Space{UserID: user}, spacecheck.Want{Turns: len(ids), InEvent: true}) {
			t.Errorf("space %s: %v", user, err)
		}
		stored, err := st.ListTurns(ctx, store.Space{UserID: user}, store.TurnQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range stored {
			if !ids[tn.ID] {
				t.Errorf("space %s holds %s, which was deleted or never added", user, tn.ID)
			}
		}
	}
}
