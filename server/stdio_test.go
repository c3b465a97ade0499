package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/higmem/higmem"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// replies parses the output of a stdio session, one JSON-RPC message per
// line.
func replies(t *testing.T, out []byte) []rpcReply {
	t.Helper()
	var rs []rpcReply
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r rpcReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("output line is not a JSON-RPC message: %q (%v)", sc.Bytes(), err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestStdioBadInputKeepsServing feeds `higmem mcp`'s transport malformed
// lines between good ones, then closes its input at once: every bad line
// gets its JSON-RPC error (with the request's id when it has a usable one),
// every good request its answer, nothing bad is written, and the session
// ends by itself.
func TestStdioBadInputKeepsServing(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, higmem.Options{})
	s := New(mem, Options{NoAuth: true, DefaultSpace: higmem.Space{UserID: "alice"}})
	bad := []struct {
		line string
		code int
		id   string
	}{
		{`{bad}`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":20,"method":"ping"`, jsonrpc.CodeParseError, "null"},
		{`[]`, jsonrpc.CodeInvalidRequest, "null"},
		{`[{"jsonrpc":"2.0","id":21,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "null"},
		{`"hello"`, jsonrpc.CodeInvalidRequest, "null"},
		{`42`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"1.0","id":22,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "22"},
		{`{"id":23,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "23"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":"s24","method":7}`, jsonrpc.CodeInvalidRequest, `"s24"`},
		{`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":"add_memory"}`, jsonrpc.CodeInvalidRequest, "25"},
		{`{"jsonrpc":"2.0","id":26}`, jsonrpc.CodeInvalidRequest, "26"},
		{`{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"bad \u001b[31m"}}`, jsonrpc.CodeParseError, "null"},
	}
	var in strings.Builder
	for _, b := range bad {
		in.WriteString(b.line + "\n")
	}
	in.WriteString(initializeLine + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n\n  \n")
	in.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\r\n")
	in.WriteString(`{"jsonrpc":"2.0","id":"add","method":"tools/call","params":{"name":"add_memory","arguments":{"id":"m1","text":"My greyhound is called Biscuit."}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"higmem://users/alice/events/nope"}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"higmem://nothing"}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search_memory","arguments":{"question":"dog name?"}}}`) // no final newline

	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, strings.NewReader(in.String()), &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio did not end after its input did")
	}
	byID := map[string][]rpcReply{}
	for _, r := range replies(t, out.Bytes()) {
		byID[string(r.ID)] = append(byID[string(r.ID)], r)
	}
	nulls := 0
	for _, b := range bad {
		if b.id == "null" {
			nulls++
			continue
		}
		rs := byID[b.id]
		if len(rs) != 1 || rs[0].Error == nil || rs[0].Error.Code != b.code {
			t.Errorf("%s: replies %+v, want one error %d", b.line, rs, b.code)
		}
	}
	if got := len(byID["null"]); got != nulls {
		t.Errorf("%d replies without an id, want %d", got, nulls)
	}
	for _, r := range byID["null"] {
		if r.Error == nil || (r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest) || r.Error.Message == "" {
			t.Errorf("reply without id: %+v", r)
		}
	}
	ok := func(id string) rpcReply {
		t.Helper()
		rs := byID[id]
		if len(rs) != 1 || rs[0].Error != nil {
			t.Fatalf("request %s: replies %+v", id, rs)
		}
		return rs[0]
	}
	ok("1")
	var tl struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(ok("2").Result, &tl); err != nil || len(tl.Tools) != 6 {
		t.Errorf("tools/list: %s", ok("2").Result)
	}
	if r := ok(`"add"`); !strings.Contains(string(r.Result), `"m1"`) {
		t.Errorf("add_memory: %s", r.Result)
	}
	if rs := byID["4"]; len(rs) != 1 || rs[0].Error == nil || int64(rs[0].Error.Code) != rpcResourceNotFound {
		t.Errorf("resources/read of a missing event: %+v", rs)
	}
	if rs := byID["7"]; len(rs) != 1 || rs[0].Error == nil || int64(rs[0].Error.Code) != rpcResourceNotFound {
		t.Errorf("resources/read of an unknown URI: %+v", *rs[0].Error)
	}
	if rs := byID["5"]; len(rs) != 1 || rs[0].Error == nil || rs[0].Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method: %+v", rs)
	}
	ok("6")
	// Only the good add was stored.
	ts, err := mem.List(ctx, higmem.Space{UserID: "alice"}, higmem.ListOptions{})
	if err != nil || len(ts) != 1 || ts[0].ID != "m1" {
		t.Fatalf("stored %v %v", ts, err)
	}
}

// serveFake runs a stdio connection on input with a peer that answers every
// request at once, and returns the output, the messages passed on, and
// whether the connection ended.
func serveFake(input []byte, max int) (out []byte, passed int, ended bool) {
	// stdioConn serialises its writes, and Read ends only after the last
	// one: a plain buffer will do.
	var buf bytes.Buffer
	conn, _ := (&StdioTransport{Reader: bytes.NewReader(input), Writer: &buf, MaxMessageBytes: max}).Connect(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return buf.Bytes(), passed, err == io.EOF
		}
		passed++
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			go conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
		}
	}
}

// FuzzStdioReader feeds arbitrary bytes to the stdio transport: it never
// panics or hangs, every output line is a JSON-RPC message, and every
// non-blank input line is either passed on or answered with exactly one
// -32700/-32600 error.
func FuzzStdioReader(f *testing.F) {
	for _, s := range []string{
		initializeLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n",
		"{bad}\n[]\n" + `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"\n\r\n \t\n",
		`{"jsonrpc":"2.0","id":1e3,"method":"x","params":[]}`,
		`{"jsonrpc":"2.0","id":"a","method":"x","params":null}`,
		strings.Repeat("x", 300) + "\n" + `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		"\xff\xfe{}\n",
	} {
		f.Add([]byte(s))
	}
	const max = 256
	f.Fuzz(func(t *testing.T, input []byte) {
		out, passed, ended := serveFake(input, max)
		if !ended {
			t.Fatalf("the connection did not end after its input")
		}
		lines := 0
		for l := range bytes.SplitSeq(input, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		errs, answers := 0, 0
		for l := range bytes.SplitSeq(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var r rpcReply
			if err := json.Unmarshal(l, &r); err != nil || r.JSONRPC != "2.0" || r.ID == nil {
				t.Fatalf("output line %q is not a JSON-RPC response", l)
			}
			if r.Error != nil {
				if r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest {
					t.Fatalf("error code %d", r.Error.Code)
				}
				errs++
			} else {
				answers++
			}
		}
		if passed+errs != lines {
			t.Fatalf("%d non-blank lines, %d passed on + %d refused", lines, passed, errs)
		}
		if answers > passed {
			t.Fatalf("%d answers for %d messages passed on", answers, passed)
		}
	})
}
