package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/server"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// command is a CLI command running in the background.
type command struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// startCommand runs the CLI with args in the background; stop (or the end
// of the test) cancels it like SIGINT would.
func startCommand(t *testing.T, env map[string]string, stdin io.Reader, stdout, stderr io.Writer, args ...string) *command {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := newApp(envconfig.Load(func(k string) string { return env[k] }), stdin, stdout, stderr)
	cmd := a.rootCommand()
	cmd.SetArgs(args)
	c := &command{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = cmd.ExecuteContext(ctx)
		if cerr := a.close(); c.err == nil {
			c.err = cerr
		}
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

// exited reports whether the command has returned.
func (c *command) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// wait waits for the command to return by itself.
func (c *command) wait() error {
	<-c.done
	return c.err
}

// stop cancels the command and waits for it.
func (c *command) stop() error {
	c.cancel()
	return c.wait()
}

var listenRE = regexp.MustCompile(`serving on (http://[^ ]+)`)

func TestServeKeygen(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	out, _, code := runCLI(t, env, "serve", "keygen", "--name", "ci", "--users", "alice,bob")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("keygen: %d %q", code, out)
	}
	var k server.Key
	if err := json.Unmarshal([]byte(lines[1]), &k); err != nil {
		t.Fatal(err)
	}
	if k.Name != "ci" || k.SHA256 != server.HashKey(lines[0]) || !slices.Equal(k.Users, []string{"alice", "bob"}) || strings.Contains(lines[1], lines[0]) {
		t.Fatalf("entry %+v for key %q", k, lines[0])
	}

	// --keys-file creates the file, then appends to it.
	path := filepath.Join(t.TempDir(), "keys.json")
	var secrets []string
	for _, name := range []string{"one", "two"} {
		out, errOut, code := runCLI(t, env, "serve", "keygen", "--keys-file", path, "--name", name, "--json")
		var res struct {
			Key   string     `json:"key"`
			Entry server.Key `json:"entry"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Entry.Name != name {
			t.Fatalf("keygen --keys-file: %d %s %s", code, out, errOut)
		}
		secrets = append(secrets, res.Key)
	}
	ks, err := server.LoadKeys(path)
	if err != nil || ks.Len() != 2 {
		t.Fatalf("keys file: %v", err)
	}
	for i, s := range secrets {
		if k, ok := ks.Lookup(s); !ok || k.Name != []string{"one", "two"}[i] || !slices.Equal(k.Users, []string{"*"}) {
			t.Fatalf("key %d: %+v %v", i, k, ok)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("keys file mode %v", fi.Mode())
	}
	// A duplicate name is refused and the file left alone.
	before, _ := os.ReadFile(path)
	if _, errOut, code := runCLI(t, env, "serve", "keygen", "--keys-file", path, "--name", "one"); code == 0 || !strings.Contains(errOut, "duplicate name") {
		t.Fatalf("duplicate: %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("keys file changed by a failed keygen")
	}
}

func TestServeRefusesUnsafeAuth(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"keys":[{"name":"a","sha256":"hgm_secret","users":["*"]}]}`), 0o600)
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"keys":[]}`), 0o600)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--addr", "0.0.0.0:0", "--no-auth"}, "only allowed on a loopback"},
		{[]string{"--addr", ":0", "--no-auth"}, "only allowed on a loopback"},
		{[]string{"--addr", "192.168.1.1:0", "--no-auth"}, "only allowed on a loopback"},
		{[]string{"--addr", "127.0.0.1:0"}, "API keys are required"},
		{[]string{"--addr", "127.0.0.1:0", "--no-auth", "--keys-file", bad}, "not both"},
		{[]string{"--addr", "127.0.0.1:0", "--keys-file", bad}, "never the key itself"},
		{[]string{"--addr", "127.0.0.1:0", "--keys-file", empty}, "holds no keys"},
		{[]string{"--addr", "127.0.0.1:0", "--keys-file", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
	} {
		_, errOut, code := runCLI(t, env, append([]string{"serve"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("serve %v: %d %q, want %q", tc.args, code, errOut, tc.msg)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "127.8.0.1:1": true,
		"0.0.0.0:1": false, ":1": false, "[::]:1": false, "example.com:1": false, "10.0.0.1:1": false, "nonsense": false} {
		if isLoopback(addr) != want {
			t.Errorf("isLoopback(%q) != %v", addr, want)
		}
	}
}

// TestServeEndToEnd starts `higmem serve` on a random loopback port with a
// keys file, uses it through the Go client and the MCP SDK client, stops it
// like SIGINT would, and finds the data in the database.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	keys := filepath.Join(t.TempDir(), "keys.json")
	out, _, code := runCLI(t, env, "serve", "keygen", "--keys-file", keys, "--name", "test", "--users", "alice", "--json")
	var kg struct {
		Key string `json:"key"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &kg) != nil {
		t.Fatalf("keygen: %s", out)
	}
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	srv := startCommand(t, env, strings.NewReader(""), &stdout, stderr, "serve", "--addr", "127.0.0.1:0", "--keys-file", keys, "--user", "alice")
	var base string
	for base == "" {
		if m := listenRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if srv.exited() {
			t.Fatalf("serve exited: %v\n%s", srv.err, stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	ctx := context.Background()
	c := api.NewClient(base, kg.Key, nil)
	if _, err := c.Add(ctx, api.AddRequest{UserID: "alice", Turns: []api.TurnInput{
		{ID: "x1", Speaker: "Alice", Text: "My greyhound Biscuit loves the beach."},
		{ID: "x2", Speaker: "Alice", Text: "I am flying to Lisbon in June."},
	}}); err != nil {
		t.Fatal(err)
	}
	sr, err := c.Search(ctx, api.SearchRequest{UserID: "alice", Question: "greyhound name"})
	if err != nil || !slices.Contains(sr.IDs(), "x1") {
		t.Fatalf("search: %v", err)
	}
	if _, err := c.Stats(ctx, api.Scope{UserID: "bob"}); !api.IsStatus(err, http.StatusForbidden) {
		t.Fatalf("bob with alice's key: %v", err)
	}
	if _, err := api.NewClient(base, "", nil).Stats(ctx, api.Scope{UserID: "alice"}); !api.IsStatus(err, http.StatusUnauthorized) {
		t.Fatalf("no key: %v", err)
	}

	// MCP over HTTP on the same server, default space alice.
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerRT{"Authorization": "Bearer " + kg.Key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"id": "x3", "text": "Biscuit turned three today."}})
	if err != nil || res.IsError {
		t.Fatalf("add_memory: %+v %v", res, err)
	}
	cs.Close()

	if err := srv.stop(); err != nil {
		t.Fatalf("serve returned %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "higmem: stopped") {
		t.Fatalf("no graceful stop:\n%s", stderr.String())
	}
	out, errOut, code := runCLI(t, env, "--user", "alice", "--json", "search", "Biscuit greyhound")
	if code != 0 || !strings.Contains(out, `"x1"`) || !strings.Contains(out, `"x3"`) {
		t.Fatalf("data not in the database after serve: %d %s %s", code, out, errOut)
	}
}

type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPCommandStdio runs `higmem mcp` with its stdin and stdout on pipes
// and talks to it with the SDK client, as an agent host would.
func TestMCPCommandStdio(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	cmd := startCommand(t, env, inR, outW, stderr, "mcp", "--user", "carol", "--agent", "desk")
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("tools: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"id": "c1", "text": "My sister Erin lives in Oslo.", "speaker": "Carol"}})
	if err != nil || res.IsError {
		t.Fatalf("add_memory: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"question": "Where does Erin live?"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Oslo") {
		t.Fatalf("search_memory: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_profiles", Arguments: map[string]any{"entity": "erin"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"sister of Carol"`) ||
		!strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"Oslo"`) {
		t.Fatalf("get_profiles: %+v %v", res, err)
	}
	// The host closes the pipe: the command ends by itself, cleanly.
	cs.Close()
	inW.Close()
	if err := cmd.wait(); err != nil {
		t.Fatalf("mcp returned %v\n%s", err, stderr.String())
	}
	out, errOut, code := runCLI(t, env, "--user", "carol", "--agent", "desk", "--json", "search", "Erin Oslo")
	if code != 0 || !strings.Contains(out, `"c1"`) {
		t.Fatalf("turn not stored: %d %s %s", code, out, errOut)
	}
}

// TestMCPCommandPipedInput is `printf '<initialize>\n<tools/list>\n' |
// higmem mcp`: stdin ends right after the requests, and both answers are
// printed; bad lines before them are answered and do not stop the command.
func TestMCPCommandPipedInput(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	in := strings.Join([]string{
		`{bad}`, `[]`, `{"jsonrpc":"1.0","id":9,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	code := run(func(k string) string { return env[k] }, []string{"mcp", "--user", "carol"}, strings.NewReader(in), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	errs, answered := 0, map[string]bool{}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		if r.Error != nil {
			errs++
		} else {
			answered[string(r.ID)] = true
		}
	}
	if len(lines) != 5 || errs != 3 || !answered["1"] || !answered["2"] {
		t.Fatalf("%d replies (%d errors, answered %v), want 3 errors and answers to 1 and 2:\n%s", len(lines), errs, answered, out.String())
	}
	if !strings.Contains(out.String(), `"add_memory"`) || !strings.Contains(out.String(), `"protocolVersion"`) {
		t.Fatalf("no initialize or tools/list answer:\n%s", out.String())
	}
	for _, want := range []string{`"code":-32700`, `"id":null,"error":{"code":-32600`, `"id":9,"error":{"code":-32600`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out.String())
		}
	}
}

// The chat upstream is the answer endpoint, whose key goes only to it.
func TestServeChatOptions(t *testing.T) {
	t.Parallel()
	env := envconfig.Load(func(k string) string {
		return map[string]string{"HIGMEM_ANSWER_BASE_URL": "https://api.example.com/v1", "HIGMEM_ANSWER_API_KEY": "sk-answer",
			"HIGMEM_ANSWER_MODEL": "big"}[k]
	})
	a := newApp(env, nil, io.Discard, io.Discard)
	for _, tc := range []struct {
		flag, url, key string
	}{
		{"", "https://api.example.com/v1", "sk-answer"},
		{"https://api.example.com/v1/", "https://api.example.com/v1", "sk-answer"},
		{"http://localhost:11434/v1", "http://localhost:11434/v1", ""},
	} {
		o := chatOptions(a, serveOptions{chatUpstream: tc.flag, chatTokens: 500, chatRate: 1, chatBurst: 3})
		if o.UpstreamURL != tc.url || o.UpstreamKey != tc.key || o.Model != "big" || o.EvidenceTokens != 500 || o.RateLimit != 1 || o.RateBurst != 3 {
			t.Errorf("--chat-upstream %q: %+v", tc.flag, o)
		}
	}
	if o := chatOptions(newApp(envconfig.Load(func(string) string { return "" }), nil, io.Discard, io.Discard), serveOptions{}); o.UpstreamURL != "" {
		t.Errorf("no endpoint: upstream %q", o.UpstreamURL)
	}
}
