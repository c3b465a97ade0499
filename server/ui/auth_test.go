package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/ui"
)

func TestLogin(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client(t)

	resp, _ := c.get(demoPath("space"))
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/login?next=") {
		t.Fatalf("page without login: %s, Location %q; want a redirect to the login form", resp.Status, resp.Header.Get("Location"))
	}
	tok := c.csrf("/ui/login")

	// A wrong key is refused and opens no session.
	resp, body := c.post("/ui/login", url.Values{"csrf": {tok}, "key": {"hgm_wrong"}})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "unknown API key") {
		t.Errorf("wrong key: %s, want 401 naming the problem\n%s", resp.Status, body)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "higmem_session" {
			t.Errorf("wrong key got a session cookie")
		}
	}
	if resp, _ := c.get("/ui/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after a wrong key the pages answer %s, want a redirect to login", resp.Status)
	}

	// The right key without the form's token is refused (login CSRF).
	resp, _ = c.post("/ui/login", url.Values{"key": {e.keys["priya"]}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("login without a CSRF token: %s, want 403", resp.Status)
	}

	// Redirects after login stay on this site.
	resp, _ = c.post("/ui/login", url.Values{"csrf": {tok}, "key": {e.keys["priya"]}, "next": {"//evil.example/ui/"}})
	if loc := resp.Header.Get("Location"); loc != "/ui/" {
		t.Errorf("next=//evil.example: redirected to %q, want /ui/", loc)
	}

	resp, _ = c.post("/ui/login", url.Values{"csrf": {tok}, "key": {e.keys["priya"]}, "next": {demoPath("space")}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != demoPath("space") {
		t.Fatalf("login: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	var sess *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "higmem_session" {
			sess = ck
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/ui/" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path /ui/", sess)
	}
	if strings.Contains(sess.Value, e.keys["priya"]) {
		t.Errorf("the cookie carries the key itself")
	}
	if resp, body := c.get(demoPath("space")); resp.StatusCode != 200 || !strings.Contains(body, "Timeline") {
		t.Errorf("timeline after login: %s", resp.Status)
	}
	// priya's key sees priya's spaces only.
	resp, body = c.get("/ui/space?user=bob")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `may not use user &#34;bob&#34;`) {
		t.Errorf("another user's space: %s, want 403\n%s", resp.Status, body)
	}

	// Logging out ends the session on the server: the old cookie no
	// longer works.
	tok = csrfRE.FindStringSubmatch(body)[1]
	resp, _ = c.post("/ui/logout", url.Values{"csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %s", resp.Status)
	}
	replay := e.client(t)
	u, _ := url.Parse(e.ts.URL + "/ui/")
	replay.hc.Jar.SetCookies(u, []*http.Cookie{{Name: "higmem_session", Value: sess.Value, Path: "/ui/"}})
	if resp, _ := replay.get("/ui/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("old session cookie after logout: %s, want a redirect to login", resp.Status)
	}
}

func TestNoAuthNeedsNoLogin(t *testing.T) {
	e := newEnv(t, envOptions{noAuth: true})
	c := e.client(t)
	resp, body := c.get("/ui/")
	if resp.StatusCode != 200 || !strings.Contains(body, "priya") || strings.Contains(body, "Log out") {
		t.Fatalf("no-auth spaces page: %s\n%s", resp.Status, body)
	}
	// Only loopback names are answered, as for the REST routes.
	req, _ := http.NewRequest("GET", e.ts.URL+"/ui/", nil)
	req.Host = "rebound.example:80"
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("no-auth page for Host rebound.example: %s, want 403", r.Status)
	}
	// Writes still need the form's token.
	resp, _ = c.post("/ui/turn/delete", url.Values{"user": {demo.UserID}, "agent": {demo.AgentID}, "id": {"S1:1"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("delete without token on a no-auth server: %s, want 403", resp.Status)
	}
}

func TestDeleteNeedsCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client(t)
	c.login(e.keys["admin"])
	ctx := context.Background()
	form := url.Values{"user": {demo.UserID}, "agent": {demo.AgentID}, "id": {"S2:1"}}
	for _, tok := range []string{"", strings.Repeat("0", 64)} {
		f := url.Values{"csrf": {tok}}
		for k, v := range form {
			f[k] = v
		}
		resp, _ := c.post("/ui/turn/delete", f)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("delete with token %q: %s, want 403", tok, resp.Status)
		}
	}
	// Another browser's token does not work either.
	other := e.client(t)
	other.login(e.keys["admin"])
	form.Set("csrf", other.csrf(demoPath("turn", "id", "S2:1")))
	if resp, _ := c.post("/ui/turn/delete", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("delete with another session's token: %s, want 403", resp.Status)
	}
	// A cross-site form post is refused before the token is looked at.
	req, _ := http.NewRequest("POST", e.ts.URL+"/ui/turn/delete", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := c.hc.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site post: %v %v, want 403", resp.Status, err)
	}
	if _, err := e.mem.Get(ctx, demo, "S2:1"); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}

	page := demoPath("turn", "id", "S2:1")
	_, body := c.get(page)
	if !strings.Contains(body, "Event <a") {
		t.Errorf("the confirmation names no event the delete changes:\n%s", body)
	}
	form.Set("csrf", csrfRE.FindStringSubmatch(body)[1])
	resp, _ := c.post("/ui/turn/delete", form)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %s", resp.Status)
	}
	if _, err := e.mem.Get(ctx, demo, "S2:1"); err == nil {
		t.Fatalf("the turn is still stored")
	}
	_, body = c.get(resp.Header.Get("Location"))
	if !strings.Contains(body, "<strong>S2:1</strong> was deleted") || !strings.Contains(body, "33</strong> turns") {
		t.Errorf("timeline after delete does not say so or still counts 34 turns")
	}
	if _, body := c.get(demoPath("turns", "session", "2")); strings.Contains(body, "turn S2:1<") {
		t.Errorf("turn list still shows the deleted turn")
	}
}

