package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// jobs runs asynchronous adds and imports, at most Options.MaxJobs at once,
// with at most Options.MaxQueuedJobs waiting. Finished jobs are remembered
// (the newest Options.KeepJobs) so their status can be read.
type jobs struct {
	s   *Server
	sem chan struct{}

	mu       sync.Mutex
	byID     map[string]*job
	finished []string // ids of finished jobs, oldest first
	active   int      // queued or running
}

type job struct {
	space higmem.Space
	run   func(ctx context.Context, j *api.Job)

	mu   sync.Mutex // guards view
	view api.Job
}

func newJobs(s *Server) *jobs {
	return &jobs{s: s, sem: make(chan struct{}, s.opts.MaxJobs), byID: map[string]*job{}}
}

func newJobID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "job_" + hex.EncodeToString(b[:])
}

// submit queues fn as a job of space sp. The job counts as a pending write
// from now until it finishes, so Shutdown waits for it.
func (js *jobs) submit(sp higmem.Space, kind string, turns int, fn func(ctx context.Context, j *api.Job)) (api.Job, error) {
	js.mu.Lock()
	if js.active >= js.s.opts.MaxJobs+js.s.opts.MaxQueuedJobs {
		js.mu.Unlock()
		return api.Job{}, errorf(http.StatusTooManyRequests, api.CodeTooManyJobs,
			"%d jobs queued or running; retry later", js.active)
	}
	if !js.s.begin() {
		js.mu.Unlock()
		return api.Job{}, errShuttingDown
	}
	j := &job{space: sp, run: fn, view: api.Job{
		ID: newJobID(), UserID: sp.UserID, AgentID: sp.AgentID, Kind: kind,
		Status: api.JobQueued, Turns: turns, CreatedAt: time.Now().UTC(),
	}}
	js.byID[j.view.ID] = j
	js.active++
	view := j.view
	js.mu.Unlock()
	go js.runJob(j)
	return view, nil
}

func (js *jobs) runJob(j *job) {
	defer js.s.end()
	ctx := js.s.base
	select {
	case js.sem <- struct{}{}:
	case <-ctx.Done():
		js.finish(j, func(v *api.Job) {
			v.Status = api.JobFailed
			v.Error = &api.ErrorDetail{Code: api.CodeUnavailable, Message: "server stopped before the job ran"}
		})
		return
	}
	defer func() { <-js.sem }()
	j.mu.Lock()
	j.view.Status = api.JobRunning
	j.view.StartedAt = time.Now().UTC()
	out := j.view
	j.mu.Unlock()
	j.run(ctx, &out)
	js.finish(j, func(v *api.Job) {
		v.Add, v.Import, v.Error = out.Add, out.Import, out.Error
		v.Status = api.JobSucceeded
		if out.Error != nil {
			v.Status = api.JobFailed
		}
	})
}

func (js *jobs) finish(j *job, update func(*api.Job)) {
	j.mu.Lock()
	update(&j.view)
	j.view.FinishedAt = time.Now().UTC()
	j.mu.Unlock()
	js.mu.Lock()
	defer js.mu.Unlock()
	js.active--
	js.finished = append(js.finished, j.view.ID)
	for len(js.finished) > js.s.opts.KeepJobs {
		delete(js.byID, js.finished[0])
		js.finished = js.finished[1:]
	}
}

// get returns the job with id if it belongs to sp. A job of another space
// is reported as missing.
func (js *jobs) get(sp higmem.Space, id string) (api.Job, bool) {
	js.mu.Lock()
	j, ok := js.byID[id]
	js.mu.Unlock()
	if !ok || j.space != sp {
		return api.Job{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.view, true
}
