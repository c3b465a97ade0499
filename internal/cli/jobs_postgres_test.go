package cli

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/llm/llmtest"
)

// startServe runs the real binary's `serve` with env and returns its base
// URL once it listens. The process is killed when the test ends.
func startServe(t testing.TB, env map[string]string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() { // keep draining so the process never blocks on stderr
				for sc.Scan() {
				}
			}()
			return cmd, m[1]
		}
	}
	t.Fatalf("serve exited before listening: %v", sc.Err())
	return nil, ""
}

// TestAsyncJobSurvivesKill: a server on PostgreSQL accepts an async add and
// is killed (SIGKILL) in the middle of it, inside its LLM call; a second
// server process on the same database reports the job, takes it over once
// the lease runs out and finishes it: every turn stored once and in an
// event.
func TestAsyncJobSurvivesKill(t *testing.T) {
	t.Parallel()
	scripted := llmtest.NewScripted().Handler()
	var hold atomic.Bool
	hold.Store(true)
	release := make(chan struct{})
	defer close(release)
	llmSrv := llmtest.NewServer(t, func(n int, req *llmtest.ChatRequest) llmtest.Reply {
		if hold.Load() {
			<-release // the killed server's call never gets an answer
		}
		return scripted(n, req)
	})
	env := baseEnv(t)
	env["HIGMEM_DB"] = pgtest.SchemaDSN(t)
	env["HIGMEM_LLM_BASE_URL"] = llmSrv.BaseURL()
	env["HIGMEM_MEMORY_MODEL"] = "fake-model"
	env["HIGMEM_MODE"] = "default"
	flags := []string{"--no-auth", "--job-lease", "1s"}

	a, aURL := startServe(t, env, flags...)
	ctx := t.Context()
	ca := api.NewClient(aURL, "", nil)
	job, err := ca.AddAsync(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{Speaker: "Alice", Text: "I adopted a greyhound called Biscuit.", SessionID: "s1"},
		{Speaker: "Bob", Text: "Does Biscuit like the beach?", SessionID: "s1"},
		{Speaker: "Alice", Text: "He runs on the beach at Matosinhos every morning.", SessionID: "s1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for llmSrv.Calls() == 0 { // A is inside the job's LLM call
		time.Sleep(time.Millisecond)
	}
	_, bURL := startServe(t, env, flags...)
	cb := api.NewClient(bURL, "", nil)
	scope := api.Scope{UserID: "alice"}
	if j, err := cb.Job(ctx, scope, job.ID); err != nil || j.Status != api.JobRunning {
		t.Errorf("B reports A's job: %+v %v, want running", j, err)
	}
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	hold.Store(false)

	done, err := cb.WaitJob(ctx, scope, job.ID, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != api.JobSucceeded || done.Add == nil || len(done.Add.Added)+len(done.Add.Skipped) != 3 {
		t.Fatalf("job after the kill: %+v (error %+v)", done, done.Error)
	}
	list, err := cb.Turns(ctx, api.ListTurnsRequest{Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Turns) != 3 {
		t.Fatalf("%d turns stored, want 3", len(list.Turns))
	}
	evs, err := cb.Events(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	inEvent := map[string]int{}
	for _, ev := range evs.Events {
		for _, tn := range ev.Turns {
			inEvent[tn.ID]++
		}
	}
	for _, tn := range list.Turns {
		if inEvent[tn.ID] != 1 {
			t.Errorf("turn %s is in %d events, want 1", tn.ID, inEvent[tn.ID])
		}
	}
	if !strings.HasPrefix(list.Turns[0].ID, job.ID+"-") {
		t.Errorf("turn id %q not derived from the job id", list.Turns[0].ID)
	}
}
