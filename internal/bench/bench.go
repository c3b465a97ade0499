// Package bench measures the engine's own cost: ingest throughput,
// retrieval latency, cold open, memory and disk use, and LLM calls, on
// synthetic spaces of growing size. The LLM is the scripted fake (answering
// at once, or after a fixed delay to expose the critical path) and the
// embedder is the hashing embedder, so the figures are the engine's, not a
// model's. Time spent inside the fake LLM and embedder is measured and
// subtracted where the issue asks for engine-only figures.
package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/store/sqlite"
)

// Config selects what to measure.
type Config struct {
	// Sizes are the space sizes in turns (default 1k, 10k, 100k).
	Sizes []int
	// Modes are the ingest modes (default offline, default, paper).
	Modes []higmem.Mode
	// MaxLLMIngest caps the size ingested in LLM modes; larger sizes are
	// measured in offline mode only (default 10,000).
	MaxLLMIngest int
	// Queries is the number of questions timed per size and mode
	// (default 200).
	Queries int
	// Gap is an idle time before each timed question (as questions reach
	// an idle server one by one: the engine's helpers have parked); 0,
	// the default, times them back to back.
	Gap time.Duration
	// Delay is the per-call LLM latency of the critical-path run
	// (default 300 ms); DelayQueries questions are timed with it
	// (default 5; 0 skips the run).
	Delay        time.Duration
	DelayQueries int
	// Dir holds the SQLite files (default: a temporary directory, removed
	// afterwards).
	Dir string
	// Seed makes the synthetic spaces reproducible.
	Seed uint64
	// Shape is the synthetic conversations' shape (synth.Options.Shape:
	// "" two people chatting, "ua" a user–assistant chat); a shape's
	// SQLite files are named <mode>-<shape>-<turns>.db.
	Shape string
	// Progress, when set, receives a line per step.
	Progress func(string)
	// ProfileDir, when set, receives a CPU profile of each phase of each
	// (size, mode): cpu-<turns>-<mode>-<phase>.pprof with phase ingest,
	// open or retrieve (go tool pprof reads them).
	ProfileDir string
	// TraceDir, when set, receives a runtime trace of each (size, mode)'s
	// timed retrievals with the instant LLM: trace-<turns>-<mode>-retrieve.out
	// (go tool trace reads them: where a question's goroutines wait).
	TraceDir string
	// Dump, when set, receives one JSON line per timed retrieval (instant
	// LLM): the question, every trace stage and the evidence ids with their
	// scores, so that two builds of the engine can be compared for equal
	// results.
	Dump io.Writer
	// Reuse skips ingest when Dir already holds the SQLite file of a
	// (size, mode), measuring only open and retrieval on it; ingest figures
	// are then left zero.
	Reuse bool
}

func (c *Config) defaults() {
	if len(c.Sizes) == 0 {
		c.Sizes = []int{1000, 10000, 100000}
	}
	if len(c.Modes) == 0 {
		c.Modes = []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper}
	}
	if c.MaxLLMIngest == 0 {
		c.MaxLLMIngest = 10000
	}
	if c.Queries == 0 {
		c.Queries = 200
	}
	if c.Delay == 0 {
		c.Delay = 300 * time.Millisecond
	}
	if c.DelayQueries == 0 {
		c.DelayQueries = 5
	}
	if c.Progress == nil {
		c.Progress = func(string) {}
	}
}

