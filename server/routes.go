package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// route is one REST operation. The table returned by restRoutes is what
// the mux serves; the OpenAPI document is written separately (openapi.go)
// and a test keeps the two in sync.
type route struct {
	method string
	path   string
	// query lists the accepted query parameters; any other is refused.
	query []string
	// public routes need no API key.
	public bool
	// h serves the route; or, for routes on the space named by the query
	// string, read or write runs the operation and its result is the
	// answer (see Server.read and Server.write).
	h           func(w http.ResponseWriter, r *http.Request) error
	read, write scopedOp
}

// scopedOp is an operation on the space named by a request's query string.
type scopedOp func(ctx context.Context, r *http.Request, sc api.Scope) (any, error)

var scopeParams = []string{"user_id", "agent_id"}

func withScope(more ...string) []string { return append(slices.Clone(scopeParams), more...) }

func (s *Server) restRoutes() []route {
	return []route{
		{method: "GET", path: "/v1/health", public: true, h: s.health},
		{method: "GET", path: "/openapi.json", public: true, h: s.openAPI},
		{method: "GET", path: "/v1/version", h: s.version},
		{method: "GET", path: "/v1/key", h: s.key},
		{method: "POST", path: "/v1/turns", query: []string{"async"}, h: s.addTurns},
		{method: "GET", path: "/v1/turns", query: withScope("session_id", "after_seq", "limit", "filters"),
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				req, err := listTurnsRequest(r, sc)
				if err != nil {
					return nil, err
				}
				return s.local.Turns(ctx, req)
			}},
		{method: "GET", path: "/v1/turns/{id}", query: scopeParams,
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				return s.local.Turn(ctx, sc, r.PathValue("id"))
			}},
		{method: "DELETE", path: "/v1/turns/{id}", query: scopeParams,
			write: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				return s.local.DeleteTurn(ctx, sc, r.PathValue("id"))
			}},
		{method: "GET", path: "/v1/jobs/{id}", query: scopeParams, h: s.getJob},
		{method: "POST", path: "/v1/search", h: bodyRead(s, func(q *api.SearchRequest) (string, string) { return q.UserID, q.AgentID }, s.local.Search)},
		{method: "POST", path: "/v1/ask", h: bodyRead(s, func(q *api.AskRequest) (string, string) { return q.UserID, q.AgentID }, s.local.Ask)},
		{method: "GET", path: "/v1/events", query: scopeParams,
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) { return s.local.Events(ctx, sc) }},
		{method: "GET", path: "/v1/events/{id}", query: scopeParams,
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				return s.local.Event(ctx, sc, r.PathValue("id"))
			}},
		{method: "GET", path: "/v1/profiles", query: withScope("as_of"),
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				req, err := profilesRequest(r, sc)
				if err != nil {
					return nil, err
				}
				return s.local.Profiles(ctx, req)
			}},
		{method: "GET", path: "/v1/profiles/{entity}", query: withScope("as_of"),
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				req, err := profilesRequest(r, sc)
				if err != nil {
					return nil, err
				}
				req.Entity = r.PathValue("entity")
				return s.local.Profile(ctx, req)
			}},
		{method: "GET", path: "/v1/history", query: withScope("kind", "id"),
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				return s.local.History(ctx, api.HistoryRequest{Scope: sc, Kind: param(r, "kind"), ID: param(r, "id")})
			}},
		{method: "GET", path: "/v1/stats", query: scopeParams,
			read: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) { return s.local.Stats(ctx, sc) }},
		{method: "DELETE", path: "/v1/space", query: scopeParams,
			write: func(ctx context.Context, r *http.Request, sc api.Scope) (any, error) {
				return s.local.DeleteSpace(ctx, sc)
			}},
		{method: "GET", path: "/v1/export", query: scopeParams, h: s.export},
		{method: "POST", path: "/v1/import", query: withScope("async"), h: s.importSpace},
		{method: "POST", path: "/v1/chat/completions", h: s.chatCompletions},
		{method: "GET", path: "/v1/models", h: s.models},
	}
}

// mcpPath is where the MCP streamable HTTP endpoint is served.
const mcpPath = "/mcp"

// routes builds the handler: the REST routes, JSON 405s for known paths
// with another method, a JSON 404 for everything else, and /mcp.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.mux = mux
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range s.restRoutes() {
		mux.Handle(rt.method+" "+rt.path, s.wrap(rt))
		if _, ok := allowed[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	for _, p := range paths {
		methods := allowed[p]
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			s.writeError(w, r, errorf(http.StatusMethodNotAllowed, api.CodeMethodNotAllowed,
				"method %s not allowed on %s (allowed: %s)", r.Method, p, strings.Join(methods, ", ")))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusNotFound, api.CodeNotFound, "no route %s %s (see /openapi.json)", r.Method, r.URL.Path))
	})
	mux.Handle(mcpPath, s.mcpHandler())
	h := s.recoverer(mux)
	// Browsers: a web page may not write through the API on a user's
	// behalf (cross-origin POST/DELETE are refused), and without keys a
	// DNS-rebound name may not reach it at all.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusForbidden, api.CodeForbidden, "cross-origin request refused"))
	}))
	h = cop.Handler(h)
	if s.opts.NoAuth {
		h = s.loopbackOnly(h)
	}
	return h
}

