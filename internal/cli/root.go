// Package cli implements the higmem command. Each subcommand lives in its
// own file in the shape of bbolt's command package: an options struct for
// its flags, a newXxxCommand function that builds the cobra command, and an
// xxxFunc function that does the work and writes to cmd.OutOrStdout(), which
// tests call through the root command with their own streams.
//
// The everyday commands (add, ingest, ask, search, events, export, import,
// delete, history) work through memoryAPI, in the wire types of package
// api: on the local database through server.Local, or on a server through
// api.Client, so that they answer alike both ways and their --json output is
// the REST response of the same operation.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/buildinfo"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/server"
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
	// maxTurnKiB caps one turn's text (higmem.Options.MaxTurnBytes).
	maxTurnKiB int
	noCache    bool
	server     string
	apiKey     string
	// userSet is true when the user was named (--user or HIGMEM_USER).
	userSet bool

	// LLM client flags (defaults from the environment).
	llmStructured  string
	llmConcurrency int
	cacheBytes     int64
	llmMaxTokens   int
	llmStream      bool
	llmTimeout     time.Duration
	llmRecord      string
	llmReplay      string

	// fetchModels makes --embedder auto fetch the model it wants when it
	// is missing (the demo sets it).
	fetchModels bool

	// meter records the LLM calls of the Memory that open returned
	// (serve --metrics reports them).
	meter *llm.Meter

	// closers run when the command ends (store, cache).
	closers []func() error
	// warned records one-time warnings already printed.
	warned map[string]bool
	// isTerminal, when set, says whether stdin is a terminal (tests);
	// nil: ask the operating system.
	isTerminal func() bool
	// noCreate is set by commands that only read (and by delete): they
	// open an existing database and never create one, nor its folder.
	noCreate bool
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
		fmt.Fprintln(stderr, errorLine(err))
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}

// errorLine renders a command's error for the terminal: one "higmem:"
// prefix (the engine's errors carry their own, at any depth), control characters from
// stored text escaped, and the server's status for errors from --server.
func errorLine(err error) string {
	msg := err.Error()
	var se *api.StatusError
	if errors.As(err, &se) {
		msg = fmt.Sprintf("server answered %d %s: %s", se.StatusCode, se.Code, se.Message)
	} else if status, _ := server.ErrorCode(err); status < 500 {
		// A mistake of the user's: say it as the REST door does, without
		// the storage layer's wording. Failures keep their whole chain.
		msg = server.PublicMessage(err)
	}
	// The engine's errors start with "higmem: " wherever they are wrapped
	// ("import x.json: higmem: ..."): the line says it once, in front.
	for {
		rest, ok := strings.CutPrefix(msg, "higmem: ")
		if !ok {
			break
		}
		msg = rest
	}
	for strings.Contains(msg, ": higmem: ") {
		msg = strings.ReplaceAll(msg, ": higmem: ", ": ")
	}
	if se == nil && errors.Is(err, higmem.ErrTooLarge) && strings.Contains(msg, "bytes per turn") && !strings.Contains(msg, "--max-turn-kib") {
		// The local engine's per-turn cap: say how to get past it.
		msg += ": cut or split that turn, or raise the cap with --max-turn-kib N (in KiB, -1 for no limit)"
	}
	return "higmem: " + safeLines(msg)
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
	fmt.Fprintln(a.stderr, errorLine(fmt.Errorf(format, args...)))
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
		// --version prints the module version and the VCS revision the
		// go command recorded in the binary (internal/buildinfo).
		Version: buildinfo.Read().String(),
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: a.env.LogLevel}))
			a.userSet = a.env.UserSet || cmd.Flags().Changed("user")
			a.noCreate = cmd.Annotations[annNoCreate] != ""
			return nil
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	f := root.PersistentFlags()
	f.StringVar(&a.db, "db", a.env.DB, "SQLite database file, or a postgres:// URL (env HIGMEM_DB)")
	f.Lookup("db").DefValue = displayDB(a.env.DB) // help never shows a password from HIGMEM_DB
	f.StringVar(&a.user, "user", a.env.User, "user id of the memory space (env HIGMEM_USER; with --server, the API key's user when it has one)")
	f.StringVar(&a.agent, "agent", a.env.Agent, "agent id of the memory space (env HIGMEM_AGENT)")
	f.StringVar(&a.mode, "mode", a.env.Mode, "pipeline: auto, default, paper or offline (env HIGMEM_MODE)")
	f.StringVar(&a.modelsDir, "models-dir", a.env.ModelsDir, "where embedding models live (env HIGMEM_MODELS_DIR)")
	f.StringVar(&a.embedder, "embedder", "auto", "embedder: auto (the model that made the database's vectors; for a new database e5-small-v2 when fetched, else all-MiniLM-L6-v2, else BM25 only), e5 (e5-small-v2), e5-int8 (e5-small-v2 with int8 linear layers: faster, its own vectors), minilm (all-MiniLM-L6-v2), hashing, none")
	f.BoolVar(&a.jsonOut, "json", false, "print JSON (the REST response of the same operation)")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "no progress bars")
	f.BoolVar(&a.links, "links", false, "A-Mem style links between turns (paper mode only)")
	f.IntVar(&a.maxTurnKiB, "max-turn-kib", higmem.DefaultMaxTurnBytes>>10, "largest turn text accepted by add, ingest and import, KiB; -1: no limit")
	f.BoolVar(&a.noCache, "no-llm-cache", false, "do not cache LLM responses in the database")
	f.StringVar(&a.server, "server", a.env.Server, "use a higmem server at this URL instead of the local database (env HIGMEM_SERVER)")
	f.StringVar(&a.apiKey, "api-key", a.env.APIKey, "API key for --server (env HIGMEM_API_KEY)")
	f.StringVar(&a.llmStructured, "llm-structured", a.env.LLMStructured,
		"structured-output mode to start from: auto, json_schema, json_object_schema, json_object or plain (env HIGMEM_LLM_STRUCTURED)")
	f.IntVar(&a.llmConcurrency, "llm-concurrency", a.env.LLMConcurrency,
		"LLM requests in flight per server, all roles together; 1 for a one-slot server (env HIGMEM_LLM_CONCURRENCY)")
	f.Int64Var(&a.cacheBytes, "cache-bytes", a.env.CacheBytes,
		"bytes of loaded spaces kept in memory; 0: the default (512 MiB), -1: no bound (env HIGMEM_CACHE_BYTES)")
	f.IntVar(&a.llmMaxTokens, "llm-max-tokens", a.env.LLMMaxTokens,
		"completion budget of LLM calls that set none; 0: client default, -1: no limit (env HIGMEM_LLM_MAX_TOKENS)")
	f.BoolVar(&a.llmStream, "llm-stream", a.env.LLMStream,
		"stream LLM replies, so a call that times out also stops the server's generation (env HIGMEM_LLM_STREAM)")
	f.StringVar(&a.llmRecord, "llm-record", "", "record every LLM response into this cassette file (JSON lines; see docs/LOCAL_LLM.md)")
	f.StringVar(&a.llmReplay, "llm-replay", "", "answer LLM calls only from this cassette file; a request not in it fails")
	f.DurationVar(&a.llmTimeout, "llm-timeout", a.env.LLMTimeout, "deadline of each LLM request, from when it gets a server slot (env HIGMEM_LLM_TIMEOUT)")

	root.AddCommand(
		newAddCommand(a),
		newIngestCommand(a),
		newAskCommand(a),
		newSearchCommand(a),
		newEventsCommand(a),
		newProfilesCommand(a),
		newDemoCommand(a),
		newModelsCommand(a),
		newExportCommand(a),
		newImportCommand(a),
		newDeleteCommand(a),
		newHistoryCommand(a),
		newServeCommand(a),
		newMCPCommand(a),
		newEvalCommand(a),
		newBenchCommand(a),
		newMigrateCommand(a),
	)
	return root
}

