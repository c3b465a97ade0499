package rules

import (
	"cmp"
	"slices"
	"strings"

	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/store"
)

// Summarise sets an event's keywords, title and summary from its members
// (in the event's order): the most frequent content words, and the most
// central turns.
func Summarise(e *store.Event, members []store.Turn) {
	// Speakers are the event's entities, not its topic.
	names := NameSet(e.Entities...)
	freq := map[string]int{}
	first := map[string]int{}
	display := map[string]string{}
	for _, t := range members {
		for _, w := range Keywords(TopicText(t), 32, names) {
			k := strings.ToLower(w)
			if _, ok := first[k]; !ok {
				first[k] = len(first)
				display[k] = w
			}
			freq[k]++
		}
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range freq {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(freq[b], freq[a]); c != 0 {
			return c
		}
		return cmp.Compare(first[a], first[b])
	})
	if len(keys) > offline.KeywordsPerEvent {
		keys = keys[:offline.KeywordsPerEvent]
	}
	e.Keywords = e.Keywords[:0]
	for _, k := range keys {
		e.Keywords = append(e.Keywords, display[k])
	}
	// Centrality: how many of the event's top keywords a turn mentions.
	top := map[string]bool{}
	for _, k := range keys {
		top[k] = true
	}
	type cand struct {
		i     int
		score int
	}
	var cs []cand
	for i, t := range members {
		n := 0
		for _, w := range Keywords(TopicText(t), 32, names) {
			if top[strings.ToLower(w)] {
				n++
			}
		}
		cs = append(cs, cand{i, n})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	if len(cs) > offline.SummaryTurns {
		cs = cs[:offline.SummaryTurns]
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(a.i, b.i) })
	var parts []string
	for _, c := range cs {
		t := members[c.i]
		parts = append(parts, t.Speaker+": "+Truncate(Content(t), offline.SummaryTurnMaxLen))
	}
	e.Summary = strings.Join(parts, " / ")
	speakers := slices.Clone(e.Entities)
	if len(speakers) > 2 {
		speakers = speakers[:2]
	}
	title := strings.Join(e.Keywords[:min(3, len(e.Keywords))], ", ")
	if len(speakers) > 0 {
		title = strings.Join(speakers, " & ") + ": " + title
	}
	e.Title = title
	e.Producer = offline.Producer
}