// Result is one (size, mode) measurement. Durations are in nanoseconds in
// JSON.
type Result struct {
	Turns int         `json:"turns"`
	Mode  higmem.Mode `json:"mode"`
	// Events in the space.
	Events int `json:"events"`
	// Ingest: wall time, and turns/s of the engine alone (wall minus the
	// time inside the fake LLM and the embedder; LLM calls run one at a
	// time during this measurement so the subtraction is exact).
	IngestWall          time.Duration `json:"ingest_wall_ns"`
	IngestEngineTPS     float64       `json:"ingest_engine_turns_per_s"`
	IngestCallsPerTurn  float64       `json:"ingest_calls_per_turn"`
	IngestTokensPerTurn float64       `json:"ingest_tokens_per_turn"`
	// IngestNote says why the ingest figures are missing: an LLM mode
	// above the ingest cap is measured on the space built in offline mode,
	// and --reuse measures a space built earlier.
	IngestNote string `json:"ingest_note,omitempty"`
	// Retrieval with the LLM answering at once, calls in parallel as the
	// engine makes them: wall time per question (engine plus the fake
	// LLM's own work).
	P50 time.Duration `json:"retrieval_p50_ns"`
	P95 time.Duration `json:"retrieval_p95_ns"`
	P99 time.Duration `json:"retrieval_p99_ns"`
	// Engine-only retrieval time per question: wall minus the time inside
	// the fake LLM, with calls run one at a time so that the subtraction
	// is exact. Equal to the wall figures in offline mode.
	EngineP50 time.Duration `json:"engine_p50_ns"`
	EngineP95 time.Duration `json:"engine_p95_ns"`
	EngineP99 time.Duration `json:"engine_p99_ns"`
	// LLM calls and tokens per question.
	CallsPerQ  float64 `json:"calls_per_question"`
	TokensPerQ float64 `json:"tokens_per_question"`
	// Critical path of Ask (retrieval and answer) with every call delayed
	// by Config.Delay, and its sequential LLM rounds.
	DelayedMean time.Duration `json:"ask_delayed_mean_ns"`
	Rounds      float64       `json:"rounds"`
	// Cold open: a new Memory on the stored file, up to the first answer
	// of Retrieve (loading turns, events, vectors, building BM25).
	ColdOpen time.Duration `json:"cold_open_ns"`
	// HeapBytes is the Go heap in use by the loaded space.
	HeapBytes uint64 `json:"heap_bytes"`
	// DiskBytesPerTurn is the SQLite file size (with WAL) per turn.
	DiskBytesPerTurn float64 `json:"disk_bytes_per_turn"`
	// Skipped explains a measurement that was not made.
	Skipped string `json:"skipped,omitempty"`
}

// timedModel measures the time spent inside a model, and delays each
// call by delay nanoseconds.
type timedModel struct {
	inner llm.Model
	delay atomic.Int64
	spent atomic.Int64
	calls atomic.Int64
	toks  atomic.Int64
}

func (m *timedModel) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := m.inner.Complete(ctx, r)
	if d := time.Duration(m.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	m.spent.Add(int64(time.Since(start)))
	m.calls.Add(1)
	m.toks.Add(int64(resp.Usage.Total()))
	return resp, err
}

// timedEmbedder measures the time spent embedding.
type timedEmbedder struct {
	embed.Embedder
	spent atomic.Int64
}

func (e *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.timed(ctx, texts, e.Embedder.Embed)
}

func (e *timedEmbedder) timed(ctx context.Context, texts []string, fn func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	start := time.Now()
	v, err := fn(ctx, texts)
	e.spent.Add(int64(time.Since(start)))
	return v, err
}

// engineEmbedder is e as the engine is given it: a QueryEmbedder, timed
// too, exactly when the embedder it wraps is one.
func (e *timedEmbedder) engineEmbedder() embed.Embedder {
	qe, ok := e.Embedder.(embed.QueryEmbedder)
	if !ok {
		return e
	}
	return embed.KeepQuery(e, qe, func(ctx context.Context, texts []string) ([][]float32, error) {
		return e.timed(ctx, texts, qe.EmbedQuery)
	})
}

var space = higmem.Space{UserID: "bench"}

