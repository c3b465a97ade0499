package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// tenantTurns returns turns whose text carries a marker unique to the
// tenant, with ids shared across tenants ("t1"...) and ids only this
// tenant has (prefix-only).
func tenantTurns(marker, prefix string) []api.TurnInput {
	return []api.TurnInput{
		{ID: "t1", SessionID: "s1", Speaker: "me", Text: marker + " my greyhound is called Biscuit and loves the beach", Metadata: map[string]string{"m": marker}},
		{ID: "t2", SessionID: "s1", Speaker: "me", Text: marker + " I am planning a trip to Lisbon in June"},
		{ID: prefix + "-only", SessionID: "s2", Speaker: "me", Text: marker + " my password hint is the name of my first school"},
	}
}

type rawResp struct {
	desc   string
	status int
	body   string
}

// reads sends every read request for scope sc with key, naming turn ids,
// event ids and job ids that may belong to other tenants.
func reads(t *testing.T, ts string, key string, sc api.Scope, turnIDs, eventIDs, jobIDs []string) []rawResp {
	t.Helper()
	q := url.Values{"user_id": {sc.UserID}}
	if sc.AgentID != "" {
		q.Set("agent_id", sc.AgentID)
	}
	qs := "?" + q.Encode()
	type req struct{ method, path, body string }
	var rs []req
	for _, p := range []string{"/v1/turns", "/v1/events", "/v1/profiles", "/v1/history", "/v1/stats", "/v1/export"} {
		rs = append(rs, req{"GET", p + qs, ""})
	}
	for _, id := range turnIDs {
		rs = append(rs, req{"GET", "/v1/turns/" + url.PathEscape(id) + qs, ""})
		rs = append(rs, req{"GET", "/v1/history" + qs + "&id=" + url.QueryEscape(id), ""})
	}
	for _, id := range eventIDs {
		rs = append(rs, req{"GET", "/v1/events/" + url.PathEscape(id) + qs, ""})
	}
	for _, id := range jobIDs {
		rs = append(rs, req{"GET", "/v1/jobs/" + url.PathEscape(id) + qs, ""})
	}
	scope := `"user_id":"` + sc.UserID + `","agent_id":"` + sc.AgentID + `"`
	for _, question := range []string{"greyhound Biscuit beach", "password hint first school", "BRAVO ALPHA XRAY secret", "Lisbon trip June"} {
		rs = append(rs, req{"POST", "/v1/search", `{` + scope + `,"question":"` + question + `","k_turn":50,"k_event":50}`})
		rs = append(rs, req{"POST", "/v1/ask", `{` + scope + `,"question":"` + question + `"}`})
	}
	var out []rawResp
	for _, r := range rs {
		hr, _ := http.NewRequest(r.method, ts+r.path, strings.NewReader(r.body))
		hr.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		out = append(out, rawResp{desc: r.method + " " + r.path + " " + r.body, status: resp.StatusCode, body: string(b)})
	}
	return out
}

