package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/dbjobs"
	"github.com/higmem/higmem/server/ui"
)

// serveOptions are the flags of `higmem serve`.
type serveOptions struct {
	addr            string
	keysFile        string
	keysDB          bool
	keysRefresh     time.Duration
	noAuth          bool
	maxBodyMiB      int64
	maxUploadMiB    int64
	jobs            int
	jobLease        time.Duration
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
	chatUpstream    string
	chatTokens      int
	chatRate        float64
	chatBurst       int
	chatMemTimeout  time.Duration
	metrics         bool
}

func newServeCommand(a *app) *cobra.Command {
	var cfg serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve memory over HTTP: web pages at /ui/, REST API under /v1, MCP at /mcp, OpenAPI at /openapi.json, OpenAI-compatible chat",
		Long: `serve shows memory in a browser at /ui/ (the same API keys; see docs/UI.md),
answers REST calls (see /openapi.json and docs/SERVER.md) and MCP clients
(streamable HTTP at /mcp) from the database named by --db. Every call names its
space (user_id, agent_id); MCP tools default to --user/--agent.

API keys are required: create one with "higmem serve keygen --keys-file keys.json",
then start with --keys-file keys.json. With --db postgres://..., keys can live in
the database instead, shared by every server on it: "higmem serve keygen --keys-db",
then "higmem serve --keys-db" (list with "serve keys", revoke with "serve revoke").
POST /v1/chat/completions is an OpenAI-compatible chat endpoint that remembers: it adds
evidence from memory to each request, forwards it to --chat-upstream (default: the answer
endpoint) and stores the conversation (docs/CHAT.md).
Only on a loopback address may --no-auth serve without keys. On SIGINT/SIGTERM the server stops accepting writes, finishes
the writes and async jobs in flight (up to --shutdown-timeout), then exits.
With --db postgres://..., async jobs are kept in the database: any server on it
reports them, and the jobs of a server that crashed or ran out of shutdown time
are finished by another one (or by the same one, restarted).`,
		Example: `  higmem serve keygen --keys-file keys.json --name laptop --users alice
  higmem serve --addr 127.0.0.1:8420 --keys-file keys.json
  higmem serve --addr 127.0.0.1:8420 --no-auth`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveFunc(cmd, a, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.addr, "addr", "127.0.0.1:8420", "address to listen on")
	f.StringVar(&cfg.keysFile, "keys-file", "", `API keys file: {"keys":[{"name","sha256","users":["alice"] or ["*"]}]}`)
	f.BoolVar(&cfg.keysDB, "keys-db", false, "accept the API keys kept in the PostgreSQL database (--db)")
	f.DurationVar(&cfg.keysRefresh, "keys-refresh", server.DefaultKeyRefresh, "with --keys-db: how often keys are re-read (a revoked key works until then)")
	f.BoolVar(&cfg.noAuth, "no-auth", false, "serve without API keys (only on a loopback address)")
	f.Int64Var(&cfg.maxBodyMiB, "max-body-mib", 1, "largest JSON request body, MiB")
	f.Int64Var(&cfg.maxUploadMiB, "max-upload-mib", 64, "largest add or import body, MiB")
	f.IntVar(&cfg.jobs, "jobs", 2, "async jobs (large adds and imports) run at once")
	f.DurationVar(&cfg.jobLease, "job-lease", server.DefaultJobLease, "with --db postgres://: how long a server holds an async job without renewing it (how soon another server takes over a crashed one's jobs)")
	f.DurationVar(&cfg.requestTimeout, "request-timeout", 2*time.Minute, "time limit of reads (search, ask, list...)")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", time.Minute, "how long shutdown waits for in-flight writes and jobs")
	f.StringVar(&cfg.chatUpstream, "chat-upstream", "", "OpenAI-compatible API root that POST /v1/chat/completions forwards to, without key unless it is the answer endpoint (default: the answer endpoint, HIGMEM_ANSWER_BASE_URL with HIGMEM_ANSWER_API_KEY)")
	f.IntVar(&cfg.chatTokens, "chat-evidence-tokens", server.DefaultChatEvidenceTokens, "token budget of the memory system message added to chat requests")
	f.Float64Var(&cfg.chatRate, "chat-rate", 2, "chat requests per second each API key may make on average (0: unlimited)")
	f.IntVar(&cfg.chatBurst, "chat-burst", 10, "chat requests each API key may make at once")
	f.DurationVar(&cfg.chatMemTimeout, "chat-memory-timeout", 20*time.Second, "longest wait for memory before a chat request goes on without it")
	f.BoolVar(&cfg.metrics, "metrics", false, "serve GET /metrics in the Prometheus text format, behind any API key of the server's (docs/METRICS.md)")
	cmd.AddCommand(newKeygenCommand(a), newKeysCommand(a), newRevokeCommand(a))
	return cmd
}

