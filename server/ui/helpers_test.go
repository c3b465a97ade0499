package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/examples"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/ui"
)

// demo is the space the example conversation is loaded into.
var demo = higmem.Space{UserID: "priya", AgentID: "demo"}

// env is a server with the pages, on loopback.
type env struct {
	mem  *higmem.Memory
	srv  *server.Server
	ts   *httptest.Server
	keys map[string]string // name -> secret
}

type envOptions struct {
	noAuth bool
	// llm selects ModeDefault with the scripted model (every retrieval
	// stage and LLM calls in the trace) instead of offline mode.
	llm bool
	mem *higmem.Memory
}

// newEnv opens a memory with the example conversation in space demo and
// serves it with keys "admin" (every user), "priya" (user priya) and
// "bob" (user bob).
func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{keys: map[string]string{}}
	if o.mem != nil {
		e.mem = o.mem
	} else {
		opts := higmem.Options{Embedder: hashing.New(0), Mode: higmem.ModeOffline}
		if o.llm {
			opts.Mode, opts.MemoryModel = higmem.ModeDefault, llmtest.NewScripted()
		}
		m, err := higmem.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		e.mem = m
		loadDemo(t, m, demo)
	}
	var kf server.KeysFile
	for _, k := range []struct {
		name  string
		users []string
	}{{"admin", []string{server.AllUsers}}, {"priya", []string{"priya"}}, {"bob", []string{"bob"}}} {
		secret, key, err := server.NewKey(k.name, k.users)
		if err != nil {
			t.Fatal(err)
		}
		e.keys[k.name] = secret
		kf.Keys = append(kf.Keys, key)
	}
	keys, err := server.NewKeys(kf.Keys)
	if err != nil {
		t.Fatal(err)
	}
	so := server.Options{Keys: keys}
	if o.noAuth {
		so = server.Options{NoAuth: true}
	}
	e.srv = server.New(e.mem, so)
	ui.Mount(e.srv, ui.Options{})
	e.ts = httptest.NewServer(e.srv)
	t.Cleanup(func() {
		e.ts.Close()
		_ = e.srv.Shutdown(context.Background())
	})
	return e
}

// loadDemo adds examples/conversation.json to sp, one session per add.
func loadDemo(t testing.TB, m *higmem.Memory, sp higmem.Space) {
	t.Helper()
	var conv struct {
		Turns []higmem.TurnInput `json:"turns"`
	}
	if err := json.Unmarshal(examples.Conversation, &conv); err != nil {
		t.Fatal(err)
	}
	for ts := conv.Turns; len(ts) > 0; {
		k := 1
		for k < len(ts) && ts[k].SessionID == ts[0].SessionID {
			k++
		}
		if _, err := m.Add(context.Background(), sp, ts[:k]); err != nil {
			t.Fatal(err)
		}
		ts = ts[k:]
	}
}

// client is a browser-like HTTP client: it keeps cookies and does not
// follow redirects (tests look at them).
type client struct {
	t  testing.TB
	e  *env
	hc *http.Client
}

func (e *env) client(t testing.TB) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, e: e, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches a path and returns the status and body.
func (c *client) get(path string) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.hc.Get(c.e.ts.URL + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// post submits a form as a same-origin browser does.
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.e.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.e.ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf returns the CSRF token of the forms of page path.
func (c *client) csrf(path string) string {
	c.t.Helper()
	_, body := c.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("no csrf token on %s:\n%s", path, body)
	}
	return m[1]
}

// login logs in with secret and fails the test unless it works.
func (c *client) login(secret string) {
	c.t.Helper()
	tok := c.csrf("/ui/login")
	resp, body := c.post("/ui/login", url.Values{"csrf": {tok}, "key": {secret}, "next": {"/ui/"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		c.t.Fatalf("login: %s\n%s", resp.Status, body)
	}
}

// demoPath is a page of the demo space.
func demoPath(page string, kv ...string) string {
	v := url.Values{"user": {demo.UserID}, "agent": {demo.AgentID}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "/ui/" + page + "?" + v.Encode()
}
