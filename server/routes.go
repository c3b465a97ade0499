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
	"unicode"

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
	h      func(w http.ResponseWriter, r *http.Request) error
}

var scopeParams = []string{"user_id", "agent_id"}

func withScope(more ...string) []string { return append(slices.Clone(scopeParams), more...) }

func (s *Server) restRoutes() []route {
	return []route{
		{method: "GET", path: "/v1/health", public: true, h: s.health},
		{method: "GET", path: "/openapi.json", public: true, h: s.openAPI},
		{method: "GET", path: "/v1/version", h: s.version},
		{method: "POST", path: "/v1/turns", query: []string{"async"}, h: s.addTurns},
		{method: "GET", path: "/v1/turns", query: withScope("session_id", "after_seq", "limit", "filters"), h: s.listTurns},
		{method: "GET", path: "/v1/turns/{id}", query: scopeParams, h: s.getTurn},
		{method: "DELETE", path: "/v1/turns/{id}", query: scopeParams, h: s.deleteTurn},
		{method: "GET", path: "/v1/jobs/{id}", query: scopeParams, h: s.getJob},
		{method: "POST", path: "/v1/search", h: s.search},
		{method: "POST", path: "/v1/ask", h: s.ask},
		{method: "GET", path: "/v1/events", query: scopeParams, h: s.listEvents},
		{method: "GET", path: "/v1/events/{id}", query: scopeParams, h: s.getEvent},
		{method: "GET", path: "/v1/history", query: withScope("kind", "id"), h: s.history},
		{method: "GET", path: "/v1/stats", query: scopeParams, h: s.stats},
		{method: "DELETE", path: "/v1/space", query: scopeParams, h: s.deleteSpace},
		{method: "GET", path: "/v1/export", query: scopeParams, h: s.export},
		{method: "POST", path: "/v1/import", query: withScope("async"), h: s.importSpace},
	}
}

// mcpPath is where the MCP streamable HTTP endpoint is served.
const mcpPath = "/mcp"

// routes builds the handler: the REST routes, JSON 405s for known paths
// with another method, a JSON 404 for everything else, and /mcp.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
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
		if err := rt.h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
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

// maxIDLen bounds user, agent, turn and event ids in requests.
const maxIDLen = 256

// checkID validates a user, agent, session, turn or event id.
func checkID(what, v string) error {
	if len(v) > maxIDLen {
		return badRequest("%s is longer than %d bytes", what, maxIDLen)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return badRequest("%s contains control characters", what)
	}
	return nil
}

// space resolves the scope of a GET, DELETE or import request from the
// query string and checks the caller may use it.
func (s *Server) space(r *http.Request) (higmem.Space, error) {
	return s.authorize(r, param(r, "user_id"), param(r, "agent_id"))
}

// authorize validates a scope and checks the caller may use it. JSON POST
// routes pass the scope from their body.
func (s *Server) authorize(r *http.Request, user, agent string) (higmem.Space, error) {
	if strings.TrimSpace(user) == "" {
		return higmem.Space{}, errorf(http.StatusBadRequest, api.CodeMissingScope,
			"user_id is required (in the query string; in the JSON body for POST /v1/turns, /v1/search and /v1/ask)")
	}
	if err := checkID("user_id", user); err != nil {
		return higmem.Space{}, err
	}
	if err := checkID("agent_id", agent); err != nil {
		return higmem.Space{}, err
	}
	p := principalFrom(r.Context())
	if p == nil || !p.allows(user) {
		name := "(none)"
		if p != nil {
			name = p.name
		}
		return higmem.Space{}, errorf(http.StatusForbidden, api.CodeForbidden, "API key %q may not use user_id %q", name, user)
	}
	return higmem.Space{UserID: user, AgentID: agent}, nil
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

func intParam(r *http.Request, name string, lo, hi int64) (int64, error) {
	v := param(r, name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("query parameter %q: want an integer in [%d, %d], got %q", name, lo, hi, v)
	}
	return n, nil
}

// readCtx bounds a read by Options.RequestTimeout.
func (s *Server) readCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.opts.RequestTimeout)
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

