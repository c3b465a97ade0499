// Package cli implements the higmem command: one file per subcommand, each
// a cobra command whose work is done by a function tests call directly.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/envconfig"
)

// app holds what every subcommand shares: global flags, the environment
// configuration, and the output streams.
type app struct {
	env    envconfig.Config
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger

	// Global flags.
	db        string
	user      string
	agent     string
	mode      string
	modelsDir string
	embedder  string
	jsonOut   bool
	quiet     bool
	links     bool
	noCache   bool
	server    string
	apiKey    string

	// closers run when the command ends (store, cache).
	closers []func() error
	// warned records one-time warnings already printed.
	warned map[string]bool
}

// Main runs the higmem command with args and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(os.Getenv, args, stdin, stdout, stderr)
}

// run is Main with the environment passed in, for tests.
func run(getenv func(string) string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := newApp(envconfig.Load(getenv), stdin, stdout, stderr)
	cmd := a.rootCommand()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(stderr, "higmem:", err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}

func newApp(env envconfig.Config, stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{env: env, stdin: stdin, stdout: stdout, stderr: stderr, warned: map[string]bool{}}
}

func (a *app) close() error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// warnOnce prints a warning the first time key is seen.
func (a *app) warnOnce(key, format string, args ...any) {
	if a.warned[key] {
		return
	}
	a.warned[key] = true
	fmt.Fprintf(a.stderr, "higmem: "+format+"\n", args...)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "higmem",
		Short: "Long-term memory for LLM agents (HiGMem: turns, events, LLM-guided retrieval)",
		Long: `higmem stores conversations as raw turns, groups them into events, and at question
time selects the few turns worth reading. It runs offline by default (SQLite file,
in-process embeddings, no LLM); configure an OpenAI-compatible endpoint to get the
full LLM-guided pipeline and written answers. Environment variables:
` + envHelp(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: a.env.LogLevel}))
			return nil
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&a.db, "db", a.env.DB, "SQLite database file, or a postgres:// URL (env HIGMEM_DB)")
	f.Lookup("db").DefValue = displayDB(a.env.DB) // help never shows a password from HIGMEM_DB
	f.StringVar(&a.user, "user", a.env.User, "user id of the memory space (env HIGMEM_USER)")
	f.StringVar(&a.agent, "agent", a.env.Agent, "agent id of the memory space (env HIGMEM_AGENT)")
	f.StringVar(&a.mode, "mode", a.env.Mode, "pipeline: auto, default, paper or offline (env HIGMEM_MODE)")
	f.StringVar(&a.modelsDir, "models-dir", a.env.ModelsDir, "where embedding models live (env HIGMEM_MODELS_DIR)")
	f.StringVar(&a.embedder, "embedder", "auto", "embedder: auto (MiniLM when fetched, else BM25 only), minilm, hashing, none")
	f.BoolVar(&a.jsonOut, "json", false, "print JSON")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "no progress bars")
	f.BoolVar(&a.links, "links", false, "A-Mem style links between turns (paper mode only)")
	f.BoolVar(&a.noCache, "no-llm-cache", false, "do not cache LLM responses in the database")
	f.StringVar(&a.server, "server", a.env.Server, "use a higmem server at this URL instead of the local database (env HIGMEM_SERVER)")
	f.StringVar(&a.apiKey, "api-key", a.env.APIKey, "API key for --server (env HIGMEM_API_KEY)")

	root.AddCommand(
		a.addCommand(),
		a.ingestCommand(),
		a.askCommand(),
		a.searchCommand(),
		a.eventsCommand(),
		a.demoCommand(),
		a.modelsCommand(),
		a.exportCommand(),
		a.importCommand(),
		a.deleteCommand(),
		a.historyCommand(),
	)
	for _, extra := range extraCommands {
		root.AddCommand(extra(a))
	}
	return root
}

// extraCommands lets other files (eval, serve, bench) register subcommands
// without editing this one.
var extraCommands []func(*app) *cobra.Command

func envHelp() string {
	s := ""
	for _, v := range envconfig.Vars() {
		s += fmt.Sprintf("  %-24s %s\n", v.Name, v.Description)
	}
	return s
}

// space returns the space named by the global flags.
func (a *app) space() higmem.Space {
	return higmem.Space{UserID: a.user, AgentID: a.agent}
}
