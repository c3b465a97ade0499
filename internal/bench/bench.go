// Package bench measures the engine's own cost: ingest throughput,
// retrieval latency, cold open, memory and disk use, and LLM calls, on
// synthetic spaces of growing size. The LLM is the scripted fake (answering
// at once, or after a fixed delay to expose the critical path) and the
// embedder is the hashing embedder, so the figures are the engine's, not a
// model's. Time spent inside the fake LLM and embedder is measured and
// subtracted where the issue asks for engine-only figures.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
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
	// Progress, when set, receives a line per step.
	Progress func(string)
	// ProfileDir, when set, receives a CPU profile of each phase of each
	// (size, mode): cpu-<turns>-<mode>-<phase>.pprof with phase ingest,
	// open or retrieve (go tool pprof reads them).
	ProfileDir string
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

// Result is one (size, mode) measurement.
type Result struct {
	Turns int         `json:"turns"`
	Mode  higmem.Mode `json:"mode"`
	// Events built.
	Events int `json:"events"`
	// Ingest: wall time, and turns/s of the engine alone (wall minus the
	// time inside the fake LLM and the embedder; LLM calls run one at a
	// time during this measurement so the subtraction is exact).
	IngestWall          time.Duration `json:"ingest_wall_ns"`
	IngestEngineTPS     float64       `json:"ingest_engine_turns_per_s"`
	IngestCallsPerTurn  float64       `json:"ingest_calls_per_turn"`
	IngestTokensPerTurn float64       `json:"ingest_tokens_per_turn"`
	// Retrieval with the LLM answering at once (engine plus the fake's
	// own parsing), per question.
	P50, P95, P99 time.Duration `json:"-"`
	// Critical path with every call delayed by Config.Delay.
	DelayedMean time.Duration `json:"-"`
	Rounds      float64       `json:"rounds"`
	CallsPerQ   float64       `json:"calls_per_question"`
	TokensPerQ  float64       `json:"tokens_per_question"`
	// Cold open: a new Memory on the stored file, up to the first answer
	// of Retrieve (loading turns, events, vectors, building BM25).
	ColdOpen time.Duration `json:"-"`
	// HeapBytes is the Go heap in use by the loaded space.
	HeapBytes uint64 `json:"heap_bytes"`
	// DiskBytesPerTurn is the SQLite file size (with WAL) per turn.
	DiskBytesPerTurn float64 `json:"disk_bytes_per_turn"`
	// Skipped explains a measurement that was not made.
	Skipped string `json:"skipped,omitempty"`
}

// timedModel measures the time spent inside a model.
type timedModel struct {
	inner llm.Model
	delay time.Duration
	spent atomic.Int64
	calls atomic.Int64
	toks  atomic.Int64
}