// loopbackOnly refuses requests whose Host is not a loopback name, so that
// a keyless server cannot be reached through DNS rebinding.
func (s *Server) loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			s.writeError(w, r, errorf(http.StatusForbidden, api.CodeForbidden,
				"host %q refused: a server without API keys answers only loopback names (localhost, 127.0.0.1, [::1])", r.Host))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// recoverer turns a handler panic into a JSON 500.
func (s *Server) recoverer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// wrap authenticates, checks query parameters and reports handler errors.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !rt.public {
			p, err := s.authenticate(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			r = r.WithContext(withPrincipal(r.Context(), p))
		}
		if err := checkQuery(r, rt.query); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.serveRoute(w, r, rt); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// serveRoute runs a route's handler, or its scoped operation as a read or
// a write.
func (s *Server) serveRoute(w http.ResponseWriter, r *http.Request, rt route) error {
	if rt.h != nil {
		return rt.h(w, r)
	}
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	run, op := s.read, rt.read
	if rt.write != nil {
		run, op = s.write, rt.write
	}
	return run(w, r, func(ctx context.Context) (any, error) { return op(ctx, r, sc) })
}

// authenticate returns the principal of a request.
func (s *Server) authenticate(r *http.Request) (*principal, error) {
	if s.opts.NoAuth {
		return unrestricted, nil
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "missing API key: send \"Authorization: Bearer <key>\"")
	}
	secret, ok := bearer(h)
	if !ok {
		return nil, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "malformed Authorization header: want \"Bearer <key>\"")
	}
	k, ok := s.lookupKey(r.Context(), secret)
	if !ok && s.keys.current().Len() == 0 {
		return nil, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "the server has no API keys configured")
	}
	if !ok {
		return nil, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "unknown API key")
	}
	return keyPrincipal(k), nil
}

// checkQuery refuses unknown and repeated query parameters.
func checkQuery(r *http.Request, allowed []string) error {
	q, err := urlQuery(r)
	if err != nil {
		return err
	}
	for k, vs := range q {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badRequest("unknown query parameter %q (this route takes none)", k)
			}
			return badRequest("unknown query parameter %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 {
			return badRequest("query parameter %q given %d times", k, len(vs))
		}
	}
	return nil
}

func urlQuery(r *http.Request) (map[string][]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	return q, nil
}

// space resolves the scope of a GET, DELETE or import request from the
// query string and checks the caller may use it.
func (s *Server) space(r *http.Request) (higmem.Space, error) {
	return s.authorize(r, param(r, "user_id"), param(r, "agent_id"))
}

// scope is space as the api's Scope.
func (s *Server) scope(r *http.Request) (api.Scope, error) {
	sp, err := s.space(r)
	return apiScope(sp), err
}

// authorize validates a scope and checks the caller may use it. JSON POST
// routes pass the scope from their body.
func (s *Server) authorize(r *http.Request, user, agent string) (higmem.Space, error) {
	sp, err := validSpace(user, agent)
	if err != nil {
		return sp, err
	}
	p := principalFrom(r.Context())
	if p == nil || !p.allows(user) {
		name := "(none)"
		if p != nil {
			name = p.name
		}
		return higmem.Space{}, errorf(http.StatusForbidden, api.CodeForbidden, "API key %q may not use user_id %q", name, user)
	}
	return sp, nil
}

