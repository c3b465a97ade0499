package higmem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// What Delete does so that a deleted turn's text stays nowhere: the events
// it belonged to are rebuilt from their remaining turns, every other
// derived record that repeats it (an LLM-written annotation or event) is
// rebuilt by the offline rules, the history entries that held it lose their
// bodies, the LLM response cache drops the replies that repeat it, and the
// store is asked to purge its files (see docs/PRIVACY.md).

// minPhraseRunes is the length from which a deleted turn's opening is
// looked for verbatim in derived text; phraseRunes is how much of it.
const (
	minPhraseRunes = 12
	phraseRunes    = 24
)

// trace recognises text that came from a deleted turn: it holds a word of
// the turn that no remaining turn of the space uses, or the turn's opening
// words verbatim (when no remaining turn says them too). Such text cannot
// have come from what memory still holds.
type trace struct {
	id     string
	words  map[string]bool
	phrase string // lower-cased; "" when the turn is too short or not unique
}

// wordsOf returns the lower-cased words of s (letters and digits, as
// keywords split them), without leading or trailing apostrophes and dashes;
// a word with an inner apostrophe or dash ("hunter2's", "x-ray") also
// gives its parts.
func wordsOf(s string) []string {
	fs := strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) })
	var out []string
	for _, f := range fs {
		f = strings.ToLower(strings.Trim(f, "'’-"))
		if f == "" {
			continue
		}
		out = append(out, f)
		if strings.ContainsAny(f, "'’-") {
			out = append(out, strings.FieldsFunc(f, func(r rune) bool { return r == '\'' || r == '’' || r == '-' })...)
		}
	}
	return out
}

// distinctive reports whether a word is long enough to identify a turn: at
// least three letters, or any word with a digit.
func distinctive(w string) bool {
	return utf8.RuneCountInString(w) >= 3 || strings.IndexFunc(w, unicode.IsDigit) >= 0
}

// newTrace returns the trace of gone given the turns that remain.
func newTrace(gone store.Turn, rest []store.Turn) *trace {
	tr := &trace{id: gone.ID, words: map[string]bool{}}
	text := content(gone)
	for _, w := range wordsOf(text) {
		if distinctive(w) {
			tr.words[w] = true
		}
	}
	if r := []rune(strings.ToLower(text)); len(r) >= minPhraseRunes {
		tr.phrase = string(r[:min(len(r), phraseRunes)])
	}
	for _, t := range rest {
		if t.ID == gone.ID {
			continue
		}
		c := content(t)
		for _, w := range wordsOf(c + " " + t.Speaker) {
			delete(tr.words, w)
		}
		if tr.phrase != "" && strings.Contains(strings.ToLower(c), tr.phrase) {
			tr.phrase = ""
		}
	}
	return tr
}

// empty reports whether there is nothing to look for.
func (tr *trace) empty() bool { return len(tr.words) == 0 && tr.phrase == "" }

// in reports whether any of ss holds the trace.
func (tr *trace) in(ss ...string) bool {
	if tr.empty() {
		return false
	}
	for _, s := range ss {
		if tr.phrase != "" && strings.Contains(strings.ToLower(s), tr.phrase) {
			return true
		}
		for _, w := range wordsOf(s) {
			if tr.words[w] {
				return true
			}
		}
	}
	return false
}

// keep returns the items of l that do not hold the trace.
func (tr *trace) keep(l []string) []string {
	return slices.DeleteFunc(slices.Clone(l), func(s string) bool { return tr.in(s) })
}

// inJSON reports whether a JSON document (a history body) holds the trace
// in any of its strings, or names the deleted turn as a member ("turn_id",
// "turn_ids", "source", "target").
func (tr *trace) inJSON(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return tr.in(string(raw))
	}
	var walk func(key string, v any) bool
	walk = func(key string, v any) bool {
		switch x := v.(type) {
		case string:
			switch key {
			case "turn_id", "turn_ids", "source", "target":
				if x == tr.id {
					return true
				}
			}
			return tr.in(x)
		case []any:
			for _, y := range x {
				if walk(key, y) {
					return true
				}
			}
		case map[string]any:
			for k, y := range x {
				if walk(k, y) {
					return true
				}
			}
		}
		return false
	}
	return walk("", v)
}

// needles are the strings the LLM response cache is searched for.
func (tr *trace) needles() []string {
	out := make([]string, 0, len(tr.words)+1)
	for w := range tr.words {
		out = append(out, w)
	}
	slices.Sort(out)
	if tr.phrase != "" {
		out = append(out, tr.phrase)
	}
	return out
}

// eventHolds reports whether an event's text fields hold the trace.
func eventHolds(tr *trace, e store.Event) bool {
	if tr.in(e.Title, e.Summary) || tr.in(e.Keywords...) || tr.in(e.Tags...) || tr.in(e.Entities...) {
		return true
	}
	for _, f := range e.Facts {
		if f.TurnID == tr.id || tr.in(f.Text, f.Time) {
			return true
		}
	}
	return false
}

// annotationHolds reports whether an annotation's text fields hold the
// trace.
func annotationHolds(tr *trace, a store.Annotation) bool {
	if tr.in(a.Context) || tr.in(a.Keywords...) || tr.in(a.Tags...) || tr.in(a.Entities...) {
		return true
	}
	for _, r := range a.TimeRefs {
		if tr.in(r.Text) {
			return true
		}
	}
	return false
}

// forgetPlan is what deleting one turn changes besides the turn itself.
type forgetPlan struct {
	trace    *trace
	dropped  []string      // events left without members
	rebuilt  []store.Event // events rewritten without the turn
	anns     []store.Annotation
	profiles profileForget
	// windows are the turns whose window vector held the turn, and
	// windowTexts their windows without it (see spaceState.windowsWithout).
	windows, windowTexts []string
}

