package server

import (
	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/store"
	"slices"
)

// This file translates between the wire structs of package api and the
// engine's types. The functions are pure (no I/O, no state) and total: every
// field of a record is carried, which TestWireCarriesEveryField checks by
// comparing the JSON of both sides, so a field added to an engine record
// fails the test until the wire struct and its translation have it too.

// engineTurnInputs translates turns to add.
func engineTurnInputs(in []api.TurnInput) []higmem.TurnInput {
	out := make([]higmem.TurnInput, len(in))
	for i, t := range in {
		out[i] = higmem.TurnInput{
			ID: t.ID, SessionID: t.SessionID, Speaker: t.Speaker, Text: t.Text, Time: t.Time,
			OccurredAt: t.OccurredAt, Attachments: engineAttachments(t.Attachments), Metadata: t.Metadata,
		}
	}
	return out
}

func engineAttachments(as []api.Attachment) []higmem.Attachment {
	if as == nil {
		return nil
	}
	out := make([]higmem.Attachment, len(as))
	for i, a := range as {
		out[i] = higmem.Attachment{Kind: a.Kind, URL: a.URL, Caption: a.Caption}
	}
	return out
}

func apiAttachments(as []higmem.Attachment) []api.Attachment {
	if as == nil {
		return nil
	}
	out := make([]api.Attachment, len(as))
	for i, a := range as {
		out[i] = api.Attachment{Kind: a.Kind, URL: a.URL, Caption: a.Caption}
	}
	return out
}

// apiTurn translates a stored turn.
func apiTurn(t higmem.Turn) api.Turn {
	return api.Turn{
		ID: t.ID, SessionID: t.SessionID, Seq: t.Seq, Speaker: t.Speaker, Text: t.Text,
		Attachments: apiAttachments(t.Attachments), OccurredAt: t.OccurredAt, OccurredRaw: t.OccurredRaw,
		RecordedAt: t.RecordedAt, Metadata: t.Metadata,
	}
}

// apiTurns translates turns; the result is never nil, so that JSON shows
// an empty list as [].
func apiTurns(ts []higmem.Turn) []api.Turn {
	out := make([]api.Turn, len(ts))
	for i, t := range ts {
		out[i] = apiTurn(t)
	}
	return out
}

func apiCalls(cs []higmem.Call) []api.Call {
	if cs == nil {
		return nil
	}
	out := make([]api.Call, len(cs))
	for i, c := range cs {
		out[i] = api.Call{
			Role: string(c.Role), Operation: c.Operation, Round: c.Round,
			Usage:   api.Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens, Estimated: c.Usage.Estimated},
			Latency: c.Latency, Cached: c.Cached, Error: c.Error, Check: c.Check,
			Requests: c.Requests, Reasked: c.Reasked, Truncated: c.Truncated,
		}
	}
	return out
}

// apiAddResponse translates the result of an add (nil stays nil).
func apiAddResponse(r *higmem.AddResult) *api.AddResponse {
	if r == nil {
		return nil
	}
	added := r.Added
	if added == nil {
		added = []string{}
	}
	return &api.AddResponse{Added: added, Skipped: r.Skipped, Events: r.Events, Warnings: r.Warnings, Calls: apiCalls(r.Calls)}
}

func apiEvidence(ev []higmem.Evidence) []api.Evidence {
	out := make([]api.Evidence, len(ev))
	for i, e := range ev {
		out[i] = api.Evidence{Turn: apiTurn(e.Turn), Date: e.Date, Score: e.Score, Sources: e.Sources, Events: e.Events, Times: e.Times,
			Excerpt: apiExcerpt(e.Excerpt)}
	}
	return out
}

func apiTrace(t higmem.Trace) api.Trace {
	var stages []api.Stage
	if t.Stages != nil {
		stages = make([]api.Stage, len(t.Stages))
		for i, s := range t.Stages {
			stages[i] = api.Stage{Name: s.Name, IDs: s.IDs}
		}
	}
	q := t.Query
	return api.Trace{
		Mode: string(t.Mode),
		Query: api.QueryInfo{Keywords: q.Keywords, Entities: q.Entities, Temporal: q.Temporal,
			Start: q.Start, End: q.End, By: q.By},
		Stages: stages, Calls: apiCalls(t.Calls), Rounds: t.Rounds, Elapsed: t.Elapsed, Notes: t.Notes,
	}
}

// apiSearchResponse translates a retrieval.
func apiSearchResponse(r *higmem.Result) *api.SearchResponse {
	return &api.SearchResponse{Question: r.Question, Evidence: apiEvidence(r.Evidence), Context: r.Context, Trace: apiTrace(r.Trace)}
}