// param returns a query parameter ("" when absent).
func param(r *http.Request, name string) string {
	q, _ := urlQuery(r)
	if vs := q[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := param(r, name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("query parameter %q: want true or false, got %q", name, v)
	}
	return b, nil
}

// intParam parses an integer query parameter (0 when absent); its range is
// checked by the operation.
func intParam(r *http.Request, name string) (int64, error) {
	v := param(r, name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("query parameter %q: want an integer, got %q", name, v)
	}
	return n, nil
}

// opCtx returns the context of an operation of the REST routes or the MCP
// tools: a read is bounded by Options.RequestTimeout; a write outlives its
// request (writeCtx) and counts as pending for Shutdown until done is
// called, and is refused once Shutdown has started.
func (s *Server) opCtx(ctx context.Context, write bool) (_ context.Context, done func(), _ error) {
	if !write {
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		return ctx, cancel, nil
	}
	if !s.begin() {
		return nil, nil, errShuttingDown
	}
	ctx, cancel := s.writeCtx(ctx)
	return ctx, func() { cancel(); s.end() }, nil
}

// --- handlers ---

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	h := api.Health{Status: "ok", PendingWrites: s.pending}
	if s.draining {
		h.Status = "draining"
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi)
	return nil
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	v := api.VersionInfo{
		Version: s.opts.Version, GoVersion: runtime.Version(), API: api.Version,
		Mode: string(s.mem.Mode()), ExportVersion: higmem.ExportVersion, Auth: !s.opts.NoAuth,
	}
	if e := s.mem.Options().Embedder; e != nil {
		v.Embedder = e.ID()
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) key(w http.ResponseWriter, r *http.Request) error {
	p := principalFrom(r.Context())
	k := api.KeyInfo{Name: p.name, Users: p.users, Auth: !s.opts.NoAuth}
	if p.all {
		k.Users = []string{api.AllUsers}
	}
	if s.opts.NoAuth {
		k.Name = ""
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

func (s *Server) addTurns(w http.ResponseWriter, r *http.Request) error {
	async, err := boolParam(r, "async")
	if err != nil {
		return err
	}
	var req api.AddRequest
	if err := decodeJSON(w, r, s.opts.MaxUploadBytes, &req); err != nil {
		return err
	}
	asp, err := s.authorize(r, req.UserID, req.AgentID)
	if err != nil {
		return err
	}
	if req.Turn != nil {
		t := *req.Turn
		req.Turn = &t
	}
	s.stampTimes(r.Context(), asp, req.Turn, req.Turns)
	sp, turns, err := s.local.prepareAdd(req)
	if err != nil {
		return err
	}
	if async {
		j, err := s.jobs.submitAdd(sp, req)
		if err != nil {
			return err
		}
		w.Header().Set("Location", jobLocation(j.ID, sp))
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
	return s.write(w, r, func(ctx context.Context) (any, error) { return s.local.add(ctx, sp, turns) })
}

// stampTimes gives the turns of an add that carry no time (neither "time"
// nor "occurred_at") the time of the request, as the CLI's add, the MCP
// tool and the chat endpoint do: a turn added now happened now. A turn
// whose id is already stored gets the stored turn's time instead, so that
// resending it stays a no-op rather than a conflict.
func (s *Server) stampTimes(ctx context.Context, sp higmem.Space, one *api.TurnInput, many []api.TurnInput) {
	now := time.Now().UTC().Format(time.RFC3339)
	stamp := func(t *api.TurnInput) {
		if strings.TrimSpace(t.Time) != "" || !t.OccurredAt.IsZero() {
			return
		}
		if id := strings.TrimSpace(t.ID); id != "" {
			if old, err := s.mem.Get(ctx, sp, id); err == nil {
				t.Time = old.OccurredRaw
				return
			}
		}
		t.Time = now
	}
	if one != nil {
		stamp(one)
	}
	for i := range many {
		stamp(&many[i])
	}
}

// write runs a write that outlives the request (see writeCtx) and answers
// its result; it refuses once Shutdown has started.
func (s *Server) write(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context) (any, error)) error {
	return s.run(w, r, true, fn)
}

// read runs a read bounded by Options.RequestTimeout and answers its
// result.
func (s *Server) read(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context) (any, error)) error {
	return s.run(w, r, false, fn)
}

func (s *Server) run(w http.ResponseWriter, r *http.Request, write bool, fn func(ctx context.Context) (any, error)) error {
	ctx, done, err := s.opCtx(r.Context(), write)
	if err != nil {
		return err
	}
	defer done()
	v, err := fn(ctx)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	j, ok, err := s.jobs.get(r.Context(), sp, id)
	if err != nil {
		return err
	}
	if !ok {
		return errorf(http.StatusNotFound, api.CodeNotFound, "job %q not found in space %s", id, describeSpace(sp))
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

// bodyRead serves a read whose request is a JSON body naming its space
// (search, ask): decode, authorise, run op under Options.RequestTimeout.
func bodyRead[Req, Resp any](s *Server, space func(*Req) (user, agent string), op func(context.Context, Req) (Resp, error)) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req); err != nil {
			return err
		}
		user, agent := space(&req)
		if _, err := s.authorize(r, user, agent); err != nil {
			return err
		}
		return s.read(w, r, func(ctx context.Context) (any, error) { return op(ctx, req) })
	}
}

// listTurnsRequest reads the query of GET /v1/turns.
func listTurnsRequest(r *http.Request, sc api.Scope) (api.ListTurnsRequest, error) {
	req := api.ListTurnsRequest{Scope: sc, SessionID: param(r, "session_id")}
	var err error
	if req.AfterSeq, err = intParam(r, "after_seq"); err != nil {
		return req, err
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		return req, err
	}
	req.Limit = int(limit)
	if req.Filters, err = api.ParseFilters(param(r, "filters")); err != nil {
		return req, badRequest("query parameter \"filters\": %v", err)
	}
	return req, nil
}

// profilesRequest reads the query of the profile routes: as_of is an RFC
// 3339 time or a date (YYYY-MM-DD, midnight UTC).
func profilesRequest(r *http.Request, sc api.Scope) (api.ProfilesRequest, error) {
	req := api.ProfilesRequest{Scope: sc}
	if v := param(r, "as_of"); v != "" {
		t, err := parseAsOf(v)
		if err != nil {
			return req, err
		}
		req.AsOf = t
	}
	return req, nil
}

// parseAsOf parses an as_of argument.
func parseAsOf(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, v); err != nil {
			return t, badRequest("as_of: want an RFC 3339 time or a date YYYY-MM-DD, got %q", v)
		}
	}
	return t, nil
}

