package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/buildinfo"
	"github.com/higmem/higmem/llm"
)

// MetricsOptions configures GET /metrics, the server's metrics in the
// Prometheus text format (docs/METRICS.md lists them). The zero value
// serves no metrics.
type MetricsOptions struct {
	// Enabled serves GET /metrics. It needs an API key, any key of the
	// server's (the metrics name routes and counts, never a user id or
	// stored text), unless the server runs without keys (Options.NoAuth).
	Enabled bool
	// Meter is the meter the Memory's models are wrapped with (llm.Meter):
	// its calls, failures, tokens and latency are reported by role and
	// operation. Nil reports no LLM calls.
	Meter *llm.Meter
}

// metricsPath is where the metrics are served.
const metricsPath = "/metrics"

// latencyBuckets are the upper bounds, in seconds, of the request latency
// histogram: from a cached read (about a millisecond) to an LLM-backed ask
// or a large import (minutes).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// metrics holds a server's collectors. Requests are counted by a
// middleware around the whole handler; everything else is read when
// scraped, from the Memory, the LLM meter and the job queue.
type metrics struct {
	s        *Server
	registry *prometheus.Registry
	handler  http.Handler
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inFlight prometheus.Gauge

	mu        sync.Mutex // guards fallbacks
	fallbacks map[[2]string]float64
}

// newMetrics registers the server's collectors, the Go runtime's and the
// process's in a registry of the server's own.
func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, registry: prometheus.NewRegistry(), fallbacks: map[[2]string]float64{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "higmem_http_requests_total",
		Help: "HTTP requests answered, by route (the pattern matched, e.g. \"POST /v1/turns\"; \"unmatched\" for none) and status code.",
	}, []string{"route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "higmem_http_request_duration_seconds",
		Help:    "Time from a request's arrival to the end of its answer, by route.",
		Buckets: latencyBuckets,
	}, []string{"route"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "higmem_http_requests_in_flight",
		Help: "HTTP requests being answered.",
	})
	m.registry.MustRegister(m.requests, m.latency, m.inFlight, (*stateCollector)(m),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{s},
		ErrorHandling: promhttp.ContinueOnError,
	})
	s.local.onCalls = m.observeCalls
	return m
}

// slogPrinter passes the errors of promhttp to the server's logger.
type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.log.Warn("metrics", "error", v) }

// serve answers GET /metrics.
func (m *metrics) serve(w http.ResponseWriter, r *http.Request) error {
	m.handler.ServeHTTP(w, r)
	return nil
}

// observeCalls counts the fallbacks among the LLM calls of one operation:
// the calls whose error or unusable reply made the engine apply its
// documented fallback (higmem.Call.Error).
func (m *metrics) observeCalls(calls []higmem.Call) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range calls {
		if c.Error != "" {
			m.fallbacks[[2]string{string(c.Role), c.Operation}]++
		}
	}
}

// instrument counts the requests h answers, by the route pattern the mux
// matched (which it records in the request), and times them.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Inc()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			m.inFlight.Dec()
			route := r.Pattern
			if route == "" || route == "/" {
				route = "unmatched" // refused before the mux, or no route: bounded labels
			}
			code := sw.status
			if code == 0 {
				code = http.StatusOK
			}
			m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
			m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}

// statusWriter records the status of an answer. It flushes and unwraps,
// so that streamed answers (MCP, chat) and http.ResponseController work
// through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Descriptions of what stateCollector reads when scraped.
var (
	descBuild = prometheus.NewDesc("higmem_build_info",
		"The running build: module version and VCS revision (1).", []string{"version", "revision"}, nil)
	descLLMCalls = prometheus.NewDesc("higmem_llm_calls_total",
		"LLM calls, failed and cached ones included, by role and operation.", []string{"role", "operation"}, nil)
	descLLMFailures = prometheus.NewDesc("higmem_llm_failures_total",
		"LLM calls that returned an error (endpoint down, timeout, invalid reply after the corrective re-ask).", []string{"role", "operation"}, nil)
	descLLMCached = prometheus.NewDesc("higmem_llm_cached_calls_total",
		"LLM calls answered from the response cache.", []string{"role", "operation"}, nil)
	descLLMFallbacks = prometheus.NewDesc("higmem_llm_fallbacks_total",
		"LLM calls whose failure or unusable reply made the engine apply its documented fallback, seen by this server's operations.", []string{"role", "operation"}, nil)
	descLLMTokens = prometheus.NewDesc("higmem_llm_tokens_total",
		"Tokens of LLM calls that reached a server, by role, operation and kind (prompt, completion).", []string{"role", "operation", "kind"}, nil)
	descLLMRequests = prometheus.NewDesc("higmem_llm_requests_total",
		"HTTP requests made by LLM calls (retries and format downgrades included).", []string{"role", "operation"}, nil)
	descLLMSeconds = prometheus.NewDesc("higmem_llm_call_seconds_total",
		"Wall time spent in LLM calls.", []string{"role", "operation"}, nil)
	descSpaces = prometheus.NewDesc("higmem_spaces_loaded",
		"Memory spaces whose state is held in memory.", nil, nil)
	descCacheBytes = prometheus.NewDesc("higmem_cache_bytes",
		"Estimated heap of the loaded spaces, the figure --cache-bytes bounds.", nil, nil)
	descCacheLimit = prometheus.NewDesc("higmem_cache_limit_bytes",
		"The bound of the loaded spaces (--cache-bytes; negative: none).", nil, nil)
	descCatchUps = prometheus.NewDesc("higmem_catchups_total",
		"Loaded spaces brought up to date in place with another writer's changes.", nil, nil)
	descJobsQueued = prometheus.NewDesc("higmem_jobs_queued",
		"Async jobs (adds, imports) of this server waiting for a slot.", nil, nil)
	descJobsRunning = prometheus.NewDesc("higmem_jobs_running",
		"Async jobs of this server running.", nil, nil)
	descPending = prometheus.NewDesc("higmem_writes_pending",
		"Writes in flight, queued and running async jobs included (what a shutdown waits for).", nil, nil)
)

