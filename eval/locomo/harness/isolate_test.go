package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm"
)

// failing answers like inner except that it refuses requests that fail
// says to (a rejected request is not a fallback case: it ends the
// engine's operation), counting them.
type failing struct {
	inner llm.Model
	fail  func(req llm.Request) bool
	n     atomic.Int32
}

func (f *failing) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if f.fail(req) {
		f.n.Add(1)
		return llm.Response{Latency: 1}, fmt.Errorf("fake server: %w", llm.ErrRequest)
	}
	return f.inner.Complete(ctx, req)
}

// A failure is the failure of one system's build or one question, not of
// the run: on main one error (a build_batch timeout against the real
// Ollama server) ended the whole eval, the offline system's answers
// included. Here higmem's memory build of conv-a fails and one of its
// questions on the other sample fails: the offline system and every other
// question are still scored, the failures are recorded and reported, and
// a rerun with a healthy model asks exactly the failed questions again.
func TestFailuresIsolated(t *testing.T) {
	dir := t.TempDir()
	healthy := scripted(t)
	var asked atomic.Int32
	sick := &failing{inner: healthy, fail: func(req llm.Request) bool {
		user := req.Messages[len(req.Messages)-1].Content
		if req.Operation == "build_batch" && strings.Contains(user, "I went hiking in the mountains yesterday") {
			return true // conv-a's first batch
		}
		return req.Operation == "answer" && asked.Add(1) == 2
	}}
	cfg := Config{Data: miniData, Out: dir, Systems: []string{"higmem", "offline"},
		Env: Env{Memory: sick, Answer: sick, Embedder: hashing.New(64), K: 3}}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run ended: %v", err)
	}
	if sick.n.Load() < 2 {
		t.Fatalf("the fake failed %d requests: the test does not test", sick.n.Load())
	}
	hig, off := findSystem(t, rep, "higmem"), findSystem(t, rep, "offline")
	if off.Failed != 0 || off.Questions == 0 || group(off, "1-5").N != off.Questions {
		t.Errorf("offline: %d questions, %d failed: want all asked", off.Questions, off.Failed)
	}
	if hig.FailedBuilds != 1 || hig.Failed <= 1 || hig.Failed >= hig.Questions || !strings.Contains(hig.FirstError, "request rejected") {
		t.Errorf("higmem: %d of %d questions failed, %d builds: %q", hig.Failed, hig.Questions, hig.FailedBuilds, hig.FirstError)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil || !strings.Contains(string(md), fmt.Sprintf("**%d questions failed**", hig.Failed)) {
		t.Errorf("the report does not show higmem's failures (%v)", err)
	}
	builds, err := readJSONL[BuildRecord](filepath.Join(dir, BuildsFile))
	if err != nil {
		t.Fatal(err)
	}
	failedBuilds := 0
	for _, b := range builds {
		if b.Error != "" {
			failedBuilds++
			if b.Session != failedBuild || b.WallMS <= 0 || len(b.Calls) == 0 || b.Calls[0].Errors == 0 {
				t.Errorf("failed build record %+v: want its session, time and failed call", b)
			}
		}
	}
	if failedBuilds != 1 {
		t.Errorf("%d failed build records, want 1", failedBuilds)
	}

	// Rerun with the healthy model: only the failed questions are asked.
	before := healthy.count("answer")
	cfg.Env = Env{Memory: healthy, Answer: healthy, Embedder: hashing.New(64), K: 3}
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hig2 := findSystem(t, rep, "higmem")
	if hig2.Failed != 0 || hig2.FailedBuilds != 0 || hig2.Questions != hig.Questions {
		t.Errorf("after the rerun: %d of %d failed, %d builds", hig2.Failed, hig2.Questions, hig2.FailedBuilds)
	}
	if got := healthy.count("answer") - before; got != hig.Failed {
		t.Errorf("the rerun asked %d answers, want the %d that failed", got, hig.Failed)
	}
}

// A cancelled run still stops: isolation is for failures, not for the
// caller's context.
func TestCancelStillStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &failing{inner: scripted(t), fail: func(llm.Request) bool { cancel(); return true }}
	_, err := Run(ctx, Config{Data: miniData, Out: t.TempDir(), Systems: []string{"higmem"},
		Env: Env{Memory: m, Answer: m, Embedder: hashing.New(64), K: 3}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// A judge whose calls fail does not end the run (on main its calibration
// returned the error and the whole eval stopped before any system ran);
// one that grades everything CORRECT fails at the first wrong answer and
// is asked no more.
func TestCalibrationIsolated(t *testing.T) {
	down := llm.ModelFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{}, fmt.Errorf("fake: %w", llm.ErrUnavailable)
	})
	c, err := Calibrate(context.Background(), down)
	if err != nil || c.Passed || c.Errors != 1 || !c.Stopped {
		t.Errorf("a judge that is down: %v, %v", c, err)
	}
	var n atomic.Int32
	yes := llm.ModelFunc(func(context.Context, llm.Request) (llm.Response, error) {
		n.Add(1)
		return llm.Response{Content: `{"label":"CORRECT","reasoning":"fine"}`}, nil
	})
	c, err = Calibrate(context.Background(), yes)
	if err != nil || c.Passed || !c.Stopped || int(n.Load()) >= len(CalibrationSet) {
		t.Errorf("a judge that grades all CORRECT: %v after %d of %d calls, %v", c, n.Load(), len(CalibrationSet), err)
	}
	rep, err := Run(context.Background(), Config{Data: miniData, Out: t.TempDir(), Systems: []string{"offline"}, Judge: down,
		Env: Env{Embedder: hashing.New(64), K: 3}})
	if err != nil || findSystem(t, rep, "offline").Questions == 0 {
		t.Errorf("a run with a judge that is down: %v", err)
	}
}
