// Package api defines the wire types of higmem's REST API (served by package
// server, `higmem serve`) and a Go client for it.
//
// Every call is scoped to a memory space: a user id (required) and an agent
// id (optional). GET and DELETE calls carry the scope in the query string
// (user_id, agent_id); JSON POST calls carry it in the body. Errors come back
// as a JSON body {"error":{"code","message"}}, which the client turns into a
// *StatusError.
//
// The records (turns, events, evidence, traces) are this package's own wire
// structs, translated from the engine's types by package server, so that the
// REST contract is written here and not by a storage tag, and a program that
// only talks to a server imports nothing of the engine. Every JSON field is
// spelled as in the engine's Go types and the CLI's --json output.
package api

import (
	"fmt"
	"time"
)

// Version is the version of the REST API; routes live under "/" + Version.
const Version = "v1"

// Scope names a memory space. UserID is required.
type Scope struct {
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id,omitempty"`
}

// Error codes carried in ErrorDetail.Code.
const (
	CodeInvalidJSON          = "invalid_json"           // 400: the body is not well-formed JSON
	CodeInvalidRequest       = "invalid_request"        // 400: wrong types, unknown fields, bad parameters
	CodeMissingScope         = "missing_scope"          // 400: no user_id
	CodeInvalidInput         = "invalid_input"          // 400: the engine rejected the input (empty text...)
	CodeUnauthorized         = "unauthorized"           // 401: no or unknown API key
	CodeForbidden            = "forbidden"              // 403: the key may not use this user id
	CodeNotFound             = "not_found"              // 404: no such turn, event, job or route
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeConflict             = "conflict"               // 409: a turn id is taken by a different turn
	CodeBodyTooLarge         = "body_too_large"         // 413
	CodeTooLarge             = "too_large"              // 413: a turn, batch or question over the memory's caps
	CodeUnsupportedMediaType = "unsupported_media_type" // 415
	CodeTooManyJobs          = "too_many_jobs"          // 429: the async job queue is full
	CodeHeadersTooLarge      = "headers_too_large"      // 431: request line and headers over the server's limit
	CodeInternal             = "internal"               // 500
	CodeNoLLM                = "no_llm"                 // 501: the operation needs an LLM and none is configured
	CodeNotImplemented       = "not_implemented"        // 501: an HTTP feature the server does not support (a transfer encoding)
	CodeUnavailable          = "unavailable"            // 503: shutting down or closed
	CodeTimeout              = "timeout"                // 504
)

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names what went wrong.
type ErrorDetail struct {
	// Code is one of the Code constants.
	Code string `json:"code"`
	// Message is a human-readable explanation naming the problem.
	Message string `json:"message"`
}