// Hostile text in turns, speakers, metadata and event titles, summaries
// and facts renders as text on every page.
func TestStoredTextIsEscaped(t *testing.T) {
	ctx := context.Background()
	const script = `<script>window.pwned=1</script>`
	const img = `<img src=x onerror="window.pwned=2">`
	m, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModeOffline})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	evil := higmem.Space{UserID: "evil", AgentID: "a"}
	_, err = m.Add(ctx, evil, []higmem.TurnInput{
		{ID: "x1", SessionID: `s"><b>1`, Speaker: img, Text: "hello " + script + " pottery class", Time: "2024-03-02T10:00:00Z", Metadata: map[string]string{"k<i>": `v"'<u>`}},
		{ID: `x2"><svg onload=alert(1)>`, SessionID: `s"><b>1`, Speaker: "Tom</td>", Text: "<h1>big</h1> pottery bowl", Time: "2024-03-02T10:01:00Z"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Event titles, summaries and facts from a model could hold HTML too:
	// rewrite the export's events and import them into another space.
	var exp bytes.Buffer
	if err := m.Export(ctx, evil, &exp); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(exp.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if ev, ok := rec["event"].(map[string]any); ok {
			ev["title"] = "Title " + script
			ev["summary"] = "Summary " + img
			ev["facts"] = []any{map[string]any{"fact": "Fact " + script, "turn_id": "x1", "time": "<b>t</b>"}}
			ev["entities"] = []any{img}
		}
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b))
	}
	sp := higmem.Space{UserID: "evil", AgentID: "b"}
	if _, err := m.Import(ctx, sp, strings.NewReader(strings.Join(lines, "\n")+"\n")); err != nil {
		t.Fatal(err)
	}
	evs, err := m.Events(ctx, sp)
	if err != nil || len(evs) == 0 || !strings.Contains(evs[0].Event.Title, "<script>") {
		t.Fatalf("imported events: %v %v", evs, err)
	}
	e := newEnv(t, envOptions{mem: m})
	c := e.client(t)
	c.login(e.keys["admin"])
	q := func(page string, kv ...string) string {
		v := url.Values{"user": {sp.UserID}, "agent": {sp.AgentID}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "/ui/" + page + "?" + v.Encode()
	}
	for _, path := range []string{
		"/ui/", q("space"), q("event", "id", evs[0].Event.ID), q("turns"), q("turns", "q", "pottery"),
		q("turn", "id", "x1"), q("turn", "id", `x2"><svg onload=alert(1)>`), q("ask", "q", "pottery "+script),
		"/ui/space?user=" + url.QueryEscape(script),
	} {
		resp, body := c.get(path)
		if resp.StatusCode >= 500 {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
		for _, bad := range []string{"<script", "<img", "<svg onload", "<h1>big", "<b>", "<u>", "<i>", "Tom</td>", "onerror=\""} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s: %q unescaped in the page", path, bad)
			}
		}
		if path != "/ui/" && !strings.Contains(body, "&lt;") {
			t.Errorf("GET %s: no escaped text at all (is the hostile text shown?)", path)
		}
	}
	_, body := c.get(q("event", "id", evs[0].Event.ID))
	for _, want := range []string{"Title &lt;script&gt;window.pwned=1&lt;/script&gt;", "Summary &lt;img src=x onerror=&#34;window.pwned=2&#34;&gt;", "Fact &lt;script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("event page: no %q", want)
		}
	}
}

// keySource is a KeySource whose keys a test changes.
type keySource struct {
	mu   sync.Mutex
	keys *server.Keys
}

func (s *keySource) LoadKeys(context.Context) (*server.Keys, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys, nil
}

func (s *keySource) set(ks *server.Keys) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = ks
}

// A key revoked at its source ends the logins made with it as soon as the
// server reloads its keys, as it ends REST access.
func TestRevokedKeyEndsLogin(t *testing.T) {
	base := newEnv(t, envOptions{})
	secret, k, err := server.NewKey("laptop", []string{"priya"})
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := server.NewKeys([]server.Key{k})
	src := &keySource{keys: ks}
	srv := server.New(base.mem, server.Options{KeySource: src, KeyRefresh: time.Hour})
	ui.Mount(srv, ui.Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Shutdown(context.Background())
	e := &env{mem: base.mem, srv: srv, ts: ts}
	c := e.client(t)
	c.login(secret)
	if resp, _ := c.get(demoPath("space")); resp.StatusCode != 200 {
		t.Fatalf("timeline with the key: %s", resp.Status)
	}
	empty, _ := server.NewKeys(nil)
	src.set(empty)
	if err := srv.ReloadKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, _ := c.get(demoPath("space")); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/login") {
		t.Errorf("timeline after the key was revoked: %s to %q, want a redirect to login", resp.Status, resp.Header.Get("Location"))
	}
	// The login is gone for good: the key coming back does not revive it.
	src.set(ks)
	_ = srv.ReloadKeys(context.Background())
	if resp, _ := c.get(demoPath("space")); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("old login after the key came back: %s, want a redirect to login", resp.Status)
	}
}