// Run measures every configured (size, mode). LLM modes above
// MaxLLMIngest are not ingested; their retrieval is measured on the space
// built in offline mode (when offline is among the modes).
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg.defaults()
	dir, done, err := workDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer done()
	// Offline first: the LLM modes above the cap reuse its space.
	modes := slices.Clone(cfg.Modes)
	slices.SortStableFunc(modes, func(x, y higmem.Mode) int {
		return cmp.Compare(one(y == higmem.ModeOffline), one(x == higmem.ModeOffline))
	})
	var out []Result
	for _, n := range cfg.Sizes {
		conv := synth.Generate(synth.Options{Turns: n, Seed: cfg.Seed, Shape: cfg.Shape})
		offlinePath := filepath.Join(dir, dbName(higmem.ModeOffline, cfg.Shape, n))
		for _, mode := range modes {
			path := filepath.Join(dir, dbName(mode, cfg.Shape, n))
			res := Result{Turns: len(conv.Turns), Mode: mode}
			var err error
			switch {
			case mode != higmem.ModeOffline && n > cfg.MaxLLMIngest && fileSize(offlinePath) > 0:
				cfg.Progress(fmt.Sprintf("%d turns, %s mode (retrieval on the offline-built space)", n, mode))
				res.IngestNote = fmt.Sprintf("not ingested (LLM-mode ingest capped at %d turns); retrieval on the offline-built space", cfg.MaxLLMIngest)
				res, err = measureStored(ctx, cfg, offlinePath, conv, res)
			case mode != higmem.ModeOffline && n > cfg.MaxLLMIngest:
				res.Skipped = fmt.Sprintf("LLM-mode ingest capped at %d turns (--max-llm-ingest), and no offline-built space to retrieve from", cfg.MaxLLMIngest)
			case cfg.Reuse && fileSize(path) > 0:
				cfg.Progress(fmt.Sprintf("%d turns, %s mode (reusing %s)", n, mode, path))
				res.IngestNote = "not ingested (--reuse)"
				res, err = measureStored(ctx, cfg, path, conv, res)
			default:
				cfg.Progress(fmt.Sprintf("%d turns, %s mode", n, mode))
				if err = ingest(ctx, cfg, path, conv, &res); err == nil {
					res, err = measureStored(ctx, cfg, path, conv, res)
				}
			}
			if err != nil {
				return out, fmt.Errorf("bench %d turns %s: %w", n, mode, err)
			}
			out = append(out, res)
		}
	}
	return out, nil
}

// dbName is the name of the SQLite file of a (mode, shape, size).
func dbName(mode higmem.Mode, shape string, n int) string {
	if shape == "" {
		return fmt.Sprintf("%s-%d.db", mode, n)
	}
	return fmt.Sprintf("%s-%s-%d.db", mode, shape, n)
}

