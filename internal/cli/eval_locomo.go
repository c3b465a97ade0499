package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/eval/locomo/harness"
	"github.com/higmem/higmem/internal/bpe"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/llm/openai"
)

// defaultEvalSystems are run when --systems is not given.
var defaultEvalSystems = []string{"higmem", "higmem-paper", "offline", "full-context", "oracle", "hybrid-topk", "amem"}

// evalLoCoMoOptions are the flags of `higmem eval locomo`.
type evalLoCoMoOptions struct {
	cfg       harness.Config
	systems   []string
	fake      string
	tokenizer string
}

func newEvalLoCoMoCommand(a *app) *cobra.Command {
	o := &evalLoCoMoOptions{}
	cfg := &o.cfg
	cmd := &cobra.Command{
		Use:   "locomo FILE",
		Short: "Run memory systems on LoCoMo and write a report (resumable)",
		Long: `Locomo builds memory per (system, sample), asks the selected questions, and scores
every answer the ways the papers do: official LoCoMo F1; A-Mem/Mem0 F1 and BLEU-1
(category 5 trap-scored, flagged); an LLM judge J (judge role, category 5 excluded,
--judge-runs N gives mean ± sd); evidence precision and recall at the K passed to the
answer model and per retrieval stage; LLM calls and tokens by role for construction
and questions; wall time; critical-path rounds.

Systems: ` + strings.Join(harness.SystemNames(), ", ") + ` ("all" for every one).
Without an LLM endpoint, systems that need one to build memory are skipped, and the
others report retrieval only.

The run directory (--out, default eval-runs/locomo-<config hash>) receives
config.json, questions.jsonl, builds.jsonl, report.md, results.json, SVG charts and
vectors/, the embedder's vectors (one file per model). A killed run continues where
it stopped when the same command is run again: answered questions are not asked
again; memories are rebuilt, which the LLM response cache in the database (--db) and
the vectors make free: no text is embedded twice. --vector-cache DIR keeps the vectors
in DIR instead, so that runs given the same DIR (other systems, K or samples) share
them. FILE is a file in the LoCoMo format, such as the public release
(data/locomo10.json of github.com/snap-research/locomo).`,
		Example: `  higmem eval locomo locomo10.json --systems hybrid-topk,dense-topk,bm25-topk,oracle,offline --k 20
  higmem eval locomo locomo10.json --systems higmem,amem --samples 0 --max-questions 50 --concurrency 4
  higmem eval report eval-runs/locomo-*`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalLoCoMoFunc(cmd, a, o, args)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.systems, "systems", defaultEvalSystems, "systems to run, comma-separated, or all")
	f.StringSliceVar(&cfg.Samples, "samples", nil, "samples by 0-based index or id (default all)")
	f.IntVar(&cfg.MaxQuestions, "max-questions", 0, "questions per sample, in file order after --categories (0 = all)")
	f.IntVar(&cfg.MaxSessions, "max-sessions", 0, "keep each sample's first N sessions and the questions whose evidence is all within them (0 = all): a slice for slow models")
	f.IntSliceVar(&cfg.Categories, "categories", nil, "question categories by number (default every category of the file)")
	f.IntVar(&cfg.Concurrency, "concurrency", 1, "memory builds and questions in flight")
	f.IntVar(&cfg.Env.K, "k", 10, "turns passed to the answer model by hybrid-topk, dense-topk and bm25-topk")
	f.IntVar(&cfg.Env.AMemK, "amem-k", 10, "A-Mem retrieval top-k (the paper tuned 40-50 for GPT-4o-mini)")
	f.IntVar(&cfg.JudgeRuns, "judge-runs", 1, "times the judge grades each answer (J is mean ± sd over runs)")
	f.StringVar(&cfg.Out, "out", "", "run directory (default eval-runs/locomo-<config hash>; the same command resumes)")
	f.StringVar(&cfg.VectorCache, "vector-cache", "", "directory that keeps the embedder's vectors, one file per model, shared by the runs given it (default: vectors/ in the run directory)")
	f.StringVar(&o.tokenizer, "tokenizer", "estimate", "also count tokens with a real tokenizer: estimate (server usage, or 4 bytes per token) or o200k_base (fetch it first: higmem models fetch --tokenizer o200k_base)")
	f.StringVar(&o.fake, "fake-llm", "", "use a fake model for every role instead of an endpoint: scripted (counts calls and tokens; answers are meaningless) or real-junk (a small real model's junk replies); with -http (scripted-http), served on a loopback port to the real OpenAI-compatible client, so that HTTP requests are counted too")
	_ = f.MarkHidden("fake-llm")
	return cmd
}

