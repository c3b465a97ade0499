package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// TestStdlibAnswersInEnvelope sends requests that net/http refuses before
// any handler runs, over a real connection to the server as `higmem serve`
// runs it, and checks that the answers are the JSON error envelope.
func TestStdlibAnswersInEnvelope(t *testing.T) {
	s := New(newMem(t, higmem.Options{}), Options{NoAuth: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(ln.Addr().String())
	go hs.Serve(s.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	addr := ln.Addr().String()
	raw := func(req string) (*http.Response, []byte) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", req[:min(len(req), 40)], err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	host := "Host: " + addr + "\r\n"
	for _, tc := range []struct {
		name, req string
		status    int
		code, msg string
	}{
		{"headers too large", "GET /v1/health HTTP/1.1\r\n" + host + "X-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n",
			431, api.CodeHeadersTooLarge, "exceed 65536 bytes"},
		{"no Host", "GET /v1/health HTTP/1.1\r\n\r\n", 400, api.CodeInvalidRequest, "missing required Host header"},
		{"garbage request line", "HELLO\r\n\r\n", 400, api.CodeInvalidRequest, "malformed HTTP request"},
		{"bad header name", "GET /v1/health HTTP/1.1\r\n" + host + "Bad Header: x\r\n\r\n", 400, api.CodeInvalidRequest, "malformed HTTP request"},
		{"transfer encoding", "POST /v1/search HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", 501, api.CodeNotImplemented, "transfer encoding"},
		{"HTTP/2 on a plain connection", "GET /v1/health HTTP/2.0\r\n" + host + "\r\n", 505, api.CodeInvalidRequest, "unsupported protocol version"},
	} {
		resp, body := raw(tc.req)
		var eb api.ErrorBody
		if err := json.Unmarshal(body, &eb); err != nil {
			t.Errorf("%s: %d body %q is not the JSON envelope", tc.name, resp.StatusCode, body)
			continue
		}
		if resp.StatusCode != tc.status || eb.Error.Code != tc.code || !strings.Contains(eb.Error.Message, tc.msg) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %q (%s), want %d %s containing %q", tc.name, resp.StatusCode, eb.Error.Code, eb.Error.Message,
				resp.Header.Get("Content-Type"), tc.status, tc.code, tc.msg)
		}
	}
	// The server keeps serving, and its own answers are untouched.
	resp, body := raw("GET /v1/health HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Fatalf("health after bad requests: %d %s", resp.StatusCode, body)
	}
	resp, body = raw("GET /v1/nope HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n")
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"no route GET /v1/nope`) {
		t.Fatalf("404: %d %s", resp.StatusCode, body)
	}
}

// TestEnvelopeAnswerOnlyStdlibShape checks the rewrite leaves every other
// write alone.
func TestEnvelopeAnswerOnlyStdlibShape(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nhi",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Mon, 01 Jan 2024 00:00:00 GMT\r\nConnection: close\r\n\r\nx",
		"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n{}",
		"some body bytes " + stdlibErrorHeaders,
		"",
	} {
		if _, ok := envelopeAnswer([]byte(p)); ok {
			t.Errorf("rewrote %q", p)
		}
	}
	if _, ok := envelopeAnswer([]byte("HTTP/1.1 400 Bad Request" + stdlibErrorHeaders + "400 Bad Request")); !ok {
		t.Error("did not rewrite the stdlib's 400")
	}
}