// countingWriter remembers whether anything was written.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	ctx, done, _ := s.opCtx(r.Context(), false)
	defer done()
	w.Header().Set("Content-Type", "application/x-ndjson")
	cw := &countingWriter{w: w}
	if err := s.local.Export(ctx, sc, cw); err != nil {
		if cw.n == 0 {
			w.Header().Del("Content-Type")
			return err
		}
		// The status line is gone: abort so the client sees a truncated
		// body rather than a complete-looking one.
		s.log.Error("export failed mid-stream", "space", engineSpace(sc).String(), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

var importTypes = []string{"application/x-ndjson", "application/jsonl", "application/json", "text/plain"}

func (s *Server) importSpace(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	sp := engineSpace(sc)
	async, err := boolParam(r, "async")
	if err != nil {
		return err
	}
	if err := checkMediaType(r, importTypes...); err != nil {
		return err
	}
	body := &limitReader{r: http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes)}
	if async {
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		data = bytes.TrimPrefix(data, utf8BOM)
		if len(bytes.TrimSpace(data)) == 0 {
			return badRequest("empty body: want a higmem export (JSON lines)")
		}
		j, err := s.jobs.submitImport(sc, data)
		if err != nil {
			return err
		}
		w.Header().Set("Location", jobLocation(j.ID, sp))
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
	br := bufio.NewReader(body)
	if empty, err := skipBOMAndSpace(br); err != nil {
		return err
	} else if empty {
		return badRequest("empty body: want a higmem export (JSON lines)")
	}
	return s.write(w, r, func(ctx context.Context) (any, error) {
		res, err := s.local.Import(ctx, sc, br)
		if body.err != nil {
			// The engine may have seen the cut-off line first; the size is
			// the real problem.
			return nil, body.err
		}
		return res, err
	})
}

// utf8BOM is the byte order mark some editors put at the start of a UTF-8
// file; an import skips it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOMAndSpace discards a leading UTF-8 byte order mark and the white
// space after it, and reports whether nothing else follows.
func skipBOMAndSpace(br *bufio.Reader) (empty bool, err error) {
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.Discard(1)
		default:
			return false, nil
		}
	}
}

// limitReader remembers the error of a body that hit its size limit.
type limitReader struct {
	r   io.Reader
	err *http.MaxBytesError
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		l.err = mbe
	}
	return n, err
}

// jobLocation is the URL of a job's status.
func jobLocation(id string, sp higmem.Space) string {
	q := url.Values{"user_id": {sp.UserID}}
	if sp.AgentID != "" {
		q.Set("agent_id", sp.AgentID)
	}
	return "/v1/jobs/" + url.PathEscape(id) + "?" + q.Encode()
}

// --- MCP over HTTP ---

// mcpHandler serves the MCP streamable HTTP transport, behind the same API
// keys as the REST routes. The key's principal travels to the tools in the
// SDK's TokenInfo, which also binds each MCP session to its key.
func (s *Server) mcpHandler() http.Handler {
	sse := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:              slog.New(minLevel{s.log.Handler(), slog.LevelWarn}),
		MaxRequestBodyBytes: s.opts.MaxBodyBytes,
	})
	// The standalone SSE stream (GET) lives as long as the session: lift
	// the connection's read deadline (http.Server.ReadTimeout), which would
	// otherwise cancel it.
	var h http.Handler = plainErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		sse.ServeHTTP(w, r)
	}))
	if s.opts.NoAuth {
		return h
	}
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		k, ok := s.lookupKey(ctx, token)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: k.SHA256, Extra: map[string]any{principalExtra: keyPrincipal(k)}}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answer bad keys with the same JSON errors as the REST routes.
		if _, err := s.authenticate(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		protected.ServeHTTP(w, r)
	})
}
