package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// Local runs the operations of the API on a Memory in this process: the
// same checks, limits, translations and error messages as the REST routes,
// without HTTP or keys. The REST handlers and the MCP tools are Local plus
// decoding and authorisation; the higmem CLI calls Local when it works on a
// database directly and an api.Client when it works on a server, so every
// door answers alike.
//
// Its methods have the names and signatures of api.Client's. Errors are
// classified as the REST routes report them (client mistakes carry a 4xx
// status and an api code, see ErrorCode); they never write anything.
type Local struct {
	mem      *higmem.Memory
	maxBatch int
	// onCalls, when set, is given the LLM calls of every add, search and
	// ask (the server's /metrics counts their fallbacks).
	onCalls func([]higmem.Call)
}

// NewLocal returns the operations on mem, with at most maxBatch turns per
// add (0: higmem.DefaultMaxBatchTurns).
func NewLocal(mem *higmem.Memory, maxBatch int) *Local {
	if maxBatch <= 0 {
		maxBatch = higmem.DefaultMaxBatchTurns
	}
	return &Local{mem: mem, maxBatch: maxBatch}
}

// observe hands LLM calls to onCalls, when set.
func (l *Local) observe(calls []higmem.Call) {
	if l.onCalls != nil && len(calls) > 0 {
		l.onCalls(calls)
	}
}

// checkID validates a user, agent, session, turn or event id: at most
// higmem.MaxIDLen bytes, no control characters.
func checkID(what, v string) error {
	if len(v) > higmem.MaxIDLen {
		return badRequest("%s is longer than %d bytes", what, higmem.MaxIDLen)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return badRequest("%s contains control characters", what)
	}
	return nil
}

// validSpace checks a scope: a user id is required, ids are bounded.
func validSpace(user, agent string) (higmem.Space, error) {
	if strings.TrimSpace(user) == "" {
		return higmem.Space{}, errorf(http.StatusBadRequest, api.CodeMissingScope,
			"user_id is required (REST: in the query string, or in the JSON body of POST /v1/turns, /v1/search and /v1/ask)")
	}
	if err := checkID("user_id", user); err != nil {
		return higmem.Space{}, err
	}
	if err := checkID("agent_id", agent); err != nil {
		return higmem.Space{}, err
	}
	return higmem.Space{UserID: user, AgentID: agent}, nil
}

// notFound reports a missing turn or event without the storage layer's
// wording.
func notFound(kind, id string, sp higmem.Space) *apiError {
	return errorf(http.StatusNotFound, api.CodeNotFound, "%s %q not found in space %s", kind, id, describeSpace(sp))
}

// describeSpace names a space for messages: user "alice", agent "bot".
func describeSpace(sp higmem.Space) string {
	if sp.AgentID == "" {
		return fmt.Sprintf("user %q", sp.UserID)
	}
	return fmt.Sprintf("user %q, agent %q", sp.UserID, sp.AgentID)
}

// lookupError turns ErrNotFound from a lookup of one record into notFound.
func lookupError(err error, kind, id string, sp higmem.Space) error {
	if errors.Is(err, higmem.ErrNotFound) {
		return notFound(kind, id, sp)
	}
	return err
}

// checkTurn does the cheap checks of a turn to add (the engine repeats them,
// and more, when it runs): async adds fail on them before a job is queued.
func checkTurn(i int, t api.TurnInput) error {
	where := fmt.Sprintf("turn %d", i+1)
	if err := checkID(where+" id", t.ID); err != nil {
		return err
	}
	if err := checkID(where+" session_id", t.SessionID); err != nil {
		return err
	}
	if strings.TrimSpace(t.Text) != "" {
		return nil
	}
	for _, a := range t.Attachments {
		if strings.TrimSpace(a.Caption) != "" {
			return nil
		}
	}
	return errorf(http.StatusBadRequest, api.CodeInvalidInput, "%s: empty text", where)
}

// prepareAdd validates an add and translates its turns.
func (l *Local) prepareAdd(req api.AddRequest) (higmem.Space, []higmem.TurnInput, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return sp, nil, err
	}
	in := req.Turns
	switch {
	case req.Turn != nil && req.Turns != nil:
		return sp, nil, badRequest("give either \"turn\" or \"turns\", not both")
	case req.Turn != nil:
		in = []api.TurnInput{*req.Turn}
	case len(req.Turns) == 0:
		return sp, nil, badRequest("no turns: give \"turn\" (one object) or \"turns\" (a non-empty array)")
	}
	if len(in) > l.maxBatch {
		return sp, nil, errorf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "%d turns in one request, over the limit of %d: split the batch", len(in), l.maxBatch)
	}
	for i, t := range in {
		if err := checkTurn(i, t); err != nil {
			return sp, nil, err
		}
	}
	return sp, engineTurnInputs(in), nil
}

// add stores prepared turns. On an error the response lists the turns
// stored before it.
func (l *Local) add(ctx context.Context, sp higmem.Space, turns []higmem.TurnInput) (*api.AddResponse, error) {
	res, err := l.mem.Add(ctx, sp, turns)
	if res != nil {
		l.observe(res.Calls)
	}
	return apiAddResponse(res), err
}

