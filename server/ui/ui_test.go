package ui_test

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/higmem/higmem"
)

func TestPagesRender(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client(t)
	c.login(e.keys["admin"])
	evs, err := e.mem.Events(context.Background(), demo)
	if err != nil || len(evs) == 0 {
		t.Fatalf("demo events: %d, %v", len(evs), err)
	}
	ev := evs[0]
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/ui/", []string{"<td><a href=\"/ui/space?agent=demo&amp;user=priya\">priya</a>", "<td class=\"num\">34</td>"}},
		{demoPath("space"), []string{"<svg", "34</strong> turns", "4</strong> sessions", html.EscapeString(ev.Event.Title), "S1"}},
		{demoPath("event", "id", ev.Event.ID), []string{"<h1>" + html.EscapeString(ev.Event.Title), "Member turns", "id=\"turn-" + ev.Turns[0].ID, "History", "created with"}},
		{demoPath("turns", "speaker", "Tom", "session", "2"), []string{"turn S2:2", "turn S2:8"}},
		{demoPath("turns", "q", "greyhound Biscuit"), []string{"turn S2:1", "most relevant first"}},
		{demoPath("turns", "from", "2024-05-25", "to", "2024-05-25"), []string{"8 turn(s)", "turn S3:1"}},
		{demoPath("ask", "q", "What is the name of Priya's dog?"), []string{"Evidence (", "turn S2:1", "search", "events", "shown", "selected", "final", "not run in this mode", "✓ kept"}},
		{demoPath("turn", "id", "S2:1"), []string{"Delete turn S2:1", "Biscuit"}},
	} {
		resp, body := c.get(tc.path)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %s\n%s", tc.path, resp.Status, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in the page", tc.path, w)
			}
		}
	}
	// Filters exclude: Tom's turns only, and no session-1 turn on 25 May.
	_, body := c.get(demoPath("turns", "speaker", "Tom", "session", "2"))
	if strings.Contains(body, "turn S2:1<") || strings.Contains(body, "turn S1:") {
		t.Errorf("speaker/session filter let other turns through")
	}
	_, body = c.get(demoPath("turns", "from", "2024-05-25", "to", "2024-05-25"))
	if strings.Contains(body, "turn S2:") || strings.Contains(body, "turn S4:") {
		t.Errorf("time filter let other days through")
	}
	// Pages allow no script, no framing and no foreign form targets.
	resp, _ := c.get(demoPath("space"))
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("pages may be cached: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	// /ui goes to /ui/; an unknown page is a 404 page.
	if resp, _ := c.get("/ui"); resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/ui: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	if resp, body := c.get("/ui/nope"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no page /ui/nope") {
		t.Errorf("/ui/nope: %s", resp.Status)
	}
	// Static assets are embedded.
	resp, css := c.get("/ui/static/style.css")
	if resp.StatusCode != 200 || !strings.Contains(css, ":focus-visible") {
		t.Errorf("style.css: %s", resp.Status)
	}
}

// A space whose events do not hold every turn (here: none) still shows
// all its sessions: the timeline then reads the turns from the store.
func TestTimelineWithoutEvents(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	var exp strings.Builder
	if err := e.mem.Export(ctx, demo, &exp); err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(exp.String()), "\n") {
		if !strings.Contains(l, `"kind":"event"`) {
			keep = append(keep, l)
		}
	}
	bare := higmem.Space{UserID: "priya", AgentID: "bare"}
	if _, err := e.mem.Import(ctx, bare, strings.NewReader(strings.Join(keep, "\n")+"\n")); err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	c.login(e.keys["priya"])
	_, body := c.get("/ui/space?user=priya&agent=bare")
	for _, want := range []string{"34</strong> turns", "0</strong> events", "4</strong> sessions", "No events in this space yet."} {
		if !strings.Contains(body, want) {
			t.Errorf("timeline without events: no %q", want)
		}
	}
}