// planForget works out the events and annotations to rewrite when gone is
// deleted. anns are the space's stored annotations. Caller holds st.mu for
// reading and st.writeMu.
func planForget(st *spaceState, gone store.Turn, anns []store.Annotation, now time.Time) forgetPlan {
	p := forgetPlan{trace: newTrace(gone, st.turns)}
	b := newBatch(st, &chunk{}, now)
	for _, e := range st.events {
		member := slices.Contains(e.TurnIDs, gone.ID)
		if !member && !eventHolds(p.trace, e) {
			continue
		}
		c := b.event(e.ID)
		c.TurnIDs = slices.DeleteFunc(c.TurnIDs, func(x string) bool { return x == gone.ID })
		if len(c.TurnIDs) == 0 {
			p.dropped = append(p.dropped, e.ID)
			continue
		}
		rebuildEvent(st, b, c, p.trace)
		c.Version++
		c.UpdatedAt = now
		p.rebuilt = append(p.rebuilt, *c)
	}
	p.profiles = planProfileForget(st.records.list(), p.trace)
	for _, a := range anns {
		if a.TurnID == gone.ID || !annotationHolds(p.trace, a) {
			continue
		}
		if t, ok := st.turn(a.TurnID); ok {
			na := annotateRules(t)
			na.UpdatedAt = now
			p.anns = append(p.anns, na)
		}
	}
	return p
}

// rebuildEvent rewrites e from its (remaining) members: time span and
// speakers from the turns, title, summary and keywords by the offline
// rules. Facts that cite the deleted turn or hold the trace go; of what a
// model wrote, the tags and entities that do not hold the trace are kept.
func rebuildEvent(st *spaceState, b *batch, e *store.Event, tr *trace) {
	e.Start, e.End = time.Time{}, time.Time{}
	var speakers []string
	for _, id := range e.TurnIDs {
		t, ok := st.turn(id)
		if !ok {
			continue
		}
		if !t.OccurredAt.IsZero() {
			if e.Start.IsZero() || t.OccurredAt.Before(e.Start) {
				e.Start = t.OccurredAt
			}
			if t.OccurredAt.After(e.End) {
				e.End = t.OccurredAt
			}
		}
		if t.Speaker != "" && !slices.Contains(speakers, t.Speaker) {
			speakers = append(speakers, t.Speaker)
		}
	}
	// Facts citing the deleted turn, or holding its words, go whoever wrote
	// them: an event a model wrote and an earlier delete rebuilt by rules
	// still holds the model's facts.
	e.Facts = slices.DeleteFunc(e.Facts, func(f store.Fact) bool { return f.TurnID == tr.id || tr.in(f.Text, f.Time) })
	if e.Producer != offlineProducer {
		e.Tags = tr.keep(e.Tags)
		for _, x := range tr.keep(e.Entities) {
			if !slices.Contains(speakers, x) {
				speakers = append(speakers, x)
			}
		}
	}
	e.Entities = speakers
	summariseExtractive(st, b, e)
}

// redactNote replaces the bodies of history entries that held a deleted
// turn's text.
func redactNote(id string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"redacted": "turn " + id + " was deleted"})
	return b
}

// mayHold is a quick test of a JSON body before inJSON decodes it: whether
// its bytes hold the deleted turn's id as a JSON string, one of the trace's
// words or its phrase as JSON encodes them (lower-cased). false is certain:
// words have no character JSON escapes, and every body is written by
// encoding/json.
func (tr *trace) mayHold(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	id, _ := json.Marshal(tr.id)
	if bytes.Contains(raw, id) {
		return true
	}
	if tr.empty() {
		return false
	}
	low := bytes.ToLower(raw)
	for w := range tr.words {
		if bytes.Contains(low, []byte(w)) {
			return true
		}
	}
	if tr.phrase != "" {
		q, _ := json.Marshal(tr.phrase)
		if bytes.Contains(low, bytes.ToLower(q[1:len(q)-1])) {
			return true
		}
	}
	return false
}

// historyToRedact returns the seqs of the entries whose bodies hold the
// trace or name the deleted turn as a member.
func historyToRedact(cs []store.Change, tr *trace) []int64 {
	var seqs []int64
	for _, c := range cs {
		if (c.Kind == "annotation" || c.Kind == "turn") && c.ID == tr.id && (len(c.Before) > 0 || len(c.After) > 0) {
			seqs = append(seqs, c.Seq)
			continue
		}
		if (tr.mayHold(c.Before) && tr.inJSON(c.Before)) || (tr.mayHold(c.After) && tr.inJSON(c.After)) {
			seqs = append(seqs, c.Seq)
		}
	}
	return seqs
}

// afterDelete forgets the LLM cache entries that repeat tr, then purges the
// store's files (the cache may share them), after a delete committed.
func (m *Memory) afterDelete(ctx context.Context, tr *trace) error {
	var errs []error
	if tr != nil && !tr.empty() {
		needles := tr.needles()
		for _, model := range []llm.Model{m.opts.MemoryModel, m.opts.AnswerModel} {
			f, ok := model.(llm.Forgetter)
			if !ok {
				continue
			}
			if _, err := f.Forget(ctx, needles); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p, ok := m.store.(store.Purger); ok {
		err := p.Purge(ctx)
		switch {
		case errors.Is(err, store.ErrPurgeBlocked):
			// The deleted pages are zeroed in the database file already;
			// only the log's older copies wait for the next purge.
			m.opts.Logger.Warn("higmem: purging the store's files after a delete: readers kept the log; the next delete purges it", "err", err)
		case err != nil:
			errs = append(errs, err)
		}
	}

	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w (the delete is committed; what failed is cleaning up after it)", err)
	}
	return nil
}
