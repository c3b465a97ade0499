package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// TestMCPHTTPDefaultsToTheKeysUser: over HTTP, a tool call or a default
// resource that names no user works on the key's user when the key may use
// only one (the server's default user "default" is not the key's); a key
// for every user keeps the server's default space.
func TestMCPHTTPDefaultsToTheKeysUser(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{DefaultSpace: higmem.Space{UserID: "default"}})
	cs, err := connectHTTP(t, ts.URL, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var added addOut
	if e := callTool(t, cs, ToolAdd, map[string]any{"id": "a1", "text": "I adopted a greyhound called Biscuit."}, &added); e != "" {
		t.Fatalf("add_memory without user_id on alice's key: %s", e)
	}
	if _, err := mem.Get(t.Context(), higmem.Space{UserID: "alice"}, "a1"); err != nil {
		t.Fatalf("the turn is not in alice's space: %v", err)
	}
	var found searchOut
	if e := callTool(t, cs, ToolSearch, map[string]any{"question": "What is my greyhound called?"}, &found); e != "" ||
		!slices.ContainsFunc(found.Evidence, func(e mcpEvidence) bool { return e.ID == "a1" }) {
		t.Fatalf("search_memory without user_id: %q %+v", e, found)
	}
	for _, tool := range []string{ToolEvents, ToolProfiles} {
		if e := callTool(t, cs, tool, map[string]any{}, &map[string]any{}); e != "" {
			t.Errorf("%s without user_id: %s", tool, e)
		}
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "higmem://events"})
	if err != nil || len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, "a1") {
		t.Fatalf("higmem://events on alice's key: %v %+v", err, res)
	}
	// An all-users key has no single user: the server's default space.
	admin, err := connectHTTP(t, ts.URL, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if e := callTool(t, admin, ToolAdd, map[string]any{"id": "d1", "text": "for the default space"}, &added); e != "" {
		t.Fatal(e)
	}
	if _, err := mem.Get(t.Context(), higmem.Space{UserID: "default"}, "d1"); err != nil {
		t.Fatalf("the admin's turn is not in the default space: %v", err)
	}
}

