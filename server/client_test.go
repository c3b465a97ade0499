package server

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

func conversation() []api.TurnInput {
	travel := map[string]string{"topic": "travel", "lang": "en"}
	pets := map[string]string{"topic": "pets", "lang": "fr", "note": "visa-free dog"}
	return []api.TurnInput{
		{ID: "s1:1", SessionID: "s1", Speaker: "Carol", Text: "I am planning a trip to Lisbon in June.", Time: "2023-05-08T10:00:00Z", Metadata: travel},
		{ID: "s1:2", SessionID: "s1", Speaker: "Dan", Text: "Lisbon is lovely; try the pastel de nata by the river.", Time: "2023-05-08T10:01:00Z", Metadata: travel},
		{ID: "s2:1", SessionID: "s2", Speaker: "Carol", Text: "My greyhound Biscuit loves running on the beach.", Time: "2023-06-01T09:00:00Z", Metadata: pets},
		{ID: "s2:2", SessionID: "s2", Speaker: "Dan", Text: "Biscuit is a great name for a greyhound.", Time: "2023-06-01T09:02:00Z", Metadata: pets},
	}
}

func ids(ts []api.Turn) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// TestClientEveryRoute runs the real client against the real handler for
// every REST route, and checks that every route of the table was served.
func TestClientEveryRoute(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, higmem.Options{})
	_, ts, pats := start(t, mem, Options{Version: "test-1"})
	c := api.NewClient(ts.URL, adminKey, ts.Client())
	carol := api.Scope{UserID: "carol"}

	h, err := c.Health(ctx)
	if err != nil || h.Status != "ok" {
		t.Fatalf("health %+v %v", h, err)
	}
	v, err := c.Version(ctx)
	if err != nil || v.Version != "test-1" || v.API != "v1" || v.Mode != "offline" || !v.Auth || v.Embedder == "" || v.ExportVersion != higmem.ExportVersion {
		t.Fatalf("version %+v %v", v, err)
	}
	k, err := c.Key(ctx)
	if err != nil || k.Name != "admin" || !slices.Equal(k.Users, []string{api.AllUsers}) || !k.Auth {
		t.Fatalf("key %+v %v", k, err)
	}
	if k, err := api.NewClient(ts.URL, aliceKey, ts.Client()).Key(ctx); err != nil || k.Name != "alice-key" || !slices.Equal(k.Users, []string{"alice"}) {
		t.Fatalf("alice's key %+v %v", k, err)
	}
	doc, err := c.OpenAPI(ctx)
	if err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v", err)
	}

	// Single add, then a batch; re-adding is a no-op.
	conv := conversation()
	res, err := c.Add(ctx, api.AddRequest{UserID: "carol", Turn: &conv[0]})
	if err != nil || !slices.Equal(res.Added, []string{"s1:1"}) {
		t.Fatalf("add single: %+v %v", res, err)
	}
	res, err = c.Add(ctx, api.AddRequest{UserID: "carol", Turns: conv})
	if err != nil || !slices.Equal(res.Added, []string{"s1:2", "s2:1", "s2:2"}) || !slices.Equal(res.Skipped, []string{"s1:1"}) {
		t.Fatalf("add batch: %+v %v", res, err)
	}

	// Async add of a larger batch, polled to completion.
	var more []api.TurnInput
	for i := range 30 {
		more = append(more, api.TurnInput{SessionID: "s3", Speaker: "Carol", Text: "Note number " + strings.Repeat("x", i+1) + " about gardening tomatoes.",
			Metadata: map[string]string{"topic": "garden"}})
	}
	job, err := c.AddAsync(ctx, api.AddRequest{UserID: "carol", Turns: more})
	if err != nil || job.ID == "" || job.Turns != 30 || job.Kind != "add" {
		t.Fatalf("add async: %+v %v", job, err)
	}
	job, err = c.WaitJob(ctx, carol, job.ID, 5*time.Millisecond)
	if err != nil || job.Status != api.JobSucceeded || job.Add == nil || len(job.Add.Added) != 30 || job.FinishedAt.IsZero() {
		t.Fatalf("job: %+v %v", job, err)
	}

	// List: all, by session, by metadata, paged.
	l, err := c.Turns(ctx, api.ListTurnsRequest{Scope: carol, Limit: 1000})
	if err != nil || len(l.Turns) != 34 || l.NextAfterSeq != 0 {
		t.Fatalf("list all: %d %v", len(l.Turns), err)
	}
	l, err = c.Turns(ctx, api.ListTurnsRequest{Scope: carol, SessionID: "s2"})
	if err != nil || !slices.Equal(ids(l.Turns), []string{"s2:1", "s2:2"}) {
		t.Fatalf("list session: %v %v", ids(l.Turns), err)
	}
	for _, tc := range []struct {
		f    api.Filters
		want []string
	}{
		{api.Filters{"topic": api.Eq("travel")}, []string{"s1:1", "s1:2"}},
		{api.Filters{"lang": api.Ne("en"), "topic": api.In("travel", "pets")}, []string{"s2:1", "s2:2"}},
		{api.Filters{"note": api.Contains("visa")}, []string{"s2:1", "s2:2"}},
		{api.Filters{"topic": api.In("nope")}, []string{}},
	} {
		l, err = c.Turns(ctx, api.ListTurnsRequest{Scope: carol, Filters: tc.f})
		if err != nil || !slices.Equal(ids(l.Turns), tc.want) {
			t.Fatalf("list filters %v: %v %v", tc.f, ids(l.Turns), err)
		}
	}
	var paged []string
	var after int64
	for pages := 0; ; pages++ {
		l, err = c.Turns(ctx, api.ListTurnsRequest{Scope: carol, Limit: 3, AfterSeq: after, Filters: api.Filters{"topic": api.Ne("garden")}})
		if err != nil || pages > 5 {
			t.Fatalf("paging: %v after %d pages", err, pages)
		}
		paged = append(paged, ids(l.Turns)...)
		if l.NextAfterSeq == 0 {
			break
		}
		after = l.NextAfterSeq
	}
	if !slices.Equal(paged, []string{"s1:1", "s1:2", "s2:1", "s2:2"}) {
		t.Fatalf("paged %v", paged)
	}

	// Get, including an id that needs escaping.
	odd := api.TurnInput{ID: "odd/id with space?&#", Speaker: "Carol", Text: "An id with a slash and a question mark."}
	if _, err := c.Add(ctx, api.AddRequest{UserID: "carol", Turn: &odd}); err != nil {
		t.Fatal(err)
	}
	tn, err := c.Turn(ctx, carol, odd.ID)
	if err != nil || tn.ID != odd.ID || tn.Text != odd.Text {
		t.Fatalf("get odd id: %+v %v", tn, err)
	}
	tn, err = c.Turn(ctx, carol, "s2:1")
	if err != nil || tn.SessionID != "s2" || tn.Metadata["topic"] != "pets" || tn.OccurredAt.IsZero() {
		t.Fatalf("get: %+v %v", tn, err)
	}

	// Search with the trace, and with session/metadata filters.
	sr, err := c.Search(ctx, api.SearchRequest{UserID: "carol", Question: "What is the name of Carol's greyhound?"})
	if err != nil || !slices.Contains(sr.IDs(), "s2:1") || len(sr.Trace.Stages) == 0 || sr.Context == "" {
		t.Fatalf("search: %v %v", sr.IDs(), err)
	}
	sr, err = c.Search(ctx, api.SearchRequest{UserID: "carol", Question: "Lisbon greyhound Biscuit trip", SessionID: "s1"})
	if err != nil || len(sr.Evidence) == 0 {
		t.Fatalf("search session: %v %v", sr.IDs(), err)
	}
	for _, e := range sr.Evidence {
		if e.Turn.SessionID != "s1" || !strings.Contains(sr.Context, "["+e.Turn.ID+"]") {
			t.Fatalf("search session filter kept %s (session %q)", e.Turn.ID, e.Turn.SessionID)
		}
	}
	sr, err = c.Search(ctx, api.SearchRequest{UserID: "carol", Question: "Lisbon greyhound Biscuit trip", Filters: api.Filters{"topic": api.Eq("pets")}})
	if err != nil || len(sr.Evidence) == 0 {
		t.Fatalf("search filters: %v %v", sr.IDs(), err)
	}
	for _, e := range sr.Evidence {
		if e.Turn.Metadata["topic"] != "pets" || strings.Contains(sr.Context, "Lisbon") {
			t.Fatalf("search metadata filter kept %s", e.Turn.ID)
		}
	}

	// Ask: offline, so evidence and a note.
	ans, err := c.Ask(ctx, api.AskRequest{UserID: "carol", Question: "Where is Carol travelling in June?", MaxEvidence: 3})
	if err != nil || ans.Answer != "" || ans.Note == "" || !slices.Contains(ans.IDs(), "s1:1") || len(ans.Evidence) > 3 {
		t.Fatalf("ask: %+v %v", ans, err)
	}

	// Events and history.
	el, err := c.Events(ctx, carol)
	if err != nil || len(el.Events) == 0 {
		t.Fatalf("events: %v", err)
	}
	ev, err := c.Event(ctx, carol, el.Events[0].Event.ID)
	if err != nil || ev.Event.ID != el.Events[0].Event.ID || len(ev.Turns) == 0 || len(ev.Turns) != len(ev.Event.TurnIDs) {
		t.Fatalf("event: %+v %v", ev, err)
	}
	st, err := c.Stats(ctx, carol)
	if err != nil || st.Turns != 35 || st.Events != len(el.Events) {
		t.Fatalf("stats %+v %v", st, err)
	}

	// Profiles: Carol's plan, from turn s1:1.
	pl, err := c.Profiles(ctx, api.ProfilesRequest{Scope: carol})
	if err != nil || len(pl.Profiles) == 0 || pl.Profiles[0].Entity != "Carol" {
		t.Fatalf("profiles %+v %v", pl, err)
	}
	pc, err := c.Profile(ctx, api.ProfilesRequest{Scope: carol, Entity: "Carol", AsOf: time.Date(2023, 5, 9, 0, 0, 0, 0, time.UTC)})
	if err != nil || len(pc.Attributes) != 1 || pc.Attributes[0].Name != "plan" || pc.Attributes[0].Values[0].Value != "trip to Lisbon" ||
		!slices.Equal(pc.Attributes[0].Values[0].Evidence, []string{"s1:1"}) {
		t.Fatalf("profile of Carol on 9 May: %+v %v", pc, err)
	}

	// Delete a turn: it is gone, and the deletion is in the history.
	d, err := c.DeleteTurn(ctx, carol, "s1:2")
	if err != nil || d.Deleted != "turn" || d.ID != "s1:2" {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if _, err := c.Turn(ctx, carol, "s1:2"); !api.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("get deleted turn: %v", err)
	}
	hl, err := c.History(ctx, api.HistoryRequest{Scope: carol, Kind: "turn", ID: "s1:2"})
	if err != nil || len(hl.Changes) != 1 || hl.Changes[0].Action != "delete" {
		t.Fatalf("history: %+v %v", hl, err)
	}
	hl, err = c.History(ctx, api.HistoryRequest{Scope: carol, Kind: "event"})
	if err != nil || len(hl.Changes) == 0 {
		t.Fatalf("event history: %+v %v", hl, err)
	}

	// Export, import into another space (sync and async).
	var exp bytes.Buffer
	if err := c.Export(ctx, carol, &exp); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(exp.String(), `"kind":"turn"`); n != 34 {
		t.Fatalf("export has %d turns", n)
	}
	imp, err := c.Import(ctx, api.Scope{UserID: "carol", AgentID: "copy"}, bytes.NewReader(exp.Bytes()))
	if err != nil || imp.Turns != 34 || imp.Events != len(el.Events) {
		t.Fatalf("import: %+v %v", imp, err)
	}
	copyScope := api.Scope{UserID: "carol", AgentID: "copy2"}
	job, err = c.ImportAsync(ctx, copyScope, bytes.NewReader(exp.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	job, err = c.WaitJob(ctx, copyScope, job.ID, 5*time.Millisecond)
	if err != nil || job.Status != api.JobSucceeded || job.Import == nil || job.Import.Turns != 34 {
		t.Fatalf("import job: %+v %v", job, err)
	}
	tn, err = c.Turn(ctx, copyScope, "s2:1")
	if err != nil || tn.Text != conv[2].Text {
		t.Fatalf("imported turn: %+v %v", tn, err)
	}

	// Delete the whole space: nothing is left, other spaces are untouched.
	d, err = c.DeleteSpace(ctx, carol)
	if err != nil || d.Deleted != "space" || d.UserID != "carol" {
		t.Fatalf("delete space: %+v %v", d, err)
	}
	st, err = c.Stats(ctx, carol)
	if err != nil || st.Turns != 0 || st.Events != 0 {
		t.Fatalf("stats after delete: %+v %v", st, err)
	}
	if el, err := c.Events(ctx, carol); err != nil || len(el.Events) != 0 {
		t.Fatalf("events after delete: %v", err)
	}
	if hl, err := c.History(ctx, api.HistoryRequest{Scope: carol}); err != nil || len(hl.Changes) != 0 {
		t.Fatalf("history after delete: %+v %v", hl, err)
	}
	if st, err := c.Stats(ctx, copyScope); err != nil || st.Turns != 34 {
		t.Fatalf("copy after delete: %+v %v", st, err)
	}

	// Every route of the table was exercised through the client.
	s := New(mem, Options{NoAuth: true})
	for _, rt := range s.restRoutes() {
		if rt.path == "/v1/chat/completions" || rt.path == "/v1/models" {
			continue // OpenAI's wire format, for OpenAI clients: chat_test.go drives them with the official SDK
		}
		if pats.seen[rt.method+" "+rt.path] == 0 {
			t.Errorf("route %s %s not exercised by the client", rt.method, rt.path)
		}
	}
}

func TestClientStatusErrors(t *testing.T) {
	ctx := context.Background()
	_, ts, _ := start(t, newMem(t, higmem.Options{}), Options{})
	c := api.NewClient(ts.URL, aliceKey, nil)
	_, err := c.Turn(ctx, api.Scope{UserID: "alice"}, "nope")
	se, ok := err.(*api.StatusError)
	if !ok || se.StatusCode != 404 || se.Code != api.CodeNotFound || !strings.Contains(se.Message, "nope") {
		t.Fatalf("err %#v", err)
	}
	_, err = c.Stats(ctx, api.Scope{UserID: "bob"})
	if code, name := statusOf(err); code != 403 || name != api.CodeForbidden {
		t.Fatalf("forbidden: %v", err)
	}
	_, err = api.NewClient(ts.URL, "hgm_wrong", nil).Stats(ctx, api.Scope{UserID: "alice"})
	if code, name := statusOf(err); code != 401 || name != api.CodeUnauthorized {
		t.Fatalf("bad key: %v", err)
	}
	// A non-higmem error body still yields a StatusError.
	plain := httptestPlain(t)
	_, err = api.NewClient(plain, "", nil).Health(ctx)
	if code, name := statusOf(err); code != 502 || name != "" || !strings.Contains(err.Error(), "bad gateway") {
		t.Fatalf("plain error: %v", err)
	}
}
