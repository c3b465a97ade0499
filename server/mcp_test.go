package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/llm/llmtest"
)

// callTool calls a tool and decodes its structured output into out. It
// returns the tool error text ("" on success).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, tc.Text)
			}
		}
		return "error: " + strings.Join(msg, " ")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, b, err)
	}
	return ""
}

// mcpRoundTrip exercises every tool and resource through a client session
// whose default space is def.
func mcpRoundTrip(t *testing.T, cs *mcp.ClientSession, mem *higmem.Memory, def higmem.Space, wantAnswer bool) {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil || tl.Description == "" {
			t.Errorf("tool %s without schema or description", tl.Name)
		}
	}
	slices.Sort(names)
	if want := []string{ToolAdd, ToolAsk, ToolDelete, ToolProfiles, ToolEvents, ToolSearch}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	for _, a := range []map[string]any{
		{"id": "m1", "text": "My greyhound Biscuit loves running on the beach.", "speaker": "Carol", "session_id": "s1", "time": "2023-06-01T09:00:00Z", "metadata": map[string]any{"topic": "pets"}},
		{"id": "m2", "text": "Biscuit is a great name for a greyhound.", "speaker": "Dan", "session_id": "s1", "time": "2023-06-01T09:01:00Z"},
		{"id": "m3", "text": "I am planning a trip to Lisbon in June.", "speaker": "Carol", "session_id": "s2", "time": "2023-06-02T09:00:00Z"},
	} {
		var out addOut
		if e := callTool(t, cs, ToolAdd, a, &out); e != "" || !slices.Equal(out.Added, []string{a["id"].(string)}) {
			t.Fatalf("add_memory %v: %s %+v", a["id"], e, out)
		}
	}
	// Stored in the default space.
	if tn, err := mem.Get(ctx, def, "m1"); err != nil || tn.Speaker != "Carol" || tn.Metadata["topic"] != "pets" {
		t.Fatalf("stored turn %+v %v", tn, err)
	}
	var sr searchOut
	if e := callTool(t, cs, ToolSearch, map[string]any{"question": "What is the name of Carol's greyhound?"}, &sr); e != "" {
		t.Fatal(e)
	}
	if !slices.ContainsFunc(sr.Evidence, func(e mcpEvidence) bool { return e.ID == "m1" }) || !strings.Contains(sr.Context, "Biscuit") {
		t.Fatalf("search_memory: %+v", sr)
	}
	if e := callTool(t, cs, ToolSearch, map[string]any{"question": "greyhound Lisbon trip", "session_id": "s2"}, &sr); e != "" {
		t.Fatal(e)
	}
	for _, ev := range sr.Evidence {
		if ev.SessionID != "s2" {
			t.Fatalf("session filter kept %+v", ev)
		}
	}
	var ans askOut
	if e := callTool(t, cs, ToolAsk, map[string]any{"question": "What is the name of Carol's greyhound?"}, &ans); e != "" {
		t.Fatal(e)
	}
	if len(ans.Evidence) == 0 || (wantAnswer && ans.Answer == "") || (!wantAnswer && ans.Note == "") {
		t.Fatalf("ask_memory: %+v", ans)
	}
	var evs eventsOut
	if e := callTool(t, cs, ToolEvents, map[string]any{"with_turns": true}, &evs); e != "" || len(evs.Events) == 0 || len(evs.Events[0].Turns) == 0 {
		t.Fatalf("list_events: %s %+v", e, evs)
	}
	// Profiles: Carol's plan, by name and in the list; none before June.
	var pr profilesOut
	if e := callTool(t, cs, ToolProfiles, map[string]any{"entity": "carol"}, &pr); e != "" || len(pr.Profiles) != 1 || pr.Profiles[0].Entity != "Carol" {
		t.Fatalf("get_profiles carol: %s %+v", e, pr)
	}
	plan := func(p api.Profile) string {
		for _, a := range p.Attributes {
			if a.Name == "plan" && len(a.Values) == 1 && a.Values[0].Current && slices.Equal(a.Values[0].Evidence, []string{"m3"}) {
				return a.Values[0].Value
			}
		}
		return ""
	}
	if got := plan(pr.Profiles[0]); got != "trip to Lisbon" {
		t.Fatalf("get_profiles carol: plan %q in %+v", got, pr.Profiles[0])
	}
	if e := callTool(t, cs, ToolProfiles, map[string]any{"as_of": "2023-05-01"}, &pr); e != "" || len(pr.Profiles) != 2 || plan(pr.Profiles[0]) != "" {
		t.Fatalf("get_profiles as of May: %s %+v", e, pr)
	}

	// Resources: the default space's index, and one event by URI.
	res, err := cs.ListResources(ctx, nil)
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	slices.Sort(uris)
	if err != nil || !slices.Equal(uris, []string{"higmem://events", "higmem://profiles"}) {
		t.Fatalf("resources %+v %v", res, err)
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 8 {
		t.Fatalf("templates %+v %v", tmpls, err)
	}
	// Profiles: the index links each person's resource, which reads as
	// the REST profile does.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "higmem://profiles"})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read profiles: %v", err)
	}
	var pl mcpProfiles
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &pl); err != nil || len(pl.Profiles) != 2 || pl.Profiles[0].Entity != "Carol" ||
		pl.Profiles[0].URI != profileURI(def, "Carol") || plan(pl.Profiles[0].Profile) != "trip to Lisbon" {
		t.Fatalf("profiles resource %s: %v", rr.Contents[0].Text, err)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: strings.Replace(pl.Profiles[0].URI, "Carol", "carol", 1)})
	var one mcpProfile
	if err != nil || json.Unmarshal([]byte(rr.Contents[0].Text), &one) != nil || one.Entity != "Carol" || plan(one.Profile) != "trip to Lisbon" ||
		!slices.Contains(one.Attributes[0].Values[0].Producers, "rules") {
		t.Fatalf("profile resource: %+v %v", one, err)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "higmem://events"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, evs.Events[0].ID) {
		t.Fatalf("read events: %+v %v", rr, err)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: evs.Events[0].URI})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read %s: %v", evs.Events[0].URI, err)
	}
	var oneEv mcpEvent
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &oneEv); err != nil || oneEv.ID != evs.Events[0].ID || len(oneEv.Turns) == 0 {
		t.Fatalf("event resource %s: %v", rr.Contents[0].Text, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: strings.TrimSuffix(evs.Events[0].URI, evs.Events[0].ID) + "e999"}); err == nil {
		t.Fatal("missing event resource read without error")
	}

	// Tool errors are reported to the model, not as protocol failures.
	if e := callTool(t, cs, ToolAdd, map[string]any{"text": "  "}, &addOut{}); !strings.Contains(e, "empty text") {
		t.Fatalf("empty add: %q", e)
	}
	if e := callTool(t, cs, ToolAdd, map[string]any{"id": "m1", "text": "something else"}, &addOut{}); !strings.Contains(e, "conflict") {
		t.Fatalf("conflicting add: %q", e)
	}
	if e := callTool(t, cs, ToolDelete, map[string]any{"turn_id": "nope"}, &deleteOut{}); !strings.Contains(e, "not_found") {
		t.Fatalf("delete missing: %q", e)
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"question": 7}}); err == nil && !r.IsError {
		t.Fatal("wrong argument type accepted")
	}

	var del deleteOut
	if e := callTool(t, cs, ToolDelete, map[string]any{"turn_id": "m1"}, &del); e != "" || del.Deleted != "turn" || del.ID != "m1" || del.UserID != def.UserID {
		t.Fatalf("delete_memory: %s %+v", e, del)
	}
	if _, err := mem.Get(ctx, def, "m1"); err == nil {
		t.Fatal("m1 still stored after delete_memory")
	}
	if e := callTool(t, cs, ToolSearch, map[string]any{"question": "greyhound Biscuit beach"}, &sr); e != "" {
		t.Fatal(e)
	}
	if slices.ContainsFunc(sr.Evidence, func(e mcpEvidence) bool { return e.ID == "m1" }) {
		t.Fatal("deleted turn still found")
	}
}

