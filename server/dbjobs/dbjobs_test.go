package dbjobs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/dbjobs"
	"github.com/higmem/higmem/server/jobstest"
	"github.com/higmem/higmem/store/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openTable(t *testing.T, dsn string) *dbjobs.Table {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tab, err := dbjobs.Open(t.Context(), pool, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestConformance(t *testing.T) {
	jobstest.Run(t, func(t *testing.T) server.JobStore { return openTable(t, pgtest.SchemaDSN(t)) })
}

func TestKeepsNewestFinished(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	tab, err := dbjobs.Open(t.Context(), pool, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"job_1", "job_2", "job_3"} {
		j := api.Job{ID: id, UserID: "u", Kind: "add", Status: api.JobQueued, CreatedAt: time.Unix(int64(i), 0).UTC()}
		if err := tab.CreateJob(t.Context(), j, nil, "o", time.Hour); err != nil {
			t.Fatal(err)
		}
		j.Status = api.JobSucceeded
		if err := tab.UpdateJob(t.Context(), "o", j, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	var have []string
	for _, id := range []string{"job_1", "job_2", "job_3"} {
		if _, ok, err := tab.Job(t.Context(), id); err != nil {
			t.Fatal(err)
		} else if ok {
			have = append(have, id)
		}
	}
	if !slices.Equal(have, []string{"job_2", "job_3"}) {
		t.Errorf("kept %v, want the newest two finished jobs", have)
	}
}

// instance is one server on the shared database, as another process
// would be: its own pool, store, Memory and job table.
type instance struct {
	srv   *server.Server
	mem   *higmem.Memory
	model *llmtest.Scripted
}

func newInstance(t *testing.T, dsn, schema string, model *llmtest.Scripted) *instance {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := higmem.Open(t.Context(), higmem.Options{Store: st, Embedder: hashing.New(0), MemoryModel: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	tab, err := dbjobs.Open(t.Context(), st.Pool(), 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(mem, server.Options{NoAuth: true, JobStore: tab, JobLease: 300 * time.Millisecond})
	return &instance{srv: srv, mem: mem, model: model}
}

func (in *instance) do(t *testing.T, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	in.srv.ServeHTTP(rec, req)
	return rec
}

func (in *instance) job(t *testing.T, id string) api.Job {
	t.Helper()
	rec := in.do(t, "GET", "/v1/jobs/"+id+"?user_id=alice", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET job: %d %s", rec.Code, rec.Body)
	}
	var j api.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJobOutlivesItsServer: server A accepts an async add and stops in the
// middle of it (its LLM call never returns); server B on the same database
// reports the job while A holds it, then takes it over once A's lease runs
// out and finishes it: every turn stored once, in an event.
func TestJobOutlivesItsServer(t *testing.T) {
	dsn, schema := pgtest.Schema(t)
	a := newInstance(t, dsn, schema, &llmtest.Scripted{Delay: time.Hour})
	rec := a.do(t, "POST", "/v1/turns?async=true", `{"user_id":"alice","turns":[
		{"speaker":"Alice","text":"I adopted a greyhound called Biscuit.","session_id":"s1"},
		{"speaker":"Alice","text":"Biscuit loves the beach at Porto.","session_id":"s1"}]}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("async add: %d %s", rec.Code, rec.Body)
	}
	var queued api.Job
	if err := json.Unmarshal(rec.Body.Bytes(), &queued); err != nil {
		t.Fatal(err)
	}
	for a.model.Total() == 0 { // A is inside the job's LLM call
		time.Sleep(time.Millisecond)
	}

	b := newInstance(t, dsn, schema, &llmtest.Scripted{})
	if j := b.job(t, queued.ID); j.Status != api.JobRunning {
		t.Errorf("B reports A's job as %q, want running", j.Status)
	}
	// A stops without finishing the job: Shutdown with no time cancels it.
	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	_ = a.srv.Shutdown(stopped)

	var j api.Job
	for j = b.job(t, queued.ID); !j.Done(); j = b.job(t, queued.ID) {
		time.Sleep(10 * time.Millisecond)
	}
	if j.Status != api.JobSucceeded || j.Add == nil || len(j.Add.Added)+len(j.Add.Skipped) != 2 {
		t.Fatalf("job finished by B: %+v (error %+v)", j, j.Error)
	}
	sp := higmem.Space{UserID: "alice"}
	turns, err := b.mem.List(t.Context(), sp, higmem.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 {
		t.Fatalf("%d turns stored, want 2: %+v", len(turns), turns)
	}
	evs, err := b.mem.Events(t.Context(), sp)
	if err != nil {
		t.Fatal(err)
	}
	inEvent := map[string]bool{}
	for _, ev := range evs {
		for _, id := range ev.Event.TurnIDs {
			inEvent[id] = true
		}
	}
	for _, tn := range turns {
		if !strings.HasPrefix(tn.ID, queued.ID+"-") {
			t.Errorf("turn id %q not derived from the job id", tn.ID)
		}
		if !inEvent[tn.ID] {
			t.Errorf("turn %s in no event", tn.ID)
		}
	}
	if b.model.Total() == 0 {
		t.Error("B built no memory for the job")
	}
}
