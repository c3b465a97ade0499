package ui

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// page is what every template gets.
type page struct {
	Title        string
	Nav          string     // the current section: spaces, timeline, turns, profiles, ask
	Scope        *api.Scope // the space shown, if any
	Key          *api.KeyInfo
	AuthRequired bool
	CSRF         string
	Data         any
}

// pageNames are the templates under templates/, each rendered inside
// base.html.
var pageNames = []string{"login", "error", "spaces", "timeline", "event", "turns", "turn", "ask", "imported", "profiles", "profile"}

var funcs = template.FuncMap{
	"spaceURL": spaceURL,
	"when":     when,
	"day":      day,
	"ms":       func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) },
	"join":     strings.Join,
	"f1":       func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"score":    func(v float64) string { return fmt.Sprintf("%.3f", v) },
	"turnList": func(sc *api.Scope, ts []api.Turn) turnList { return turnList{Scope: *sc, Turns: ts} },
}

// turnList is the argument of the turnlist template.
type turnList struct {
	Scope api.Scope
	Turns []api.Turn
}

func parsePages() map[string]*template.Template {
	base := template.Must(template.New("base.html").Funcs(funcs).ParseFS(templateFS, "templates/base.html", "templates/partials.html"))
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.Must(base.Clone())
		out[name] = template.Must(t.ParseFS(templateFS, "templates/"+name+".html"))
	}
	return out
}

// spaceURL is a page of the space sc with extra query parameters given
// as name, value pairs (empty values left out).
func spaceURL(path string, sc api.Scope, kv ...string) string {
	v := url.Values{}
	v.Set("user", sc.UserID)
	if sc.AgentID != "" {
		v.Set("agent", sc.AgentID)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	return Prefix + path + "?" + v.Encode()
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// when formats an instant for people, in UTC.
func when(t time.Time) string {
	if t.IsZero() {
		return "unknown time"
	}
	return t.UTC().Format("2 Jan 2006 15:04")
}

// day formats an instant's date.
func day(t time.Time) string {
	if t.IsZero() {
		return "undated"
	}
	return t.UTC().Format("2 Jan 2006")
}

// render writes a page, buffered so that a template error becomes a 500
// and not half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.AuthRequired = h.srv.AuthRequired()
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "base.html", p); err != nil {
		h.log.Error("ui: rendering", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// newPage fills the fields every page of an authenticated request has.
func newPage(q *request, title, nav string, sc *api.Scope, data any) page {
	p := page{Title: title, Nav: nav, Scope: sc, CSRF: q.csrf, Data: data}
	k := q.key
	p.Key = &k
	return p
}

type errorView struct {
	Status  int
	Message string
}

// fail answers an error page: with err, its status and message as the
// REST routes report them; without, status and msg.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, q *request, status int, msg string) {
	p := page{Title: http.StatusText(status), Data: errorView{Status: status, Message: msg}}
	if q != nil {
		p = newPage(q, http.StatusText(status), "", nil, p.Data)
	}
	h.render(w, r, status, "error", p)
}

// failErr answers err as the REST routes classify it.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, q *request, err error) {
	status, _ := server.ErrorCode(err)
	msg := server.PublicMessage(err)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		msg = fmt.Sprintf("the upload exceeds %d bytes", mbe.Limit)
	case status >= 500:
		h.log.Error("ui: request failed", "path", r.URL.Path, "err", err)
		msg = "internal error (see the server log)"
	}
	h.fail(w, r, q, status, msg)
}
