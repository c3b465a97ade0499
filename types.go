package higmem

import (
	"time"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Aliases of the store records, so that library users need only this
// package.
type (
	// Space scopes memory to one (user, agent) pair.
	Space = store.Space
	// Turn is one raw utterance as stored.
	Turn = store.Turn
	// Annotation is derived information about a turn.
	Annotation = store.Annotation
	// Event groups turns about one happening or topic.
	Event = store.Event
	// Link relates two turns.
	Link = store.Link
	// Change is one history entry of a derived record.
	Change = store.Change
	// Attachment is something shared with a turn, such as an image.
	Attachment = store.Attachment
)

// TurnInput is a turn to add.
type TurnInput struct {
	// ID is the caller's id for the turn, unique in the space (such as
	// "D3:7"). Empty means the engine generates one ("t<seq>").
	ID string `json:"id,omitempty"`
	// SessionID groups the turn with others of one session.
	SessionID string `json:"session_id,omitempty"`
	// Speaker is who said it.
	Speaker string `json:"speaker"`
	// Text is what was said. It may be empty only when an attachment has a
	// caption.
	Text string `json:"text"`
	// Time is when it was said, in any common format (RFC 3339, ISO 8601,
	// Unix seconds, LoCoMo's "1:56 pm on 8 May, 2023"...). It is kept
	// verbatim; when it cannot be parsed the turn is stored with an unknown
	// OccurredAt and a warning.
	Time string `json:"time,omitempty"`
	// OccurredAt, when set, takes precedence over parsing Time.
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// Attachments shared with the turn.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Metadata holds caller-defined fields, stored with the turn.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// AddResult reports what Add did.
type AddResult struct {
	// Added lists the ids of newly stored turns, in order.
	Added []string `json:"added"`
	// Skipped lists ids that were already stored with identical content.
	Skipped []string `json:"skipped,omitempty"`
	// Events lists the events created or updated, sorted.
	Events []string `json:"events,omitempty"`
	// Warnings describes recoverable problems (an unparsable time, a model
	// reply that had to be replaced by a fallback).
	Warnings []string `json:"warnings,omitempty"`
	// Calls records every LLM call made.
	Calls []Call `json:"calls,omitempty"`
}

// Call records one LLM call.
type Call struct {
	Role      llm.Role      `json:"role"`
	Operation string        `json:"operation"`
	Round     int           `json:"round,omitempty"`
	Usage     llm.Usage     `json:"usage"`
	Latency   time.Duration `json:"latency"`
	Cached    bool          `json:"cached,omitempty"`
	// Error is set when the call failed or its reply was unusable and a
	// fallback was used.
	Error string `json:"error,omitempty"`
	// Check is the semantic check's finding when the reply was not used as
	// written: "repaired: …" (parts dropped or cut) or "rejected: …"
	// (junk; nothing of it was stored and Error is set too).
	Check string `json:"check,omitempty"`
	// Requests counts the HTTP requests the call made: retries (timeouts
	// included), format downgrades and a re-ask; 0 when answered from a
	// cache.
	Requests int `json:"requests,omitempty"`
	// Reasked is set when the reply was asked for a second time (the
	// first was unusable or cut at its token budget); Usage and Latency
	// cover both requests.
	Reasked bool `json:"reasked,omitempty"`
	// Truncated is set when the reply used was cut at its token budget
	// (finish_reason "length") and repaired: its re-ask failed (Error
	// says why).
	Truncated bool `json:"truncated,omitempty"`
}

// RetrieveOptions tunes one retrieval. The zero value uses the Memory's
// options.
type RetrieveOptions struct {
	// KTurn and KEvent override Options.KTurn and Options.KEvent.
	KTurn, KEvent int
	// AsOf, when set, searches memory as it stood at that time: only turns
	// recorded at or before it.
	AsOf time.Time
	// EvidenceTokens overrides Options.EvidenceTokens.
	EvidenceTokens int
	// MaxEvidence caps the number of evidence turns (0 = only the token
	// budget caps it).
	MaxEvidence int
	// Filter, when set, restricts retrieval to the turns it accepts (a
	// session, a metadata condition): every stage sees only those turns.
	// It must be cheap and safe for concurrent use.
	Filter func(Turn) bool `json:"-"`
}

// Evidence is one turn selected for a question.
type Evidence struct {
	Turn Turn `json:"turn"`
	// Date is the turn's date as shown to the answer model.
	Date string `json:"date,omitempty"`
	// Score ranks the evidence (higher is more relevant); its scale depends
	// on the mode.
	Score float64 `json:"score"`
	// Sources says which stages proposed the turn: "search" (the turn
	// search), "event" (chosen inside a candidate event), "timeline" (in
	// the time range the question names) or, in offline mode,
	// "neighbour" (selected by its context score: its session neighbours'
	// and its event's relevance) and "profile" (it states the profile
	// attribute the question asks about, see Memory.Profiles).
	Sources []string `json:"sources,omitempty"`
	// Events lists the events the turn belongs to.
	Events []string `json:"events,omitempty"`
	// Times resolves the turn's relative time expressions against its
	// date, e.g. "yesterday = 7 May 2023"; the answer model sees them.
	Times []string `json:"times,omitempty"`
	// Excerpt is set when Turn.Text holds only part of the turn: the
	// passages of a long turn that match the question (see passages.go).
	// Turn keeps the turn's id, speaker and time.
	Excerpt *Excerpt `json:"excerpt,omitempty"`
}

// Excerpt says which part of a long turn an evidence shows.
type Excerpt struct {
	// Passages are the passages shown, in the text's order.
	Passages []Passage `json:"passages"`
	// Of is the number of passages of the turn.
	Of int `json:"of"`
	// Bytes is the length of the turn's whole text.
	Bytes int `json:"bytes"`
}

// Passage is one passage of a long turn: its ordinal among the turn's
// passages (from 0) and its bytes [Start, End) in the turn's text.
type Passage struct {
	Ordinal int `json:"ordinal"`
	Start   int `json:"start"`
	End     int `json:"end"`
}

// QueryInfo is the analysis of a question.
type QueryInfo struct {
	// Keywords is the search query derived from the question.
	Keywords string `json:"keywords"`
	// Entities are names found in the question.
	Entities []string `json:"entities,omitempty"`
	// Temporal is true when the question asks about time.
	Temporal bool `json:"temporal"`
	// Start and End bound the time range the question names, if any.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// By is "llm" or "rules".
	By string `json:"by"`
}

// Stage is the set of candidate turn (or event) ids after one retrieval
// step.
type Stage struct {
	// Name is one of "search" (lexical/dense top-k turns), "events"
	// (candidate event ids), "predicted" (turns chosen inside events),
	// "timeline", "union", "filtered", "final". Offline mode, which
	// scores every turn at once, records "search" and "final", "reranked"
	// when its learned stage re-ordered the best turns (their ids in the
	// stage's order, best first), and "profile" when profile attributes
	// added evidence.
	Name string   `json:"name"`
	IDs  []string `json:"ids"`
}

// Trace explains a retrieval: the candidates of every stage and every LLM
// call.
type Trace struct {
	Mode   Mode      `json:"mode"`
	Query  QueryInfo `json:"query"`
	Stages []Stage   `json:"stages"`
	Calls  []Call    `json:"calls,omitempty"`
	// Rounds is the number of sequential LLM rounds on the critical path.
	Rounds  int           `json:"rounds"`
	Elapsed time.Duration `json:"elapsed"`
	// Notes holds human-readable remarks (fallbacks, budget cuts).
	Notes []string `json:"notes,omitempty"`
}

// Stage returns the ids of the named stage, or nil.
func (t *Trace) Stage(name string) []string {
	for _, s := range t.Stages {
		if s.Name == name {
			return s.IDs
		}
	}
	return nil
}

// Result is the outcome of Retrieve.
type Result struct {
	Question string `json:"question"`
	// Evidence lists the selected turns in chronological order.
	Evidence []Evidence `json:"evidence"`
	// Context is the evidence rendered as the answer model sees it.
	Context string `json:"context"`
	Trace   Trace  `json:"trace"`
}

// IDs returns the ids of the evidence turns in order.
func (r *Result) IDs() []string {
	ids := make([]string, len(r.Evidence))
	for i, e := range r.Evidence {
		ids[i] = e.Turn.ID
	}
	return ids
}

// Answer is the outcome of Ask.
type Answer struct {
	Result
	// Text is the answer. It is empty in offline mode.
	Text string `json:"answer"`
	// Note explains a missing answer ("no LLM configured ...").
	Note string `json:"note,omitempty"`
}

// EventView is an event with its member turns.
type EventView struct {
	Event Event  `json:"event"`
	Turns []Turn `json:"turns"`
}