func (m *timedModel) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := m.inner.Complete(ctx, r)
	if m.delay > 0 {
		select {
		case <-time.After(m.delay):
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
	start := time.Now()
	v, err := e.Embedder.Embed(ctx, texts)
	e.spent.Add(int64(time.Since(start)))
	return v, err
}

var space = higmem.Space{UserID: "bench"}

// Run measures every configured (size, mode).
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg.defaults()
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "higmem-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var out []Result
	for _, n := range cfg.Sizes {
		conv := synth.Generate(synth.Options{Turns: n, Seed: cfg.Seed})
		for _, mode := range cfg.Modes {
			if mode != higmem.ModeOffline && n > cfg.MaxLLMIngest {
				out = append(out, Result{Turns: n, Mode: mode, Skipped: fmt.Sprintf("LLM-mode ingest capped at %d turns (--max-llm-ingest)", cfg.MaxLLMIngest)})
				continue
			}
			cfg.Progress(fmt.Sprintf("%d turns, %s mode", n, mode))
			r, err := measure(ctx, cfg, filepath.Join(dir, fmt.Sprintf("%s-%d.db", mode, n)), conv, mode)
			if err != nil {
				return out, fmt.Errorf("bench %d turns %s: %w", n, mode, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func measure(ctx context.Context, cfg Config, path string, conv synth.Conversation, mode higmem.Mode) (Result, error) {
	res := Result{Turns: len(conv.Turns), Mode: mode}
	if cfg.Reuse && fileSize(path) > 0 {
		return measureStored(ctx, cfg, path, conv, res)
	}
	if err := ingest(ctx, cfg, path, conv, &res); err != nil {
		return res, err
	}
	return measureStored(ctx, cfg, path, conv, res)
}

// ingest builds the space at path, filling the ingest figures of res.
func ingest(ctx context.Context, cfg Config, path string, conv synth.Conversation, res *Result) error {
	mode := res.Mode
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return err
	}
	emb := &timedEmbedder{Embedder: hashing.New(0)}
	model := &timedModel{inner: llmtest.NewScripted()}
	opts := higmem.Options{Store: st, Embedder: emb, Mode: mode, Concurrency: 1}
	if mode != higmem.ModeOffline {
		opts.Memory = model
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
	turns := conv.Turns
	for len(turns) > 0 {
		k := 1
		for k < len(turns) && turns[k].SessionID == turns[0].SessionID {
			k++
		}
		if _, err := m.Add(ctx, space, turns[:k]); err != nil {
			st.Close()
			return err
		}
		turns = turns[k:]
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
// path.
func measureStored(ctx context.Context, cfg Config, path string, conv synth.Conversation, res Result) (Result, error) {
	mode := res.Mode
	res.DiskBytesPerTurn = float64(fileSize(path)+fileSize(path+"-wal")) / float64(res.Turns)
	// Cold open and retrieval with an instant LLM.
	questions := queries(conv, cfg.Queries)
	model := &timedModel{inner: llmtest.NewScripted()}
	var before runtime.MemStats
	runtime.GC()
	runtime.GC()
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
	opts := higmem.Options{Store: st, Embedder: hashing.New(0), Mode: mode}
	if mode != higmem.ModeOffline {
		opts.Memory = model
	}
	m, err := higmem.Open(ctx, opts)
	if err != nil {
		return res, err
	}
	defer m.Close()
	if _, err := m.Retrieve(ctx, space, questions[0], higmem.RetrieveOptions{}); err != nil {
		return res, err
	}
	res.ColdOpen = time.Since(start)
	stop()
	if res.Events == 0 {
		stats, err := m.Stats(ctx, space)
		if err != nil {
			return res, err
		}
		res.Events = stats.Events
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapInuse > before.HeapInuse {
		res.HeapBytes = after.HeapInuse - before.HeapInuse
	}
	model.calls.Store(0)
	model.toks.Store(0)
	lat := make([]time.Duration, 0, len(questions))
	results := make([]*higmem.Result, 0, len(questions))
	rounds := 0
	if stop, err = profile(cfg, res, "retrieve"); err != nil {
		return res, err
	}
	for _, q := range questions {
		t0 := time.Now()
		r, err := m.Retrieve(ctx, space, q, higmem.RetrieveOptions{})
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t0))
		results = append(results, r)
		rounds += r.Trace.Rounds
	}
	stop()
	if cfg.Dump != nil {
		if err := dump(cfg.Dump, res, results); err != nil {
			return res, err
		}
	}
	slices.Sort(lat)
	res.P50, res.P95, res.P99 = pct(lat, 50), pct(lat, 95), pct(lat, 99)
	res.CallsPerQ = float64(model.calls.Load()) / float64(len(questions))
	res.TokensPerQ = float64(model.toks.Load()) / float64(len(questions))
	res.Rounds = float64(rounds) / float64(len(questions))

	// Critical path: every call delayed; Ask includes the answer round.
	if mode != higmem.ModeOffline && cfg.DelayQueries > 0 {
		slow := &timedModel{inner: llmtest.NewScripted(), delay: cfg.Delay}
		opts.Memory = slow
		ms, err := higmem.Open(ctx, opts)
		if err != nil {
			return res, err
		}
		defer ms.Close()
		var total time.Duration
		rounds = 0
		for _, q := range questions[:min(cfg.DelayQueries, len(questions))] {
			t0 := time.Now()
			a, err := ms.Ask(ctx, space, q, higmem.RetrieveOptions{})
			if err != nil {
				return res, err
			}
			total += time.Since(t0)
			rounds += a.Trace.Rounds
		}
		k := min(cfg.DelayQueries, len(questions))
		res.DelayedMean = total / time.Duration(k)
		res.Rounds = float64(rounds) / float64(k)
	}
	return res, nil
}

// profile starts a CPU profile of one phase when cfg.ProfileDir is set and
// returns the function that stops it.
func profile(cfg Config, r Result, phase string) (stop func(), err error) {
	if cfg.ProfileDir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(cfg.ProfileDir, fmt.Sprintf("cpu-%d-%s-%s.pprof", r.Turns, r.Mode, phase)))
	if err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
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

// Table renders results as a Markdown table.
func Table(rs []Result) string {
	var b strings.Builder
	b.WriteString("| turns | mode | events | ingest wall | engine turns/s | calls/turn | retrieval p50 | p95 | p99 | calls/q | rounds | Ask @delay | cold open | heap MiB | disk B/turn |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %d | %s | — | %s |||||||||||||\n", r.Turns, r.Mode, r.Skipped)
			continue
		}
		delayed := "—"
		if r.DelayedMean > 0 {
			delayed = ms(r.DelayedMean)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %.0f | %.2f | %s | %s | %s | %.1f | %.1f | %s | %s | %.1f | %.0f |\n",
			r.Turns, r.Mode, r.Events, r.IngestWall.Round(time.Millisecond), r.IngestEngineTPS, r.IngestCallsPerTurn,
			ms(r.P50), ms(r.P95), ms(r.P99), r.CallsPerQ, r.Rounds, delayed, ms(r.ColdOpen),
			float64(r.HeapBytes)/(1<<20), r.DiskBytesPerTurn)
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