// TestCrossTenantIsolation proves that no read route leaks another
// tenant's data: other users' spaces are refused (403), and ids from other
// spaces behave as missing (404), for keys restricted to one user and for
// an all-users key reading one space.
func TestCrossTenantIsolation(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, higmem.Options{})
	_, ts, _ := start(t, mem, Options{})
	admin := api.NewClient(ts.URL, adminKey, nil)

	tenants := []struct {
		scope  api.Scope
		marker string
		prefix string
	}{
		{api.Scope{UserID: "alice"}, "ALPHASECRET", "alice"},
		{api.Scope{UserID: "bob"}, "BRAVOSECRET", "bob"},
		{api.Scope{UserID: "bob", AgentID: "x"}, "XRAYSECRET", "bobx"},
	}
	var allTurnIDs, allJobIDs []string
	for _, tn := range tenants {
		if _, err := admin.Add(ctx, api.AddRequest{UserID: tn.scope.UserID, AgentID: tn.scope.AgentID, Turns: tenantTurns(tn.marker, tn.prefix)}); err != nil {
			t.Fatal(err)
		}
		j, err := admin.AddAsync(ctx, api.AddRequest{UserID: tn.scope.UserID, AgentID: tn.scope.AgentID,
			Turn: &api.TurnInput{ID: tn.prefix + "-async", Speaker: "me", Text: tn.marker + " added by a job"}})
		if err != nil {
			t.Fatal(err)
		}
		if j, err = admin.WaitJob(ctx, tn.scope, j.ID, time.Millisecond); err != nil || j.Status != api.JobSucceeded {
			t.Fatalf("job %+v %v", j, err)
		}
		allJobIDs = append(allJobIDs, j.ID)
		allTurnIDs = append(allTurnIDs, "t1", "t2", tn.prefix+"-only", tn.prefix+"-async")
	}
	eventIDs := []string{}
	for _, tn := range tenants {
		el, err := admin.Events(ctx, tn.scope)
		if err != nil || len(el.Events) == 0 {
			t.Fatalf("events of %v: %v", tn.scope, err)
		}
		for _, e := range el.Events {
			eventIDs = append(eventIDs, e.Event.ID)
		}
	}

	keys := map[string]string{"alice": aliceKey, "bob": bobKey}
	leaks, checked := 0, 0
	for _, tn := range tenants {
		// The tenant's own key and the admin key, reading this tenant's
		// space with every id of every tenant.
		for _, key := range []string{keys[tn.scope.UserID], adminKey} {
			for _, r := range reads(t, ts.URL, key, tn.scope, allTurnIDs, eventIDs, allJobIDs) {
				checked++
				if r.status >= 500 {
					t.Errorf("%s: status %d", r.desc, r.status)
				}
				for _, other := range tenants {
					// Another tenant's text anywhere, or its ids in a
					// successful response (errors echo the id asked for).
					if other.marker != tn.marker && (strings.Contains(r.body, other.marker) ||
						(r.status < 300 && strings.Contains(r.body, `"`+other.prefix+`-`))) {
						leaks++
						t.Errorf("LEAK of %s into %v via %s: %.300s", other.marker, tn.scope, r.desc, r.body)
					}
				}
				// Own data is really served (the check above is not vacuous).
				if strings.HasPrefix(r.desc, "GET /v1/export") && !strings.Contains(r.body, tn.marker) {
					t.Errorf("%s: own data missing", r.desc)
				}
			}
			// Ids of other tenants are missing here.
			for _, other := range tenants {
				if other.prefix == tn.prefix {
					continue
				}
				c := api.NewClient(ts.URL, key, nil)
				if _, err := c.Turn(ctx, tn.scope, other.prefix+"-only"); !api.IsStatus(err, 404) {
					t.Errorf("%v reading %s-only: %v", tn.scope, other.prefix, err)
				}
			}
		}
		// Another user's key is refused on every route of this space.
		for user, key := range keys {
			if user == tn.scope.UserID {
				continue
			}
			for _, r := range reads(t, ts.URL, key, tn.scope, []string{"t1"}, eventIDs[:1], allJobIDs[:1]) {
				checked++
				if r.status != http.StatusForbidden || !strings.Contains(r.body, api.CodeForbidden) {
					leaks++
					t.Errorf("%s with %s's key: %d %.200s", r.desc, user, r.status, r.body)
				}
			}
		}
	}
	// Jobs are only visible in their own space.
	for i, tn := range tenants {
		for j, id := range allJobIDs {
			_, err := admin.Job(ctx, tn.scope, id)
			if (i == j) != (err == nil) {
				t.Errorf("job %d in space %v: %v", j, tn.scope, err)
			}
		}
	}
	t.Logf("%d responses checked, %d leaks", checked, leaks)
	if leaks != 0 {
		t.Fatalf("%d leaks", leaks)
	}
}
