package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// principalExtra is the TokenInfo.Extra key holding the key's principal.
const principalExtra = "higmem.principal"

// MCP tool names (Tools lists them all).
const (
	ToolAdd    = "add_memory"
	ToolSearch = "search_memory"
	ToolAsk    = "ask_memory"
	ToolEvents = "list_events"
	ToolDelete = "delete_memory"
	// ToolProfiles returns what memory knows about people.
	ToolProfiles = "get_profiles"
)

// Tools lists the MCP tools the server offers.
var Tools = []string{ToolAdd, ToolSearch, ToolAsk, ToolEvents, ToolProfiles, ToolDelete}

// scopeArgs are the space arguments every tool takes.
type scopeArgs struct {
	UserID  string `json:"user_id,omitempty" jsonschema:"user id of the memory space (default: the API key's user when it has only one, else the server's default user)"`
	AgentID string `json:"agent_id,omitempty" jsonschema:"agent id of the memory space (default: the server's default agent)"`
}

// scope returns the space arguments; every argument struct embeds them.
func (a scopeArgs) scope() scopeArgs { return a }

type addArgs struct {
	Text      string            `json:"text" jsonschema:"what was said, verbatim"`
	Speaker   string            `json:"speaker,omitempty" jsonschema:"who said it (default: user)"`
	SessionID string            `json:"session_id,omitempty" jsonschema:"conversation session the turn belongs to"`
	Time      string            `json:"time,omitempty" jsonschema:"when it was said, e.g. RFC 3339 (default: now)"`
	ID        string            `json:"id,omitempty" jsonschema:"caller's turn id, unique in the space (default: generated)"`
	Metadata  map[string]string `json:"metadata,omitempty" jsonschema:"caller-defined string fields"`
	scopeArgs
}

