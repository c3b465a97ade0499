package rules

import (
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/store"
)

// Records from model replies: what a reply wrote, cleaned and capped, merged
// with what the rules make.

// Caps on what models may write into an event.
const (
	MaxEventKeywords = 10
	MaxEventTags     = 6
	MaxTitleLen      = 90
)

// FallbackSuffix ends the producer of an event whose summary is not the
// model's: its update reply was unusable or junk, and the annotation of its
// first turn stands in. Such events are visible as fallbacks in exports,
// the REST API and the change history.
const FallbackSuffix = "+fallback"

// FromNote turns a turn_note reply into an annotation; entities
// and time expressions always come from the rules too, and so does what
// the reply left empty. When the reply has no keywords left, the rules'
// keywords stand in and the producer ends in +fallback.
func FromNote(t store.Turn, kw, tags []string, context string, entities []string, producer string) store.Annotation {
	a := Annotate(t)
	a.Producer = producer
	k, c := CleanList(kw, 12), strings.TrimSpace(context)
	if len(k) > 0 {
		a.Keywords = k
	}
	a.Tags = CleanList(tags, 8)
	if c != "" {
		a.Context = c
	}
	if len(k) == 0 {
		// None of the model's keywords was left (the semantic checks
		// dropped them): the rules' keywords, what an annotation is
		// searched by, stand in, and the producer says so.
		a.Producer = producer + FallbackSuffix
	}
	for _, e := range CleanList(entities, 20) {
		if !slices.Contains(a.Entities, e) {
			a.Entities = append(a.Entities, e)
		}
	}
	return a
}

// CleanList trims, drops empties and duplicates (case-insensitively) and
// caps a list a model wrote.
func CleanList(in []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	return out
}

// TitleFrom derives a short title from a summary: its first sentence.
func TitleFrom(summary string) string {
	return Truncate(FirstSentence(strings.TrimSpace(summary)), MaxTitleLen)
}

// ApplyUpdate merges an event_update reply into e. Facts must cite one of
// the new turns; others lose their turn id.
func ApplyUpdate(e *store.Event, r prompt.EventUpdateReply, newTurns []store.Turn) {
	if s := strings.TrimSpace(r.Summary); s != "" {
		e.Summary = s
		if e.Title == "" || strings.HasPrefix(e.Title, "New event") {
			e.Title = TitleFrom(s)
		}
	}
	if k := CleanList(r.Keywords, MaxEventKeywords); len(k) > 0 {
		e.Keywords = k
	}
	if t := CleanList(r.Tags, MaxEventTags); len(t) > 0 {
		e.Tags = t
	}
	for _, f := range r.NewFacts {
		text := strings.TrimSpace(f.Fact)
		if text == "" {
			continue
		}
		id := f.TurnID
		if !slices.ContainsFunc(newTurns, func(t store.Turn) bool { return t.ID == id }) {
			id = ""
		}
		e.Facts = append(e.Facts, store.Fact{Time: strings.TrimSpace(f.Time), Text: text, TurnID: id})
	}
}

// LinksFrom keeps the links a model proposed to turns of the window.
func LinksFrom(t store.Turn, window []store.Turn, r prompt.TurnNoteReply, now time.Time) []store.Link {
	var out []store.Link
	for _, l := range r.Links {
		target := strings.TrimSpace(l.Target)
		if target == t.ID || !slices.ContainsFunc(window, func(w store.Turn) bool { return w.ID == target }) {
			continue
		}
		rel := strings.TrimSpace(l.Relation)
		if rel == "" {
			rel = "relates_to"
		}
		out = append(out, store.Link{Source: t.ID, Target: target, Relation: rel, Confidence: 1, CreatedAt: now})
	}
	return out
}

// MaxEventFacts caps the facts shown back to the model; older ones stay
// stored.
const MaxEventFacts = 40

// PromptEvent is event e as a prompt shows it: its record and its latest
// MaxEventFacts facts.
func PromptEvent(e store.Event) prompt.Event {
	pe := prompt.Event{ID: e.ID, Title: e.Title, Summary: e.Summary, Keywords: e.Keywords, Tags: e.Tags}
	facts := e.Facts
	if len(facts) > MaxEventFacts {
		facts = facts[len(facts)-MaxEventFacts:]
	}
	for _, f := range facts {
		pe.Facts = append(pe.Facts, prompt.Fact{Time: f.Time, Text: f.Text, TurnID: f.TurnID})
	}
	return pe
}
