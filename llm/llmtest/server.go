// Package llmtest starts the language-model fakes of llm/llmfake for tests:
// NewServer and NewLlamaCpp serve them on httptest servers closed by the
// test's cleanup, and RefusedURL gives an address nothing listens on. It
// re-exports llmfake's fakes (fakes.go) so that a test needs one import.
// Production code imports llmfake, never this package.
package llmtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/higmem/higmem/llm/llmfake"
)

// Server is a fake OpenAI-compatible endpoint (llmfake.Endpoint) over
// httptest. It records every request and counts calls. It is closed by
// the test's cleanup.
type Server struct {
	// URL is the server's root, e.g. "http://127.0.0.1:41234".
	URL string

	*llmfake.Endpoint
	srv *httptest.Server
}

// NewServer starts a Server answering with h and closes it when the test
// ends.
func NewServer(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{Endpoint: llmfake.NewEndpoint(h)}
	s.srv = httptest.NewServer(s.Endpoint)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the API root clients should be configured with (URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close shuts the server down; pending slow replies are abandoned.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// LlamaCpp is llmfake.LlamaCpp, llama-cpp-python's server as a client sees
// it, over httptest.
type LlamaCpp struct {
	// URL is the server's root; BaseURL adds /v1.
	URL string

	*llmfake.LlamaCpp
}

// NewLlamaCpp starts a LlamaCpp whose model writes what gen returns
// (its Content; Status and Body replies are sent as they are). It is closed
// by the test's cleanup.
func NewLlamaCpp(t testing.TB, gen Handler) *LlamaCpp {
	t.Helper()
	s := &LlamaCpp{LlamaCpp: llmfake.NewLlamaCpp(gen)}
	srv := httptest.NewServer(s.LlamaCpp)
	s.URL = srv.URL
	t.Cleanup(srv.Close)
	return s
}

// BaseURL is the API root clients should be configured with.
func (s *LlamaCpp) BaseURL() string { return s.URL + "/v1" }

// RefusedURL returns a base URL on which nothing listens: the address of a
// listener that was opened and closed, so connecting is refused.
func RefusedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("llmtest: listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("llmtest: close listener: %v", err)
	}
	return "http://" + addr + "/v1"
}

// RetryAfterDate formats t as an HTTP date for a Retry-After header.
func RetryAfterDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// RetryAfterSeconds formats a delay as whole seconds for Retry-After.
func RetryAfterSeconds(d time.Duration) string { return strconv.Itoa(int(d / time.Second)) }
