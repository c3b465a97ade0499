// Package ui serves higmem's web pages under /ui/ on a server.Server: the
// spaces a key may see, a space's timeline of events, an event with its
// fact sheet, member turns and history, turn search, the profiles of the
// people of a space (each value with its validity, producers and evidence),
// Ask with the retrieval trace drawn stage by stage, and deleting a turn. Pages are
// rendered on the server with html/template (every stored string is
// escaped) from templates and a style sheet embedded in the binary: no
// script, no CDN, no network.
//
// The pages use the same API keys as the REST routes. A key is entered
// once in a login form; the server keeps it in memory under a random
// session id sent back in an HttpOnly, SameSite=Strict cookie, and checks
// it again on every request, so a revoked key stops working at once. Every
// form that writes carries a CSRF token bound to the session. On a server
// without keys (server.Options.NoAuth, loopback only) no login is asked.
package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// Prefix is the path under which the pages are served.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures the pages. The zero value works.
type Options struct {
	// SessionTTL is how long a login lasts (default 12 h).
	SessionTTL time.Duration
	// MaxSessions bounds the logins kept in memory (default 10000); past
	// it the oldest is dropped.
	MaxSessions int
	// MaxUploadBytes caps an import's upload (default 64 MiB).
	MaxUploadBytes int64
	// Logger receives errors the pages answer with a 500. Nil discards
	// them.
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Handler serves the pages. Create it with New or Mount.
type Handler struct {
	srv     *server.Server
	local   *server.Local
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	pages   map[string]*template.Template
	csrfKey []byte
	now     func() time.Time

	mu       sync.Mutex
	sessions map[string]*session
}

// session is one login: the key it was opened with.
type session struct {
	secret  string
	created time.Time
}

// New returns the pages of srv. Serve them under Prefix (Mount does).
func New(srv *server.Server, opts Options) *Handler {
	opts.setDefaults()
	h := &Handler{
		srv: srv, local: srv.Local(), opts: opts, log: opts.Logger,
		pages: parsePages(), sessions: map[string]*session{}, now: time.Now,
	}
	h.csrfKey = make([]byte, 32)
	_, _ = rand.Read(h.csrfKey)
	h.mux = h.routes()
	return h
}

// Mount serves the pages of srv under Prefix on srv itself, behind the
// server's protections (see server.Server.Handle).
func Mount(srv *server.Server, opts Options) *Handler {
	h := New(srv, opts)
	srv.Handle(Prefix, h)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	mux.Handle("GET "+Prefix+"static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET "+Prefix+"login", h.loginForm)
	mux.HandleFunc("POST "+Prefix+"login", h.login)
	mux.HandleFunc("POST "+Prefix+"logout", h.authed(h.logout))
	mux.HandleFunc("GET "+Prefix+"{$}", h.authed(h.spaces))
	mux.HandleFunc("GET "+Prefix+"space", h.authed(h.timeline))
	mux.HandleFunc("GET "+Prefix+"event", h.authed(h.event))
	mux.HandleFunc("GET "+Prefix+"turns", h.authed(h.turns))
	mux.HandleFunc("GET "+Prefix+"turn", h.authed(h.turn))
	mux.HandleFunc("POST "+Prefix+"turn/delete", h.authed(h.deleteTurn))
	mux.HandleFunc("GET "+Prefix+"ask", h.authed(h.ask))
	mux.HandleFunc("GET "+Prefix+"profiles", h.authed(h.profiles))
	mux.HandleFunc("GET "+Prefix+"profile", h.authed(h.profile))
	mux.HandleFunc("GET "+Prefix+"export", h.authed(h.export))
	mux.HandleFunc("POST "+Prefix+"import", h.authed(h.importSpace))
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, nil, http.StatusNotFound, "no page "+r.URL.Path)
	})
	return mux
}

// Cookie names. Both are HttpOnly, SameSite=Strict and scoped to Prefix.
const (
	sessionCookie = "higmem_session"
	// visitorCookie identifies a browser that has not logged in, so that
	// the login form (and, without keys, every form) has a CSRF token.
	visitorCookie = "higmem_visitor"
)

func randomID() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// session returns the request's login and its id, if any.
func (h *Handler) session(r *http.Request) (*session, string) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[c.Value]
	if !ok {
		return nil, ""
	}
	if h.now().Sub(s.created) > h.opts.SessionTTL {
		delete(h.sessions, c.Value)
		return nil, ""
	}
	return s, c.Value
}

