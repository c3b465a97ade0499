package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/diskcache"
	"github.com/higmem/higmem/eval/amem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
)

// Version identifies the harness's record format and scoring.
const Version = "locomo-harness/1"

// Files of a run directory.
const (
	ConfigFile    = "config.json"
	QuestionsFile = "questions.jsonl"
	BuildsFile    = "builds.jsonl"
	ReportFile    = "report.md"
	ResultsFile   = "results.json"
)

// Bar is a progress bar (github.com/schollz/progressbar/v3 satisfies it).
type Bar interface {
	Add(n int) error
	Describe(desc string)
	Close() error
}

// Config configures Run.
type Config struct {
	// Data is the LoCoMo JSON file.
	Data string
	// Out is the run directory. Empty means eval-runs/locomo-<hash of the
	// configuration>, so that rerunning a command resumes its run.
	Out string
	// Systems to run, by name (see SystemNames).
	Systems []string
	// Samples selects samples by 0-based index or sample id; empty means
	// all.
	Samples []string
	// Categories selects question categories; empty means every category
	// of the data file.
	Categories []int
	// MaxQuestions caps the questions per sample, taken in file order
	// after the category filter; 0 means all.
	MaxQuestions int
	// MaxSessions, when positive, cuts each sample to its first
	// MaxSessions sessions and asks only the questions whose evidence is
	// all within them (locomo.Sample.FirstSessions and InSlice; questions
	// keep their indexes in the file): a slice that a slow model can build
	// and answer in reasonable time.
	MaxSessions int
	// JudgeRuns is how many times the judge grades each answer (default 1;
	// needs Judge).
	JudgeRuns int
	// Concurrency bounds the memory builds and questions in flight
	// (default 1).
	Concurrency int
	// Env holds the models and embedder; its K and AMemK are recorded.
	Env Env
	// Judge is the judge model (nil: no judge scores).
	Judge llm.Model
	// Models names the models by role ("memory", "answer", "judge"), for
	// the record.
	Models map[string]string
	// GitCommit and GitDirty describe the code, for the record.
	GitCommit string
	GitDirty  bool
	// FakeLLM names a fake model used instead of an endpoint ("" if none).
	FakeLLM string
	// Progress makes a progress bar (nil: none).
	Progress func(total int, desc string) Bar
	// Log receives messages: skipped systems, the run directory (nil:
	// discarded).
	Log io.Writer
	// OnRecord, when set, is called after each question record is
	// written (tests use it to interrupt a run).
	OnRecord func(QuestionRecord)
	// Tokenizer, when set, also counts every memory and answer call's
	// tokens with a real encoding; TokenizerName names it for the record.
	Tokenizer     Tokenizer
	TokenizerName string
	// VectorCache is the directory that keeps the embedder's vectors
	// (embed/diskcache: one file per model), so that a resumed or
	// repeated run embeds no text twice. Empty means VectorsDir in the
	// run directory; runs given one directory share their vectors.
	VectorCache string
}

// VectorsDir is the run directory's vector cache (see
// Config.VectorCache).
const VectorsDir = "vectors"

// RunConfig is what config.json records. Every field except Invocations
// must match for a run directory to be resumed.
type RunConfig struct {
	Harness    string   `json:"harness"`
	Data       string   `json:"data"`
	DataSHA256 string   `json:"data_sha256"`
	Systems    []string `json:"systems"`
	Samples    []string `json:"samples"`
	Categories []int    `json:"categories"`
	// CategoryNames names the categories as the data file does (by
	// number; see locomo.CategoryNames).
	CategoryNames map[string]string `json:"category_names,omitempty"`
	MaxQuestions  int               `json:"max_questions"`
	MaxSessions   int               `json:"max_sessions,omitempty"`
	K             int               `json:"k"`
	AMemK         int               `json:"amem_k"`
	JudgeRuns     int               `json:"judge_runs"`
	Models        map[string]string `json:"models"`
	Embedder      string            `json:"embedder"`
	PromptVersion string            `json:"prompt_version"`
	AMemPrompts   string            `json:"amem_prompt_version"`
	FakeLLM       string            `json:"fake_llm,omitempty"`
	// Tokenizer names the encoding that also counted the tokens ("" when
	// only the server's usage or the 4-bytes estimate is reported).
	Tokenizer string `json:"tokenizer,omitempty"`
	// CutTurns counts the turns over the engine's per-turn cap
	// (higmem.DefaultMaxTurnBytes, text and caption) that the run cut to
	// fit it, for every system alike (see locomo.Sample.CapTurns).
	CutTurns int `json:"cut_turns,omitempty"`
	// Skipped maps systems that cannot run with these models to why.
	Skipped     map[string]string `json:"skipped,omitempty"`
	Invocations []Invocation      `json:"invocations"`
}

