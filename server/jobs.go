package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// DefaultJobLease is how long a server holds an async job without renewing
// its lease (Options.JobLease); it renews every third of it.
const DefaultJobLease = 30 * time.Second

// jobs runs asynchronous adds and imports, at most Options.MaxJobs at once,
// with at most Options.MaxQueuedJobs waiting, and keeps them in a JobStore.
// With a durable store (Options.JobStore set) it also claims, every third
// of a lease, the jobs that a stopped or crashed server left behind.
type jobs struct {
	s       *Server
	store   JobStore
	durable bool
	owner   string
	lease   time.Duration
	sem     chan struct{}

	mu     sync.Mutex
	active int // queued or running here
}

// jobRequest is what a job runs, stored with it as its payload.
type jobRequest struct {
	Add    *api.AddRequest `json:"add,omitempty"`
	Scope  api.Scope       `json:"scope"`
	Import []byte          `json:"import,omitempty"`
}

func newJobs(s *Server) *jobs {
	js := &jobs{s: s, store: s.opts.JobStore, lease: s.opts.JobLease, owner: newOwnerID(),
		sem: make(chan struct{}, s.opts.MaxJobs)}
	if js.store == nil {
		js.store = NewMemoryJobStore(s.opts.KeepJobs)
	} else {
		js.durable = true
		go js.recoverLoop(js.lease / 3)
	}
	return js
}

func newJobID() string { return "job_" + randomHex(12) }

// newOwnerID names this server among those sharing a JobStore.
func newOwnerID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// submitAdd queues an add of the turns of req, already checked by
// prepareAdd. With a durable store every turn without an id gets one
// (jobID-index), so that a job re-run after a crash adds nothing twice.
func (js *jobs) submitAdd(sp higmem.Space, req api.AddRequest) (api.Job, error) {
	id := newJobID()
	if req.Turn != nil {
		req.Turns, req.Turn = []api.TurnInput{*req.Turn}, nil
	}
	if js.durable {
		req.Turns = append([]api.TurnInput(nil), req.Turns...)
		for i := range req.Turns {
			if req.Turns[i].ID == "" {
				req.Turns[i].ID = fmt.Sprintf("%s-%d", id, i)
			}
		}
	}
	return js.submit(id, sp, "add", len(req.Turns), jobRequest{Add: &req})
}

// submitImport queues an import of data (a higmem export) into sc.
func (js *jobs) submitImport(sc api.Scope, data []byte) (api.Job, error) {
	return js.submit(newJobID(), engineSpace(sc), "import", 0, jobRequest{Scope: sc, Import: data})
}

// submit stores the job and starts it. It counts as a pending write from
// now until it finishes here, so Shutdown waits for it.
func (js *jobs) submit(id string, sp higmem.Space, kind string, turns int, req jobRequest) (api.Job, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return api.Job{}, fmt.Errorf("server: encoding job: %w", err)
	}
	if !js.reserve(js.s.opts.MaxJobs + js.s.opts.MaxQueuedJobs) {
		if js.s.isDraining() {
			return api.Job{}, errShuttingDown
		}
		return api.Job{}, errorf(http.StatusTooManyRequests, api.CodeTooManyJobs,
			"%d jobs queued or running; retry later", js.running())
	}
	view := api.Job{ID: id, UserID: sp.UserID, AgentID: sp.AgentID, Kind: kind,
		Status: api.JobQueued, Turns: turns, CreatedAt: time.Now().UTC()}
	if err := js.store.CreateJob(js.s.base, view, payload, js.owner, js.lease); err != nil {
		js.release()
		return api.Job{}, fmt.Errorf("server: storing job: %w", err)
	}
	go js.runJob(view, payload)
	return view, nil
}

// reserve takes a place for a job here if fewer than limit are queued or
// running and the server is not shutting down; release gives it back.
func (js *jobs) reserve(limit int) bool {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.active >= limit || !js.s.begin() {
		return false
	}
	js.active++
	return true
}

func (js *jobs) release() {
	js.mu.Lock()
	js.active--
	js.mu.Unlock()
	js.s.end()
}

func (js *jobs) running() int {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.active
}

// recoverLoop claims orphaned jobs at once and then every interval, until
// the server stops.
func (js *jobs) recoverLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		js.claimOrphans()
		select {
		case <-js.s.base.Done():
			return
		case <-t.C:
		}
	}
}