// apiAskResponse translates an answer.
func apiAskResponse(a *higmem.Answer) *api.AskResponse {
	return &api.AskResponse{SearchResponse: *apiSearchResponse(&a.Result), Answer: a.Text, Note: a.Note}
}

func apiEvent(e higmem.Event) api.Event {
	var facts []api.Fact
	if e.Facts != nil {
		facts = make([]api.Fact, len(e.Facts))
		for i, f := range e.Facts {
			facts[i] = api.Fact{Time: f.Time, Text: f.Text, TurnID: f.TurnID}
		}
	}
	ids := e.TurnIDs
	if ids == nil {
		ids = []string{}
	}
	return api.Event{
		ID: e.ID, Title: e.Title, Summary: e.Summary, Facts: facts, Entities: e.Entities, Keywords: e.Keywords,
		Tags: e.Tags, TurnIDs: ids, Start: e.Start, End: e.End, Producer: e.Producer, Version: e.Version,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

// apiEventView translates an event with its turns.
func apiEventView(v higmem.EventView) api.EventView {
	return api.EventView{Event: apiEvent(v.Event), Turns: apiTurns(v.Turns)}
}

func apiEventViews(vs []higmem.EventView) []api.EventView {
	out := make([]api.EventView, len(vs))
	for i, v := range vs {
		out[i] = apiEventView(v)
	}
	return out
}

// apiProfile translates a profile; its slices are never nil.
func apiProfile(p higmem.Profile) api.Profile {
	out := api.Profile{Entity: p.Entity, Speaker: p.Speaker, Attributes: make([]api.ProfileAttribute, len(p.Attributes))}
	for i, a := range p.Attributes {
		vs := make([]api.ProfileValue, len(a.Values))
		for j, v := range a.Values {
			vs[j] = api.ProfileValue{Value: v.Value, Current: v.Current(), Evidence: slices.Clone(v.Evidence), ClosedBy: v.ClosedBy,
				ClosedByProducer: v.ClosedByProducer, Producers: slices.Clone(v.Producers),
				ValidFrom: v.ValidFrom, ValidTo: v.ValidTo, RecordedFrom: v.RecordedFrom, RecordedTo: v.RecordedTo}
			if vs[j].Evidence == nil {
				vs[j].Evidence = []string{}
			}
			if vs[j].Producers == nil {
				vs[j].Producers = []string{}
			}
		}
		out.Attributes[i] = api.ProfileAttribute{Name: a.Name, Key: a.Key, Values: vs}
	}
	if s := p.Summary; s != nil {
		out.Summary = &api.ProfileSummary{Text: s.Text, Evidence: slices.Clone(s.Evidence), Producer: s.Producer}
	}
	return out
}

// apiChanges translates history entries; never nil.
func apiChanges(cs []higmem.Change) []api.Change {
	out := make([]api.Change, len(cs))
	for i, c := range cs {
		out[i] = api.Change{Seq: c.Seq, Kind: c.Kind, ID: c.ID, Action: c.Action, Actor: c.Actor,
			Before: c.Before, After: c.After, At: c.At}
	}
	return out
}

func apiStats(s store.Stats) api.Stats {
	return api.Stats{Turns: s.Turns, Events: s.Events, Links: s.Links, LastSeq: s.LastSeq}
}

// apiImportResponse translates the result of an import (nil stays nil).
func apiImportResponse(r *higmem.ImportResult) *api.ImportResponse {
	if r == nil {
		return nil
	}
	return &api.ImportResponse{Turns: r.Turns, Skipped: r.Skipped, Annotations: r.Annotations, Events: r.Events, Links: r.Links, Profiles: r.Profiles}
}

// engineSpace is the space of a scope.
func engineSpace(s api.Scope) higmem.Space { return higmem.Space{UserID: s.UserID, AgentID: s.AgentID} }

// apiScope is the scope of a space.
func apiScope(sp higmem.Space) api.Scope { return api.Scope{UserID: sp.UserID, AgentID: sp.AgentID} }

// apiExcerpt is an evidence's excerpt on the wire (nil for a whole turn).
func apiExcerpt(ex *higmem.Excerpt) *api.Excerpt {
	if ex == nil {
		return nil
	}
	out := &api.Excerpt{Of: ex.Of, Bytes: ex.Bytes, Passages: make([]api.Passage, len(ex.Passages))}
	for i, p := range ex.Passages {
		out.Passages[i] = api.Passage{Ordinal: p.Ordinal, Start: p.Start, End: p.End}
	}
	return out
}
