// Package jobstest is the conformance suite for server.JobStore
// implementations: every JobStore must pass Run.
package jobstest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// short is a lease that has run out by the time the next call is made
// (Run waits for it rather than timing anything).
const short = time.Millisecond

// long is a lease that outlives the test.
const long = time.Hour

// Run checks the contract of server.JobStore on stores made by open; each
// call of open must return an empty store.
func Run(t *testing.T, open func(t *testing.T) server.JobStore) {
	t.Run("CreateAndGet", func(t *testing.T) { testCreateAndGet(t, open(t)) })
	t.Run("LeaseGuardsClaim", func(t *testing.T) { testLeaseGuardsClaim(t, open(t)) })
	t.Run("UpdateNeedsOwner", func(t *testing.T) { testUpdateNeedsOwner(t, open(t)) })
	t.Run("FinishedStayFinished", func(t *testing.T) { testFinished(t, open(t)) })
	t.Run("OldestFirst", func(t *testing.T) { testOldestFirst(t, open(t)) })
	t.Run("ConcurrentClaimsOnce", func(t *testing.T) { testConcurrentClaims(t, open(t)) })
}

var base = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func newJob(id string, i int) api.Job {
	return api.Job{ID: id, UserID: "alice", AgentID: "bot", Kind: "add", Status: api.JobQueued, Turns: 2,
		CreatedAt: base.Add(time.Duration(i) * time.Second)}
}

// waitLease outlasts a short lease.
func waitLease() { time.Sleep(5 * short) }

func testCreateAndGet(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	j := newJob("job_a", 0)
	if err := s.CreateJob(ctx, j, []byte(`{"add":{}}`), "o1", long); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Job(ctx, "job_a")
	if err != nil || !ok {
		t.Fatalf("Job = %v %v", ok, err)
	}
	if got.ID != j.ID || got.UserID != "alice" || got.AgentID != "bot" || got.Status != api.JobQueued || got.Turns != 2 || !got.CreatedAt.Equal(j.CreatedAt) {
		t.Errorf("Job = %+v, want %+v", got, j)
	}
	if err := s.CreateJob(ctx, j, nil, "o2", long); err == nil {
		t.Error("CreateJob of an existing id succeeded")
	}
	if _, ok, err := s.Job(ctx, "job_missing"); ok || err != nil {
		t.Errorf("Job of a missing id = %v %v", ok, err)
	}
}

func testLeaseGuardsClaim(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	payload := []byte(`{"add":{"user_id":"alice","turns":[{"id":"x","text":"hi"}]}}`)
	if err := s.CreateJob(ctx, newJob("job_held", 0), payload, "o1", long); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := s.ClaimJob(ctx, "o2", long); ok || err != nil {
		t.Fatalf("claimed a job under a live lease: %v %v", ok, err)
	}
	if err := s.CreateJob(ctx, newJob("job_orphan", 1), payload, "dead", short); err != nil {
		t.Fatal(err)
	}
	waitLease()
	j, p, ok, err := s.ClaimJob(ctx, "o2", long)
	if err != nil || !ok || j.ID != "job_orphan" || !bytes.Equal(p, payload) {
		t.Fatalf("ClaimJob = %s %q %v %v, want job_orphan with its payload", j.ID, p, ok, err)
	}
	if _, _, ok, _ := s.ClaimJob(ctx, "o3", long); ok {
		t.Error("a claimed job was claimed again under the new lease")
	}
	// The dead owner lost it; the claimer holds it.
	j.Status = api.JobRunning
	if err := s.UpdateJob(ctx, "dead", j, long); !errors.Is(err, server.ErrJobLost) {
		t.Errorf("UpdateJob by the old owner = %v, want ErrJobLost", err)
	}
	if err := s.UpdateJob(ctx, "o2", j, long); err != nil {
		t.Errorf("UpdateJob by the claimer = %v", err)
	}
}

