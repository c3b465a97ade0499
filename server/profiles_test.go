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
	"github.com/higmem/higmem/llm/llmtest"
)

// TestProfilesREST drives GET /v1/profiles[/{entity}] through the Go
// client against a keyed server: current and closed values, as_of, a
// lookup by first name, a deleted turn's facts gone, and another user's
// space refused.
func TestProfilesREST(t *testing.T) {
	ctx := context.Background()
	_, ts, pats := start(t, newMem(t, higmem.Options{}), Options{})
	c := api.NewClient(ts.URL, aliceKey, http.DefaultClient)
	sc := api.Scope{UserID: "alice"}
	_, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{ID: "a1", Speaker: "Ana Silva", Text: "I live in Porto with my dog Max.", Time: "2023-01-10T10:00:00Z"},
		{ID: "a2", Speaker: "Ben", Text: "How is Porto?", Time: "2023-01-10T10:01:00Z"},
		{ID: "a3", Speaker: "Ana Silva", Text: "I moved to Lisbon last week! My sister Rita lives in Faro.", Time: "2023-03-02T09:00:00Z"},
	}})
	if err != nil {
		t.Fatal(err)
	}

	l, err := c.Profiles(ctx, api.ProfilesRequest{Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range l.Profiles {
		names = append(names, p.Entity)
	}
	if !slices.Equal(names, []string{"Ana Silva", "Ben", "Rita"}) {
		t.Fatalf("profiles %v, want speakers then Rita", names)
	}
	home := func(p *api.Profile) []api.ProfileValue {
		for _, a := range p.Attributes {
			if a.Name == "home" {
				return a.Values
			}
		}
		return nil
	}
	p, err := c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	hv := home(p)
	if len(hv) != 2 || hv[0].Value != "Porto" || hv[0].Current || hv[0].ClosedBy != "a3" || !hv[0].ValidTo.Equal(time.Date(2023, 3, 2, 9, 0, 0, 0, time.UTC)) ||
		hv[1].Value != "Lisbon" || !hv[1].Current || !slices.Equal(hv[1].Evidence, []string{"a3"}) || hv[1].RecordedFrom.IsZero() {
		t.Fatalf("home of Ana by first name: %+v", hv)
	}
	p, err = c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "Ana Silva", AsOf: time.Date(2023, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if hv := home(p); len(hv) != 1 || hv[0].Value != "Porto" {
		t.Fatalf("home as of February: %+v", hv)
	}
	rita, err := c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "Rita"})
	if err != nil || rita.Speaker || len(home(rita)) != 1 || home(rita)[0].Value != "Faro" {
		t.Fatalf("Rita: %+v %v", rita, err)
	}

	// Delete-forgets: the move and Rita go with turn a3.
	if _, err := c.DeleteTurn(ctx, sc, "a3"); err != nil {
		t.Fatal(err)
	}
	p, err = c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "Ana Silva"})
	if err != nil {
		t.Fatal(err)
	}
	if hv := home(p); len(hv) != 1 || hv[0].Value != "Porto" || !hv[0].Current {
		t.Fatalf("home after deleting a3: %+v", hv)
	}
	if _, err := c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "Rita"}); err == nil {
		t.Fatal("Rita still has a profile after the only turn about her was deleted")
	} else if code, _ := statusOf(err); code != http.StatusNotFound {
		t.Fatalf("Rita after delete: %v", err)
	}

	// Keys: alice may not read bob's profiles.
	if _, err := c.Profiles(ctx, api.ProfilesRequest{Scope: api.Scope{UserID: "bob"}}); err == nil {
		t.Fatal("alice read bob's profiles")
	} else if code, _ := statusOf(err); code != http.StatusForbidden {
		t.Fatalf("bob's profiles: %v", err)
	}
	for _, pat := range []string{"GET /v1/profiles", "GET /v1/profiles/{entity}"} {
		if pats.seen[pat] == 0 {
			t.Errorf("%s was not served", pat)
		}
	}
}

// TestProfilesRESTModel: with a memory model (default mode, the scripted
// fake), REST shows the values the model stated with their producers, a
// rules' value closed by a turn only the model read, and its closer; an
// export carries the records and an import into another space shows the
// same profile.
func TestProfilesRESTModel(t *testing.T) {
	ctx := context.Background()
	_, ts, _ := start(t, newMem(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: llmtest.NewScripted()}), Options{})
	c := api.NewClient(ts.URL, aliceKey, http.DefaultClient)
	sc := api.Scope{UserID: "alice"}
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{ID: "j1", Speaker: "Jo", Text: "I live in Leeds.", Time: "2023-01-05T08:00:00Z"},
		{ID: "j2", Speaker: "Jo", Text: "The view from my new flat in York is lovely.", Time: "2023-04-05T08:00:00Z"},
	}}); err != nil {
		t.Fatal(err)
	}
	check := func(sc api.Scope) {
		t.Helper()
		p, err := c.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: "Jo"})
		if err != nil {
			t.Fatal(err)
		}
		var hv []api.ProfileValue
		for _, a := range p.Attributes {
			if a.Name == "home" {
				hv = a.Values
			}
		}
		if len(hv) != 2 || hv[0].Value != "Leeds" || hv[0].ClosedBy != "j2" || !strings.HasPrefix(hv[0].ClosedByProducer, "llm:default:") ||
			!slices.Contains(hv[0].Producers, "rules") || hv[1].Value != "York" || !hv[1].Current ||
			len(hv[1].Producers) != 1 || !strings.HasPrefix(hv[1].Producers[0], "llm:default:") {
			t.Fatalf("%s: Jo's home %+v", sc.UserID, hv)
		}
	}
	check(sc)
	var exp bytes.Buffer
	if err := c.Export(ctx, sc, &exp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exp.String(), `"kind":"profile"`) {
		t.Fatalf("the export holds no profile record:\n%s", exp.String())
	}
	copyScope := api.Scope{UserID: "alice", AgentID: "copy"}
	res, err := c.Import(ctx, copyScope, &exp)
	if err != nil || res.Profiles == 0 {
		t.Fatalf("import: %+v %v", res, err)
	}
	check(copyScope)
}