// TestMCPStdio runs the MCP server over higmem's stdio transport (newline
// delimited JSON on in-process pipes) with the SDK's client.
func TestMCPStdio(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	def := higmem.Space{UserID: "carol", AgentID: "desk"}
	s := New(mem, Options{DefaultSpace: def})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.MCP().Run(ctx, &StdioTransport{Reader: sr, Writer: sw}) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mcpRoundTrip(t, cs, mem, def, false)
	mcpBadInput(t, cs, mem, def)

	// Explicit scope in the arguments overrides the default space, and
	// stdio may use any user.
	var out addOut
	if e := callTool(t, cs, ToolAdd, map[string]any{"text": "for erin", "user_id": "erin"}, &out); e != "" {
		t.Fatal(e)
	}
	if _, err := mem.Get(ctx, higmem.Space{UserID: "erin", AgentID: "desk"}, out.Added[0]); err != nil {
		t.Fatalf("scoped add: %v", err)
	}
	cs.Close()
	cancel()
	<-done
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type bearerTransport struct {
	key  string
	base http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, key string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{key: key, base: http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
}

// TestMCPHTTP runs the MCP server over streamable HTTP at /mcp, behind API
// keys, with an LLM-backed memory so ask_memory writes an answer.
func TestMCPHTTP(t *testing.T) {
	mem := newMem(t, higmem.Options{MemoryModel: llmtest.NewScripted()})
	def := higmem.Space{UserID: "alice"}
	_, ts, _ := start(t, mem, Options{DefaultSpace: def})

	cs, err := connectHTTP(t, ts.URL, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcpRoundTrip(t, cs, mem, def, true)

	// alice's key cannot reach bob's space through any tool or resource.
	for name, args := range map[string]map[string]any{
		ToolAdd:      {"text": "x", "user_id": "bob"},
		ToolSearch:   {"question": "x", "user_id": "bob"},
		ToolAsk:      {"question": "x", "user_id": "bob"},
		ToolEvents:   {"user_id": "bob"},
		ToolProfiles: {"user_id": "bob"},
		ToolDelete:   {"turn_id": "m2", "user_id": "bob"},
	} {
		if e := callTool(t, cs, name, args, &map[string]any{}); !strings.Contains(e, "forbidden") {
			t.Errorf("%s as bob with alice's key: %q", name, e)
		}
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "higmem://users/bob/profiles"}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("reading another user's profiles: %v", err)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "higmem://users/bob/events"}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("bob's events resource with alice's key: %v", err)
	}
	if st, _ := mem.Stats(context.Background(), higmem.Space{UserID: "bob"}); st.Turns != 0 {
		t.Fatalf("bob has %d turns", st.Turns)
	}

	// A bad key cannot connect.
	if _, err := connectHTTP(t, ts.URL, "hgm_wrong"); err == nil {
		t.Fatal("connected with a bad key")
	}
}

// TestMCPSessionBoundToKey checks that an MCP session opened with one key
// cannot be used with another.
func TestMCPSessionBoundToKey(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{DefaultSpace: higmem.Space{UserID: "alice"}})
	post := func(key, session, body string) *http.Response {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(aliceKey, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d session %q", resp.StatusCode, sid)
	}
	resp = post(bobKey, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice's session with bob's key: %d", resp.StatusCode)
	}
}

// mcpBadInput calls every tool and resource with bad arguments: each gets a
// tool error (or a JSON-RPC error with a code, for resources) naming the
// problem without internals, nothing is written, and the session keeps
// serving.
func mcpBadInput(t *testing.T, cs *mcp.ClientSession, mem *higmem.Memory, def higmem.Space) {
	t.Helper()
	ctx := context.Background()
	before, err := mem.Stats(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("u", 300)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolAdd, map[string]any{"text": "  "}, "invalid_input: turn 1: empty text"},
		{ToolAdd, map[string]any{"text": "x", "id": long}, "invalid_request: turn 1 id is longer than 256 bytes"},
		{ToolAdd, map[string]any{"text": "x", "user_id": "bad\x1b"}, "invalid_request: user_id contains control characters"},
		{ToolAdd, map[string]any{"text": 5}, "text"},
		{ToolAdd, map[string]any{"text": "x", "bogus": 1}, "bogus"},
		{ToolSearch, map[string]any{"question": ""}, "invalid_input: question is required"},
		{ToolSearch, map[string]any{"question": "q", "max_evidence": 5000}, "max_evidence is 5000, over the limit of 1000"},
		{ToolSearch, map[string]any{"question": "q", "max_evidence": 1.5}, "max_evidence"},
		{ToolSearch, map[string]any{"question": strings.Repeat("q", 9000)}, "question is 9000 bytes, over the limit of 8192"},
		{ToolAsk, map[string]any{"question": " "}, "question is required"},
		{ToolAsk, map[string]any{"question": "???"}, `question "???" has no words to search for`},
		{ToolAdd, map[string]any{"text": strings.Repeat("w", higmem.DefaultMaxTurnBytes+1)}, fmt.Sprintf("too_large: turn 1: text is %d bytes, over the limit of %d bytes per turn", higmem.DefaultMaxTurnBytes+1, higmem.DefaultMaxTurnBytes)},
		{ToolEvents, map[string]any{"agent_id": long}, "agent_id is longer than 256 bytes"},
		{ToolProfiles, map[string]any{"entity": "Nobody"}, `not_found: profile "Nobody" not found in space`},
		{ToolProfiles, map[string]any{"as_of": "soon"}, "invalid_request: as_of: want an RFC 3339 time"},
		{ToolDelete, map[string]any{"turn_id": ""}, "turn_id is required"},
		{ToolDelete, map[string]any{"turn_id": "nope"}, `not_found: turn "nope" not found in space`},
	} {
		var out any
		e := callTool(t, cs, tc.tool, tc.args, &out)
		if !strings.Contains(e, tc.want) {
			t.Errorf("%s %v: %q, want an error containing %q", tc.tool, tc.args, e, tc.want)
		}
		for _, leak := range []string{"sqlite", "store:", "memstore", "Go struct", "higmem: higmem:"} {
			if strings.Contains(e, leak) {
				t.Errorf("%s %v: error %q leaks %q", tc.tool, tc.args, e, leak)
			}
		}
	}
	for _, tc := range []struct {
		uri  string
		code int64
	}{
		{"higmem://users/" + def.UserID + "/events/nope", rpcResourceNotFound},
		{"higmem://users/" + def.UserID + "/profiles/Nobody", rpcResourceNotFound},
		{"higmem://users/" + long + "/profiles", jsonrpcInvalidParams},
		{"higmem://users/" + long + "/events", jsonrpcInvalidParams},
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != tc.code {
			t.Errorf("resources/read %s: %v, want JSON-RPC code %d", tc.uri, err, tc.code)
		}
	}
	// URIs that match no resource are refused by the SDK itself (the raw
	// code is checked in TestStdioBadInputKeepsServing).
	for _, uri := range []string{"higmem://nothing", "https://example.com/x"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("resources/read %s: %v", uri, err)
		}
	}
	after, err := mem.Stats(ctx, def)
	if err != nil || after != before {
		t.Fatalf("bad tool calls changed the space: %+v → %+v (%v)", before, after, err)
	}
	if tools, err := cs.ListTools(ctx, nil); err != nil || len(tools.Tools) != 6 {
		t.Fatalf("session after bad calls: %v", err)
	}
}

const jsonrpcInvalidParams = jsonrpc.CodeInvalidParams
