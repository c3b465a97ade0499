package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
)

func init() {
	extraCommands = append(extraCommands,
		func(a *app) *cobra.Command { return a.serveCommand() },
		func(a *app) *cobra.Command { return a.mcpCommand() },
	)
}

// serveConfig holds the flags of `higmem serve`.
type serveConfig struct {
	addr            string
	keysFile        string
	keysDB          bool
	keysRefresh     time.Duration
	noAuth          bool
	maxBodyMiB      int64
	maxUploadMiB    int64
	jobs            int
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
}

func (a *app) serveCommand() *cobra.Command {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve memory over HTTP: REST API under /v1, MCP at /mcp, OpenAPI at /openapi.json",
		Long: `serve answers REST calls (see /openapi.json and docs/SERVER.md) and MCP clients
(streamable HTTP at /mcp) from the database named by --db. Every call names its
space (user_id, agent_id); MCP tools default to --user/--agent.

API keys are required: create one with "higmem serve keygen --keys-file keys.json",
then start with --keys-file keys.json. With --db postgres://..., keys can live in
the database instead, shared by every server on it: "higmem serve keygen --keys-db",
then "higmem serve --keys-db" (list with "serve keys", revoke with "serve revoke").
Only on a loopback address may --no-auth serve without keys. On SIGINT/SIGTERM the server stops accepting writes, finishes
the writes and async jobs in flight (up to --shutdown-timeout), then exits.`,
		Example: `  higmem serve keygen --keys-file keys.json --name laptop --users alice
  higmem serve --addr 127.0.0.1:8420 --keys-file keys.json
  higmem serve --addr 127.0.0.1:8420 --no-auth`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), cfg)
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
	f.DurationVar(&cfg.requestTimeout, "request-timeout", 2*time.Minute, "time limit of reads (search, ask, list...)")
	f.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", time.Minute, "how long shutdown waits for in-flight writes and jobs")
	cmd.AddCommand(a.keygenCommand(), a.keysListCommand(), a.revokeCommand())
	return cmd
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
func serverAuth(cfg serveConfig) (*server.Keys, error) {
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

// serve runs the HTTP server until ctx ends, then shuts down gracefully.
func (a *app) serve(ctx context.Context, cfg serveConfig) error {
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
	s := server.New(mem, server.Options{
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
	})
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	hs := s.HTTPServer(cfg.addr)
	auth := fmt.Sprintf("%d API key(s)", keys.Len())
	if cfg.noAuth {
		auth = "no auth (loopback only)"
	}
	fmt.Fprintf(a.stderr, "higmem: serving on http://%s (REST /v1, MCP /mcp, OpenAPI /openapi.json; %s; mode %s; embedder %s)\n",
		ln.Addr(), auth, mem.Mode(), a.embedderName(mem))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		_ = s.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(a.stderr, "higmem: shutting down: finishing %d write(s) in flight (up to %s)\n", s.Pending(), cfg.shutdownTimeout)
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
	fmt.Fprintln(a.stderr, "higmem: stopped")
	return nil
}

func (a *app) keygenCommand() *cobra.Command {
	var name, keysFile string
	var keysDB bool
	var users []string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Print a new random API key and its keys-file entry (only the hash is stored)",
		Example: `  higmem serve keygen --name laptop --users alice,bob
  higmem serve keygen --keys-file keys.json --name ci --users '*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.keygen(cmd.Context(), name, users, keysFile, keysDB)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the key, shown in logs (default key-<time>)")
	cmd.Flags().StringSliceVar(&users, "users", []string{server.AllUsers}, "user ids the key may use (* for all)")
	cmd.Flags().StringVar(&keysFile, "keys-file", "", "also add the entry to this keys file (created if missing)")
	cmd.Flags().BoolVar(&keysDB, "keys-db", false, "also add the entry to the PostgreSQL database named by --db (see serve --keys-db)")
	return cmd
}

// keygen makes a key, prints it with its entry and optionally appends the
// entry to a keys file or the database's key table.
func (a *app) keygen(ctx context.Context, name string, users []string, keysFile string, keysDB bool) error {
	if name == "" {
		name = "key-" + time.Now().UTC().Format("20060102-150405")
	}
	secret, k, err := server.NewKey(name, users)
	if err != nil {
		return err
	}
	if keysDB {
		tab, err := a.keyTable(ctx)
		if err != nil {
			return err
		}
		if err := tab.Add(ctx, k); err != nil {
			return err
		}
	}
	if keysFile != "" {
		if err := appendKey(keysFile, k); err != nil {
			return err
		}
	}
	if a.jsonOut {
		return writeJSON(a.stdout, map[string]any{"key": secret, "entry": k})
	}
	line, _ := json.Marshal(k)
	fmt.Fprintln(a.stdout, secret)
	fmt.Fprintln(a.stdout, string(line))
	switch {
	case keysDB:
		fmt.Fprintf(a.stderr, "higmem: added key %q to the database; the key above is shown only once\n", name)
	case keysFile != "":
		fmt.Fprintf(a.stderr, "higmem: added key %q to %s; the key above is shown only once\n", name, keysFile)
	default:
		fmt.Fprintln(a.stderr, `higmem: line 1 is the key (shown only once; send it as "Authorization: Bearer <key>"); add line 2 to the "keys" array of your keys file`)
	}
	return nil
}

// appendKey adds k to a keys file, creating it, and writes it atomically
// with owner-only permissions.
func appendKey(path string, k server.Key) error {
	var f server.KeysFile
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if _, err := server.ParseKeys(b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
	}
	f.Keys = append(f.Keys, k)
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if _, err := server.ParseKeys(out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve memory to an MCP host over stdio (tools add_memory, search_memory, ask_memory, list_events, delete_memory)",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout, for agent hosts such as
Claude Desktop or Cursor that start higmem as a subprocess. Tools default to the
space named by --user/--agent (or HIGMEM_USER/HIGMEM_AGENT); their user_id and
agent_id arguments override it. Logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.mcpStdio(cmd.Context())
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpStdio runs the MCP server on a.stdin/a.stdout until the host closes
// stdin or ctx ends, then waits for writes in flight.
func (a *app) mcpStdio(ctx context.Context) error {
	mem, err := a.open(ctx)
	if err != nil {
		return err
	}
	s := server.New(mem, server.Options{NoAuth: true, DefaultSpace: a.space(), Logger: a.log})
	err = s.MCP().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}})
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if derr := s.Shutdown(sctx); derr != nil {
		return derr
	}
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
