package server

import (
	"context"
	"net/http"

	"github.com/higmem/higmem/api"
)

// Handle serves h for pattern (as http.ServeMux patterns) beside the REST
// routes and behind the same protections: panics are answered with a 500,
// cross-origin writes are refused and, without keys, only loopback host
// names are answered. h authenticates its own requests with Authenticate.
// The web pages of package server/ui are mounted this way. Register
// handlers before serving.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
}

// Local returns the operations the REST routes run, on the server's
// Memory.
func (s *Server) Local() *Local { return s.local }

// AuthRequired reports whether requests need an API key (false with
// Options.NoAuth).
func (s *Server) AuthRequired() bool { return !s.opts.NoAuth }

// Authenticate checks a secret API key as the REST routes check a bearer
// key and says what it may use. Without auth (Options.NoAuth) every secret,
// the empty one included, may use every user. An unknown or missing key is
// an error that ErrorCode reports as 401.
func (s *Server) Authenticate(ctx context.Context, secret string) (api.KeyInfo, error) {
	if s.opts.NoAuth {
		return api.KeyInfo{Users: []string{api.AllUsers}}, nil
	}
	if secret == "" {
		return api.KeyInfo{}, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "missing API key")
	}
	k, ok := s.lookupKey(ctx, secret)
	if !ok {
		return api.KeyInfo{}, errorf(http.StatusUnauthorized, api.CodeUnauthorized, "unknown API key")
	}
	p := keyPrincipal(k)
	info := api.KeyInfo{Name: p.name, Users: p.users, Auth: true}
	if p.all {
		info.Users = []string{api.AllUsers}
	}
	return info, nil
}

// OpContext returns the context of an operation run for a request, as the
// REST routes run theirs: a read is bounded by Options.RequestTimeout; a
// write outlives the request, counts as pending for Shutdown until done is
// called, and is refused (503) once Shutdown has started. Call done when
// the operation ends.
func (s *Server) OpContext(ctx context.Context, write bool) (_ context.Context, done func(), _ error) {
	return s.opCtx(ctx, write)
}