// checkTurn does the cheap checks of a turn that async adds must fail on
// before a job is queued (the engine repeats them, and more, when it runs).
func checkTurn(i int, t api.TurnInput) error {
	where := fmt.Sprintf("turn %d", i+1)
	if err := checkID(where+" id", t.ID); err != nil {
		return err
	}
	if err := checkID(where+" session_id", t.SessionID); err != nil {
		return err
	}
	if strings.TrimSpace(t.Text) != "" {
		return nil
	}
	for _, a := range t.Attachments {
		if strings.TrimSpace(a.Caption) != "" {
			return nil
		}
	}
	return errorf(http.StatusBadRequest, api.CodeInvalidInput, "%s: empty text", where)
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
	sp, err := s.authorize(r, req.UserID, req.AgentID)
	if err != nil {
		return err
	}
	in := req.Turns
	switch {
	case req.Turn != nil && req.Turns != nil:
		return badRequest("give either \"turn\" or \"turns\", not both")
	case req.Turn != nil:
		in = []api.TurnInput{*req.Turn}
	case len(req.Turns) == 0:
		return badRequest("no turns: give \"turn\" (one object) or \"turns\" (a non-empty array)")
	}
	if len(in) > s.opts.MaxBatchTurns {
		return badRequest("%d turns in one request; at most %d (split the batch)", len(in), s.opts.MaxBatchTurns)
	}
	turns := make([]higmem.TurnInput, len(in))
	for i, t := range in {
		if err := checkTurn(i, t); err != nil {
			return err
		}
		turns[i] = t.Engine()
	}
	if async {
		j, err := s.jobs.submit(sp, "add", len(turns), func(ctx context.Context, j *api.Job) {
			res, err := s.mem.Add(ctx, sp, turns)
			j.Add = res
			if err != nil {
				s.log.Warn("async add failed", "job", j.ID, "space", sp.String(), "err", err)
				ae := classify(err)
				j.Error = &api.ErrorDetail{Code: ae.code, Message: err.Error()}
			}
		})
		if err != nil {
			return err
		}
		w.Header().Set("Location", jobLocation(j.ID, sp))
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
	if !s.begin() {
		return errShuttingDown
	}
	defer s.end()
	ctx, cancel := s.writeCtx(r.Context())
	defer cancel()
	res, err := s.mem.Add(ctx, sp, turns)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	j, ok := s.jobs.get(sp, id)
	if !ok {
		return errorf(http.StatusNotFound, api.CodeNotFound, "job %q not found in space %s", id, sp)
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

// retrieveOptions validates and converts the retrieval knobs of a request.
func retrieveOptions(kTurn, kEvent, tokens, maxEv int) (higmem.RetrieveOptions, error) {
	for _, c := range []struct {
		name string
		v    int
		max  int
	}{{"k_turn", kTurn, 1000}, {"k_event", kEvent, 1000}, {"evidence_tokens", tokens, 1_000_000}, {"max_evidence", maxEv, 1000}} {
		if c.v < 0 || c.v > c.max {
			return higmem.RetrieveOptions{}, badRequest("%s: want 0 (default) to %d, got %d", c.name, c.max, c.v)
		}
	}
	return higmem.RetrieveOptions{KTurn: kTurn, KEvent: kEvent, EvidenceTokens: tokens, MaxEvidence: maxEv}, nil
}

func checkQuestion(q string) error {
	if strings.TrimSpace(q) == "" {
		return errorf(http.StatusBadRequest, api.CodeInvalidInput, "question is required")
	}
	if len(q) > 8192 {
		return badRequest("question is longer than 8192 bytes")
	}
	return nil
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	var req api.SearchRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req); err != nil {
		return err
	}
	sp, err := s.authorize(r, req.UserID, req.AgentID)
	if err != nil {
		return err
	}
	if err := checkQuestion(req.Question); err != nil {
		return err
	}
	if err := req.Filters.Validate(); err != nil {
		return err
	}
	ro, err := retrieveOptions(req.KTurn, req.KEvent, req.EvidenceTokens, req.MaxEvidence)
	if err != nil {
		return err
	}
	ro.AsOf = req.AsOf
	ro.Filter = scopeFilter(req.SessionID, req.Filters)
	ctx, cancel := s.readCtx(r)
	defer cancel()
	res, err := s.mem.Retrieve(ctx, sp, req.Question, ro)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// scopeFilter restricts retrieval to one session and to turns whose
// metadata matches; nil when neither is given.
func scopeFilter(session string, f api.Filters) func(higmem.Turn) bool {
	if session == "" && len(f) == 0 {
		return nil
	}
	return func(t higmem.Turn) bool {
		return (session == "" || t.SessionID == session) && f.Match(t.Metadata)
	}
}

func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	var req api.AskRequest
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &req); err != nil {
		return err
	}
	sp, err := s.authorize(r, req.UserID, req.AgentID)
	if err != nil {
		return err
	}
	if err := checkQuestion(req.Question); err != nil {
		return err
	}
	ro, err := retrieveOptions(req.KTurn, req.KEvent, req.EvidenceTokens, req.MaxEvidence)
	if err != nil {
		return err
	}
	ro.AsOf = req.AsOf
	ctx, cancel := s.readCtx(r)
	defer cancel()
	ans, err := s.mem.Ask(ctx, sp, req.Question, ro)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ans)
	return nil
}

// Paging of GET /v1/turns.
const (
	defaultPage = 100
	maxPage     = 1000
)