// Add adds turns and builds memory from them.
func (l *Local) Add(ctx context.Context, req api.AddRequest) (*api.AddResponse, error) {
	sp, turns, err := l.prepareAdd(req)
	if err != nil {
		return nil, err
	}
	return l.add(ctx, sp, turns)
}

// retrieveOptions validates and converts the retrieval knobs of a request.
func retrieveOptions(kTurn, kEvent, tokens, maxEv int) (higmem.RetrieveOptions, error) {
	for _, c := range []struct {
		name string
		v    int
		max  int
	}{{"k_turn", kTurn, 1000}, {"k_event", kEvent, 1000}, {"evidence_tokens", tokens, 1_000_000}, {"max_evidence", maxEv, 1000}} {
		if c.v < 0 {
			return higmem.RetrieveOptions{}, badRequest("%s: want 0 (the default) to %d, got %d", c.name, c.max, c.v)
		}
		if c.v > c.max {
			return higmem.RetrieveOptions{}, errorf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "%s is %d, over the limit of %d", c.name, c.v, c.max)
		}
	}
	return higmem.RetrieveOptions{KTurn: kTurn, KEvent: kEvent, EvidenceTokens: tokens, MaxEvidence: maxEv}, nil
}

func checkQuestion(q string) error {
	if strings.TrimSpace(q) == "" {
		return errorf(http.StatusBadRequest, api.CodeInvalidInput, "question is required")
	}
	if len(q) > higmem.DefaultMaxQuestionBytes {
		return errorf(http.StatusRequestEntityTooLarge, api.CodeTooLarge, "question is %d bytes, over the limit of %d", len(q), higmem.DefaultMaxQuestionBytes)
	}
	return nil
}

// scopeFilter restricts retrieval to one session and to turns whose
// metadata matches; nil when neither is given.
func scopeFilter(session string, f api.Filters) func(higmem.Turn) bool {
	if session == "" && len(f) == 0 {
		return nil
	}
	return func(t higmem.Turn) bool {
		return (session == "" || t.SessionID == session) && f.Match(t.Metadata)
	}
}

// Search returns the evidence for a question with the retrieval trace.
func (l *Local) Search(ctx context.Context, req api.SearchRequest) (*api.SearchResponse, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	if err := checkQuestion(req.Question); err != nil {
		return nil, err
	}
	if err := checkID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if err := req.Filters.Validate(); err != nil {
		return nil, err
	}
	ro, err := retrieveOptions(req.KTurn, req.KEvent, req.EvidenceTokens, req.MaxEvidence)
	if err != nil {
		return nil, err
	}
	ro.AsOf = req.AsOf
	ro.Filter = scopeFilter(req.SessionID, req.Filters)
	res, err := l.mem.Retrieve(ctx, sp, req.Question, ro)
	if err != nil {
		return nil, err
	}
	l.observe(res.Trace.Calls)
	return apiSearchResponse(res), nil
}

// Ask answers a question from memory (evidence only without an LLM).
func (l *Local) Ask(ctx context.Context, req api.AskRequest) (*api.AskResponse, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	if err := checkQuestion(req.Question); err != nil {
		return nil, err
	}
	ro, err := retrieveOptions(req.KTurn, req.KEvent, req.EvidenceTokens, req.MaxEvidence)
	if err != nil {
		return nil, err
	}
	ro.AsOf = req.AsOf
	ans, err := l.mem.Ask(ctx, sp, req.Question, ro)
	if err != nil {
		return nil, err
	}
	l.observe(ans.Trace.Calls)
	return apiAskResponse(ans), nil
}

// Turn returns one turn.
func (l *Local) Turn(ctx context.Context, s api.Scope, id string) (*api.Turn, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	t, err := l.mem.Get(ctx, sp, id)
	if err != nil {
		return nil, lookupError(err, "turn", id, sp)
	}
	out := apiTurn(t)
	return &out, nil
}

// Paging of turn lists.
const (
	defaultPage = 100
	maxPage     = 1000
)

// Turns returns a page of turns.
func (l *Local) Turns(ctx context.Context, req api.ListTurnsRequest) (*api.TurnList, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	if req.AfterSeq < 0 {
		return nil, badRequest("after_seq: want 0 or more, got %d", req.AfterSeq)
	}
	if req.Limit < 0 || req.Limit > maxPage {
		return nil, badRequest("limit: want 0 (the default, %d) to %d, got %d", defaultPage, maxPage, req.Limit)
	}
	limit := req.Limit
	if limit == 0 {
		limit = defaultPage
	}
	if err := checkID("session_id", req.SessionID); err != nil {
		return nil, err
	}
	if err := req.Filters.Validate(); err != nil {
		return nil, err
	}
	q := higmem.ListOptions{SessionID: req.SessionID, AfterSeq: req.AfterSeq}
	if len(req.Filters) == 0 {
		q.Limit = limit + 1 // one more tells whether there is a next page
	}
	ts, err := l.mem.List(ctx, sp, q)
	if err != nil {
		return nil, err
	}
	out := &api.TurnList{Turns: []api.Turn{}}
	for _, t := range ts {
		if !req.Filters.Match(t.Metadata) {
			continue
		}
		if len(out.Turns) == limit {
			out.NextAfterSeq = out.Turns[len(out.Turns)-1].Seq
			break
		}
		out.Turns = append(out.Turns, apiTurn(t))
	}
	return out, nil
}

