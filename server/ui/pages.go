package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
)

// scope reads the space a page is about (?user=&agent=) and checks the
// key may use it. It answers the error itself and returns false.
func (h *Handler) scope(w http.ResponseWriter, r *http.Request, q *request) (api.Scope, bool) {
	sc := api.Scope{UserID: r.FormValue("user"), AgentID: r.FormValue("agent")}
	if strings.TrimSpace(sc.UserID) == "" {
		h.fail(w, r, q, http.StatusBadRequest, "no space named: the page needs ?user= (and ?agent= for an agent's space)")
		return sc, false
	}
	if !q.may(sc.UserID) {
		h.fail(w, r, q, http.StatusForbidden, fmt.Sprintf("API key %q may not use user %q", q.key.Name, sc.UserID))
		return sc, false
	}
	return sc, true
}

// read runs fn as a REST read runs (bounded by the server's request
// timeout).
func (h *Handler) read(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, done, err := h.srv.OpContext(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	return fn(ctx)
}

type spaceRow struct {
	Scope api.Scope
	Stats api.Stats
}

type spacesView struct {
	Spaces []spaceRow
	All    bool
}

// spaces lists the spaces the key may see.
func (h *Handler) spaces(w http.ResponseWriter, r *http.Request, q *request) {
	var v spacesView
	v.All = q.may(api.AllUsers)
	err := h.read(r.Context(), func(ctx context.Context) error {
		scs, err := h.local.Spaces(ctx)
		if err != nil {
			return err
		}
		for _, sc := range scs {
			if !q.may(sc.UserID) {
				continue
			}
			st, err := h.local.Stats(ctx, sc)
			if err != nil {
				return err
			}
			v.Spaces = append(v.Spaces, spaceRow{Scope: sc, Stats: *st})
		}
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "spaces", newPage(q, "Spaces", "spaces", nil, v))
}

// allTurns pages through a space's turns.
func (h *Handler) allTurns(ctx context.Context, sc api.Scope, after int64, fn func(api.Turn) bool) error {
	for {
		page, err := h.local.Turns(ctx, api.ListTurnsRequest{Scope: sc, AfterSeq: after, Limit: 1000})
		if err != nil {
			return err
		}
		for _, t := range page.Turns {
			if !fn(t) {
				return nil
			}
		}
		if page.NextAfterSeq == 0 {
			return nil
		}
		after = page.NextAfterSeq
	}
}

// timeline shows a space's events on a time axis with its sessions.
func (h *Handler) timeline(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	var v *timelineView
	err := h.read(r.Context(), func(ctx context.Context) error {
		st, err := h.local.Stats(ctx, sc)
		if err != nil {
			return err
		}
		evs, err := h.local.Events(ctx, sc)
		if err != nil {
			return err
		}
		// The sessions come from the turns. When the events hold every
		// turn (usual: offline mode and the LLM modes put each turn in an
		// event), their member turns, already in memory, are all of them;
		// otherwise the turns are read from the store.
		var turns []api.Turn
		seen := make(map[string]bool, st.Turns)
		for _, e := range evs.Events {
			for _, t := range e.Turns {
				if !seen[t.ID] {
					seen[t.ID] = true
					turns = append(turns, t)
				}
			}
		}
		if len(turns) != st.Turns {
			turns = turns[:0]
			if err := h.allTurns(ctx, sc, 0, func(t api.Turn) bool { turns = append(turns, t); return true }); err != nil {
				return err
			}
		}
		v = buildTimeline(sc, *st, evs.Events, turns)
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	v.Deleted = r.FormValue("deleted")
	page, _ := strconv.Atoi(r.FormValue("page"))
	v.paginate(page)
	h.render(w, r, http.StatusOK, "timeline", newPage(q, "Timeline", "timeline", &sc, v))
}

type eventView struct {
	Event    api.Event
	Turns    []api.Turn
	Members  map[string]bool
	Sessions []string
	History  []changeRow
}

type changeRow struct {
	api.Change
	Summary string
	Before  string
	After   string
}

// event shows one event: summary, fact sheet, member turns, history.
func (h *Handler) event(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	id := r.FormValue("id")
	var v eventView
	err := h.read(r.Context(), func(ctx context.Context) error {
		ev, err := h.local.Event(ctx, sc, id)
		if err != nil {
			return err
		}
		hist, err := h.local.History(ctx, api.HistoryRequest{Scope: sc, Kind: "event", ID: id})
		if err != nil {
			return err
		}
		v = eventView{Event: ev.Event, Turns: ev.Turns, Members: map[string]bool{}}
		for _, t := range ev.Turns {
			v.Members[t.ID] = true
			if !slices.Contains(v.Sessions, t.SessionID) && t.SessionID != "" {
				v.Sessions = append(v.Sessions, t.SessionID)
			}
		}
		for _, c := range hist.Changes {
			v.History = append(v.History, changeRow{Change: c, Summary: changeSummary(c), Before: pretty(c.Before), After: pretty(c.After)})
		}
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "event", newPage(q, "Event: "+v.Event.Title, "timeline", &sc, v))
}

// changeSummary says in words what an event change did.
func changeSummary(c api.Change) string {
	var before, after struct {
		Title   string   `json:"title"`
		TurnIDs []string `json:"turn_ids"`
	}
	_ = json.Unmarshal(c.Before, &before)
	_ = json.Unmarshal(c.After, &after)
	switch c.Action {
	case "create":
		return fmt.Sprintf("created with %d turn(s)", len(after.TurnIDs))
	case "delete":
		return fmt.Sprintf("deleted (had %d turn(s))", len(before.TurnIDs))
	}
	var parts []string
	if before.Title != after.Title {
		parts = append(parts, fmt.Sprintf("title %q → %q", before.Title, after.Title))
	}
	var added, removed []string
	for _, id := range after.TurnIDs {
		if !slices.Contains(before.TurnIDs, id) {
			added = append(added, id)
		}
	}
	for _, id := range before.TurnIDs {
		if !slices.Contains(after.TurnIDs, id) {
			removed = append(removed, id)
		}
	}
	if len(added) > 0 {
		parts = append(parts, "turns added: "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "turns removed: "+strings.Join(removed, ", "))
	}
	if len(parts) == 0 {
		return "updated"
	}
	return strings.Join(parts, "; ")
}

func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// turnFilter is the turn search form.
type turnFilter struct {
	Q, Session, Speaker, From, To string
	After                         int64
}

type turnsView struct {
	Filter  turnFilter
	Turns   []api.Turn
	Next    string
	Ranked  bool
	Error   string
	Limited bool
}

// maxTurnResults bounds one page of turn search.
const maxTurnResults = 100

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// parseBound parses a date (2006-01-02; as the end of a range, the whole
// day) or an RFC 3339 time.
func parseBound(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if dateRE.MatchString(s) {
		t, err := time.Parse("2006-01-02", s)
		if err == nil && end {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, err
	}
	return time.Parse(time.RFC3339, s)
}

// turns searches a space's turns: by meaning (a query) or in order, with
// filters on session, speaker and time.
func (h *Handler) turns(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	f := turnFilter{Q: strings.TrimSpace(r.FormValue("q")), Session: r.FormValue("session"), Speaker: strings.TrimSpace(r.FormValue("speaker")),
		From: r.FormValue("from"), To: r.FormValue("to")}
	f.After, _ = strconv.ParseInt(r.FormValue("after"), 10, 64)
	v := turnsView{Filter: f, Ranked: f.Q != ""}
	from, err1 := parseBound(f.From, false)
	to, err2 := parseBound(f.To, true)
	if err1 != nil || err2 != nil {
		v.Error = "Dates are YYYY-MM-DD (or RFC 3339 times)."
		h.render(w, r, http.StatusBadRequest, "turns", newPage(q, "Turns", "turns", &sc, v))
		return
	}
	match := func(t api.Turn) bool {
		if f.Session != "" && t.SessionID != f.Session {
			return false
		}
		if f.Speaker != "" && !strings.EqualFold(t.Speaker, f.Speaker) {
			return false
		}
		if !from.IsZero() && (t.OccurredAt.IsZero() || t.OccurredAt.Before(from)) {
			return false
		}
		if !to.IsZero() && (t.OccurredAt.IsZero() || t.OccurredAt.After(to)) {
			return false
		}
		return true
	}
	err := h.read(r.Context(), func(ctx context.Context) error {
		if f.Q != "" {
			res, err := h.local.Search(ctx, api.SearchRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: f.Q, SessionID: f.Session, MaxEvidence: maxTurnResults})
			if err != nil {
				return err
			}
			for _, e := range res.Evidence {
				if match(e.Turn) {
					v.Turns = append(v.Turns, e.Turn)
				}
			}
			return nil
		}
		var last int64
		err := h.allTurns(ctx, sc, f.After, func(t api.Turn) bool {
			if !match(t) {
				return true
			}
			if len(v.Turns) == maxTurnResults {
				v.Next = spaceURL("turns", sc, "session", f.Session, "speaker", f.Speaker, "from", f.From, "to", f.To, "after", strconv.FormatInt(last, 10))
				return false
			}
			v.Turns = append(v.Turns, t)
			last = t.Seq
			return true
		})
		return err
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "turns", newPage(q, "Turns", "turns", &sc, v))
}

type turnView struct {
	Turn    api.Turn
	Effects []deleteEffect
}

// deleteEffect is what deleting a turn does to one of its events.
type deleteEffect struct {
	Event api.Event
	// Left is the number of turns the event keeps; 0 deletes it.
	Left int
	// Facts counts the event's facts that cite the turn (kept, with a
	// link that no longer resolves).
	Facts int
}

// turn shows one turn, and what deleting it would change, with the form
// that deletes it.
func (h *Handler) turn(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	id := r.FormValue("id")
	var v turnView
	err := h.read(r.Context(), func(ctx context.Context) error {
		t, err := h.local.Turn(ctx, sc, id)
		if err != nil {
			return err
		}
		v.Turn = *t
		evs, err := h.local.Events(ctx, sc)
		if err != nil {
			return err
		}
		for _, e := range evs.Events {
			if !slices.Contains(e.Event.TurnIDs, id) {
				continue
			}
			ef := deleteEffect{Event: e.Event, Left: len(e.Event.TurnIDs) - 1}
			for _, f := range e.Event.Facts {
				if f.TurnID == id {
					ef.Facts++
				}
			}
			v.Effects = append(v.Effects, ef)
		}
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "turn", newPage(q, "Turn "+v.Turn.ID, "turns", &sc, v))
}

// deleteTurn deletes a turn (the confirmed form of the turn page) and
// goes back to the timeline.
func (h *Handler) deleteTurn(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	id := r.PostFormValue("id")
	ctx, done, err := h.srv.OpContext(r.Context(), true)
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	_, err = h.local.DeleteTurn(ctx, sc, id)
	done()
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	http.Redirect(w, r, spaceURL("space", sc, "deleted", id), http.StatusSeeOther)
}

// export downloads the space as JSON lines (higmem import reads them).
func (h *Handler) export(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	name := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, strings.Trim(sc.UserID+"-"+sc.AgentID, "-"))
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="higmem-`+name+`.jsonl"`)
	if err := h.read(r.Context(), func(ctx context.Context) error { return h.local.Export(ctx, sc, w) }); err != nil {
		h.log.Error("ui: export", "err", err) // the body has started
	}
}

type importedView struct {
	Result api.ImportResponse
}

// importSpace reads an uploaded export into a space.
func (h *Handler) importSpace(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		h.fail(w, r, q, http.StatusBadRequest, "choose an export file (JSON lines, as Export downloads) to import")
		return
	}
	defer f.Close()
	ctx, done, err := h.srv.OpContext(r.Context(), true)
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	res, err := h.local.Import(ctx, sc, f)
	done()
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "imported", newPage(q, "Imported", "timeline", &sc, importedView{Result: *res}))
}