// newSession stores a login and returns its id.
func (h *Handler) newSession(secret string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if len(h.sessions) >= h.opts.MaxSessions {
		var oldest string
		var at time.Time
		for id, s := range h.sessions {
			if now.Sub(s.created) > h.opts.SessionTTL {
				delete(h.sessions, id)
				continue
			}
			if oldest == "" || s.created.Before(at) {
				oldest, at = id, s.created
			}
		}
		if len(h.sessions) >= h.opts.MaxSessions {
			delete(h.sessions, oldest)
		}
	}
	id := randomID()
	h.sessions[id] = &session{secret: secret, created: now}
	return id
}

func (h *Handler) dropSession(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, id)
}

// visitor returns the browser's visitor id, setting the cookie when it
// has none.
func (h *Handler) visitor(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(visitorCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	id := randomID()
	h.setCookie(w, r, visitorCookie, id, 0)
	return id
}

// csrfToken is the token forms carry for a client: an HMAC of its session
// (or visitor) id under a key of this process.
func (h *Handler) csrfToken(client string) string {
	m := hmac.New(sha256.New, h.csrfKey)
	m.Write([]byte(client))
	return hex.EncodeToString(m.Sum(nil))
}

func (h *Handler) csrfOK(r *http.Request, client string) bool {
	got := r.PostFormValue("csrf")
	want := h.csrfToken(client)
	return client != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// request is what an authenticated page handler gets.
type request struct {
	key       api.KeyInfo
	sessionID string
	client    string // session id, or visitor id without a login
	csrf      string
}

// may reports whether the key may use user's spaces.
func (q *request) may(user string) bool {
	for _, u := range q.key.Users {
		if u == api.AllUsers || u == user {
			return true
		}
	}
	return false
}

type pageFunc func(w http.ResponseWriter, r *http.Request, q *request)

// authed resolves the request's key (from its login, or none without
// auth), sends a browser without one to the login form, and checks the
// CSRF token of every POST.
func (h *Handler) authed(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, sid := h.session(r)
		secret := ""
		if sess != nil {
			secret = sess.secret
		}
		key, err := h.srv.Authenticate(r.Context(), secret)
		if err != nil {
			if sess != nil {
				h.dropSession(sid) // the key was revoked
			}
			if r.Method == http.MethodGet {
				next := r.URL.RequestURI()
				http.Redirect(w, r, Prefix+"login?next="+urlQueryEscape(next), http.StatusSeeOther)
				return
			}
			h.fail(w, r, nil, http.StatusUnauthorized, "log in first")
			return
		}
		q := &request{key: key, sessionID: sid, client: sid}
		if sid == "" {
			q.client = h.visitor(w, r)
		}
		q.csrf = h.csrfToken(q.client)
		if r.Method == http.MethodPost {
			if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/form-data") {
				r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxUploadBytes)
				if err := r.ParseMultipartForm(1 << 20); err != nil {
					h.fail(w, r, q, http.StatusBadRequest, "malformed upload: "+err.Error())
					return
				}
			} else {
				r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			}
			if !h.csrfOK(r, q.client) {
				h.fail(w, r, q, http.StatusForbidden, "the form's CSRF token is missing or stale: reload the page and try again")
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		fn(w, r, q)
	}
}

// loginForm asks for an API key.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	h.renderLogin(w, r, http.StatusOK, "")
}

func (h *Handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	client := h.visitor(w, r)
	w.Header().Set("Cache-Control", "no-store")
	h.render(w, r, status, "login", page{
		Title: "Log in", AuthRequired: h.srv.AuthRequired(), CSRF: h.csrfToken(client),
		Data: loginView{Error: msg, Next: safeNext(r.FormValue("next"))},
	})
}

type loginView struct {
	Error string
	Next  string
}

// login checks a key and opens a session for it.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	c, err := r.Cookie(visitorCookie)
	if err != nil || !h.csrfOK(r, c.Value) {
		h.renderLogin(w, r, http.StatusForbidden, "The form expired: enter the key again.")
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("key"))
	if !h.srv.AuthRequired() {
		http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
		return
	}
	if _, err := h.srv.Authenticate(r.Context(), secret); err != nil {
		h.renderLogin(w, r, http.StatusUnauthorized, "Refused: "+server.PublicMessage(err)+".")
		return
	}
	if _, old := h.session(r); old != "" {
		h.dropSession(old)
	}
	id := h.newSession(secret)
	h.setCookie(w, r, sessionCookie, id, int(h.opts.SessionTTL/time.Second))
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout ends the session.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, q *request) {
	if q.sessionID != "" {
		h.dropSession(q.sessionID)
	}
	h.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// safeNext keeps a post-login destination only when it is a page of
// ours, never another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	return next
}