// workDir is dir, or a new temporary directory that done removes.
func workDir(dir string) (_ string, done func(), _ error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "higmem-bench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

// one is 1 for true, 0 for false.
func one(x bool) int {
	if x {
		return 1
	}
	return 0
}

// ingest builds the space at path, filling the ingest figures of res.
func ingest(ctx context.Context, cfg Config, path string, conv synth.Conversation, res *Result) error {
	mode := res.Mode
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	emb := &timedEmbedder{Embedder: hashing.New(0)}
	model := &timedModel{inner: llmfake.NewScripted()}
	opts := higmem.Options{Store: st, Embedder: emb.engineEmbedder(), Mode: mode, Concurrency: 1}
	if mode != higmem.ModeOffline {
		opts.MemoryModel = model
	}
	m, err := higmem.Open(ctx, opts)
	if err != nil {
		st.Close()
		return err
	}
	// Ingest, one session per Add as a client would.
	stop, err := profile(cfg, *res, "ingest")
	if err != nil {
		st.Close()
		return err
	}
	start := time.Now()
	if err := addSessions(ctx, m, space, conv.Turns); err != nil {
		st.Close()
		return err
	}
	res.IngestWall = time.Since(start)
	stop()
	engine := res.IngestWall - time.Duration(model.spent.Load()+emb.spent.Load())
	res.IngestEngineTPS = float64(res.Turns) / engine.Seconds()
	res.IngestCallsPerTurn = float64(model.calls.Load()) / float64(res.Turns)
	res.IngestTokensPerTurn = float64(model.toks.Load()) / float64(res.Turns)
	stats, err := m.Stats(ctx, space)
	if err != nil {
		st.Close()
		return err
	}
	res.Events = stats.Events
	m.Close()
	return st.Close()
}

// measureStored measures cold open and retrieval on the space stored at
// path, in res.Mode.
func measureStored(ctx context.Context, cfg Config, path string, conv synth.Conversation, res Result) (Result, error) {
	mode := res.Mode
	res.DiskBytesPerTurn = float64(fileSize(path)+fileSize(path+"-wal")) / float64(res.Turns)
	questions := queries(conv, cfg.Queries)
	open := func(st *sqlite.Store, model llm.Model, concurrency int) (*higmem.Memory, error) {
		opts := higmem.Options{Store: st, Embedder: hashing.New(0), Mode: mode, Concurrency: concurrency}
		if mode != higmem.ModeOffline {
			opts.MemoryModel = model
		}
		return higmem.Open(ctx, opts)
	}

	// Cold open, up to the first answer, with an instant LLM.
	model := &timedModel{inner: llmfake.NewScripted()}
	// As from a fresh process: earlier garbage collected and the memory
	// returned to the OS (pools hold on to dropped objects for one cycle).
	var before runtime.MemStats
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&before)
	stop, err := profile(cfg, res, "open")
	if err != nil {
		return res, err
	}
	start := time.Now()
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return res, err
	}
	defer st.Close()
	m, err := open(st, model, 0)
	if err != nil {
		return res, err
	}
	closeM := func() {
		if m != nil {
			m.Close()
			m = nil // unreachable: its loaded space can be collected
		}
	}
	defer closeM()
	if _, err := m.Retrieve(ctx, space, questions[0], higmem.RetrieveOptions{}); err != nil {
		return res, err
	}
	res.ColdOpen = time.Since(start)
	stop()
	stats, err := m.Stats(ctx, space)
	if err != nil {
		return res, err
	}
	res.Events = stats.Events
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapInuse > before.HeapInuse {
		res.HeapBytes = after.HeapInuse - before.HeapInuse
	}

	// Retrieval with the instant LLM, calls in parallel, in steady state
	// (the load's garbage collected).
	runtime.GC()
	model.calls.Store(0)
	model.toks.Store(0)
	lat := make([]time.Duration, 0, len(questions))
	results := make([]*higmem.Result, 0, len(questions))
	if stop, err = profile(cfg, res, "retrieve"); err != nil {
		return res, err
	}
	for _, q := range questions {
		if cfg.Gap > 0 {
			time.Sleep(cfg.Gap)
		}
		t0 := time.Now()
		r, err := m.Retrieve(ctx, space, q, higmem.RetrieveOptions{})
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t0))
		results = append(results, r)
	}
	stop()
	if cfg.Dump != nil {
		if err := dump(cfg.Dump, res, results); err != nil {
			return res, err
		}
	}
	res.CallsPerQ = float64(model.calls.Load()) / float64(len(questions))
	res.TokensPerQ = float64(model.toks.Load()) / float64(len(questions))
	slices.Sort(lat)
	res.P50, res.P95, res.P99 = pct(lat, 50), pct(lat, 95), pct(lat, 99)
	res.EngineP50, res.EngineP95, res.EngineP99 = res.P50, res.P95, res.P99
	if mode == higmem.ModeOffline {
		return res, nil
	}

	// Critical path: every call delayed; Ask includes the answer round.
	if cfg.DelayQueries > 0 {
		model.delay.Store(int64(cfg.Delay))
		k := min(cfg.DelayQueries, len(questions))
		var total time.Duration
		rounds := 0
		for _, q := range questions[:k] {
			t0 := time.Now()
			a, err := m.Ask(ctx, space, q, higmem.RetrieveOptions{})
			if err != nil {
				return res, err
			}
			total += time.Since(t0)
			rounds += a.Trace.Rounds
		}
		res.DelayedMean = total / time.Duration(k)
		res.Rounds = float64(rounds) / float64(k)
		model.delay.Store(0)
	}
	closeM() // one loaded copy of the space at a time

	// Engine only: the same questions with calls one at a time, minus the
	// time inside the model.
	seq := &timedModel{inner: llmfake.NewScripted()}
	ms, err := open(st, seq, 1)
	if err != nil {
		return res, err
	}
	defer ms.Close()
	if _, err := ms.Retrieve(ctx, space, questions[0], higmem.RetrieveOptions{}); err != nil {
		return res, err
	}
	runtime.GC()
	eng := make([]time.Duration, 0, len(questions))
	for _, q := range questions {
		if cfg.Gap > 0 {
			time.Sleep(cfg.Gap)
		}
		spent := seq.spent.Load()
		t0 := time.Now()
		if _, err := ms.Retrieve(ctx, space, q, higmem.RetrieveOptions{}); err != nil {
			return res, err
		}
		eng = append(eng, time.Since(t0)-time.Duration(seq.spent.Load()-spent))
	}
	slices.Sort(eng)
	res.EngineP50, res.EngineP95, res.EngineP99 = pct(eng, 50), pct(eng, 95), pct(eng, 99)
	return res, nil
}