// claimOrphans takes jobs whose lease ran out while there is room to run
// them.
func (js *jobs) claimOrphans() {
	for js.reserve(js.s.opts.MaxJobs) {
		view, payload, ok, err := js.store.ClaimJob(js.s.base, js.owner, js.lease)
		if err != nil || !ok {
			js.release()
			if err != nil && js.s.base.Err() == nil {
				js.s.log.Warn("claiming async jobs", "err", err)
			}
			return
		}
		js.s.log.Info("resuming async job", "job", view.ID, "status", view.Status)
		go js.runJob(view, payload)
	}
}

func (js *jobs) runJob(view api.Job, payload []byte) {
	defer js.release()
	ctx := js.s.base
	select {
	case js.sem <- struct{}{}:
	case <-ctx.Done():
		if !js.durable { // a durable job waits for the next server
			js.finish(view, &api.ErrorDetail{Code: api.CodeUnavailable, Message: "server stopped before the job ran"})
		}
		return
	}
	defer func() { <-js.sem }()
	var req jobRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		js.finish(view, &api.ErrorDetail{Code: api.CodeInternal, Message: "stored job unreadable: " + err.Error()})
		return
	}
	view.Status = api.JobRunning
	view.StartedAt = time.Now().UTC()
	if err := js.store.UpdateJob(ctx, js.owner, view, js.lease); err != nil {
		js.s.log.Warn("async job not started", "job", view.ID, "err", err)
		return
	}
	stop := js.renew(view)
	out := view
	js.execute(ctx, &out, req)
	stop()
	if ctx.Err() != nil && js.durable {
		// Cut short by Shutdown: the lease runs out and another server (or
		// this one, restarted) runs the job again.
		return
	}
	js.finish(out, out.Error)
}

// execute runs the job's request, recording its result or error in j.
func (js *jobs) execute(ctx context.Context, j *api.Job, req jobRequest) {
	l := js.s.local
	switch {
	case j.Kind == "add" && req.Add != nil:
		sp, turns, err := l.prepareAdd(*req.Add)
		if err == nil {
			j.Add, err = l.add(ctx, sp, turns)
		}
		if err != nil {
			js.s.log.Warn("async add failed", "job", j.ID, "space", sp.String(), "err", err)
			j.Error = &api.ErrorDetail{Code: classify(err).code, Message: err.Error()}
		}
	case j.Kind == "import":
		res, err := l.Import(ctx, req.Scope, bytes.NewReader(req.Import))
		j.Import = res
		if err != nil {
			js.s.log.Warn("async import failed", "job", j.ID, "space", engineSpace(req.Scope).String(), "err", err)
			ae := classify(err)
			j.Error = &api.ErrorDetail{Code: ae.code, Message: ae.msg}
		}
	default:
		j.Error = &api.ErrorDetail{Code: api.CodeInternal, Message: "stored job of unknown kind " + j.Kind}
	}
}

// renew keeps the lease of the running job j until the returned function
// is called (which waits for the renewing to stop).
func (js *jobs) renew(j api.Job) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(js.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := js.store.UpdateJob(context.WithoutCancel(js.s.base), js.owner, j, js.lease); err != nil {
					js.s.log.Warn("renewing async job lease", "job", j.ID, "err", err)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// finish records the end of j: failed when e is set, else succeeded.
func (js *jobs) finish(j api.Job, e *api.ErrorDetail) {
	j.Error = e
	j.Status = api.JobSucceeded
	if e != nil {
		j.Status = api.JobFailed
	}
	j.FinishedAt = time.Now().UTC()
	if err := js.store.UpdateJob(context.WithoutCancel(js.s.base), js.owner, j, js.lease); err != nil {
		level := "async job result not stored"
		if errors.Is(err, ErrJobLost) {
			level = "async job finished by another server"
		}
		js.s.log.Warn(level, "job", j.ID, "err", err)
	}
}

// get returns the job with id if it belongs to sp. A job of another space
// is reported as missing.
func (js *jobs) get(ctx context.Context, sp higmem.Space, id string) (api.Job, bool, error) {
	j, ok, err := js.store.Job(ctx, id)
	if err != nil || !ok || (higmem.Space{UserID: j.UserID, AgentID: j.AgentID}) != sp {
		return api.Job{}, false, err
	}
	return j, true, nil
}
