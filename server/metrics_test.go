package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store/sqlite"
)

// scrape fetches /metrics with key and parses it with the official
// parser of the Prometheus text format.
func scrape(t *testing.T, url, key string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeTextPlain {
		t.Fatalf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the official parser refuses /metrics: %v", err)
	}
	return fams
}

// sample returns the metric of family name whose labels include want, or
// nil.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// value returns the value of a counter or gauge sample, failing the test
// when the sample is missing.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := sample(fams, name, labels)
	if m == nil {
		t.Fatalf("no sample %s%v in /metrics", name, labels)
	}
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s%v is neither a counter nor a gauge", name, labels)
	return 0
}

func TestMetricsOffByDefault(t *testing.T) {
	_, ts, _ := start(t, newMem(t, higmem.Options{}), Options{})
	req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /metrics without Options.Metrics: %s, want 404", resp.Status)
	}
}

func TestMetricsNeedAKey(t *testing.T) {
	_, ts, _ := start(t, newMem(t, higmem.Options{}), Options{Metrics: MetricsOptions{Enabled: true}})
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without a key: %s, want 401", resp.Status)
	}
	// Any key of the server's will do: bob's, limited to bob's space.
	fams := scrape(t, ts.URL, bobKey)
	if value(t, fams, "higmem_build_info", nil) != 1 {
		t.Error("higmem_build_info is not 1")
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Error("the Go runtime's and the process's collectors are missing")
	}
}

// junkThenDown answers the memory role with prose (every reply unusable:
// the engine falls back) and fails every answer call as an unreachable
// endpoint.
func junkThenDown() (memory, answer llm.Model) {
	memory = llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: "Sure! Here is what I think about that.", Model: "junk",
			Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10}, Requests: 1}, nil
	})
	answer = llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{}, fmt.Errorf("%w: connection refused", llm.ErrUnavailable)
	})
	return memory, answer
}

func TestMetricsScraped(t *testing.T) {
	meter := llm.NewMeter(nil)
	mm, am := junkThenDown()
	mem := newMem(t, higmem.Options{Mode: higmem.ModeDefault,
		MemoryModel: meter.Wrap(llm.RoleMemory, "junk", mm), AnswerModel: meter.Wrap(llm.RoleAnswer, "down", am)})
	_, ts, _ := start(t, mem, Options{Metrics: MetricsOptions{Enabled: true, Meter: meter}})
	c := api.NewClient(ts.URL, aliceKey, nil)
	ctx := t.Context()
	sc := api.Scope{UserID: "alice"}
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{Speaker: "alice", Text: "I adopted a greyhound called Biscuit."},
		{Speaker: "bob", Text: "What a lovely name for a dog."},
	}}); err != nil {
		t.Fatal(err)
	}
	ans, err := c.Ask(ctx, api.AskRequest{UserID: "alice", Question: "What is my dog called?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Answer != "" || !strings.Contains(ans.Note, "unreachable") {
		t.Fatalf("ask with the answer endpoint down: answer %q, note %q", ans.Answer, ans.Note)
	}
	for range 2 {
		if _, err := c.Turn(ctx, sc, "nope"); !api.IsStatus(err, http.StatusNotFound) {
			t.Fatalf("GET a missing turn: %v, want 404", err)
		}
	}
	fams := scrape(t, ts.URL, aliceKey)

	for _, c := range []struct {
		route, code string
		want        float64
	}{
		{"POST /v1/turns", "200", 1},
		{"POST /v1/ask", "200", 1},
		{"GET /v1/turns/{id}", "404", 2},
	} {
		if got := value(t, fams, "higmem_http_requests_total", map[string]string{"route": c.route, "code": c.code}); got != c.want {
			t.Errorf("requests %s %s: %v, want %v", c.route, c.code, got, c.want)
		}
	}
	h := sample(fams, "higmem_http_request_duration_seconds", map[string]string{"route": "GET /v1/turns/{id}"})
	if h == nil || h.Histogram == nil || h.Histogram.GetSampleCount() != 2 || len(h.Histogram.GetBucket()) < len(latencyBuckets) {
		t.Errorf("latency histogram of GET /v1/turns/{id}: %v", h)
	}

	// The memory model's replies were all unusable: calls, no failures
	// (the endpoint answered), and a fallback for each operation.
	var memCalls, memFallbacks, memFailures, prompt float64
	for _, m := range fams["higmem_llm_calls_total"].GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels["role"] != "memory" {
			continue
		}
		memCalls += m.Counter.GetValue()
		memFallbacks += value(t, fams, "higmem_llm_fallbacks_total", labels)
		memFailures += value(t, fams, "higmem_llm_failures_total", labels)
		prompt += value(t, fams, "higmem_llm_tokens_total", map[string]string{"role": "memory", "operation": labels["operation"], "kind": "prompt"})
	}
	if memCalls == 0 || memFallbacks == 0 || memFailures != 0 || prompt != 100*memCalls {
		t.Errorf("memory role: %v calls, %v fallbacks, %v failures, %v prompt tokens; want calls, fallbacks, no failure, 100 tokens a call",
			memCalls, memFallbacks, memFailures, prompt)
	}
	answer := map[string]string{"role": "answer", "operation": "answer"}
	if calls, failures, fallbacks := value(t, fams, "higmem_llm_calls_total", answer), value(t, fams, "higmem_llm_failures_total", answer),
		value(t, fams, "higmem_llm_fallbacks_total", answer); calls != 1 || failures != 1 || fallbacks != 1 {
		t.Errorf("answer role: %v calls, %v failures, %v fallbacks; want 1, 1, 1", calls, failures, fallbacks)
	}

	if n := value(t, fams, "higmem_spaces_loaded", nil); n != 1 {
		t.Errorf("spaces loaded: %v, want 1", n)
	}
	if b := value(t, fams, "higmem_cache_bytes", nil); b <= 0 {
		t.Errorf("cache bytes: %v, want the loaded space's estimate", b)
	}
	if l := value(t, fams, "higmem_cache_limit_bytes", nil); l != higmem.DefaultCacheBytes {
		t.Errorf("cache limit: %v, want %d", l, higmem.DefaultCacheBytes)
	}
}

