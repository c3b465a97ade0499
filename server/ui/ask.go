package ui

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
)

// stageOrder is the order of the retrieval stages the Ask page draws.
// The stages of the question's mode (drawnIn) are always drawn (a stage
// that did not run says so); the others only when recorded.
var stageOrder = []string{"search", "reranked", "events", "predicted", "timeline", "profile", "union", "shown", "selected", "filtered", "final"}

// drawnIn lists, per mode, the stages the Ask page always draws.
var drawnIn = map[string][]string{
	"default": {"search", "events", "shown", "selected", "final"},
	"paper":   {"search", "events", "predicted", "filtered", "final"},
	"offline": {"search", "events", "shown", "selected", "final"}, // what a model would add
}

// stageDesc says what each stage is, for the page.
var stageDesc = map[string]string{
	"search":    "turns found by lexical/dense search",
	"reranked":  "the best turns by offline score, in the order of the learned stage (e5-small-v2); offline mode passes the first of them",
	"events":    "candidate events",
	"predicted": "turns the model chose inside the candidate events",
	"timeline":  "turns in the time range the question names",
	"profile":   "turns stating what the question asks of a person's profile (the value that holds, or held then)",
	"union":     "all candidates together",
	"shown":     "turns shown to the model: each candidate event's closest, then the search, timeline and profile hits",
	"selected":  "turns the model selected as evidence",
	"filtered":  "turns the relevance filter kept",
	"final":     "the evidence, after budgets",
}

type stageCol struct {
	Name  string
	Desc  string
	Ran   bool
	Count int
	Event bool // the stage holds event ids, not turn ids
	IDs   []string
}

// stageCell is one turn at one stage.
type stageCell struct {
	In   bool // the stage proposed (or kept) the turn
	Note string
}

type candidateRow struct {
	Turn    api.Turn
	Known   bool
	Cells   []stageCell
	Kept    bool
	Verdict string
}

type callTotals struct {
	Prompt, Completion int
	Latency            time.Duration
	Estimated          bool
}

type askView struct {
	Question   string
	Asked      bool
	Answer     *api.AskResponse
	Stages     []stageCol
	Candidates []candidateRow
	EventTitle map[string]string
	Totals     callTotals
	Error      string
}

// ask answers a question and shows why it got its evidence.
func (h *Handler) ask(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	v := askView{Question: strings.TrimSpace(r.FormValue("q"))}
	if v.Question == "" {
		h.render(w, r, http.StatusOK, "ask", newPage(q, "Ask", "ask", &sc, v))
		return
	}
	v.Asked = true
	err := h.read(r.Context(), func(ctx context.Context) error {
		ans, err := h.local.Ask(ctx, api.AskRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: v.Question})
		if err != nil {
			return err
		}
		evs, err := h.local.Events(ctx, sc)
		if err != nil {
			return err
		}
		v.Answer = ans
		h.explain(ctx, sc, &v, evs.Events)
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "ask", newPage(q, "Ask: "+v.Question, "ask", &sc, v))
}

// explain turns the trace into columns (stages) and rows (candidate
// turns), each cell saying whether the stage proposed the turn.
func (h *Handler) explain(ctx context.Context, sc api.Scope, v *askView, evs []api.EventView) {
	tr := &v.Answer.Trace
	turns := map[string]api.Turn{}
	eventsOf := map[string][]string{}
	v.EventTitle = map[string]string{}
	for _, e := range evs {
		v.EventTitle[e.Event.ID] = e.Event.Title
		for _, t := range e.Turns {
			turns[t.ID] = t
			eventsOf[t.ID] = append(eventsOf[t.ID], e.Event.ID)
		}
	}
	for _, e := range v.Answer.Evidence {
		turns[e.Turn.ID] = e.Turn
	}
	always := drawnIn[tr.Mode]
	if always == nil {
		always = drawnIn["paper"]
	}
	for _, name := range stageOrder {
		ids, ran := stageIDs(tr, name)
		if !ran && !slices.Contains(always, name) {
			continue
		}
		v.Stages = append(v.Stages, stageCol{Name: name, Desc: stageDesc[name], Ran: ran, Count: len(ids), Event: name == "events", IDs: ids})
	}
	// Rows: the evidence first (chronological), then the other candidates
	// in the order the stages proposed them.
	var order []string
	seen := map[string]bool{}
	for _, e := range v.Answer.Evidence {
		if !seen[e.Turn.ID] {
			seen[e.Turn.ID] = true
			order = append(order, e.Turn.ID)
		}
	}
	for _, s := range v.Stages {
		if s.Event {
			continue
		}
		for _, id := range s.IDs {
			if !seen[id] {
				seen[id] = true
				order = append(order, id)
			}
		}
	}
	final, _ := stageIDs(tr, "final")
	for _, id := range order {
		t, known := turns[id]
		if !known {
			if got, err := h.local.Turn(ctx, sc, id); err == nil {
				t, known = *got, true
			} else {
				t = api.Turn{ID: id}
			}
		}
		row := candidateRow{Turn: t, Known: known, Kept: slices.Contains(final, id)}
		last := ""
		for _, s := range v.Stages {
			var c stageCell
			switch {
			case !s.Ran:
				c.Note = "not run"
			case s.Event:
				for _, e := range eventsOf[id] {
					if slices.Contains(s.IDs, e) {
						c.In, c.Note = true, "in "+e
						break
					}
				}
			default:
				c.In = slices.Contains(s.IDs, id)
			}
			if c.In && !s.Event {
				last = s.Name
			}
			row.Cells = append(row.Cells, c)
		}
		switch {
		case row.Kept:
			row.Verdict = "kept"
		case last != "":
			row.Verdict = "dropped after " + last
		default:
			row.Verdict = "dropped"
		}
		v.Candidates = append(v.Candidates, row)
	}
	for _, c := range tr.Calls {
		v.Totals.Prompt += c.Usage.PromptTokens
		v.Totals.Completion += c.Usage.CompletionTokens
		v.Totals.Latency += c.Latency
		v.Totals.Estimated = v.Totals.Estimated || c.Usage.Estimated
	}
}

func stageIDs(tr *api.Trace, name string) ([]string, bool) {
	for _, s := range tr.Stages {
		if s.Name == name {
			return s.IDs, true
		}
	}
	return nil, false
}