// profile starts a CPU profile of one phase when cfg.ProfileDir is set (and
// a runtime trace of the retrieve phase when cfg.TraceDir is) and
// returns the function that stops it.
func profile(cfg Config, r Result, phase string) (stop func(), err error) {
	stopTrace := func() {}
	if cfg.TraceDir != "" && phase == "retrieve" {
		f, err := os.Create(filepath.Join(cfg.TraceDir, fmt.Sprintf("trace-%d-%s-%s.out", r.Turns, r.Mode, phase)))
		if err != nil {
			return nil, fmt.Errorf("bench: trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("bench: trace: %w", err)
		}
		stopTrace = func() {
			trace.Stop()
			f.Close()
		}
	}
	if cfg.ProfileDir == "" {
		return stopTrace, nil
	}
	f, err := os.Create(filepath.Join(cfg.ProfileDir, fmt.Sprintf("cpu-%d-%s-%s.pprof", r.Turns, r.Mode, phase)))
	if err != nil {
		stopTrace()
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		stopTrace()
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		stopTrace()
	}, nil
}

// dumped is one retrieval as Config.Dump writes it.
type dumped struct {
	Turns    int              `json:"turns"`
	Mode     higmem.Mode      `json:"mode"`
	Question string           `json:"question"`
	Stages   []higmem.Stage   `json:"stages"`
	Evidence []dumpedEvidence `json:"evidence"`
	Notes    []string         `json:"notes,omitempty"`
}

type dumpedEvidence struct {
	ID      string   `json:"id"`
	Score   float64  `json:"score"`
	Sources []string `json:"sources,omitempty"`
	Events  []string `json:"events,omitempty"`
	Times   []string `json:"times,omitempty"`
}

func dump(w io.Writer, res Result, rs []*higmem.Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		d := dumped{Turns: res.Turns, Mode: res.Mode, Question: r.Question, Stages: r.Trace.Stages, Notes: r.Trace.Notes}
		for _, e := range r.Evidence {
			d.Evidence = append(d.Evidence, dumpedEvidence{ID: e.Turn.ID, Score: e.Score, Sources: e.Sources, Events: e.Events, Times: e.Times})
		}
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("bench: dump: %w", err)
		}
	}
	return nil
}

// queries returns n questions: the generated ones, then cycled.
func queries(c synth.Conversation, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n && len(c.Questions) > 0 {
		out = append(out, c.Questions[len(out)%len(c.Questions)].Text)
	}
	if len(out) == 0 {
		out = append(out, "What did Ava say about the lake?")
	}
	return out
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Table renders results as two Markdown tables: ingest and storage, then
// open and retrieval.
func Table(rs []Result) string {
	var b strings.Builder
	b.WriteString("| turns | mode | events | ingest wall | engine turns/s | LLM calls/turn | tokens/turn | disk B/turn |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		switch {
		case r.Skipped != "":
			fmt.Fprintf(&b, "| %d | %s | — | %s |||||\n", r.Turns, r.Mode, r.Skipped)
		case r.IngestNote != "":
			fmt.Fprintf(&b, "| %d | %s | %d | %s |||| %.0f |\n", r.Turns, r.Mode, r.Events, r.IngestNote, r.DiskBytesPerTurn)
		default:
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %.0f | %.2f | %.0f | %.0f |\n", r.Turns, r.Mode, r.Events,
				r.IngestWall.Round(time.Millisecond), r.IngestEngineTPS, r.IngestCallsPerTurn, r.IngestTokensPerTurn, r.DiskBytesPerTurn)
		}
	}
	b.WriteString("\n| turns | mode | retrieval p50 | p95 | p99 | engine-only p50 | p95 | p99 | LLM calls/q | tokens/q | rounds | Ask @delay | cold open | heap MiB |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %d | %s | %s ||||||||||||\n", r.Turns, r.Mode, r.Skipped)
			continue
		}
		delayed, rounds := "—", "—"
		if r.DelayedMean > 0 {
			delayed, rounds = ms(r.DelayedMean), fmt.Sprintf("%.1f", r.Rounds)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %.1f | %.0f | %s | %s | %s | %.1f |\n",
			r.Turns, r.Mode, ms(r.P50), ms(r.P95), ms(r.P99), ms(r.EngineP50), ms(r.EngineP95), ms(r.EngineP99),
			r.CallsPerQ, r.TokensPerQ, rounds, delayed, ms(r.ColdOpen), float64(r.HeapBytes)/(1<<20))
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
