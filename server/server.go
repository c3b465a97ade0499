// Package server serves a higmem memory over HTTP: a JSON REST API under
// /v1 (see package api for the wire types and a Go client), its OpenAPI 3
// document at /openapi.json, and an MCP endpoint (streamable HTTP) at /mcp.
// The same MCP tools run over stdio with Server.MCP.
//
// Every call is scoped to a space (user_id, agent_id). API keys, stored only
// as SHA-256 hashes, map to the user ids they may use; a key for alice gets
// 403 on bob's space, and ids from another space behave as if they did not
// exist.
//
// Client mistakes (malformed JSON, wrong types, unknown fields, oversize
// bodies, missing scope, bad keys) are answered with a 4xx status and a JSON
// body {"error":{"code","message"}} naming the problem, before anything is
// written.
//
// Writes (adds, deletes, imports, async jobs) are not tied to the client's
// connection: once started they finish even if the client goes away, and
// Shutdown waits for them.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// Options configures a Server. The zero value serves with no key accepted;
// set Keys, or NoAuth for a trusted loopback setup.
type Options struct {
	// Keys are the accepted API keys. With no keys and NoAuth false,
	// every route except health and the OpenAPI document answers 401.
	Keys *Keys
	// KeySource, when set, supplies the keys instead (Keys then only seeds
	// them): they are re-read every KeyRefresh, and at once (at most once
	// a second) when a request brings an unknown key.
	KeySource KeySource
	// KeyRefresh is how often keys are re-read from KeySource (default
	// DefaultKeyRefresh).
	KeyRefresh time.Duration
	// NoAuth serves every request without a key, with access to every
	// user. The CLI allows it only on a loopback address.
	NoAuth bool
	// DefaultSpace is the space MCP tools use when their arguments name
	// none. REST calls always name their space.
	DefaultSpace higmem.Space
	// MaxBodyBytes caps JSON request bodies (default 1 MiB).
	MaxBodyBytes int64
	// MaxUploadBytes caps the bodies of adds and imports (default 64 MiB).
	MaxUploadBytes int64
	// MaxBatchTurns caps the turns of one add (default 10000).
	MaxBatchTurns int
	// RequestTimeout bounds reads: search, ask, list... (default 2 min).
	// Writes are not cut short; Shutdown bounds them.
	RequestTimeout time.Duration
	// MaxJobs bounds async jobs running at once (default 2).
	MaxJobs int
	// MaxQueuedJobs bounds async jobs waiting to run (default 64); more
	// are refused with 429.
	MaxQueuedJobs int
	// KeepJobs is how many finished jobs are remembered (default 1000)
	// when JobStore is nil.
	KeepJobs int
	// JobStore, when set, keeps async jobs in a database that several
	// servers may share (see package server/dbjobs): any of them reports a
	// job's status, and the jobs a stopped or crashed server left queued or
	// running are claimed and run by another one, or by the same one once
	// restarted. Turns of async adds then get ids (job id and index) before
	// the job is stored, so a job run twice adds nothing twice. Nil keeps
	// jobs in the process.
	JobStore JobStore
	// JobLease is how long a server holds a job of JobStore without
	// renewing it (default DefaultJobLease): how soon a crashed server's
	// jobs are taken over.
	JobLease time.Duration
	// Version is reported by /v1/version (default: the build's module
	// version, or "devel").
	Version string
	// Logger receives request errors and diagnostics. Nil discards them.
	Logger *slog.Logger
	// Chat configures the OpenAI-compatible chat endpoint
	// (POST /v1/chat/completions, GET /v1/models).
	Chat ChatOptions
	// Metrics configures GET /metrics (off by default).
	Metrics MetricsOptions
}