// TestMetricsJobQueue checks the queue depth with one job running (held by
// its model) and one waiting for the slot.
func TestMetricsJobQueue(t *testing.T) {
	release := make(chan struct{})
	held := llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
		return llm.Response{Content: "not JSON"}, nil
	})
	mem := newMem(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: held})
	_, ts, _ := start(t, mem, Options{MaxJobs: 1, Metrics: MetricsOptions{Enabled: true}})
	c := api.NewClient(ts.URL, aliceKey, nil)
	var jobs []*api.Job
	for i := range 2 {
		j, err := c.AddAsync(t.Context(), api.AddRequest{UserID: "alice", Turn: &api.TurnInput{Speaker: "alice", Text: fmt.Sprintf("turn %d about sailing", i)}})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(30 * time.Second); ; {
		fams = scrape(t, ts.URL, aliceKey)
		if value(t, fams, "higmem_jobs_running", nil) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, q, p := value(t, fams, "higmem_jobs_running", nil), value(t, fams, "higmem_jobs_queued", nil),
		value(t, fams, "higmem_writes_pending", nil); r != 1 || q != 1 || p != 2 {
		t.Errorf("jobs running %v, queued %v, writes pending %v; want 1, 1, 2", r, q, p)
	}
	close(release)
	for _, j := range jobs {
		if got, err := c.WaitJob(t.Context(), api.Scope{UserID: "alice"}, j.ID, 5*time.Millisecond); err != nil || got.Status != api.JobSucceeded {
			t.Fatalf("job %s: %+v %v", j.ID, got, err)
		}
	}
	fams = scrape(t, ts.URL, aliceKey)
	if r, q := value(t, fams, "higmem_jobs_running", nil), value(t, fams, "higmem_jobs_queued", nil); r != 0 || q != 0 {
		t.Errorf("after the jobs: running %v, queued %v; want 0, 0", r, q)
	}
}

// TestMetricsCatchUps serves one memory of a SQLite file while another
// writes to it: the served one's loaded space is caught up in place.
func TestMetricsCatchUps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	open := func() *higmem.Memory {
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := higmem.Open(t.Context(), higmem.Options{Store: st, Embedder: hashing.New(0)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(); st.Close() })
		return m
	}
	served, writer := open(), open()
	_, ts, _ := start(t, served, Options{Metrics: MetricsOptions{Enabled: true}})
	c := api.NewClient(ts.URL, aliceKey, nil)
	sp := higmem.Space{UserID: "alice"}
	if _, err := writer.Add(t.Context(), sp, []higmem.TurnInput{{Speaker: "alice", Text: "We sail on Lake Geneva every June."}}); err != nil {
		t.Fatal(err)
	}
	search := func() {
		if _, err := c.Search(t.Context(), api.SearchRequest{UserID: "alice", Question: "where do we sail?"}); err != nil {
			t.Fatal(err)
		}
	}
	search() // loads the space
	before := value(t, scrape(t, ts.URL, aliceKey), "higmem_catchups_total", nil)
	if _, err := writer.Add(t.Context(), sp, []higmem.TurnInput{{Speaker: "bob", Text: "And in July we hike in the Alps."}}); err != nil {
		t.Fatal(err)
	}
	search() // sees the new turn: caught up in place
	if after := value(t, scrape(t, ts.URL, aliceKey), "higmem_catchups_total", nil); after != before+1 {
		t.Errorf("catch-ups: %v before the other writer's add, %v after; want one more", before, after)
	}
}