func testUpdateNeedsOwner(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	j := newJob("job_u", 0)
	if err := s.CreateJob(ctx, j, nil, "o1", long); err != nil {
		t.Fatal(err)
	}
	j.Status, j.StartedAt = api.JobRunning, base.Add(time.Minute)
	if err := s.UpdateJob(ctx, "o2", j, long); !errors.Is(err, server.ErrJobLost) {
		t.Errorf("UpdateJob by a stranger = %v, want ErrJobLost", err)
	}
	if err := s.UpdateJob(ctx, "o1", j, long); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.Job(ctx, "job_u")
	if got.Status != api.JobRunning || !got.StartedAt.Equal(j.StartedAt) {
		t.Errorf("after update: %+v", got)
	}
	missing := newJob("job_none", 0)
	if err := s.UpdateJob(ctx, "o1", missing, long); !errors.Is(err, server.ErrJobLost) {
		t.Errorf("UpdateJob of a missing job = %v, want ErrJobLost", err)
	}
	// A renewed lease keeps others off: o1 renews with a long lease after
	// a short one.
	if err := s.UpdateJob(ctx, "o1", j, short); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateJob(ctx, "o1", j, long); err != nil {
		t.Fatal(err)
	}
	waitLease()
	if _, _, ok, _ := s.ClaimJob(ctx, "o2", long); ok {
		t.Error("claimed a job whose lease was renewed")
	}
}

func testFinished(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	j := newJob("job_f", 0)
	if err := s.CreateJob(ctx, j, []byte("{}"), "o1", short); err != nil {
		t.Fatal(err)
	}
	j.Status, j.FinishedAt = api.JobSucceeded, base.Add(time.Minute)
	j.Add = &api.AddResponse{Added: []string{"t1", "t2"}}
	if err := s.UpdateJob(ctx, "o1", j, short); err != nil {
		t.Fatal(err)
	}
	waitLease()
	if got, _, ok, _ := s.ClaimJob(ctx, "o2", long); ok {
		t.Errorf("claimed a finished job: %+v", got)
	}
	again := j
	again.Status = api.JobFailed
	if err := s.UpdateJob(ctx, "o1", again, long); !errors.Is(err, server.ErrJobLost) {
		t.Errorf("UpdateJob of a finished job = %v, want ErrJobLost", err)
	}
	got, ok, err := s.Job(ctx, "job_f")
	if err != nil || !ok || got.Status != api.JobSucceeded || got.Add == nil || len(got.Add.Added) != 2 || !got.FinishedAt.Equal(j.FinishedAt) {
		t.Errorf("finished job = %+v %v %v", got, ok, err)
	}
}

func testOldestFirst(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	for _, i := range []int{3, 1, 2} {
		if err := s.CreateJob(ctx, newJob(fmt.Sprintf("job_%d", i), i), nil, "dead", short); err != nil {
			t.Fatal(err)
		}
	}
	waitLease()
	for _, want := range []string{"job_1", "job_2", "job_3"} {
		j, _, ok, err := s.ClaimJob(ctx, "o1", long)
		if err != nil || !ok || j.ID != want {
			t.Fatalf("ClaimJob = %s %v %v, want %s", j.ID, ok, err, want)
		}
	}
}

func testConcurrentClaims(t *testing.T, s server.JobStore) {
	ctx := t.Context()
	const n, owners = 24, 4
	for i := range n {
		if err := s.CreateJob(ctx, newJob(fmt.Sprintf("job_c%02d", i), i), nil, "dead", short); err != nil {
			t.Fatal(err)
		}
	}
	waitLease()
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for o := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("o%d", o)
			for {
				j, _, ok, err := s.ClaimJob(ctx, owner, long)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				if prev, dup := claimed[j.ID]; dup {
					t.Errorf("%s claimed by %s and %s", j.ID, prev, owner)
				}
				claimed[j.ID] = owner
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != n {
		t.Errorf("%d of %d jobs claimed", len(claimed), n)
	}
}
