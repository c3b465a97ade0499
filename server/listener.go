package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/higmem/higmem/api"
)

// Before any handler runs, net/http answers some requests itself, in plain
// text, and closes the connection (Go 1.26, net/http/server.go, conn.serve):
//
//   - 431 Request Header Fields Too Large: the request line and headers
//     exceed http.Server.MaxHeaderBytes (plus 4 KiB of slack);
//   - 400 Bad Request: a malformed request line or header, a missing or
//     malformed Host header (the text may name which);
//   - 505 HTTP Version Not Supported: a protocol other than HTTP/1.x on a
//     plain connection;
//   - 501 Not Implemented: a Transfer-Encoding other than chunked;
//   - 417 Expectation Failed (empty body, through its normal response
//     path): an Expect header other than 100-continue;
//   - nothing at all: a read error or ReadHeaderTimeout before a whole
//     request arrived (the connection is just closed).
//
// Listener rewrites the first four into higmem's JSON error envelope. The
// stdlib writes each of them as one Write of a fixed shape on the raw
// connection (status line, "Content-Type: text/plain; charset=utf-8",
// "Connection: close", blank line, text), which no handler's response has
// (those always carry a Date header), so the rewrite cannot touch anything
// else. A 417 and the silent closes stay as the stdlib makes them.

// stdlibErrorHeaders is what net/http puts between the status line and the
// text of the answers it writes itself.
const stdlibErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// Listener returns ln with its connections' plain-text answers from
// net/http (malformed requests, oversize headers) rewritten into the JSON
// error envelope. Serve the http.Server from HTTPServer on it.
func (s *Server) Listener(ln net.Listener) net.Listener { return envelopeListener{ln} }

type envelopeListener struct{ net.Listener }

func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &envelopeConn{Conn: c}, nil
}

type envelopeConn struct{ net.Conn }

// Write rewrites net/http's own error answers and passes everything else
// on.
func (c *envelopeConn) Write(p []byte) (int, error) {
	b, ok := envelopeAnswer(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection when it can, as net/http does
// after a 431 so that the client reads the answer.
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// envelopeAnswer turns one of net/http's plain-text answers into a JSON
// one; ok is false for anything else.
func envelopeAnswer(p []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	i := bytes.Index(p, []byte(stdlibErrorHeaders))
	if !bytes.HasPrefix(p, []byte(proto)) || i < len(proto)+3 || bytes.Contains(p[:i], []byte("\r\n")) {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 {
		return nil, false
	}
	text := string(bytes.TrimSpace(p[i+len(stdlibErrorHeaders):]))
	detail := text
	if prefix := fmt.Sprintf("%d %s", status, http.StatusText(status)); len(detail) >= len(prefix) && detail[:len(prefix)] == prefix {
		detail = detail[len(prefix):]
		if len(detail) > 2 && detail[:2] == ": " {
			detail = detail[2:]
		}
	}
	var code, msg string
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		code, msg = api.CodeHeadersTooLarge, fmt.Sprintf("request line and headers exceed %d bytes", maxHeaderBytes)
	case http.StatusNotImplemented:
		code, msg = api.CodeNotImplemented, "unsupported transfer encoding (only chunked is accepted)"
	default:
		code, msg = api.CodeInvalidRequest, "malformed HTTP request"
		if detail != "" {
			msg += ": " + detail
		}
	}
	body, err := json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
	if err != nil {
		return nil, false
	}
	body = append(body, '\n')
	var b bytes.Buffer
	b.Write(p[:i]) // status line
	fmt.Fprintf(&b, "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes(), true
}
