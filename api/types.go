package api

import (
	"encoding/json"
	"time"
)

// This file holds the records the API returns. They are the wire form of the
// engine's records (package higmem), translated by package server; the JSON
// spelling of a field is the same at every door (REST, the CLI's --json,
// MCP where it shows the field, and the engine's own Go types).

// Attachment is something shared with a turn, such as an image. Only its
// caption is searched.
type Attachment struct {
	// Kind is "image", "file", ...
	Kind    string `json:"kind"`
	URL     string `json:"url,omitempty"`
	Caption string `json:"caption,omitempty"`
}

// Turn is one stored utterance, as said; turns are never rewritten.
type Turn struct {
	// ID is unique in the space: the caller's id or a generated "t<seq>".
	ID string `json:"id"`
	// SessionID groups turns of one conversation session.
	SessionID string `json:"session_id,omitempty"`
	// Seq orders turns within the space.
	Seq     int64  `json:"seq"`
	Speaker string `json:"speaker"`
	Text    string `json:"text"`
	// Attachments shared with the turn.
	Attachments []Attachment `json:"attachments,omitempty"`
	// OccurredAt is when the turn was said (absent when unknown).
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// OccurredRaw is the time exactly as given when the turn was added
	// (TurnInput.Time), kept even when it could not be parsed.
	OccurredRaw string `json:"occurred_raw,omitempty"`
	// RecordedAt is when the turn was stored.
	RecordedAt time.Time `json:"recorded_at,omitzero"`
	// Metadata holds the caller's string fields.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// AddResponse is what an add did.
type AddResponse struct {
	// Added lists the ids of newly stored turns, in order.
	Added []string `json:"added"`
	// Skipped lists ids already stored with identical content.
	Skipped []string `json:"skipped,omitempty"`
	// Events lists the events created or updated, sorted.
	Events []string `json:"events,omitempty"`
	// Warnings describes recoverable problems (an unparsable time, a model
	// reply replaced by a fallback).
	Warnings []string `json:"warnings,omitempty"`
	// Calls records every LLM call made.
	Calls []Call `json:"calls,omitempty"`
}

// Call records one LLM call.
type Call struct {
	// Role is "memory", "answer" or "judge".
	Role string `json:"role"`
	// Operation names the step ("annotate", "predict", "answer"...).
	Operation string `json:"operation"`
	// Round is the call's sequential round on a question's critical path.
	Round int   `json:"round,omitempty"`
	Usage Usage `json:"usage"`
	// Latency is the call's duration in nanoseconds.
	Latency time.Duration `json:"latency"`
	// Cached is true when the reply came from the response cache.
	Cached bool `json:"cached,omitempty"`
	// Error is set when the call failed or its reply was unusable and a
	// fallback was used.
	Error string `json:"error,omitempty"`
	// Check is the semantic check's finding when the reply was not used as
	// written: "repaired: …" or "rejected: …".
	Check string `json:"check,omitempty"`
	// Requests counts the HTTP requests the call made (retries, timeouts
	// and a re-ask included); 0 from a cache.
	Requests int `json:"requests,omitempty"`
	// Reasked is set when the reply was asked for a second time.
	Reasked bool `json:"reasked,omitempty"`
	// Truncated is set when the reply used was cut at its token budget
	// and repaired (its re-ask failed; Error says why).
	Truncated bool `json:"truncated,omitempty"`
}

// Usage counts the tokens of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Estimated is true when the endpoint reported no usage and the counts
	// were estimated from the text.
	Estimated bool `json:"estimated,omitempty"`
}