// evalLoCoMoFunc runs the evaluation and prints its summary.
func evalLoCoMoFunc(cmd *cobra.Command, a *app, o *evalLoCoMoOptions, args []string) error {
	cfg := &o.cfg
	ctx := cmd.Context()
	if len(args) == 0 {
		return errors.New("no LoCoMo file given: pass FILE, the public LoCoMo release (data/locomo10.json of github.com/snap-research/locomo) or a file in its format")
	}
	cfg.Data = args[0]
	for _, s := range o.systems {
		if s == "all" {
			cfg.Systems = append(cfg.Systems, harness.SystemNames()...)
		} else {
			cfg.Systems = append(cfg.Systems, s)
		}
	}
	if err := a.evalModels(ctx, cfg, o.fake); err != nil {
		return err
	}
	switch o.tokenizer {
	case "", "estimate":
	case bpe.O200kBase:
		enc, err := bpe.Load(bpe.Dir(a.modelsDir))
		if err != nil {
			return err
		}
		cfg.Tokenizer, cfg.TokenizerName = enc, bpe.O200kBase
	default:
		return fmt.Errorf("--tokenizer %q: want estimate or %s", o.tokenizer, bpe.O200kBase)
	}
	cfg.GitCommit, cfg.GitDirty = gitState(ctx)
	cfg.Log = cmd.ErrOrStderr()
	cfg.Progress = func(total int, desc string) harness.Bar { return a.progress(total, desc) }
	rep, err := harness.Run(ctx, *cfg)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), rep)
	}
	printEvalSummary(cmd.OutOrStdout(), rep)
	return nil
}

// evalModels fills the models and embedder of cfg. A fake model needs no
// database; real endpoints go through a.backends, whose database holds
// only the LLM response cache here (eval memories live in memory, so
// --embedder auto chooses as for a new database).
func (a *app) evalModels(ctx context.Context, cfg *harness.Config, fake string) error {
	cfg.Models = map[string]string{}
	if fake != "" {
		m, err := harness.FakeModel(strings.TrimSuffix(fake, "-http"))
		if err != nil {
			return err
		}
		if strings.HasSuffix(fake, "-http") {
			if m, err = a.serveFake(ctx, m); err != nil {
				return err
			}
		}
		emb, err := a.openEmbedder(ctx, nil)
		if err != nil {
			return err
		}
		meter := llm.NewMeter(nil)
		cfg.Env.Memory = meter.Wrap(llm.RoleMemory, fake, m)
		cfg.Env.Answer = meter.Wrap(llm.RoleAnswer, fake, m)
		cfg.Judge = meter.Wrap(llm.RoleJudge, fake, m)
		cfg.Env.Embedder = emb
		cfg.FakeLLM = fake
		for _, r := range []string{"memory", "answer", "judge"} {
			cfg.Models[r] = fake
		}
		return nil
	}
	b, err := a.backends(ctx, false)
	if err != nil {
		return err
	}
	cfg.Env.Memory, cfg.Env.Answer, cfg.Judge, cfg.Env.Embedder = b.Memory, b.Answer, b.Judge, b.Embedder
	for role, m := range map[string]llm.Model{"memory": b.Memory, "answer": b.Answer, "judge": b.Judge} {
		if m == nil {
			continue
		}
		name := "unnamed"
		if n, ok := m.(interface{ ModelName() string }); ok && n.ModelName() != "" {
			name = n.ModelName()
		}
		cfg.Models[role] = name
	}
	return nil
}

