package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// TestConcurrentAddsAsyncAndDeletes sends batch adds, asynchronous adds and
// deletes of one space to one server at once: every event lists exactly
// the turns it has, every stored turn is in an event, Seq is unique.
func TestConcurrentAddsAsyncAndDeletes(t *testing.T) {
	st := memstore.New()
	mem := newMem(t, higmem.Options{Store: st})
	_, ts, _ := start(t, mem, Options{})
	c := api.NewClient(ts.URL, adminKey, nil)
	ctx := context.Background()
	scope := api.Scope{UserID: "alice"}
	var seed []api.TurnInput
	for i := range 60 {
		seed = append(seed, api.TurnInput{ID: fmt.Sprint("seed", i), Speaker: "Ann", Text: fmt.Sprintf("seed %d: we planted tomatoes", i)})
	}
	if _, err := c.Add(ctx, api.AddRequest{UserID: scope.UserID, Turns: seed}); err != nil {
		t.Fatal(err)
	}
	const each = 30
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var jobs []string
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	for i := range each {
		wg.Go(func() {
			var in []api.TurnInput
			for j := range 3 {
				in = append(in, api.TurnInput{ID: fmt.Sprintf("b%d-%d", i, j), Speaker: "Bob", Text: fmt.Sprintf("batch %d part %d: the tomatoes are red", i, j)})
			}
			if _, err := c.Add(ctx, api.AddRequest{UserID: scope.UserID, Turns: in}); err != nil {
				fail(err)
			}
		})
		wg.Go(func() {
			j, err := c.AddAsync(ctx, api.AddRequest{UserID: scope.UserID, Turns: []api.TurnInput{{Speaker: "Cy", Text: fmt.Sprintf("async %d: I water them daily", i)}}})
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			jobs = append(jobs, j.ID)
			mu.Unlock()
		})
		wg.Go(func() {
			if _, err := c.DeleteTurn(ctx, scope, fmt.Sprint("seed", 2*i)); err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	for _, id := range jobs {
		j, err := c.WaitJob(ctx, scope, id, 5*time.Millisecond)
		if err != nil || j.Status != api.JobSucceeded {
			fail(fmt.Errorf("job %s: %+v, %v", id, j, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, err := range spacecheck.Check(ctx, st, store.Space{UserID: "alice"}, spacecheck.Want{Turns: 60 - each + 3*each + each, InEvent: true}) {
		t.Error(err)
	}
	evs, err := c.Events(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Events {
		if len(e.Event.TurnIDs) != len(e.Turns) {
			t.Errorf("event %s lists %d turn ids but has %d turns", e.Event.ID, len(e.Event.TurnIDs), len(e.Turns))
		}
	}
}