func (s *Server) listTurns(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	after, err := intParam(r, "after_seq", 0, 1<<62)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 0, maxPage)
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = defaultPage
	}
	session := param(r, "session_id")
	if err := checkID("session_id", session); err != nil {
		return err
	}
	f, err := api.ParseFilters(param(r, "filters"))
	if err != nil {
		return badRequest("query parameter \"filters\": %v", err)
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	q := higmem.ListOptions{SessionID: session, AfterSeq: after}
	if len(f) == 0 {
		q.Limit = int(limit) + 1 // one more tells whether there is a next page
	}
	ts, err := s.mem.List(ctx, sp, q)
	if err != nil {
		return err
	}
	out := api.TurnList{Turns: []higmem.Turn{}}
	for _, t := range ts {
		if !f.Match(t.Metadata) {
			continue
		}
		if len(out.Turns) == int(limit) {
			out.NextAfterSeq = out.Turns[len(out.Turns)-1].Seq
			break
		}
		out.Turns = append(out.Turns, t)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getTurn(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	t, err := s.mem.Get(ctx, sp, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTurn(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !s.begin() {
		return errShuttingDown
	}
	defer s.end()
	ctx, cancel := s.writeCtx(r.Context())
	defer cancel()
	if err := s.mem.Delete(ctx, sp, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.DeleteResult{Deleted: "turn", ID: id, UserID: sp.UserID, AgentID: sp.AgentID})
	return nil
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	evs, err := s.mem.Events(ctx, sp)
	if err != nil {
		return err
	}
	if evs == nil {
		evs = []higmem.EventView{}
	}
	writeJSON(w, http.StatusOK, api.EventList{Events: evs})
	return nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	e, err := s.mem.Event(ctx, sp, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	kind, id := param(r, "kind"), param(r, "id")
	switch kind {
	case "", "event", "annotation", "link", "turn":
	default:
		return badRequest("query parameter \"kind\": want event, annotation, link or turn, got %q", kind)
	}
	if err := checkID("id", id); err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	cs, err := s.mem.History(ctx, sp, kind, id)
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []higmem.Change{}
	}
	writeJSON(w, http.StatusOK, api.HistoryList{Changes: cs})
	return nil
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	st, err := s.mem.Stats(ctx, sp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) deleteSpace(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	if !s.begin() {
		return errShuttingDown
	}
	defer s.end()
	ctx, cancel := s.writeCtx(r.Context())
	defer cancel()
	if err := s.mem.DeleteSpace(ctx, sp); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.DeleteResult{Deleted: "space", UserID: sp.UserID, AgentID: sp.AgentID})
	return nil
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
	sp, err := s.space(r)
	if err != nil {
		return err
	}
	ctx, cancel := s.readCtx(r)
	defer cancel()
	w.Header().Set("Content-Type", "application/x-ndjson")
	cw := &countingWriter{w: w}
	if err := s.mem.Export(ctx, sp, cw); err != nil {
		if cw.n == 0 {
			w.Header().Del("Content-Type")
			return err
		}
		// The status line is gone: abort so the client sees a truncated
		// body rather than a complete-looking one.
		s.log.Error("export failed mid-stream", "space", sp.String(), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

var importTypes = []string{"application/x-ndjson", "application/jsonl", "application/json", "text/plain"}

func (s *Server) importSpace(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.space(r)
	if err != nil {
		return err
	}
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
		if len(bytes.TrimSpace(data)) == 0 {
			return badRequest("empty body: want a higmem export (JSON lines)")
		}
		j, err := s.jobs.submit(sp, "import", 0, func(ctx context.Context, j *api.Job) {
			res, err := s.mem.Import(ctx, sp, bytes.NewReader(data))
			j.Import = res
			if err != nil {
				s.log.Warn("async import failed", "job", j.ID, "space", sp.String(), "err", err)
				ae := importError(err)
				j.Error = &api.ErrorDetail{Code: ae.code, Message: ae.msg}
			}
		})
		if err != nil {
			return err
		}
		w.Header().Set("Location", jobLocation(j.ID, sp))
		writeJSON(w, http.StatusAccepted, j)
		return nil
	}
	if !s.begin() {
		return errShuttingDown
	}
	defer s.end()
	ctx, cancel := s.writeCtx(r.Context())
	defer cancel()
	br := bufio.NewReader(body)
	if _, err := br.Peek(1); err == io.EOF {
		return badRequest("empty body: want a higmem export (JSON lines)")
	}
	res, err := s.mem.Import(ctx, sp, br)
	if body.err != nil {
		// The engine may have seen the cut-off line first; the size is the
		// real problem.
		return body.err
	}
	if err != nil {
		return importError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
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

// importError classifies an import failure: a record that refers to a
// missing turn is the upload's fault, not a missing resource.
func importError(err error) *apiError {
	ae := classify(err)
	if errors.Is(err, higmem.ErrNotFound) {
		return errorf(http.StatusBadRequest, api.CodeInvalidInput, "%s", err)
	}
	if ae.code == api.CodeInternal {
		return ae
	}
	return &apiError{status: ae.status, code: ae.code, msg: err.Error()}
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
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		sse.ServeHTTP(w, r)
	})
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