// StatusError is the error the client returns for every non-2xx response.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code and Message come from the error body (Code is "" when the body
	// was not a higmem error body).
	Code    string
	Message string
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("api: HTTP %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("api: HTTP %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// TurnInput is a turn to add.
type TurnInput struct {
	// ID is the caller's id, unique in the space; empty lets the engine
	// generate one.
	ID string `json:"id,omitempty"`
	// SessionID groups the turn with others of one conversation session.
	SessionID string `json:"session_id,omitempty"`
	// Speaker is who said it.
	Speaker string `json:"speaker"`
	// Text is what was said.
	Text string `json:"text"`
	// Time is when it was said, in any common format; kept verbatim.
	Time string `json:"time,omitempty"`
	// OccurredAt, when set, takes precedence over Time.
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// Attachments shared with the turn (only captions are searched).
	Attachments []Attachment `json:"attachments,omitempty"`
	// Metadata holds caller-defined fields; list and search can filter on
	// them.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// AddRequest adds one turn (Turn) or a batch (Turns); exactly one of the two
// must be set.
type AddRequest struct {
	UserID  string      `json:"user_id"`
	AgentID string      `json:"agent_id,omitempty"`
	Turn    *TurnInput  `json:"turn,omitempty"`
	Turns   []TurnInput `json:"turns,omitempty"`
}

// Job states.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
)

// Job is an asynchronous add or import.
type Job struct {
	ID      string `json:"id"`
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id,omitempty"`
	// Kind is "add" or "import".
	Kind string `json:"kind"`
	// Status is JobQueued, JobRunning, JobSucceeded or JobFailed.
	Status string `json:"status"`
	// Turns is the number of turns submitted (add jobs).
	Turns      int       `json:"turns,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Add is the result of an add job; on failure it lists the turns that
	// were stored before the error.
	Add *AddResponse `json:"add,omitempty"`
	// Import is the result of an import job.
	Import *ImportResponse `json:"import,omitempty"`
	// Error is set when the job failed.
	Error *ErrorDetail `json:"error,omitempty"`
}

// Done reports whether the job has finished, successfully or not.
func (j *Job) Done() bool { return j.Status == JobSucceeded || j.Status == JobFailed }

// SearchRequest asks for the evidence that answers a question.
type SearchRequest struct {
	UserID   string `json:"user_id"`
	AgentID  string `json:"agent_id,omitempty"`
	Question string `json:"question"`
	// SessionID keeps only evidence from one session.
	SessionID string `json:"session_id,omitempty"`
	// Filters keeps only evidence whose metadata matches.
	Filters Filters `json:"filters,omitempty"`
	// KTurn and KEvent override the server's search breadth.
	KTurn  int `json:"k_turn,omitempty"`
	KEvent int `json:"k_event,omitempty"`
	// AsOf searches memory as it stood at that time.
	AsOf time.Time `json:"as_of,omitzero"`
	// EvidenceTokens overrides the evidence token budget.
	EvidenceTokens int `json:"evidence_tokens,omitempty"`
	// MaxEvidence caps the number of evidence turns.
	MaxEvidence int `json:"max_evidence,omitempty"`
}

// AskRequest asks a question; the answer is written from the evidence. It
// takes no filters: the answer model sees the whole selection.
type AskRequest struct {
	UserID   string `json:"user_id"`
	AgentID  string `json:"agent_id,omitempty"`
	Question string `json:"question"`
	// KTurn and KEvent override the server's search breadth.
	KTurn  int `json:"k_turn,omitempty"`
	KEvent int `json:"k_event,omitempty"`
	// AsOf answers from memory as it stood at that time.
	AsOf time.Time `json:"as_of,omitzero"`
	// EvidenceTokens overrides the evidence token budget.
	EvidenceTokens int `json:"evidence_tokens,omitempty"`
	// MaxEvidence caps the number of evidence turns.
	MaxEvidence int `json:"max_evidence,omitempty"`
}

// ListTurnsRequest selects turns of a space, in order.
type ListTurnsRequest struct {
	Scope
	// SessionID keeps only one session's turns.
	SessionID string
	// AfterSeq keeps only turns after this sequence number (for paging).
	AfterSeq int64
	// Limit caps the page (server default 100, at most 1000).
	Limit int
	// Filters keeps only turns whose metadata matches.
	Filters Filters
}

// TurnList is a page of turns.
type TurnList struct {
	Turns []Turn `json:"turns"`
	// NextAfterSeq, when non-zero, is the AfterSeq of the next page.
	NextAfterSeq int64 `json:"next_after_seq,omitempty"`
}

// EventList is every event of a space with its member turns.
type EventList struct {
	Events []EventView `json:"events"`
}

// HistoryRequest selects history entries; empty Kind or ID match any.
type HistoryRequest struct {
	Scope
	Kind string
	ID   string
}

// HistoryList is the history of derived records.
type HistoryList struct {
	Changes []Change `json:"changes"`
}

// ProfilesRequest selects profiles: every profile of the space, or with
// Entity the one of that person. A non-zero AsOf keeps only the values that
// held at that time in the conversation.
type ProfilesRequest struct {
	Scope
	Entity string
	AsOf   time.Time
}

// ProfileList is every profile of a space, speakers first.
type ProfileList struct {
	Profiles []Profile `json:"profiles"`
}

// DeleteResult reports a deletion.
type DeleteResult struct {
	// Deleted is "turn" or "space".
	Deleted string `json:"deleted"`
	// ID is the deleted turn's id.
	ID      string `json:"id,omitempty"`
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id,omitempty"`
}

// Health is the liveness report.
type Health struct {
	// Status is "ok", or "draining" during shutdown.
	Status string `json:"status"`
	// PendingWrites counts writes in flight, async jobs included.
	PendingWrites int `json:"pending_writes"`
}

// VersionInfo describes the server.
type VersionInfo struct {
	// Version is the higmem build version ("devel" for source builds).
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	// API is the REST API version ("v1").
	API string `json:"api"`
	// Mode is the engine mode (offline, default, paper).
	Mode string `json:"mode"`
	// Embedder names the embedder, "" for BM25 only.
	Embedder string `json:"embedder,omitempty"`
	// ExportVersion is the JSONL export format version.
	ExportVersion int `json:"export_version"`
	// Auth is true when API keys are required.
	Auth bool `json:"auth"`
}

// KeyInfo describes the API key a request carries.
type KeyInfo struct {
	// Name is the key's name in the keys file ("" on a server without
	// keys).
	Name string `json:"name"`
	// Users lists the user ids the key may use; "*" means every user.
	Users []string `json:"users"`
	// Auth is false on a server that runs without keys (every user).
	Auth bool `json:"auth"`
}

// AllUsers in KeyInfo.Users means the key may use every user id.
const AllUsers = "*"