// TestStdioAnswersInOrder pipes adds and searches for what each add
// stored, one after the other, without waiting for answers: every search
// finds the turn added just before it, and the answers come in the order
// of the requests.
func TestStdioAnswersInOrder(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	s := New(mem, Options{NoAuth: true, DefaultSpace: higmem.Space{UserID: "alice"}})
	var in strings.Builder
	in.WriteString(initializeLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	const n = 20
	var want []string
	for i := range n {
		city := fmt.Sprintf("Zorbaville%d", i)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"add%d","method":"tools/call","params":{"name":"add_memory","arguments":{"id":"m%d","text":"Next week I fly to %s for the marathon."}}}`+"\n", i, i, city)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"search%d","method":"tools/call","params":{"name":"search_memory","arguments":{"question":"When do I fly to %s?"}}}`+"\n", i, city)
		want = append(want, fmt.Sprintf(`"add%d"`, i), fmt.Sprintf(`"search%d"`, i))
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := s.ServeStdio(ctx, strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range replies(t, out.Bytes()) {
		if string(r.ID) == "1" {
			continue
		}
		got = append(got, string(r.ID))
		if !strings.HasPrefix(string(r.ID), `"search`) {
			continue
		}
		var i int
		fmt.Sscanf(strings.Trim(string(r.ID), `"`), "search%d", &i)
		var res struct {
			StructuredContent searchOut `json:"structuredContent"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.StructuredContent.Evidence, func(e mcpEvidence) bool { return e.ID == fmt.Sprintf("m%d", i) }) {
			t.Errorf("search %d did not find the turn added just before it: %+v", i, res.StructuredContent.Evidence)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("answers in the order\n%v\nwant\n%v", got, want)
	}
}

// TestRESTAddWithoutTimeUsesNow: POST /v1/turns stamps a turn without a
// time with the time of the request, as the CLI, MCP and chat do; a time
// given is kept; resending a stamped turn under its id is a no-op, not a
// conflict.
func TestRESTAddWithoutTimeUsesNow(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{})
	c := api.NewClient(ts.URL, aliceKey, nil)
	ctx := t.Context()
	before := time.Now().Add(-time.Second)
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turn: &api.TurnInput{ID: "n1", Speaker: "alice", Text: "I moved to Lisbon."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{ID: "n2", Speaker: "alice", Text: "I found a flat in Alfama."},
		{ID: "old", Speaker: "alice", Text: "I lived in Porto.", Time: "2020-03-01"},
		{Speaker: "alice", Text: "No id, no time."},
	}}); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)
	turns, err := mem.List(ctx, higmem.Space{UserID: "alice"}, higmem.ListOptions{})
	if err != nil || len(turns) != 4 {
		t.Fatalf("%d turns, %v", len(turns), err)
	}
	for _, tu := range turns {
		if tu.ID == "old" {
			if tu.OccurredAt.Year() != 2020 {
				t.Errorf("a given time was replaced: %v", tu.OccurredAt)
			}
			continue
		}
		if tu.OccurredAt.Before(before) || tu.OccurredAt.After(after) {
			t.Errorf("turn %s without a time: occurred at %v, want the time of the request", tu.ID, tu.OccurredAt)
		}
	}
	time.Sleep(1100 * time.Millisecond) // "now" is another second
	res, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turn: &api.TurnInput{ID: "n1", Speaker: "alice", Text: "I moved to Lisbon."}})
	if err != nil || len(res.Skipped) != 1 {
		t.Fatalf("resending a turn without a time: %+v %v", res, err)
	}
}

// TestRESTOverCapsAre413: every cap of the server (the question, the turns
// of one add, the top-ks) answers 413 too_large, as docs/LIMITS.md says; a
// negative top-k is a plain 400.
func TestRESTOverCapsAre413(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{MaxBatchTurns: 3})
	c := api.NewClient(ts.URL, aliceKey, nil)
	ctx := t.Context()
	turns := make([]api.TurnInput, 4)
	for i := range turns {
		turns[i] = api.TurnInput{Speaker: "alice", Text: fmt.Sprint("turn ", i)}
	}
	_, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: turns})
	if st, code := statusOf(err); st != http.StatusRequestEntityTooLarge || code != api.CodeTooLarge {
		t.Errorf("4 turns over a cap of 3: %d %s %v", st, code, err)
	}
	for name, req := range map[string]api.SearchRequest{
		"question":     {UserID: "alice", Question: strings.Repeat("q", 9000)},
		"k_turn":       {UserID: "alice", Question: "q", KTurn: 5000},
		"k_event":      {UserID: "alice", Question: "q", KEvent: 5000},
		"max_evidence": {UserID: "alice", Question: "q", MaxEvidence: 5000},
	} {
		_, err := c.Search(ctx, req)
		if st, code := statusOf(err); st != http.StatusRequestEntityTooLarge || code != api.CodeTooLarge {
			t.Errorf("%s over its cap: %d %s %v", name, st, code, err)
		}
	}
	_, err = c.Ask(ctx, api.AskRequest{UserID: "alice", Question: strings.Repeat("q", 9000)})
	if st, code := statusOf(err); st != http.StatusRequestEntityTooLarge || code != api.CodeTooLarge {
		t.Errorf("ask over the question cap: %d %s %v", st, code, err)
	}
	_, err = c.Search(ctx, api.SearchRequest{UserID: "alice", Question: "q", KTurn: -1})
	if st, _ := statusOf(err); st != http.StatusBadRequest {
		t.Errorf("k_turn -1: %d %v", st, err)
	}
}

// TestRESTImportSkipsBOM: an export with a UTF-8 byte order mark in front
// imports; one with nothing but the mark and blank lines is refused as
// empty.
func TestRESTImportSkipsBOM(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{})
	c := api.NewClient(ts.URL, aliceKey, nil)
	ctx := t.Context()
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turn: &api.TurnInput{ID: "b1", Speaker: "alice", Text: "I keep bees."}}); err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if err := c.Export(ctx, api.Scope{UserID: "alice"}, &exp); err != nil {
		t.Fatal(err)
	}
	bom := "\xEF\xBB\xBF"
	for _, async := range []bool{false, true} {
		agent := fmt.Sprint("copy-", async)
		body := strings.NewReader(bom + exp.String())
		if async {
			j, err := c.ImportAsync(ctx, api.Scope{UserID: "alice", AgentID: agent}, body)
			if err != nil {
				t.Fatal(err)
			}
			if j, err = c.WaitJob(ctx, api.Scope{UserID: "alice", AgentID: agent}, j.ID, 10*time.Millisecond); err != nil || j.Status != api.JobSucceeded {
				t.Fatalf("async import with a BOM: %+v %v", j, err)
			}
		} else if _, err := c.Import(ctx, api.Scope{UserID: "alice", AgentID: agent}, body); err != nil {
			t.Fatalf("import with a BOM: %v", err)
		}
		if _, err := mem.Get(ctx, higmem.Space{UserID: "alice", AgentID: agent}, "b1"); err != nil {
			t.Fatalf("async %v: %v", async, err)
		}
		_, err := c.Import(ctx, api.Scope{UserID: "alice", AgentID: "empty"}, strings.NewReader(bom+"\n\n"))
		if st, _ := statusOf(err); st != http.StatusBadRequest || !strings.Contains(err.Error(), "empty body") {
			t.Errorf("import of a BOM and blank lines: %v", err)
		}
	}
}

// TestToolsListsEveryTool: Tools, which `higmem mcp --help` names, is what
// tools/list answers.
func TestToolsListsEveryTool(t *testing.T) {
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{})
	cs, err := connectHTTP(t, ts.URL, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(Tools))
	if !slices.Equal(names, want) {
		t.Errorf("tools/list: %v, Tools: %v", names, want)
	}
}
