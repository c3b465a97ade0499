package ui_test

import (
	"github.com/higmem/higmem"
	"net/http"
	"strings"
	"testing"
)

// TestProfilePages: the profiles list of a space and one person's page,
// with each value's validity, producers, and links to its evidence turn
// and the turn's event; as_of keeps the values that held then; a person
// memory does not know is a 404, another user's space a 403, and a login
// is needed.
func TestProfilePages(t *testing.T) {
	for _, llm := range []bool{false, true} {
		e := newEnv(t, envOptions{llm: llm})
		c := e.client(t)
		if resp, _ := c.get(demoPath("profiles")); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/login") {
			t.Errorf("profiles without login: %s to %q", resp.Status, resp.Header.Get("Location"))
		}
		c.login(e.keys["priya"])
		stated := "rules</td>"
		if llm {
			stated = "llm:default:"
		}
		for _, tc := range []struct {
			path string
			want []string
		}{
			{demoPath("profiles"), []string{`href="/ui/profile?agent=demo&amp;entity=Tom&amp;user=priya">Tom</a>`, "employer: Windrose", "pet: Biscuit (dog)",
				"named by a speaker", `aria-current="page">Profiles`}},
			{demoPath("profile", "entity", "tom"), []string{"<h1>Tom</h1>", "<h3>employer</h3>", "<th scope=\"row\">Windrose</th>", "<strong class=\"nowrap\">current</strong>",
				"25 May 2024 – now", stated, `href="/ui/turn?agent=demo&amp;id=S3%3A3&amp;user=priya">turn S3:3</a>`, `· event <a href="/ui/event?agent=demo&amp;id=`,
				"Windrose"}},
			{demoPath("profile", "entity", "Priya", "as_of", "2024-04-01"), []string{"<h1>Priya</h1>", "No value held on 2024-04-01."}},
			// Ask draws the profile stage: the turn stating Tom's employer.
			{demoPath("ask", "q", "Where does Tom work?"), []string{"turns stating what the question asks of a person", "turn S3:3"}},
		} {
			resp, body := c.get(tc.path)
			if resp.StatusCode != 200 {
				t.Errorf("llm=%v GET %s: %s\n%s", llm, tc.path, resp.Status, body)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("llm=%v GET %s: no %q in the page", llm, tc.path, w)
				}
			}
		}
		for _, tc := range []struct {
			path   string
			status int
			want   string
		}{
			{demoPath("profile", "entity", "Nobody"), http.StatusNotFound, "Nobody"},
			{demoPath("profile", "entity", "Tom", "as_of", "soon"), http.StatusBadRequest, "Dates are YYYY-MM-DD"},
			{"/ui/profiles?user=bob", http.StatusForbidden, "may not use user"},
			{"/ui/profile?user=bob&entity=Bob", http.StatusForbidden, "may not use user"},
		} {
			if resp, body := c.get(tc.path); resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("llm=%v GET %s: %s, want %d with %q", llm, tc.path, resp.Status, tc.status, tc.want)
			}
		}
	}
}

// A value closed by a later turn is shown closed, with the closing turn,
// and struck from "holds now".
func TestProfilePageClosedValue(t *testing.T) {
	e := newEnv(t, envOptions{})
	if _, err := e.mem.Add(t.Context(), demo, []higmem.TurnInput{{ID: "S9:1", Speaker: "Tom", Text: "I started working at Globex last week.", Time: "2024-07-01T10:00:00Z"}}); err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	c.login(e.keys["priya"])
	_, body := c.get(demoPath("profile", "entity", "Tom"))
	for _, w := range []string{`<tr class="closed">`, "closed by <a href=\"/ui/turn?agent=demo&amp;id=S9%3A1&amp;user=priya\">turn S9:1</a> (rules)",
		"<q class=\"quote\">I started working at Globex", "25 May 2024 – 1 Jul 2024", "<th scope=\"row\">Globex</th>"} {
		if !strings.Contains(body, w) {
			t.Errorf("Tom's page: no %q\n%s", w, body)
		}
	}
	_, body = c.get(demoPath("profiles"))
	if !strings.Contains(body, "employer: Globex") || strings.Contains(body, "employer: Windrose") {
		t.Errorf("profiles list still holds Windrose as current")
	}
}
