package cli

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/bench"
	"github.com/higmem/higmem/internal/synth"
)

// benchOptions are the flags of `higmem bench`.
type benchOptions struct {
	cfg                    bench.Config
	sizes, modes, dumpPath string
	// The many-writers run (--writers).
	writers  bool
	wcfg     bench.WritersConfig
	foreign  string
	deletes  string
	parts    string
	cacheMiB int64
}

func newBenchCommand(a *app) *cobra.Command {
	o := &benchOptions{}
	cfg := &o.cfg
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the engine's own cost on synthetic spaces (ingest, retrieval, cold open, memory, disk)",
		Long: `Bench builds synthetic conversations of each size, ingests them in each mode with a
zero-latency scripted LLM and the hashing embedder, and reports:

  ingest       wall time and engine-only turns/s (wall minus the time inside the
               LLM and the embedder, LLM calls one at a time), LLM calls and tokens
               per turn, bytes on disk per turn;
  retrieval    latency percentiles with the LLM answering at once (calls in
               parallel, as the engine makes them), and engine-only percentiles
               (calls one at a time, minus the time inside the LLM);
  Ask @delay   the mean Ask time with every LLM call delayed by --delay (the
               critical path), with its sequential LLM rounds;
  cold open    a new Memory on the stored file up to its first answer, and the
               heap the loaded space takes.

LLM modes are ingested up to --max-llm-ingest turns; above it their retrieval is
measured on the space built in offline mode. Results are for this machine only.
--gap times questions apart (as on an idle server) instead of back to back.
--profile writes CPU profiles of each phase, --trace a runtime trace of the
timed retrievals; --dump writes every retrieval's
trace, to check that two builds retrieve the same.

--writers measures many writers instead (offline mode, hashing embedder): the
version check every read makes (p50/p95 of the one SpaceVersion query at each
of --sizes, beside the search), the search after another Memory on the same
SQLite file added, or imported, each of --foreign turns, or deleted each of
--foreign-deletes (caught up in place from the store's journal), against a
load from scratch, at each of --sizes, ingest turns/s
with 1 and 4 writers (Memories on their own store handles of one file) into
one space and into 4 spaces, and the heap in use after one Memory searched
--spaces spaces of --space-turns turns under --cache-mib.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchFunc(cmd, a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.sizes, "sizes", "1000,10000,100000", "space sizes in turns")
	f.StringVar(&o.modes, "modes", "offline,default,paper", "ingest modes")
	f.IntVar(&cfg.MaxLLMIngest, "max-llm-ingest", 10000, "largest size ingested in LLM modes")
	f.IntVar(&cfg.Queries, "queries", 200, "questions timed per size and mode")
	f.DurationVar(&cfg.Gap, "gap", 0, "idle time before each timed question (as on an idle server; 0: back to back)")
	f.DurationVar(&cfg.Delay, "delay", 300*time.Millisecond, "LLM latency for the critical-path run")
	f.IntVar(&cfg.DelayQueries, "delay-queries", 5, "questions timed with the delay")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the synthetic spaces")
	f.StringVar(&cfg.Shape, "shape", "chat", "shape of the synthetic conversations: chat (two people taking turns) or ua (user–assistant: short messages, long replies)")
	f.StringVar(&cfg.Dir, "dir", "", "keep the SQLite files here (default: a temporary directory)")
	f.StringVar(&o.dumpPath, "dump", "", "write every timed retrieval (stages, evidence ids and scores) as JSON lines to this file, to compare builds")
	f.BoolVar(&cfg.Reuse, "reuse", false, "reuse the SQLite files already in --dir (skip ingest; ingest figures are then zero)")
	f.StringVar(&cfg.ProfileDir, "profile", "", "write a CPU profile of each phase (ingest, open, retrieve) into this directory")
	f.StringVar(&cfg.TraceDir, "trace", "", "write a runtime trace of the timed retrievals into this directory (go tool trace)")
	f.BoolVar(&o.writers, "writers", false, "measure many writers: version check, catch-up, concurrent ingest, memory of many spaces")
	f.StringVar(&o.foreign, "foreign", "1,100,10000", "with --writers: turns another writer adds (and imports) before each timed catch-up")
	f.StringVar(&o.deletes, "foreign-deletes", "1,100", "with --writers: turns another writer deletes before each timed catch-up (at most half the space)")
	f.IntVar(&o.wcfg.Repeat, "repeat", 5, "with --writers: times each catch-up below 1,000 foreign writes is timed (the median is reported)")
	f.StringVar(&o.parts, "parts", strings.Join(bench.WritersParts, ","), "with --writers: the measurements to make")
	f.IntVar(&o.wcfg.WriterTurns, "writer-turns", 2000, "with --writers: turns ingested per concurrent-ingest row")
	f.IntVar(&o.wcfg.Spaces, "spaces", 1000, "with --writers: spaces of the memory run")
	f.IntVar(&o.wcfg.SpaceTurns, "space-turns", 1000, "with --writers: turns per space of the memory run")
	f.Int64Var(&o.cacheMiB, "cache-mib", 256, "with --writers: Options.CacheBytes of the memory run, in MiB")
	return cmd
}

// benchWriters runs `higmem bench --writers`.
func benchWriters(cmd *cobra.Command, a *app, o *benchOptions) error {
	w := &o.wcfg
	var err error
	if w.Sizes, err = parseInts(o.sizes); err != nil {
		return fmt.Errorf("--sizes: %w", err)
	}
	if w.Foreign, err = parseInts(o.foreign); err != nil {
		return fmt.Errorf("--foreign: %w", err)
	}
	if w.ForeignDeletes, err = parseInts(o.deletes); err != nil {
		return fmt.Errorf("--foreign-deletes: %w", err)
	}
	if w.WriterTurns < 4 || w.Spaces <= 0 || w.SpaceTurns <= 0 || o.cacheMiB <= 0 || w.Repeat <= 0 {
		return fmt.Errorf("--writer-turns must be at least 4, --spaces, --space-turns, --cache-mib and --repeat positive")
	}
	w.CacheBytes = o.cacheMiB << 20
	for _, p := range strings.Split(o.parts, ",") {
		w.Parts = append(w.Parts, strings.TrimSpace(p))
	}
	w.Queries, w.Dir, w.Reuse, w.Seed = o.cfg.Queries, o.cfg.Dir, o.cfg.Reuse, o.cfg.Seed
	if !a.quiet {
		w.Progress = func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "bench:", s) }
	}
	r, err := bench.RunWriters(cmd.Context(), *w)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), r)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "higmem bench --writers — %s/%s, %d CPUs, %s; offline mode, hashing embedder, SQLite\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	bench.WritersTable(cmd.OutOrStdout(), r)
	return nil
}

// benchFunc runs the benchmark and prints its tables.
func benchFunc(cmd *cobra.Command, a *app, o *benchOptions) error {
	if o.writers {
		return benchWriters(cmd, a, o)
	}
	cfg := &o.cfg
	var err error
	if cfg.Sizes, err = parseInts(o.sizes); err != nil {
		return fmt.Errorf("--sizes: %w", err)
	}
	for _, s := range strings.Split(o.modes, ",") {
		mode, err := higmem.ParseMode(strings.TrimSpace(s))
		if err != nil || mode == higmem.ModeAuto {
			return fmt.Errorf("--modes: %q is not offline, default or paper", s)
		}
		cfg.Modes = append(cfg.Modes, mode)
	}
	switch cfg.Shape {
	case "chat":
		cfg.Shape = ""
	case synth.ShapeUA:
	default:
		return fmt.Errorf("--shape: %q is not chat or ua", cfg.Shape)
	}
	if !a.quiet {
		cfg.Progress = func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "bench:", s) }
	}
	var dump *bufio.Writer
	if o.dumpPath != "" {
		f, err := os.Create(o.dumpPath)
		if err != nil {
			return fmt.Errorf("--dump: %w", err)
		}
		defer f.Close()
		dump = bufio.NewWriter(f)
		cfg.Dump = dump
	}
	rs, err := bench.Run(cmd.Context(), *cfg)
	if err != nil {
		return err
	}
	if dump != nil {
		if err := dump.Flush(); err != nil {
			return fmt.Errorf("--dump: %w", err)
		}
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), rs)
	}
	shape := ""
	if cfg.Shape != "" {
		shape = "; shape: " + cfg.Shape
	}
	fmt.Fprintf(cmd.OutOrStdout(), "higmem bench — %s/%s, %d CPUs, %s; LLM: scripted (instant; %s per call for \"Ask @delay\"); embedder: hashing%s\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), cfg.Delay, shape)
	fmt.Fprint(cmd.OutOrStdout(), bench.Table(rs))
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		mult := 1
		if strings.HasSuffix(p, "k") {
			mult, p = 1000, strings.TrimSuffix(p, "k")
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, n*mult)
	}
	return out, nil
}