// chatOptions configures the chat endpoint from the flags and the answer
// endpoint of the environment (its base URL, key and model).
func chatOptions(a *app, cfg serveOptions) server.ChatOptions {
	ep := a.env.Answer
	o := server.ChatOptions{
		UpstreamURL:    ep.BaseURL,
		UpstreamKey:    ep.APIKey,
		Model:          ep.Model,
		EvidenceTokens: cfg.chatTokens,
		RateLimit:      cfg.chatRate,
		RateBurst:      cfg.chatBurst,
		MemoryTimeout:  cfg.chatMemTimeout,
	}
	if u := cfg.chatUpstream; u != "" && strings.TrimSuffix(u, "/") != strings.TrimSuffix(ep.BaseURL, "/") {
		// Another server: the answer endpoint's key is not sent to it.
		o.UpstreamURL, o.UpstreamKey = u, ""
	}
	return o
}

// isLoopback reports whether addr (host:port) binds only a loopback
// interface. An empty host binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serverAuth checks the auth flags and loads the keys.
func serverAuth(cfg serveOptions) (*server.Keys, error) {
	switch {
	case cfg.noAuth && cfg.keysFile != "":
		return nil, errors.New("give --keys-file or --no-auth, not both")
	case cfg.noAuth:
		if !isLoopback(cfg.addr) {
			return nil, fmt.Errorf("--no-auth is only allowed on a loopback address such as 127.0.0.1:8420 (got %q); use --keys-file", cfg.addr)
		}
		return nil, nil
	case cfg.keysFile == "":
		return nil, errors.New("API keys are required: create a keys file with `higmem serve keygen --keys-file keys.json` and pass --keys-file keys.json (or --no-auth on a loopback address)")
	}
	keys, err := server.LoadKeys(cfg.keysFile)
	if err != nil {
		return nil, err
	}
	if keys.Len() == 0 {
		return nil, fmt.Errorf("%s holds no keys; add one with `higmem serve keygen --keys-file %s`", cfg.keysFile, cfg.keysFile)
	}
	return keys, nil
}

// serveFunc runs the HTTP server until the command's context ends (SIGINT,
// SIGTERM), then shuts down gracefully. Progress goes to stderr.
func serveFunc(cmd *cobra.Command, a *app, cfg serveOptions) error {
	ctx := cmd.Context()
	var keys *server.Keys
	var keySource server.KeySource
	var err error
	if cfg.keysDB {
		keys, keySource, err = a.dbKeys(ctx, cfg)
	} else {
		keys, err = serverAuth(cfg)
	}
	if err != nil {
		return err
	}
	mem, err := a.open(ctx)
	if err != nil {
		return err
	}
	var jobStore server.JobStore
	if isPostgres(a.db) {
		pool, err := a.sidePool(ctx)
		if err != nil {
			return err
		}
		if jobStore, err = dbjobs.Open(ctx, pool, 0); err != nil {
			return err
		}
	}
	s := server.New(mem, server.Options{
		JobStore:       jobStore,
		JobLease:       cfg.jobLease,
		Keys:           keys,
		KeySource:      keySource,
		KeyRefresh:     cfg.keysRefresh,
		NoAuth:         cfg.noAuth,
		DefaultSpace:   a.space(),
		MaxBodyBytes:   cfg.maxBodyMiB << 20,
		MaxUploadBytes: cfg.maxUploadMiB << 20,
		MaxJobs:        cfg.jobs,
		RequestTimeout: cfg.requestTimeout,
		Logger:         a.log,
		Chat:           chatOptions(a, cfg),
		Metrics:        server.MetricsOptions{Enabled: cfg.metrics, Meter: a.meter},
	})
	ui.Mount(s, ui.Options{MaxUploadBytes: cfg.maxUploadMiB << 20, Logger: a.log})
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	hs := s.HTTPServer(cfg.addr)
	auth := fmt.Sprintf("%d API key(s)", keys.Len())
	if cfg.noAuth {
		auth = "no auth (loopback only)"
	}
	chatTo := "chat off: no --chat-upstream"
	if u := chatOptions(a, cfg).UpstreamURL; u != "" {
		chatTo = "chat /v1/chat/completions -> " + u
	}
	routes := "web pages /ui/, REST /v1, MCP /mcp, OpenAPI /openapi.json"
	if cfg.metrics {
		routes += ", metrics /metrics"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "higmem: serving on http://%s (%s; %s; %s; mode %s; embedder %s)\n",
		ln.Addr(), routes, auth, chatTo, mem.Mode(), a.embedderName(mem))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.Listener(ln)) }()
	select {
	case err := <-errc:
		_ = s.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "higmem: shutting down: finishing %d write(s) in flight (up to %s)\n", s.Pending(), cfg.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var httpErr, drainErr error
	wg.Go(func() { httpErr = hs.Shutdown(sctx) })
	wg.Go(func() { drainErr = s.Shutdown(sctx) })
	wg.Wait()
	if err := errors.Join(drainErr, httpErr); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "higmem: stopped")
	return nil
}