// strconvFlagRE matches pflag's message for a value strconv cannot parse.
var strconvFlagRE = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: strconv\.Parse(Int|Uint|Float|Bool|Duration)?\w*: parsing ".*": (invalid syntax|value out of range)$`)

// durationFlagRE matches pflag's message for a bad duration.
var durationFlagRE = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: time: `)

// flagError rewrites flag errors that name Go functions ("strconv.ParseInt:
// parsing ...") into what the flag wants.
func flagError(cmd *cobra.Command, err error) error {
	if m := durationFlagRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s: want a duration such as 90s, 2m or 1h30m, got %q", m[2], m[1])
	}
	m := strconvFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "an integer", "Uint": "a non-negative integer", "Float": "a number", "Bool": "true or false"}[m[3]]
	if want == "" {
		want = "a number"
	}
	if m[4] == "value out of range" {
		want += " in range"
	}
	return fmt.Errorf("%s: want %s, got %q", m[2], want, m[1])
}

func envHelp() string {
	s := ""
	for _, v := range envconfig.Vars() {
		s += fmt.Sprintf("  %-24s %s\n", v.Name, v.Description)
	}
	return s
}

// annNoCreate marks the commands that read a database (and delete, which
// has nothing to delete in a new one): they fail on a SQLite file that does
// not exist instead of creating it and its folders.
const annNoCreate = "higmem/no-create"

// noCreate is the Annotations of a command marked annNoCreate.
var noCreate = map[string]string{annNoCreate: "true"}

// space returns the engine's space named by the global flags (the default
// space of serve and mcp).
func (a *app) space() higmem.Space {
	return higmem.Space{UserID: a.user, AgentID: a.agent}
}

// scope returns the space named by the global flags.
func (a *app) scope() api.Scope {
	return api.Scope{UserID: a.user, AgentID: a.agent}
}

// describeScope renders a scope for messages ("alice/" for user alice, no
// agent), escaped.
func describeScope(s api.Scope) string { return safe(s.UserID + "/" + s.AgentID) }