type addOut struct {
	Added    []string `json:"added"`
	Skipped  []string `json:"skipped,omitempty"`
	Events   []string `json:"events,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

type searchArgs struct {
	Question    string            `json:"question" jsonschema:"the question or topic to find evidence for"`
	SessionID   string            `json:"session_id,omitempty" jsonschema:"keep only evidence from this session"`
	Metadata    map[string]string `json:"metadata,omitempty" jsonschema:"keep only evidence whose metadata has these exact values"`
	MaxEvidence int               `json:"max_evidence,omitempty" jsonschema:"cap on evidence turns (default: token budget only)"`
	scopeArgs
}

// mcpEvidence is one evidence turn, compact for a model's context.
type mcpEvidence struct {
	ID        string   `json:"id"`
	SessionID string   `json:"session_id,omitempty"`
	Date      string   `json:"date,omitempty"`
	Speaker   string   `json:"speaker"`
	Text      string   `json:"text"`
	Score     float64  `json:"score"`
	Events    []string `json:"events,omitempty"`
	// Excerpt is set when Text is part of a long turn (the passages
	// that match the question).
	Excerpt *api.Excerpt `json:"excerpt,omitempty"`
}

type searchOut struct {
	Evidence []mcpEvidence `json:"evidence"`
	Context  string        `json:"context"`
}

type askArgs struct {
	Question string `json:"question" jsonschema:"the question to answer from memory"`
	scopeArgs
}

type askOut struct {
	Answer   string        `json:"answer"`
	Note     string        `json:"note,omitempty"`
	Evidence []mcpEvidence `json:"evidence"`
}

type eventsArgs struct {
	WithTurns bool `json:"with_turns,omitempty" jsonschema:"include member turns"`
	scopeArgs
}

// mcpTurn is a member turn of an event, compact; its fields are spelled as
// in api.Turn.
type mcpTurn struct {
	ID          string `json:"id"`
	SessionID   string `json:"session_id,omitempty"`
	OccurredRaw string `json:"occurred_raw,omitempty"`
	Speaker     string `json:"speaker"`
	Text        string `json:"text"`
}

type mcpEvent struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Summary string    `json:"summary,omitempty"`
	Start   string    `json:"start,omitempty"`
	End     string    `json:"end,omitempty"`
	TurnIDs []string  `json:"turn_ids"`
	Turns   []mcpTurn `json:"turns,omitempty"`
	URI     string    `json:"uri"`
}

type eventsOut struct {
	Events []mcpEvent `json:"events"`
}

type profilesArgs struct {
	Entity string `json:"entity,omitempty" jsonschema:"the person's name (default: every person)"`
	AsOf   string `json:"as_of,omitempty" jsonschema:"only the values that held at this time of the conversation (RFC 3339 or YYYY-MM-DD)"`
	scopeArgs
}

// profilesOut is api.ProfileList: one profile when an entity was named.
type profilesOut = api.ProfileList

type deleteArgs struct {
	TurnID string `json:"turn_id" jsonschema:"id of the turn to delete"`
	scopeArgs
}

// deleteOut is api.DeleteResult: {"deleted":"turn","id":...}.
type deleteOut = api.DeleteResult

// newMCP builds the MCP server: six tools, the event resources and the
// profile resources.
func (s *Server) newMCP() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "higmem", Title: "higmem long-term memory", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "higmem is long-term memory. Store what the user says with add_memory; before answering " +
			"questions about the past, call search_memory (evidence) or ask_memory (an answer). Memory is scoped " +
			"by user_id/agent_id, which default to the API key's user when it has only one, else to the server's configured space.",
		Logger: slog.New(minLevel{s.log.Handler(), slog.LevelWarn}),
	})
	mcp.AddTool(srv, &mcp.Tool{Name: ToolAdd, Description: "Store one conversation turn in long-term memory; it is grouped into events."}, tool(s, true, s.toolAdd))
	mcp.AddTool(srv, &mcp.Tool{Name: ToolSearch, Description: "Find the remembered turns that answer a question (evidence only, no written answer).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s, false, s.toolSearch))
	mcp.AddTool(srv, &mcp.Tool{Name: ToolAsk, Description: "Answer a question from memory; without a server-side LLM only evidence is returned.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s, false, s.toolAsk))
	mcp.AddTool(srv, &mcp.Tool{Name: ToolEvents, Description: "List the events (grouped happenings or topics) in memory.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s, false, s.toolEvents))
	mcp.AddTool(srv, &mcp.Tool{Name: ToolProfiles, Description: "What memory knows about each person (where they live, job, pets, partner, favourites, plans), with evidence turn ids; values that changed are kept as closed, not current.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, tool(s, false, s.toolProfiles))
	mcp.AddTool(srv, &mcp.Tool{Name: ToolDelete, Description: "Delete one remembered turn by id and forget it: its events are rebuilt without it and no stored record keeps its text.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, tool(s, true, s.toolDelete))

	addResources(srv, resourceKind{coll: "events", one: "event", item: "event_id", read: s.readEvents,
		all:  "Every event of the default space, with member turn ids.",
		list: "Every event of %s.", each: "One event of %s with its member turns."})
	addResources(srv, resourceKind{coll: "profiles", one: "profile", item: "entity", read: s.readProfiles,
		all:  "What memory knows about each person of the default space: attributes with their values, evidence turn ids, validity and producers.",
		list: "Every profile of %s.", each: "One person's profile in %s; the entity is the name, path-escaped."})
	return srv
}

// resourceKind describes a collection of resources: higmem://COLL for the
// default space, and templates for a user's or a user/agent space's
// collection and items.
type resourceKind struct {
	coll, one, item string // "events", "event", "event_id"
	read            mcp.ResourceHandler
	// all describes the default space's collection; list and each (with
	// %s, the space) a space's collection and one item.
	all, list, each string
}

// addResources registers the resource and the four templates of k.
func addResources(srv *mcp.Server, k resourceKind) {
	srv.AddResource(&mcp.Resource{URI: "higmem://" + k.coll, Name: k.coll, MIMEType: "application/json", Description: k.all}, k.read)
	for _, sc := range []struct{ name, path, what string }{
		{"user", "users/{user_id}", "a user's space (no agent)"},
		{"agent", "users/{user_id}/agents/{agent_id}", "a user/agent space"},
	} {
		base := "higmem://" + sc.path + "/" + k.coll
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: base, Name: sc.name + "-" + k.coll, MIMEType: "application/json",
			Description: fmt.Sprintf(k.list, sc.what)}, k.read)
		srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: base + "/{" + k.item + "}", Name: sc.name + "-" + k.one, MIMEType: "application/json",
			Description: fmt.Sprintf(k.each, sc.what)}, k.read)
	}
}

func ptr[T any](v T) *T { return &v }

// minLevel drops records below min: the SDK logs every session start and
// end at Info, too chatty for a server log.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

// mcpSpace resolves the space of a tool call: the arguments, else the
// default space (see mcpDefault), checked against the caller's key. Calls
// without HTTP credentials (stdio, or HTTP with NoAuth) may use every user.
func (s *Server) mcpSpace(extra *mcp.RequestExtra, user, agent string) (higmem.Space, error) {
	sp := s.mcpDefault(extra)
	if user != "" {
		sp.UserID = user
	}
	if agent != "" {
		sp.AgentID = agent
	}
	return s.mcpAuthorize(extra, sp)
}

// mcpDefault is the space of a call that names none: the server's default
// space, with the user of the caller's key when the key may use only one
// user (as the CLI's --server and the chat endpoint do), so that a key made
// for alice works without the model passing user_id.
func (s *Server) mcpDefault(extra *mcp.RequestExtra) higmem.Space {
	sp := s.opts.DefaultSpace
	if extra != nil && extra.TokenInfo != nil {
		if p, _ := extra.TokenInfo.Extra[principalExtra].(*principal); p != nil && !p.all && len(p.users) == 1 {
			sp.UserID = p.users[0]
		}
	}
	return sp
}

// mcpAuthorize checks the caller may use sp.
func (s *Server) mcpAuthorize(extra *mcp.RequestExtra, sp higmem.Space) (higmem.Space, error) {
	if sp.UserID == "" {
		return sp, errorf(http.StatusBadRequest, api.CodeMissingScope, "user_id is required (the server has no default space)")
	}
	sp, err := validSpace(sp.UserID, sp.AgentID)
	if err != nil {
		return sp, err
	}
	p := unrestricted
	if extra != nil && extra.TokenInfo != nil {
		p, _ = extra.TokenInfo.Extra[principalExtra].(*principal)
		if p == nil {
			return sp, errorf(http.StatusForbidden, api.CodeForbidden, "the credentials carry no higmem key")
		}
	}
	if !p.allows(sp.UserID) {
		return sp, errorf(http.StatusForbidden, api.CodeForbidden, "API key %q may not use user_id %q", p.name, sp.UserID)
	}
	return sp, nil
}

// toolError makes engine errors readable for a model: the api code and
// message, without internals.
func toolError(err error) error {
	ae := classify(err)
	if ae.code == api.CodeInternal {
		return errors.New("internal error (see the server log)")
	}
	return fmt.Errorf("%s: %s", ae.code, ae.msg)
}

// tool adapts an operation on a space to an MCP tool handler: the space
// of the arguments (else the default one), checked against the caller's
// key; a read bounded by Options.RequestTimeout, or a write that Shutdown
// waits for and a client going away does not cut short; errors as tool
// errors naming the problem.
func tool[In interface{ scope() scopeArgs }, Out any](s *Server, write bool, op func(ctx context.Context, sc api.Scope, in In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		a := in.scope()
		sp, err := s.mcpSpace(req.Extra, a.UserID, a.AgentID)
		if err != nil {
			return nil, zero, toolError(err)
		}
		ctx, done, err := s.opCtx(ctx, write)
		if err != nil {
			return nil, zero, toolError(err)
		}
		defer done()
		out, err := op(ctx, apiScope(sp), in)
		if err != nil {
			return nil, zero, toolError(err)
		}
		return nil, out, nil
	}
}

func (s *Server) toolAdd(ctx context.Context, sc api.Scope, in addArgs) (addOut, error) {
	if in.Speaker == "" {
		in.Speaker = "user"
	}
	turn := &api.TurnInput{ID: in.ID, SessionID: in.SessionID, Speaker: in.Speaker, Text: in.Text, Time: in.Time, Metadata: in.Metadata}
	s.stampTimes(ctx, engineSpace(sc), turn, nil)
	res, err := s.local.Add(ctx, api.AddRequest{UserID: sc.UserID, AgentID: sc.AgentID, Turn: turn})
	if err != nil {
		return addOut{}, err
	}
	return addOut{Added: res.Added, Skipped: res.Skipped, Events: res.Events, Warnings: res.Warnings}, nil
}

// eqFilters turns exact-value metadata arguments into filters.
func eqFilters(md map[string]string) api.Filters {
	f := api.Filters{}
	for k, v := range md {
		f[k] = api.Eq(v)
	}
	return f
}

func compactEvidence(ev []api.Evidence) []mcpEvidence {
	out := make([]mcpEvidence, len(ev))
	for i, e := range ev {
		out[i] = mcpEvidence{ID: e.Turn.ID, SessionID: e.Turn.SessionID, Date: e.Date, Speaker: e.Turn.Speaker,
			Text: e.Turn.Text, Score: e.Score, Events: e.Events, Excerpt: e.Excerpt}
	}
	return out
}

func (s *Server) toolSearch(ctx context.Context, sc api.Scope, in searchArgs) (searchOut, error) {
	res, err := s.local.Search(ctx, api.SearchRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: in.Question,
		SessionID: in.SessionID, Filters: eqFilters(in.Metadata), MaxEvidence: in.MaxEvidence})
	if err != nil {
		return searchOut{}, err
	}
	return searchOut{Evidence: compactEvidence(res.Evidence), Context: res.Context}, nil
}

func (s *Server) toolAsk(ctx context.Context, sc api.Scope, in askArgs) (askOut, error) {
	ans, err := s.local.Ask(ctx, api.AskRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: in.Question})
	if err != nil {
		return askOut{}, err
	}
	return askOut{Answer: ans.Answer, Note: ans.Note, Evidence: compactEvidence(ans.Evidence)}, nil
}

func (s *Server) toolProfiles(ctx context.Context, sc api.Scope, in profilesArgs) (profilesOut, error) {
	req := api.ProfilesRequest{Scope: sc, Entity: in.Entity}
	if in.AsOf != "" {
		t, err := parseAsOf(in.AsOf)
		if err != nil {
			return profilesOut{}, err
		}
		req.AsOf = t
	}
	if in.Entity == "" {
		l, err := s.local.Profiles(ctx, req)
		if err != nil {
			return profilesOut{}, err
		}
		return *l, nil
	}
	p, err := s.local.Profile(ctx, req)
	if err != nil {
		return profilesOut{}, err
	}
	return profilesOut{Profiles: []api.Profile{*p}}, nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// eventURI is the resource URI of one event.
func eventURI(sp higmem.Space, id string) string {
	u := "higmem://users/" + url.PathEscape(sp.UserID)
	if sp.AgentID != "" {
		u += "/agents/" + url.PathEscape(sp.AgentID)
	}
	return u + "/events/" + url.PathEscape(id)
}

func compactEvent(sp higmem.Space, v api.EventView, withTurns bool) mcpEvent {
	e := mcpEvent{ID: v.Event.ID, Title: v.Event.Title, Summary: v.Event.Summary, Start: fmtTime(v.Event.Start),
		End: fmtTime(v.Event.End), TurnIDs: v.Event.TurnIDs, URI: eventURI(sp, v.Event.ID)}
	if withTurns {
		for _, t := range v.Turns {
			e.Turns = append(e.Turns, mcpTurn{ID: t.ID, SessionID: t.SessionID, OccurredRaw: t.OccurredRaw, Speaker: t.Speaker, Text: t.Text})
		}
	}
	return e
}

func compactEvents(sp higmem.Space, l *api.EventList, withTurns bool) eventsOut {
	out := eventsOut{Events: make([]mcpEvent, len(l.Events))}
	for i, v := range l.Events {
		out.Events[i] = compactEvent(sp, v, withTurns)
	}
	return out
}

func (s *Server) toolEvents(ctx context.Context, sc api.Scope, in eventsArgs) (eventsOut, error) {
	l, err := s.local.Events(ctx, sc)
	if err != nil {
		return eventsOut{}, err
	}
	return compactEvents(engineSpace(sc), l, in.WithTurns), nil
}

func (s *Server) toolDelete(ctx context.Context, sc api.Scope, in deleteArgs) (deleteOut, error) {
	if strings.TrimSpace(in.TurnID) == "" {
		return deleteOut{}, errorf(http.StatusBadRequest, api.CodeInvalidInput, "turn_id is required")
	}
	res, err := s.local.DeleteTurn(ctx, sc, in.TurnID)
	if err != nil {
		return deleteOut{}, err
	}
	return *res, nil
}

// parseResourceURI parses higmem://COLL and the
// higmem://users/{user}[/agents/{agent}]/COLL[/{id}] forms of a collection
// ("events", "profiles") into a space (zero for the default one), dflt, and
// an id ("" for all).
func parseResourceURI(raw, coll string) (sp higmem.Space, id string, dflt bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "higmem" {
		return sp, "", false, fmt.Errorf("not a higmem URI: %q", raw)
	}
	if u.Host == coll && (u.Path == "" || u.Path == "/") {
		return sp, "", true, nil
	}
	if u.Host != "users" {
		return sp, "", false, fmt.Errorf("unknown higmem URI: %q", raw)
	}
	var segs []string
	for _, p := range strings.Split(strings.Trim(u.EscapedPath(), "/"), "/") {
		v, err := url.PathUnescape(p)
		if err != nil {
			return sp, "", false, fmt.Errorf("bad escape in %q", raw)
		}
		segs = append(segs, v)
	}
	// user/COLL[/id] or user/agents/agent/COLL[/id]
	if len(segs) >= 3 && segs[1] == "agents" {
		sp.AgentID = segs[2]
		segs = append(segs[:1], segs[3:]...)
	}
	switch {
	case len(segs) == 2 && segs[1] == coll:
	case len(segs) == 3 && segs[1] == coll:
		id = segs[2]
	default:
		return sp, "", false, fmt.Errorf("unknown higmem URI: %q", raw)
	}
	sp.UserID = segs[0]
	if sp.UserID == "" || (len(segs) == 3 && id == "") {
		return sp, "", false, fmt.Errorf("unknown higmem URI: %q", raw)
	}
	return sp, id, false, nil
}

// JSON-RPC error codes of resources/read: a missing resource has the code
// the MCP specification gives it (invalid params, -32602, since SEP-2164),
// as a URI that matches no template gets from the SDK itself; -32001 is
// higmem's, in the range JSON-RPC reserves for servers, for a key that may
// not read the space.
const rpcResourceNotFound = jsonrpc.CodeInvalidParams

const rpcForbidden = -32001

// rpcError turns an operation's error into a JSON-RPC error with a code
// (the SDK would answer a plain error with code 0).
func rpcError(err error, uri string) error {
	ae := classify(err)
	switch {
	case ae.code == api.CodeNotFound:
		return &jsonrpc.Error{Code: rpcResourceNotFound, Message: fmt.Sprintf("resource not found: %s: %s", uri, ae.msg)}
	case ae.status == http.StatusForbidden || ae.status == http.StatusUnauthorized:
		return &jsonrpc.Error{Code: rpcForbidden, Message: ae.code + ": " + ae.msg}
	case ae.status >= 400 && ae.status < 500:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ae.code + ": " + ae.msg}
	case ae.code == api.CodeInternal:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error (see the server log)"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: ae.code + ": " + ae.msg}
}

// readResource reads a resource of collection coll: it parses and
// authorizes the URI's space, then renders as JSON what read returns for
// the space and the id in the URI ("" for the whole collection).
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest, coll string,
	read func(ctx context.Context, sp higmem.Space, id string) (any, error)) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	sp, id, dflt, err := parseResourceURI(uri, coll)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if dflt {
		sp = s.mcpDefault(req.Extra)
	}
	sp, err = s.mcpAuthorize(req.Extra, sp)
	if err != nil {
		return nil, rpcError(err, uri)
	}
	ctx, done, _ := s.opCtx(ctx, false)
	defer done()
	v, err := read(ctx, sp, id)
	if err != nil {
		return nil, rpcError(err, uri)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, rpcError(err, uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *Server) readEvents(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readResource(ctx, req, "events", func(ctx context.Context, sp higmem.Space, id string) (any, error) {
		if id == "" {
			l, err := s.local.Events(ctx, apiScope(sp))
			if err != nil {
				return nil, err
			}
			return compactEvents(sp, l, false), nil
		}
		e, err := s.local.Event(ctx, apiScope(sp), id)
		if err != nil {
			return nil, err
		}
		return compactEvent(sp, *e, true), nil
	})
}

// profileURI is the resource URI of one person's profile.
func profileURI(sp higmem.Space, entity string) string {
	u := "higmem://users/" + url.PathEscape(sp.UserID)
	if sp.AgentID != "" {
		u += "/agents/" + url.PathEscape(sp.AgentID)
	}
	return u + "/profiles/" + url.PathEscape(entity)
}

// mcpProfile is api.Profile with the profile's resource URI.
type mcpProfile struct {
	URI string `json:"uri"`
	api.Profile
}

// mcpProfiles is the profiles resource of a space.
type mcpProfiles struct {
	Profiles []mcpProfile `json:"profiles"`
}

func (s *Server) readProfiles(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readResource(ctx, req, "profiles", func(ctx context.Context, sp higmem.Space, entity string) (any, error) {
		if entity == "" {
			l, err := s.local.Profiles(ctx, api.ProfilesRequest{Scope: apiScope(sp)})
			if err != nil {
				return nil, err
			}
			out := mcpProfiles{Profiles: make([]mcpProfile, len(l.Profiles))}
			for i, p := range l.Profiles {
				out.Profiles[i] = mcpProfile{URI: profileURI(sp, p.Entity), Profile: p}
			}
			return out, nil
		}
		p, err := s.local.Profile(ctx, api.ProfilesRequest{Scope: apiScope(sp), Entity: entity})
		if err != nil {
			return nil, err
		}
		return mcpProfile{URI: profileURI(sp, p.Entity), Profile: *p}, nil
	})
}
