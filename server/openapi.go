package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
)

// This file writes the OpenAPI 3 document served at /openapi.json. The
// operations are described here by hand, apart from the route table in
// routes.go; TestOpenAPIMatchesRoutes keeps the two in sync (every route is
// documented with its query parameters, and every documented operation is
// served). Schemas are generated from the Go wire types, so they cannot
// drift from what the handlers decode and encode.

type paramDoc struct {
	name     string
	typ      string // "string", "integer", "boolean"
	desc     string
	required bool
}

type opDoc struct {
	method, path string
	summary      string
	tag          string
	public       bool
	query        []paramDoc
	// body is a value of the JSON request type; bodyNDJSON marks a JSON
	// lines body instead.
	body       any
	bodyNDJSON bool
	// resp is a value of the 200 response type (nil: free-form object);
	// respNDJSON marks a JSON lines response.
	resp       any
	respNDJSON bool
	// accepted is the 202 response type of async calls.
	accepted any
}

var (
	pUser    = paramDoc{name: "user_id", typ: "string", desc: "user id of the memory space", required: true}
	pAgent   = paramDoc{name: "agent_id", typ: "string", desc: "agent id of the memory space (empty: none)"}
	pAsync   = paramDoc{name: "async", typ: "boolean", desc: "queue the work as a job and answer 202 with the job at once"}
	pAsOf    = paramDoc{name: "as_of", typ: "string", desc: "only the values that held at this time of the conversation (RFC 3339, or YYYY-MM-DD)"}
	pScope   = []paramDoc{pUser, pAgent}
	scopeAnd = func(more ...paramDoc) []paramDoc { return append([]paramDoc{pUser, pAgent}, more...) }
)

// operations documents every REST route.
var operations = []opDoc{
	{method: "GET", path: "/v1/health", summary: "Liveness and pending writes (no key needed)", tag: "server", public: true, resp: api.Health{}},
	{method: "GET", path: "/openapi.json", summary: "This OpenAPI document (no key needed)", tag: "server", public: true},
	{method: "GET", path: "/v1/version", summary: "Server version, mode and embedder", tag: "server", resp: api.VersionInfo{}},
	{method: "GET", path: "/v1/key", summary: "The API key's name and the user ids it may use", tag: "server", resp: api.KeyInfo{}},
	{method: "POST", path: "/v1/turns", summary: "Add one turn (\"turn\") or a batch (\"turns\"); async=true queues a job", tag: "turns",
		query: []paramDoc{pAsync}, body: api.AddRequest{}, resp: api.AddResponse{}, accepted: api.Job{}},
	{method: "GET", path: "/v1/turns", summary: "List turns in order, a page at a time, with session and metadata filters", tag: "turns",
		query: scopeAnd(
			paramDoc{name: "session_id", typ: "string", desc: "only this session's turns"},
			paramDoc{name: "after_seq", typ: "integer", desc: "only turns after this sequence number (paging)"},
			paramDoc{name: "limit", typ: "integer", desc: "page size (default 100, at most 1000)"},
			paramDoc{name: "filters", typ: "string", desc: `metadata filters as JSON, e.g. {"topic":"travel","lang":{"ne":"fr"},"tag":{"in":["a","b"]},"note":{"contains":"visa"}}`},
		), resp: api.TurnList{}},
	{method: "GET", path: "/v1/turns/{id}", summary: "Get one turn", tag: "turns", query: pScope, resp: api.Turn{}},
	{method: "DELETE", path: "/v1/turns/{id}", summary: "Delete one turn and forget it (its events are rebuilt without it; empty events are deleted; the history keeps only that it was deleted)", tag: "turns", query: pScope, resp: api.DeleteResult{}},
	{method: "GET", path: "/v1/jobs/{id}", summary: "Status of an async add or import", tag: "turns", query: pScope, resp: api.Job{}},
	{method: "POST", path: "/v1/search", summary: "Evidence for a question, with the trace of every retrieval stage", tag: "retrieval", body: api.SearchRequest{}, resp: api.SearchResponse{}},
	{method: "POST", path: "/v1/ask", summary: "Answer a question from memory (evidence only without an LLM)", tag: "retrieval", body: api.AskRequest{}, resp: api.AskResponse{}},
	{method: "GET", path: "/v1/events", summary: "Every event with its member turns", tag: "events", query: pScope, resp: api.EventList{}},
	{method: "GET", path: "/v1/events/{id}", summary: "One event with its member turns", tag: "events", query: pScope, resp: api.EventView{}},
	{method: "GET", path: "/v1/profiles", summary: "What memory knows about each person (derived from the live turns), with the history of every value", tag: "profiles",
		query: scopeAnd(pAsOf), resp: api.ProfileList{}},
	{method: "GET", path: "/v1/profiles/{entity}", summary: "The profile of one person, by name (case-insensitive; a unique first name works)", tag: "profiles",
		query: scopeAnd(pAsOf), resp: api.Profile{}},
	{method: "GET", path: "/v1/history", summary: "Changes of derived records (events, annotations, links, turn deletions)", tag: "events",
		query: scopeAnd(
			paramDoc{name: "kind", typ: "string", desc: "event, annotation, link or turn (empty: all)"},
			paramDoc{name: "id", typ: "string", desc: "record id (empty: all)"},
		), resp: api.HistoryList{}},
	{method: "GET", path: "/v1/stats", summary: "Counts of a space", tag: "spaces", query: pScope, resp: api.Stats{}},
	{method: "DELETE", path: "/v1/space", summary: "Delete a whole space: turns, events, links, vectors and history", tag: "spaces", query: pScope, resp: api.DeleteResult{}},
	{method: "GET", path: "/v1/export", summary: "Export a space as JSON lines", tag: "spaces", query: pScope, respNDJSON: true},
	{method: "POST", path: "/v1/import", summary: "Import an export into a space in one transaction; async=true queues a job", tag: "spaces",
		query: scopeAnd(pAsync), bodyNDJSON: true, resp: api.ImportResponse{}, accepted: api.Job{}},
	{method: "POST", path: "/v1/chat/completions", summary: "OpenAI-compatible chat completion (streamed with \"stream\":true) forwarded to the upstream model " +
		"with evidence from memory; the user is the body's \"user\" or the key's, headers " + api.HeaderAgent + " and " + api.HeaderConversation +
		" name the agent and conversation (docs/CHAT.md)", tag: "chat"},
	{method: "GET", path: "/v1/models", summary: "The upstream model's list (OpenAI format)", tag: "chat"},
}

var pathParamRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// buildOpenAPI renders the document.
func buildOpenAPI(version string) ([]byte, error) {
	g := &schemaGen{schemas: map[string]any{}, names: map[string]reflect.Type{}}
	errResp := map[string]any{"description": "error", "content": map[string]any{
		"application/json": map[string]any{"schema": g.of(reflect.TypeOf(api.ErrorBody{}))}}}
	paths := map[string]any{}
	for _, op := range operations {
		item, _ := paths[op.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.path] = item
		}
		var params []any
		for _, m := range pathParamRE.FindAllStringSubmatch(op.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, p := range op.query {
			params = append(params, map[string]any{"name": p.name, "in": "query", "required": p.required,
				"description": p.desc, "schema": map[string]any{"type": p.typ}})
		}
		o := map[string]any{
			"summary":     op.summary,
			"operationId": operationID(op),
			"tags":        []string{op.tag},
			"responses": map[string]any{
				"200": response(g, op.resp, op.respNDJSON),
				"4XX": errResp,
				"5XX": errResp,
			},
		}
		if op.accepted != nil {
			o["responses"].(map[string]any)["202"] = response(g, op.accepted, false)
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		if op.public {
			o["security"] = []any{}
		}
		switch {
		case op.body != nil:
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": g.of(reflect.TypeOf(op.body))}}}
		case op.bodyNDJSON:
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/x-ndjson": map[string]any{"schema": map[string]any{"type": "string", "description": "a higmem export: JSON lines"}}}}
		}
		item[strings.ToLower(op.method)] = o
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "higmem",
			"version": version,
			"description": "Long-term memory for LLM agents. Every call is scoped to a space (user_id, agent_id). " +
				"Send the API key as \"Authorization: Bearer <key>\". Errors are {\"error\":{\"code\",\"message\"}}. " +
				"An MCP endpoint (streamable HTTP) is served at /mcp.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas":         g.schemas,
			"securitySchemes": map[string]any{"apiKey": map[string]any{"type": "http", "scheme": "bearer"}},
		},
		"security": []any{map[string]any{"apiKey": []any{}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

func mustOpenAPI(version string) []byte {
	b, err := buildOpenAPI(version)
	if err != nil {
		panic(fmt.Sprintf("server: building the OpenAPI document: %v", err))
	}
	return b
}

func operationID(op opDoc) string {
	p := strings.NewReplacer("/v1/", "", "/", "_", "{", "", "}", "", ".", "_").Replace(op.path)
	return strings.ToLower(op.method) + "_" + strings.Trim(p, "_")
}

func response(g *schemaGen, v any, ndjson bool) map[string]any {
	switch {
	case ndjson:
		return map[string]any{"description": "JSON lines", "content": map[string]any{
			"application/x-ndjson": map[string]any{"schema": map[string]any{"type": "string"}}}}
	case v == nil:
		return map[string]any{"description": "OK", "content": map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}
	}
	return map[string]any{"description": "OK", "content": map[string]any{
		"application/json": map[string]any{"schema": g.of(reflect.TypeOf(v))}}}
}

// schemaGen derives JSON schemas from Go types the way encoding/json
// encodes them; named structs become components.
type schemaGen struct {
	schemas map[string]any
	names   map[string]reflect.Type
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	durationType  = reflect.TypeOf(time.Duration(0))
	rawType       = reflect.TypeOf(json.RawMessage(nil))
	conditionType = reflect.TypeOf(api.Condition{})
)

func (g *schemaGen) of(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case durationType:
		return map[string]any{"type": "integer", "description": "nanoseconds"}
	case rawType:
		return map[string]any{"description": "any JSON value"}
	case conditionType:
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string", "description": "shorthand for eq"},
			g.ref(t),
		}}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.of(t.Elem())}
	case reflect.Struct:
		return g.ref(t)
	}
	return map[string]any{}
}

// ref returns a $ref to the component of a named struct, generating it on
// first use.
func (g *schemaGen) ref(t reflect.Type) map[string]any {
	name := t.Name()
	if other, ok := g.names[name]; ok && other != t {
		pkg := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
		name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
	}
	ref := map[string]any{"$ref": "#/components/schemas/" + name}
	if _, ok := g.names[name]; ok {
		return ref
	}
	g.names[name] = t
	g.schemas[name] = map[string]any{} // placeholder for recursive types
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	g.schemas[name] = s
	return ref
}

// fields adds the JSON fields of struct t, flattening embedded structs.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, props, required)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.of(f.Type)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}