// Evidence is one turn selected for a question.
type Evidence struct {
	Turn Turn `json:"turn"`
	// Date is the turn's date as shown to the answer model.
	Date string `json:"date,omitempty"`
	// Score ranks the evidence (higher is more relevant); its scale depends
	// on the mode.
	Score float64 `json:"score"`
	// Sources says which stages proposed the turn: "search", "event",
	// "timeline", "link".
	Sources []string `json:"sources,omitempty"`
	// Events lists the events the turn belongs to.
	Events []string `json:"events,omitempty"`
	// Times resolves the turn's relative time expressions against its date
	// ("yesterday = 7 May 2023"); the answer model sees them.
	Times []string `json:"times,omitempty"`
	// Excerpt is set when Turn.Text holds only part of a long turn: the
	// passages that match the question. Turn keeps the turn's id, speaker
	// and time.
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
// passages (from 0) and its bytes [start, end) in the turn's text.
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

// Stage is the set of candidate ids after one retrieval step.
type Stage struct {
	// Name is "search", "events", "predicted", "timeline", "union",
	// "links", "filtered", "reranked" (offline mode's learned stage) or
	// "final".
	Name string   `json:"name"`
	IDs  []string `json:"ids"`
}

// Trace explains a retrieval: the candidates of every stage and every LLM
// call.
type Trace struct {
	// Mode is the engine mode: "offline", "default" or "paper".
	Mode   string    `json:"mode"`
	Query  QueryInfo `json:"query"`
	Stages []Stage   `json:"stages"`
	Calls  []Call    `json:"calls,omitempty"`
	// Rounds is the number of sequential LLM rounds on the critical path.
	Rounds int `json:"rounds"`
	// Elapsed is the retrieval's duration in nanoseconds.
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

// SearchResponse is the evidence for a question, with the trace of every
// retrieval stage.
type SearchResponse struct {
	Question string `json:"question"`
	// Evidence lists the selected turns in chronological order.
	Evidence []Evidence `json:"evidence"`
	// Context is the evidence rendered as the answer model sees it.
	Context string `json:"context"`
	Trace   Trace  `json:"trace"`
}

// IDs returns the ids of the evidence turns in order.
func (r *SearchResponse) IDs() []string {
	ids := make([]string, len(r.Evidence))
	for i, e := range r.Evidence {
		ids[i] = e.Turn.ID
	}
	return ids
}

// AskResponse is the answer with its evidence and trace. Answer is empty
// (and Note says why) when the server has no LLM.
type AskResponse struct {
	SearchResponse
	// Answer is the written answer.
	Answer string `json:"answer"`
	// Note explains a missing answer ("no LLM configured ...").
	Note string `json:"note,omitempty"`
}

// Fact is one dated statement of an event's fact sheet, with the turn that
// supports it.
type Fact struct {
	Time   string `json:"time,omitempty"`
	Text   string `json:"fact"`
	TurnID string `json:"turn_id,omitempty"`
}

// Event groups turns about one happening or topic.
type Event struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Summary  string   `json:"summary,omitempty"`
	Facts    []Fact   `json:"facts,omitempty"`
	Entities []string `json:"entities,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	// TurnIDs lists member turns in the order they joined.
	TurnIDs []string `json:"turn_ids"`
	// Start and End span the members' times (absent when unknown).
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Producer names what built the event: a model and prompt version, or
	// "offline".
	Producer string `json:"producer,omitempty"`
	// Version increases with every change.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// EventView is an event with its member turns.
type EventView struct {
	Event Event  `json:"event"`
	Turns []Turn `json:"turns"`
}

// Profile is what the turns of a space say about one person: a speaker, or
// someone a speaker names by relation ("my sister Ana"). Profiles are
// derived from the live turns: deleting a turn removes what it said.
type Profile struct {
	Entity string `json:"entity"`
	// Speaker is true when the person speaks in the conversation.
	Speaker bool `json:"speaker"`
	// Attributes are sorted by name and key.
	Attributes []ProfileAttribute `json:"attributes"`
	// Summary is a model's narrative of the person (paper mode's profile
	// layer), when one was written.
	Summary *ProfileSummary `json:"summary,omitempty"`
}

// ProfileSummary is a model's narrative of a person, citing turns as
// [turn id].
type ProfileSummary struct {
	Text string `json:"text"`
	// Evidence lists the turns the text cites.
	Evidence []string `json:"evidence"`
	Producer string   `json:"producer,omitempty"`
}

// ProfileAttribute is one attribute of a profile with the values it has
// held, oldest first.
type ProfileAttribute struct {
	// Name is home, hometown, job, employer, pet, partner, relationship,
	// favorite, plan or relation, or a model's own lower-case key
	// ("hobby").
	Name string `json:"name"`
	// Key qualifies a favorite ("book").
	Key    string         `json:"key,omitempty"`
	Values []ProfileValue `json:"values"`
}

// ProfileValue is one value of an attribute and when it held. A value that
// stopped holding is closed (ClosedBy names the turn that ended it), never
// deleted.
type ProfileValue struct {
	Value string `json:"value"`
	// Current is true while the value holds.
	Current bool `json:"current"`
	// Evidence lists the turns that state the value.
	Evidence []string `json:"evidence"`
	ClosedBy string   `json:"closed_by,omitempty"`
	// ClosedByProducer names what read the closing turn so: "rules" or a
	// model's producer.
	ClosedByProducer string `json:"closed_by_producer,omitempty"`
	// Producers names what stated the value: "rules" (the offline rules)
	// and the producers of the models that stated it (such as
	// "llm:default:p3").
	Producers []string `json:"producers"`
	// ValidFrom and ValidTo bound the value in conversation time (when
	// its turns were said); RecordedFrom and RecordedTo in stored-at time.
	// Absent bounds are unknown or open.
	ValidFrom    time.Time `json:"valid_from,omitzero"`
	ValidTo      time.Time `json:"valid_to,omitzero"`
	RecordedFrom time.Time `json:"recorded_from,omitzero"`
	RecordedTo   time.Time `json:"recorded_to,omitzero"`
}

// Change is one history entry of a derived record.
type Change struct {
	// Seq increases within the space.
	Seq int64 `json:"seq"`
	// Kind is "event", "annotation", "link", "turn" or "profile" (a
	// profile record).
	Kind string `json:"kind"`
	// ID is the changed record's id.
	ID string `json:"id"`
	// Action is "create", "update" or "delete".
	Action string `json:"action"`
	// Actor names who made the change: a producer or "user".
	Actor string `json:"actor,omitempty"`
	// Before and After are the record as it was and became, in the JSON
	// form of its record type (Event for events).
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	At     time.Time       `json:"at"`
}

// Stats summarises a space.
type Stats struct {
	Turns   int   `json:"turns"`
	Events  int   `json:"events"`
	Links   int   `json:"links"`
	LastSeq int64 `json:"last_seq"`
}

// ImportResponse is what an import stored.
type ImportResponse struct {
	Turns int `json:"turns"`
	// Skipped counts turns already stored identically.
	Skipped     int `json:"skipped"`
	Annotations int `json:"annotations"`
	Events      int `json:"events"`
	Links       int `json:"links"`
	// Profiles counts profile records (what a model stated about a
	// person).
	Profiles int `json:"profiles"`
}