func (o *Options) setDefaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = 64 << 20
	}
	if o.MaxBatchTurns <= 0 {
		o.MaxBatchTurns = higmem.DefaultMaxBatchTurns
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 2 * time.Minute
	}
	if o.MaxJobs <= 0 {
		o.MaxJobs = 2
	}
	if o.MaxQueuedJobs <= 0 {
		o.MaxQueuedJobs = 64
	}
	if o.KeepJobs <= 0 {
		o.KeepJobs = 1000
	}
	if o.JobLease <= 0 {
		o.JobLease = DefaultJobLease
	}
	if o.KeyRefresh <= 0 {
		o.KeyRefresh = DefaultKeyRefresh
	}
	if o.Version == "" {
		o.Version = buildVersion()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Server serves one Memory. It is an http.Handler; create it with New.
type Server struct {
	mem     *higmem.Memory
	local   *Local
	opts    Options
	log     *slog.Logger
	handler http.Handler
	mux     *http.ServeMux
	mcp     *mcp.Server
	jobs    *jobs
	keys    *keyring
	openapi []byte
	chat    *chat
	metrics *metrics // nil unless Options.Metrics.Enabled

	// base is cancelled when Shutdown gives up waiting: it aborts writes
	// and jobs still running.
	base   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex // guards pending, draining, drained
	pending  int
	draining bool
	drained  chan struct{} // closed when pending reaches 0 while draining
}

// New returns a Server for mem. The caller keeps ownership of mem and must
// not close it before Shutdown returns.
func New(mem *higmem.Memory, opts Options) *Server {
	opts.setDefaults()
	s := &Server{mem: mem, local: NewLocal(mem, opts.MaxBatchTurns), opts: opts, log: opts.Logger}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.keys = newKeyring(opts.Keys, opts.KeySource)
	if opts.KeySource != nil {
		go s.refreshKeys(opts.KeyRefresh)
	}
	s.jobs = newJobs(s)
	s.chat = newChat(opts.Chat)
	s.mcp = s.newMCP()
	s.openapi = mustOpenAPI(opts.Version)
	s.handler = s.routes()
	if opts.Metrics.Enabled {
		s.metrics = newMetrics(s)
		s.mux.Handle("GET "+metricsPath, s.wrap(route{method: "GET", path: metricsPath, h: s.metrics.serve}))
		s.handler = s.metrics.instrument(s.handler)
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// MCP returns the MCP server with higmem's tools and resources, to run on
// another transport such as stdio. Calls without HTTP credentials act with
// access to every user.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Pending returns the number of writes in flight, queued and running async
// jobs included.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

var errShuttingDown = errorf(http.StatusServiceUnavailable, api.CodeUnavailable, "server is shutting down; no new writes accepted")

// begin registers a write; it returns false once Shutdown has started.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.pending++
	return true
}

// isDraining reports whether Shutdown has started.
func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// end unregisters a write.
func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	if s.pending == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// writeCtx returns a context for a write that outlives the request (a
// client going away does not abort a write half-way) but ends when
// Shutdown gives up.
func (s *Server) writeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.base, cancel)
	return ctx, func() { stop(); cancel() }
}

// Shutdown stops accepting writes (they get 503), waits for writes in
// flight and async jobs, queued ones included, and then closes MCP
// sessions. When ctx ends first, the remaining writes are cancelled and
// ctx's error is returned. Shutdown does not close the Memory, and does not
// stop an http.Server: call http.Server.Shutdown alongside it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	var wait chan struct{}
	if s.pending > 0 {
		if s.drained == nil {
			s.drained = make(chan struct{})
		}
		wait = s.drained
	}
	s.mu.Unlock()
	var err error
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	s.cancel()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	if err != nil {
		return errors.Join(errors.New("server: shutdown: writes still running were cancelled"), err)
	}
	return nil
}

// maxHeaderBytes caps a request's line and headers (HTTPServer).
const maxHeaderBytes = 64 << 10

// HTTPServer returns an http.Server for s on addr with timeouts suited to
// it: headers within 10 s, bodies within 5 min, idle connections closed
// after 2 min, request line and headers of at most 64 KiB. There is no
// write timeout, so that MCP streams and long LLM-backed answers are not cut
// off; reads are bounded by Options.RequestTimeout instead. Serve it on
// s.Listener(ln) so that the answers net/http writes itself are JSON too.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