// Invocation records one execution of a run (the first, and each resume).
type Invocation struct {
	Started     time.Time `json:"started"`
	GitCommit   string    `json:"git_commit,omitempty"`
	GitDirty    bool      `json:"git_dirty,omitempty"`
	Concurrency int       `json:"concurrency"`
	// VectorCache is the file that held the embedder's vectors.
	VectorCache string `json:"vector_cache,omitempty"`
}

// identity is the part of a RunConfig that must match to resume.
func (c RunConfig) identity() string {
	c.Invocations = nil
	c.Data = filepath.Base(c.Data)
	b, _ := json.Marshal(c)
	return string(b)
}

// plan is a selected sample and its questions.
type plan struct {
	sample    *locomo.Sample
	questions []int // indexes into sample.QA
}

// Run runs (or resumes) an evaluation and writes its report. It returns
// the report even when some systems were skipped; an error from a model
// endpoint or the context stops the run, which a rerun resumes.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	if cfg.Env.K <= 0 {
		cfg.Env.K = 10
	}
	if cfg.Env.AMemK <= 0 {
		cfg.Env.AMemK = amem.DefaultRetrieveK
	}
	if cfg.JudgeRuns <= 0 {
		cfg.JudgeRuns = 1
	}
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if len(cfg.Systems) == 0 {
		return nil, fmt.Errorf("harness: no systems given")
	}
	var systems []System
	for _, name := range cfg.Systems {
		s, err := NewSystem(name)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(systems, func(x System) bool { return x.Name() == s.Name() }) {
			systems = append(systems, s)
		}
	}
	data, err := os.ReadFile(cfg.Data)
	if err != nil {
		return nil, fmt.Errorf("harness: reading data: %w", err)
	}
	samples, err := locomo.Parse(strings.NewReader(string(data)))
	if err != nil {
		return nil, fmt.Errorf("harness: %s: %w", cfg.Data, err)
	}
	// A turn over the engine's cap would fail the memory build of its
	// conversation: every system gets it cut to the cap instead.
	cutTurns, largest := 0, 0
	for i := range samples {
		c, l := samples[i].CapTurns(higmem.DefaultMaxTurnBytes)
		cutTurns, largest = cutTurns+c, max(largest, l)
	}
	if cutTurns > 0 {
		logf("harness: cut %d turns over the engine's per-turn cap of %d bytes (text and caption; the largest held %d bytes) to fit it, ending each with \"[…cut: N more bytes]\"; every system sees them cut",
			cutTurns, higmem.DefaultMaxTurnBytes, largest)
	}
	plans, err := selectQuestions(samples, cfg)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	rc := RunConfig{
		Harness: Version, Data: cfg.Data, DataSHA256: hex.EncodeToString(sum[:]),
		Categories: categories(cfg.Categories, samples), MaxQuestions: cfg.MaxQuestions,
		MaxSessions: cfg.MaxSessions, K: cfg.Env.K, AMemK: cfg.Env.AMemK, JudgeRuns: cfg.JudgeRuns,
		Models: map[string]string{}, Embedder: "none (BM25 only)",
		PromptVersion: prompt.Version, AMemPrompts: amem.PromptVersion, FakeLLM: cfg.FakeLLM,
		Tokenizer: cfg.TokenizerName, CutTurns: cutTurns,
	}
	names := locomo.CategoryNames(samples)
	for _, c := range rc.Categories {
		if rc.CategoryNames == nil {
			rc.CategoryNames = map[string]string{}
		}
		name, ok := names[c]
		if !ok {
			name = "category " + strconv.Itoa(c) // selected, but not in the file
		}
		rc.CategoryNames[strconv.Itoa(c)] = name
	}
	for _, s := range systems {
		rc.Systems = append(rc.Systems, s.Name())
	}
	for _, p := range plans {
		rc.Samples = append(rc.Samples, p.sample.ID)
	}
	for role, name := range cfg.Models {
		rc.Models[role] = name
	}
	if cfg.Env.Embedder != nil {
		rc.Embedder = cfg.Env.Embedder.ID()
	}
	env := cfg.Env
	env.Memory, env.Answer = counted(llm.RoleMemory, env.Memory, cfg.Tokenizer), counted(llm.RoleAnswer, env.Answer, cfg.Tokenizer)
	for _, s := range systems {
		switch {
		case s.NeedsMemoryModel() && env.Memory == nil:
			if rc.Skipped == nil {
				rc.Skipped = map[string]string{}
			}
			rc.Skipped[s.Name()] = "needs an LLM to build memory and none is configured (set an endpoint; see `higmem --help`)"
			logf("skipping %s: it needs an LLM to build memory and no endpoint is configured", s.Name())
		case needsEmbedder(s) && env.Embedder == nil:
			if rc.Skipped == nil {
				rc.Skipped = map[string]string{}
			}
			rc.Skipped[s.Name()] = "needs an embedder and none is configured"
			logf("skipping %s: it needs an embedder and none is configured", s.Name())
		case env.answerModel() == nil && s.Name() != "offline":
			logf("%s: no answer model configured: reporting retrieval only", s.Name())
		}
	}

	if cfg.Judge == nil && env.answerModel() != nil {
		logf("no judge model configured: J is not reported")
	}
	if cfg.Out == "" {
		h := sha256.Sum256([]byte(rc.identity()))
		cfg.Out = filepath.Join("eval-runs", "locomo-"+hex.EncodeToString(h[:5]))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	prev, err := readConfig(cfg.Out)
	if err != nil {
		return nil, err
	}
	if prev != nil {
		if prev.identity() != rc.identity() {
			return nil, fmt.Errorf("%w: %s was made with another configuration, data or models (compare its %s); use another --out",
				ErrConfigMismatch, cfg.Out, ConfigFile)
		}
		rc.Invocations = prev.Invocations
		logf("resuming run in %s", cfg.Out)
	} else {
		logf("run directory: %s (rerun the same command to resume)", cfg.Out)
	}
	inv := Invocation{Started: time.Now().UTC(), GitCommit: cfg.GitCommit, GitDirty: cfg.GitDirty, Concurrency: cfg.Concurrency}
	if env.Embedder != nil {
		dir := cfg.VectorCache
		if dir == "" {
			dir = filepath.Join(cfg.Out, VectorsDir)
		}
		vc, err := diskcache.Open(dir, env.Embedder)
		if err != nil {
			return nil, fmt.Errorf("harness: vector cache: %w", err)
		}
		defer func() {
			hits, misses := vc.Stats()
			logf("vector cache %s: %d texts found, %d embedded", vc.Path(), hits, misses)
			vc.Close()
		}()
		logf("vector cache %s: %d vectors", vc.Path(), vc.Len())
		env.Embedder, inv.VectorCache = vc.Embedder(), vc.Path()
	}
	rc.Invocations = append(rc.Invocations, inv)
	if err := writeJSONFile(filepath.Join(cfg.Out, ConfigFile), rc); err != nil {
		return nil, err
	}

	// A judge grades the calibration set first; one that fails it does
	// not judge the run (its J would mean nothing).
	if cfg.Judge != nil {
		cal, err := Calibrate(ctx, cfg.Judge)
		if err != nil {
			return nil, err
		}
		cal.Model = cfg.Models["judge"]
		if err := writeJSONFile(filepath.Join(cfg.Out, CalibrationFile), cal); err != nil {
			return nil, err
		}
		logf("judge calibration %s", cal)
		if !cal.Passed {
			logf("the judge failed its calibration: answers are not judged and J is not reported")
			cfg.Judge = nil
		}
	}

	done := map[string]bool{}
	qw, err := openJSONL(filepath.Join(cfg.Out, QuestionsFile), func(b []byte) error {
		var r QuestionRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		done[r.key()] = r.Error == "" // a failed question is asked again
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer qw.Close()
	var builtMu sync.Mutex
	built := map[string]bool{}
	bw, err := openJSONL(filepath.Join(cfg.Out, BuildsFile), func(b []byte) error {
		var r BuildRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		built[r.key()] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer bw.Close()

	// Jobs: one per (system, sample) with questions left.
	type job struct {
		sys     System
		plan    plan
		pending []int
	}
	var jobs []job
	total := 0
	for _, s := range systems {
		if rc.Skipped[s.Name()] != "" {
			continue
		}
		for _, p := range plans {
			var pending []int
			for _, qi := range p.questions {
				if !done[questionKey(s.Name(), p.sample.ID, qi)] {
					pending = append(pending, qi)
				}
			}
			if len(pending) > 0 {
				jobs = append(jobs, job{s, p, pending})
				total += len(p.sample.Turns()) + len(pending)
			}
		}
	}
	var bar Bar = nopBar{}
	if cfg.Progress != nil && total > 0 {
		bar = cfg.Progress(total, "eval locomo")
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, cfg.Concurrency)
	acquire := func() bool {
		if runCtx.Err() != nil {
			return false
		}
		select {
		case sem <- struct{}{}:
			return true
		case <-runCtx.Done():
			return false
		}
	}
	release := func() { <-sem }
	var barMu sync.Mutex
	progress := func(n int, desc string) {
		barMu.Lock()
		defer barMu.Unlock()
		if desc != "" {
			bar.Describe(desc)
		}
		_ = bar.Add(n)
	}
	var wg sync.WaitGroup
	// fail stops the run: the records cannot be written, or the caller's
	// context ended. A system or a question that fails does not: its
	// records say so and the others go on (isolate).
	fail := func(err error) { cancel(err) }
	// isolate records err as the failure of one build or question unless
	// the run itself is stopping; it reports whether the run goes on.
	isolate := func(what string, err error) bool {
		if runCtx.Err() != nil {
			return false
		}
		logf("%s failed, the run goes on: %v", what, err)
		return true
	}
	for _, j := range jobs {
		wg.Go(func() {
			name, s := j.sys.Name(), j.plan.sample
			if !acquire() {
				return
			}
			progress(0, "build "+name+" "+s.ID)
			buildCtx, tl := withTally(runCtx)
			buildStart, lastSession := time.Now(), time.Now()
			inst, err := j.sys.Build(buildCtx, &env, s, func(sb SessionBuild) {
				lastSession = time.Now()
				rec := BuildRecord{System: name, Sample: s.ID, Session: sb.Session, Turns: sb.Turns,
					Calls: callStats(sb.Calls), WallMS: ms(sb.Wall), Warnings: sb.Warnings}
				rec.Calls = mergeStats(mergeStats(rec.Calls, tl.take()), fallbacks(sb.Warnings))
				builtMu.Lock()
				first := !built[rec.key()]
				built[rec.key()] = true
				builtMu.Unlock()
				if first {
					if err := bw.write(rec); err != nil {
						fail(err)
					}
				}
				progress(sb.Turns, "")
			})
			release()
			if err != nil {
				if !isolate("memory build of "+name+" "+s.ID, err) {
					fail(err)
					return
				}
				// What the failed session spent is recorded; every
				// pending question of the sample is recorded failed.
				since := lastSession
				if since.Before(buildStart) {
					since = buildStart
				}
				brec := BuildRecord{System: name, Sample: s.ID, Session: failedBuild, Calls: tl.takeAll(),
					WallMS: ms(time.Since(since)), Error: err.Error()}
				if err := bw.write(brec); err != nil {
					fail(err)
					return
				}
				for _, qi := range j.pending {
					rec := newRecord(name, s, qi, &Outcome{})
					rec.Error = "memory build failed: " + err.Error()
					if err := qw.write(rec); err != nil {
						fail(err)
						return
					}
					progress(1, "")
				}
				return
			}
			defer inst.Close()
			var qg sync.WaitGroup
			for _, qi := range j.pending {
				if !acquire() {
					break
				}
				qg.Go(func() {
					defer release()
					rec, err := ask(runCtx, cfg, inst, name, s, qi)
					if err != nil && isolate(fmt.Sprintf("%s question %s/%d", name, s.ID, qi), err) {
						err = nil // rec records the failure
					}
					if err == nil {
						err = qw.write(rec)
					}
					if err != nil {
						fail(err)
						return
					}
					progress(1, "ask "+name+" "+s.ID)
					if cfg.OnRecord != nil {
						cfg.OnRecord(rec)
					}
				})
			}
			qg.Wait()
		})
	}
	wg.Wait()
	bar.Close()
	if runCtx.Err() != nil {
		err := context.Cause(runCtx)
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("harness: run stopped (rerun the same command to resume from %s): %w", cfg.Out, err)
	}
	rep, err := LoadRun(cfg.Out)
	if err != nil {
		return nil, err
	}
	if err := WriteReport(cfg.Out, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// ask asks one question and scores it, with the judge when configured.
func ask(ctx context.Context, cfg Config, inst Instance, system string, s *locomo.Sample, qi int) (QuestionRecord, error) {
	qa := s.QA[qi]
	start := time.Now()
	qctx, tl := withTally(ctx)
	out, err := inst.Ask(qctx, Query{Question: qa.Question, Gold: qa.Evidence})
	if err != nil {
		// The record says what the failed question spent; the caller
		// decides whether the run goes on.
		rec := newRecord(system, s, qi, &Outcome{})
		rec.Calls = mergeStats(rec.Calls, tl.take())
		rec.WallMS = ms(time.Since(start))
		rec.Error = err.Error()
		return rec, fmt.Errorf("%s: %s question %d: %w", system, s.ID, qi, err)
	}
	wall := time.Since(start)
	rec := newRecord(system, s, qi, out)
	rec.Calls = mergeStats(rec.Calls, tl.take())
	rec.WallMS = ms(wall)
	if cfg.Judge != nil && out.Answered && qa.Category != locomo.Adversarial {
		for run := range cfg.JudgeRuns {
			v, err := Judge(ctx, cfg.Judge, qa.Question, qa.Answer, out.Answer, run)
			if err != nil {
				if ctx.Err() != nil {
					return rec, fmt.Errorf("judge: %s question %d: %w", s.ID, qi, err)
				}
				// A judge call that failed is a verdict with an error
				// (not counted in J), not the end of the run.
				v.Run, v.Error = run, err.Error()
			}
			rec.Judge = append(rec.Judge, v)
		}
	}
	return rec, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type nopBar struct{}

func (nopBar) Add(int) error   { return nil }
func (nopBar) Describe(string) {}
func (nopBar) Close() error    { return nil }

// needsEmbedder reports whether a system ranks by vectors only.
func needsEmbedder(s System) bool {
	n, ok := s.(interface{ NeedsEmbedder() bool })
	return ok && n.NeedsEmbedder()
}

// categories returns the selected categories, sorted: cs, or every
// category of the samples when cs is empty.
func categories(cs []int, samples []locomo.Sample) []int {
	out := slices.Clone(cs)
	if len(out) == 0 {
		for _, s := range samples {
			for _, q := range s.QA {
				out = append(out, q.Category)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// selectQuestions picks samples (in file order) and their questions.
func selectQuestions(samples []locomo.Sample, cfg Config) ([]plan, error) {
	want := map[int]bool{}
	for _, sel := range cfg.Samples {
		sel = strings.TrimSpace(sel)
		if sel == "" {
			continue
		}
		found := false
		for i := range samples {
			if strconv.Itoa(i) == sel || samples[i].ID == sel {
				want[i] = true
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("harness: no sample %q (give a 0-based index or a sample id)", sel)
		}
	}
	cats := categories(cfg.Categories, samples)
	var plans []plan
	for i := range samples {
		if len(want) > 0 && !want[i] {
			continue
		}
		if cfg.MaxSessions > 0 {
			samples[i] = samples[i].FirstSessions(cfg.MaxSessions)
		}
		p := plan{sample: &samples[i]}
		for qi, qa := range samples[i].QA {
			if !slices.Contains(cats, qa.Category) || (cfg.MaxSessions > 0 && !samples[i].InSlice(qa)) {
				continue
			}
			if cfg.MaxQuestions > 0 && len(p.questions) == cfg.MaxQuestions {
				break
			}
			p.questions = append(p.questions, qi)
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil, fmt.Errorf("harness: no samples selected")
	}
	return plans, nil
}

func readConfig(dir string) (*RunConfig, error) {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rc RunConfig
	if err := json.Unmarshal(b, &rc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, filepath.Join(dir, ConfigFile), err)
	}
	return &rc, nil
}

// writeJSONFile writes v as indented JSON, atomically.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// writeFile writes data to path through a temporary file and a rename.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
