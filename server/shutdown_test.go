package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/llm/llmtest"
)

// waitFor polls cond until it holds (no deadline: the test's own timeout
// bounds it).
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

func serveReal(t *testing.T, s *Server) (*http.Server, string) {
	t.Helper()
	hs := s.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	return hs, "http://" + ln.Addr().String()
}

// TestGracefulShutdownFinishesWrites starts a slow synchronous add and two
// async jobs (one running, one queued), then shuts down: every write
// completes and is stored, the client gets its answer, and new writes are
// refused while draining.
func TestGracefulShutdownFinishesWrites(t *testing.T) {
	ctx := context.Background()
	model := &llmtest.Scripted{Delay: 100 * time.Millisecond}
	mem := newMem(t, higmem.Options{MemoryModel: model})
	s := New(mem, Options{Keys: testKeys, MaxJobs: 1})
	hs, url := serveReal(t, s)
	c := api.NewClient(url, adminKey, nil)

	syncDone := make(chan error, 1)
	go func() {
		res, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
			{ID: "slow1", Speaker: "Alice", Text: "I adopted a greyhound called Biscuit."},
			{ID: "slow2", Speaker: "Alice", Text: "Biscuit loves the beach."},
		}})
		if err == nil && len(res.Added) != 2 {
			err = errors.New("not all added")
		}
		syncDone <- err
	}()
	var jobs []string
	for _, id := range []string{"job1", "job2"} {
		j, err := c.AddAsync(ctx, api.AddRequest{UserID: "bob", Turn: &api.TurnInput{ID: id, Speaker: "Bob", Text: "Bob note " + id}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.ID)
	}
	waitFor(func() bool { return s.Pending() == 3 })

	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- hs.Shutdown(sctx) }()
	go func() { errs <- s.Shutdown(sctx) }()

	// While draining, writes are refused and health says so.
	waitFor(func() bool {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/health", nil))
		return strings.Contains(rec.Body.String(), "draining")
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/turns", strings.NewReader(`{"user_id":"carol","turn":{"speaker":"c","text":"late"}}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "shutting down") {
		t.Fatalf("write while draining: %d %s", rec.Code, rec.Body)
	}

	if err := <-syncDone; err != nil {
		t.Fatalf("in-flight add: %v", err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	}
	if n := s.Pending(); n != 0 {
		t.Fatalf("%d writes pending after shutdown", n)
	}
	for sp, ids := range map[higmem.Space][]string{{UserID: "alice"}: {"slow1", "slow2"}, {UserID: "bob"}: {"job1", "job2"}} {
		for _, id := range ids {
			if _, err := mem.Get(ctx, sp, id); err != nil {
				t.Errorf("%s not stored: %v", id, err)
			}
		}
		if evs, err := mem.Events(ctx, sp); err != nil || len(evs) == 0 {
			t.Errorf("%s: no events built: %v", sp, err)
		}
	}
	if _, err := mem.Get(ctx, higmem.Space{UserID: "carol"}, "t1"); err == nil {
		t.Error("write refused while draining was stored")
	}
	for _, id := range jobs {
		j, ok, err := s.jobs.get(ctx, higmem.Space{UserID: "bob"}, id)
		if err != nil || !ok || j.Status != api.JobSucceeded {
			t.Errorf("job %s: %+v", id, j)
		}
	}
}

// TestShutdownDeadlineCancelsWrites gives Shutdown no time: the running job
// is cancelled, reported as failed, and leaves nothing half-written.
func TestShutdownDeadlineCancelsWrites(t *testing.T) {
	ctx := context.Background()
	model := &llmtest.Scripted{Delay: time.Hour}
	mem := newMem(t, higmem.Options{MemoryModel: model})
	s := New(mem, Options{Keys: testKeys})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/turns?async=true", strings.NewReader(`{"user_id":"dora","turns":[{"id":"d1","speaker":"d","text":"one"},{"id":"d2","speaker":"d","text":"two"}]}`))
	req.Header.Set("Authorization", "Bearer "+adminKey)
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("async add: %d %s", rec.Code, rec.Body)
	}
	waitFor(func() bool { return model.Total() > 0 }) // the job is inside the LLM call
	expired, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Shutdown(expired); !errors.Is(err, context.Canceled) {
		t.Fatalf("shutdown with no time: %v", err)
	}
	waitFor(func() bool { return s.Pending() == 0 })
	st, err := mem.Stats(ctx, higmem.Space{UserID: "dora"})
	if err != nil || st.Turns != 0 || st.Events != 0 {
		t.Fatalf("half-written: %+v %v", st, err)
	}
	var queued api.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &queued); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := s.jobs.get(ctx, higmem.Space{UserID: "dora"}, queued.ID); v.Status != api.JobFailed || v.Error == nil || v.Error.Code != api.CodeUnavailable {
		t.Fatalf("cancelled job: %+v", v)
	}
}

// TestJobQueueBound fills the job queue: the next submission gets 429 and
// is not written.
func TestJobQueueBound(t *testing.T) {
	model := &llmtest.Scripted{Delay: time.Hour}
	mem := newMem(t, higmem.Options{MemoryModel: model})
	s, ts, _ := start(t, mem, Options{MaxJobs: 1, MaxQueuedJobs: 1})
	c := api.NewClient(ts.URL, adminKey, nil)
	ctx := context.Background()
	for i, want := range []int{202, 202, 429} {
		_, err := c.AddAsync(ctx, api.AddRequest{UserID: "erin", Turn: &api.TurnInput{ID: string(rune('a' + i)), Speaker: "e", Text: "note"}})
		if code, name := statusOf(err); want == 429 && (code != 429 || name != api.CodeTooManyJobs) {
			t.Fatalf("job %d: %v", i, err)
		} else if want == 202 && err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	if n := s.Pending(); n != 2 {
		t.Fatalf("pending %d", n)
	}
	// Let the cleanup's Shutdown cancel the hour-long jobs at once.
	expired, cancel := context.WithCancel(ctx)
	cancel()
	_ = s.Shutdown(expired)
	waitFor(func() bool { return s.Pending() == 0 })
}
