package server

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/higmem/higmem/api"
)

// ErrJobLost is returned by JobStore.UpdateJob when the job is no longer
// held by the owner that updates it: its lease ran out and another server
// claimed it.
var ErrJobLost = errors.New("server: job claimed by another owner")

// JobStore keeps the server's asynchronous jobs. The default, used when
// Options.JobStore is nil, keeps them in the process. A JobStore in a
// database that several servers share (package server/dbjobs keeps one in
// PostgreSQL) lets any server report a job's status, and lets a job
// accepted by a server that stopped or crashed be finished by another, or
// by the same one after a restart.
//
// A job is held by one owner (a server) under a lease that the owner renews
// while it runs the job. A queued or running job whose lease has run out
// may be claimed by any owner. Jobs re-run after a crash must therefore be
// idempotent; the server makes them so by giving every turn of an add job
// an id before the job is stored.
type JobStore interface {
	// CreateJob records the new job j (queued) with the request it runs,
	// held by owner for lease from now.
	CreateJob(ctx context.Context, j api.Job, payload []byte, owner string, lease time.Duration) error
	// ClaimJob gives owner, for lease from now, the oldest queued or
	// running job whose lease has run out; ok is false when there is none.
	ClaimJob(ctx context.Context, owner string, lease time.Duration) (j api.Job, payload []byte, ok bool, err error)
	// UpdateJob stores j's status and results (matched by j.ID) and renews
	// owner's lease; it returns ErrJobLost when owner no longer holds the
	// job. A finished job keeps no lease and its payload may be dropped.
	UpdateJob(ctx context.Context, owner string, j api.Job, lease time.Duration) error
	// Job returns the job with id; ok is false when there is none.
	Job(ctx context.Context, id string) (j api.Job, ok bool, err error)
}

// MemoryJobStore is a JobStore in the process: jobs do not survive it. It
// remembers the newest keep finished jobs.
type MemoryJobStore struct {
	keep int

	mu       sync.Mutex
	byID     map[string]*memJob
	finished []string // ids of finished jobs, oldest first
}

type memJob struct {
	view    api.Job
	payload []byte
	owner   string
	until   time.Time
}

var _ JobStore = (*MemoryJobStore)(nil)

// NewMemoryJobStore returns an empty MemoryJobStore that remembers the
// newest keep finished jobs (1000 if keep <= 0).
func NewMemoryJobStore(keep int) *MemoryJobStore {
	if keep <= 0 {
		keep = 1000
	}
	return &MemoryJobStore{keep: keep, byID: map[string]*memJob{}}
}

// CreateJob implements JobStore.
func (m *MemoryJobStore) CreateJob(_ context.Context, j api.Job, payload []byte, owner string, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[j.ID]; ok {
		return errors.New("server: job " + j.ID + " exists")
	}
	m.byID[j.ID] = &memJob{view: j, payload: slices.Clone(payload), owner: owner, until: time.Now().Add(lease)}
	return nil
}

// ClaimJob implements JobStore.
func (m *MemoryJobStore) ClaimJob(_ context.Context, owner string, lease time.Duration) (api.Job, []byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var oldest *memJob
	for _, mj := range m.byID {
		if mj.view.Done() || now.Before(mj.until) {
			continue
		}
		if oldest == nil || mj.view.CreatedAt.Before(oldest.view.CreatedAt) ||
			mj.view.CreatedAt.Equal(oldest.view.CreatedAt) && mj.view.ID < oldest.view.ID {
			oldest = mj
		}
	}
	if oldest == nil {
		return api.Job{}, nil, false, nil
	}
	oldest.owner, oldest.until = owner, now.Add(lease)
	return oldest.view, slices.Clone(oldest.payload), true, nil
}

// UpdateJob implements JobStore.
func (m *MemoryJobStore) UpdateJob(_ context.Context, owner string, j api.Job, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mj, ok := m.byID[j.ID]
	if !ok || mj.owner != owner || mj.view.Done() {
		return ErrJobLost
	}
	mj.view = j
	mj.until = time.Now().Add(lease)
	if !j.Done() {
		return nil
	}
	mj.payload, mj.owner, mj.until = nil, "", time.Time{}
	m.finished = append(m.finished, j.ID)
	for len(m.finished) > m.keep {
		delete(m.byID, m.finished[0])
		m.finished = m.finished[1:]
	}
	return nil
}

// Job implements JobStore.
func (m *MemoryJobStore) Job(_ context.Context, id string) (api.Job, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mj, ok := m.byID[id]
	if !ok {
		return api.Job{}, false, nil
	}
	return mj.view, true, nil
}