// stateCollector reads the server's state when scraped.
type stateCollector metrics

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuild, descLLMCalls, descLLMFailures, descLLMCached, descLLMFallbacks,
		descLLMTokens, descLLMRequests, descLLMSeconds, descSpaces, descCacheBytes, descCacheLimit, descCatchUps,
		descJobsQueued, descJobsRunning, descPending} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	bi := buildinfo.Read()
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, bi.Version, bi.RevisionLabel())

	c.collectLLM(ch)

	cs := s.mem.CacheStats()
	ch <- prometheus.MustNewConstMetric(descSpaces, prometheus.GaugeValue, float64(cs.Spaces))
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(cs.Bytes))
	ch <- prometheus.MustNewConstMetric(descCacheLimit, prometheus.GaugeValue, float64(cs.Limit))
	ch <- prometheus.MustNewConstMetric(descCatchUps, prometheus.CounterValue, float64(cs.CatchUps))

	running := len(s.jobs.sem)
	queued := max(s.jobs.running()-running, 0)
	ch <- prometheus.MustNewConstMetric(descJobsQueued, prometheus.GaugeValue, float64(queued))
	ch <- prometheus.MustNewConstMetric(descJobsRunning, prometheus.GaugeValue, float64(running))
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(s.Pending()))
}

// llmKey is a role and an operation.
type llmKey struct{ role, op string }

// llmSums are the meter's rows of one role and operation, all models.
type llmSums struct {
	calls, errors, cached, requests float64
	prompt, completion              float64
	seconds                         float64
}

// collectLLM reports the meter's rows summed over models, and the
// fallbacks seen. Every role and operation with a fallback also gets its
// call counts, and the reverse, so that ratios have both sides.
func (c *stateCollector) collectLLM(ch chan<- prometheus.Metric) {
	sums := map[llmKey]*llmSums{}
	get := func(k llmKey) *llmSums {
		if sums[k] == nil {
			sums[k] = &llmSums{}
		}
		return sums[k]
	}
	if meter := c.s.opts.Metrics.Meter; meter != nil {
		for _, r := range meter.Snapshot() {
			x := get(llmKey{string(r.Role), r.Operation})
			x.calls += float64(r.Calls)
			x.errors += float64(r.Errors)
			x.cached += float64(r.Cached)
			x.requests += float64(r.Requests)
			x.prompt += float64(r.Usage.PromptTokens)
			x.completion += float64(r.Usage.CompletionTokens)
			x.seconds += r.Latency.Seconds()
		}
	}
	c.mu.Lock()
	fallbacks := make(map[llmKey]float64, len(c.fallbacks))
	for k, v := range c.fallbacks {
		fallbacks[llmKey{k[0], k[1]}] = v
		get(llmKey{k[0], k[1]})
	}
	c.mu.Unlock()
	for k, x := range sums {
		ch <- prometheus.MustNewConstMetric(descLLMCalls, prometheus.CounterValue, x.calls, k.role, k.op)
		ch <- prometheus.MustNewConstMetric(descLLMFailures, prometheus.CounterValue, x.errors, k.role, k.op)
		ch <- prometheus.MustNewConstMetric(descLLMCached, prometheus.CounterValue, x.cached, k.role, k.op)
		ch <- prometheus.MustNewConstMetric(descLLMFallbacks, prometheus.CounterValue, fallbacks[k], k.role, k.op)
		ch <- prometheus.MustNewConstMetric(descLLMTokens, prometheus.CounterValue, x.prompt, k.role, k.op, "prompt")
		ch <- prometheus.MustNewConstMetric(descLLMTokens, prometheus.CounterValue, x.completion, k.role, k.op, "completion")
		ch <- prometheus.MustNewConstMetric(descLLMRequests, prometheus.CounterValue, x.requests, k.role, k.op)
		ch <- prometheus.MustNewConstMetric(descLLMSeconds, prometheus.CounterValue, x.seconds, k.role, k.op)
	}
}