// DeleteTurn deletes a turn and forgets it: its events are rebuilt without
// it and no record keeps its text (see docs/PRIVACY.md).
func (l *Local) DeleteTurn(ctx context.Context, s api.Scope, id string) (*api.DeleteResult, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	if err := l.mem.Delete(ctx, sp, id); err != nil {
		return nil, lookupError(err, "turn", id, sp)
	}
	return &api.DeleteResult{Deleted: "turn", ID: id, UserID: sp.UserID, AgentID: sp.AgentID}, nil
}

// Events returns every event of the space with its member turns.
func (l *Local) Events(ctx context.Context, s api.Scope) (*api.EventList, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	evs, err := l.mem.Events(ctx, sp)
	if err != nil {
		return nil, err
	}
	return &api.EventList{Events: apiEventViews(evs)}, nil
}

// Event returns one event with its member turns.
func (l *Local) Event(ctx context.Context, s api.Scope, id string) (*api.EventView, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	v, err := l.mem.Event(ctx, sp, id)
	if err != nil {
		return nil, lookupError(err, "event", id, sp)
	}
	out := apiEventView(v)
	return &out, nil
}

// Profiles returns every profile of the space (req.Entity is ignored).
func (l *Local) Profiles(ctx context.Context, req api.ProfilesRequest) (*api.ProfileList, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	ps, err := l.mem.Profiles(ctx, sp, higmem.ProfileOptions{AsOf: req.AsOf})
	if err != nil {
		return nil, err
	}
	out := &api.ProfileList{Profiles: make([]api.Profile, len(ps))}
	for i, p := range ps {
		out.Profiles[i] = apiProfile(p)
	}
	return out, nil
}

// Profile returns the profile of req.Entity.
func (l *Local) Profile(ctx context.Context, req api.ProfilesRequest) (*api.Profile, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	if err := checkID("entity", req.Entity); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Entity) == "" {
		return nil, badRequest("entity is empty")
	}
	p, err := l.mem.Profile(ctx, sp, req.Entity, higmem.ProfileOptions{AsOf: req.AsOf})
	if err != nil {
		return nil, lookupError(err, "profile", req.Entity, sp)
	}
	out := apiProfile(p)
	return &out, nil
}

// History returns the changes recorded for derived records.
func (l *Local) History(ctx context.Context, req api.HistoryRequest) (*api.HistoryList, error) {
	sp, err := validSpace(req.UserID, req.AgentID)
	if err != nil {
		return nil, err
	}
	switch req.Kind {
	case "", "event", "annotation", "link", "turn", "profile":
	default:
		return nil, badRequest("kind: want event, annotation, link, turn or profile, got %q", req.Kind)
	}
	if err := checkID("id", req.ID); err != nil {
		return nil, err
	}
	cs, err := l.mem.History(ctx, sp, req.Kind, req.ID)
	if err != nil {
		return nil, err
	}
	return &api.HistoryList{Changes: apiChanges(cs)}, nil
}

// Stats summarises the space.
func (l *Local) Stats(ctx context.Context, s api.Scope) (*api.Stats, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	st, err := l.mem.Stats(ctx, sp)
	if err != nil {
		return nil, err
	}
	out := apiStats(st)
	return &out, nil
}

// DeleteSpace deletes everything stored for the space, history included.
func (l *Local) DeleteSpace(ctx context.Context, s api.Scope) (*api.DeleteResult, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	if err := l.mem.DeleteSpace(ctx, sp); err != nil {
		return nil, err
	}
	return &api.DeleteResult{Deleted: "space", UserID: sp.UserID, AgentID: sp.AgentID}, nil
}

// Export writes the space as JSON lines to w.
func (l *Local) Export(ctx context.Context, s api.Scope, w io.Writer) error {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return err
	}
	return l.mem.Export(ctx, sp, w)
}

// Import reads an export into the space in one transaction.
func (l *Local) Import(ctx context.Context, s api.Scope, r io.Reader) (*api.ImportResponse, error) {
	sp, err := validSpace(s.UserID, s.AgentID)
	if err != nil {
		return nil, err
	}
	res, err := l.mem.Import(ctx, sp, r)
	if errors.Is(err, higmem.ErrNotFound) {
		// A record that refers to a missing turn is the upload's fault,
		// not a missing resource.
		err = &apiError{status: http.StatusBadRequest, code: api.CodeInvalidInput, msg: PublicMessage(err), err: err}
	}
	return apiImportResponse(res), err
}

// Spaces lists the spaces that hold memory, every user's: callers filter
// them by what their key may use.
func (l *Local) Spaces(ctx context.Context) ([]api.Scope, error) {
	sps, err := l.mem.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Scope, len(sps))
	for i, sp := range sps {
		out[i] = apiScope(sp)
	}
	return out, nil
}