// gitState returns the commit the binary was built from and whether
// tracked files differed from it: from the build information when the
// binary carries it (go build), else from git in the working directory
// (go run); "" when neither is available.
func gitState(ctx context.Context) (string, bool) {
	if info, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(strings.TrimSpace(string(st))) > 0
}

// printEvalSummary prints one line per system and where the report is.
func printEvalSummary(w io.Writer, rep *harness.Report) {
	fmt.Fprintf(w, "%-16s %9s %9s %9s %8s %7s %9s %9s\n", "system", "questions", "F1 (1-4)", "J (1-4)", "R", "K", "calls/tn", "calls/q")
	for _, s := range rep.Systems {
		if s.Skipped != "" {
			fmt.Fprintf(w, "%-16s skipped: %s\n", s.Label, s.Skipped)
			continue
		}
		var g14, g15 harness.Group
		for _, g := range s.Groups {
			switch g.Key {
			case "1-4":
				g14 = g
			case "1-5":
				g15 = g
			}
		}
		num := func(p *float64, f string) string {
			if p == nil {
				return "–"
			}
			return fmt.Sprintf(f, *p)
		}
		var j *float64
		if g14.J != nil {
			j = &g14.J.Mean
		}
		fmt.Fprintf(w, "%-16s %9d %9s %9s %8s %7s %9.2f %9.2f\n", s.Label, s.Questions,
			num(g14.OfficialF1, "%.3f"), num(j, "%.3f"), num(g15.Recall, "%.3f"), num(g15.K, "%.1f"),
			s.Build.Per(float64(s.Build.Calls)), s.QA.Per(float64(s.QA.Calls)))
	}
	floor := false
	for _, s := range rep.Systems {
		f := s.AtOfflineK
		if s.Skipped != "" || f == nil {
			continue
		}
		if !floor {
			floor = true
			fmt.Fprintf(w, "\nat offline's K (per question):\n%-16s %8s %7s %8s %9s\n", "system", "R@K", "P@K", "K", "offline R")
		}
		verdict := "offline holds the floor"
		if !f.Holds() {
			verdict = fmt.Sprintf("offline BELOW by %.3f", f.Recall-f.OfflineRecall)
		}
		fmt.Fprintf(w, "%-16s %8.3f %7.3f %8.1f %9.3f  %s\n", s.Label+"@K", f.Recall, f.Precision, f.K, f.OfflineRecall, verdict)
	}
	for _, r := range rep.Runs {
		if c := r.Calibration; c != nil && !c.Passed {
			fmt.Fprintf(w, "\nJ withheld (%s): the judge failed its calibration (%s)\n", r.Name, c)
		}
	}
	if len(rep.Runs) == 1 {
		fmt.Fprintf(w, "\nreport: %s\n", filepath.Join(rep.Runs[0].Dir, harness.ReportFile))
	}
}

// serveFake serves fake model m on a loopback port, as an OpenAI-compatible
// endpoint, until the command ends, and returns the real client of it
// (--llm-concurrency requests in flight), so that an evaluation with a
// fake model still goes through HTTP: structured-output negotiation,
// budgets and request counts are the real client's.
func (a *app) serveFake(ctx context.Context, m llm.Model) (llm.Model, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: llmfake.HTTPHandler(llmfake.ModelHandler(m)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	a.closers = append(a.closers, srv.Close)
	return openai.New(openai.Options{BaseURL: "http://" + l.Addr().String() + "/v1", Model: "scripted",
		MaxConcurrency: a.llmConcurrency, Logger: a.log})
}
