// Package redact recognises the text of a deleted turn in what memory
// derived from it (events, annotations, profile records, history bodies,
// cached model replies), so that Delete can rebuild, redact or purge it
// (docs/PRIVACY.md). It reads the store's records, never the engine.
package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// minPhraseRunes is the length from which a deleted turn's opening is
// looked for verbatim in derived text; phraseRunes is how much of it.
const (
	minPhraseRunes = 12
	phraseRunes    = 24
)

// Trace recognises text that came from a deleted turn: it holds a word of
// the turn that no remaining turn of the space uses, or the turn's opening
// words verbatim (when no remaining turn says them too). Such text cannot
// have come from what memory still holds.
type Trace struct {
	ID     string // the deleted turn's
	words  map[string]bool
	phrase string // lower-cased; "" when the turn is too short or not unique
}

// wordsOf returns the lower-cased words of s (letters and digits, as
// keywords split them), without leading or trailing apostrophes and dashes;
// a word with an inner apostrophe or dash ("hunter2's", "x-ray") also
// gives its parts.
func wordsOf(s string) []string {
	fs := strings.FieldsFunc(s, func(r rune) bool { return !rules.IsWordRune(r) })
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

// New returns the trace of gone given the turns that remain.
func New(gone store.Turn, rest []store.Turn) *Trace {
	tr := &Trace{ID: gone.ID, words: map[string]bool{}}
	text := rules.Content(gone)
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
		c := rules.Content(t)
		for _, w := range wordsOf(c + " " + t.Speaker) {
			delete(tr.words, w)
		}
		if tr.phrase != "" && strings.Contains(strings.ToLower(c), tr.phrase) {
			tr.phrase = ""
		}
	}
	return tr
}

// Empty reports whether there is nothing to look for.
func (tr *Trace) Empty() bool { return len(tr.words) == 0 && tr.phrase == "" }

// In reports whether any of ss holds the trace.
func (tr *Trace) In(ss ...string) bool {
	if tr.Empty() {
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

// Keep returns the items of l that do not hold the trace.
func (tr *Trace) Keep(l []string) []string {
	return slices.DeleteFunc(slices.Clone(l), func(s string) bool { return tr.In(s) })
}

// InJSON reports whether a JSON document (a history body) holds the trace
// in any of its strings, or names the deleted turn as a member ("turn_id",
// "turn_ids", "source", "target").
func (tr *Trace) InJSON(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return tr.In(string(raw))
	}
	var walk func(key string, v any) bool
	walk = func(key string, v any) bool {
		switch x := v.(type) {
		case string:
			switch key {
			case "turn_id", "turn_ids", "source", "target":
				if x == tr.ID {
					return true
				}
			}
			return tr.In(x)
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

// Needles are the strings the LLM response cache is searched for.
func (tr *Trace) Needles() []string {
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

// InEvent reports whether an event's text fields hold the trace.
func (tr *Trace) InEvent(e store.Event) bool {
	if tr.In(e.Title, e.Summary) || tr.In(e.Keywords...) || tr.In(e.Tags...) || tr.In(e.Entities...) {
		return true
	}
	for _, f := range e.Facts {
		if f.TurnID == tr.ID || tr.In(f.Text, f.Time) {
			return true
		}
	}
	return false
}

// InAnnotation reports whether an annotation's text fields hold the
// trace.
func (tr *Trace) InAnnotation(a store.Annotation) bool {
	if tr.In(a.Context) || tr.In(a.Keywords...) || tr.In(a.Tags...) || tr.In(a.Entities...) {
		return true
	}
	for _, r := range a.TimeRefs {
		if tr.In(r.Text) {
			return true
		}
	}
	return false
}

// Note replaces the bodies of history entries that held a deleted
// turn's text.
func Note(id string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"redacted": "turn " + id + " was deleted"})
	return b
}

// MayHold is a quick test of a JSON body before InJSON decodes it: whether
// its bytes hold the deleted turn's id as a JSON string, one of the trace's
// words or its phrase as JSON encodes them (lower-cased). false is certain:
// words have no character JSON escapes, and every body is written by
// encoding/json.
func (tr *Trace) MayHold(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	id, _ := json.Marshal(tr.ID)
	if bytes.Contains(raw, id) {
		return true
	}
	if tr.Empty() {
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

// History returns the seqs of the entries whose bodies hold the
// trace or name the deleted turn as a member.
func (tr *Trace) History(cs []store.Change) []int64 {
	var seqs []int64
	for _, c := range cs {
		if (c.Kind == "annotation" || c.Kind == "turn") && c.ID == tr.ID && (len(c.Before) > 0 || len(c.After) > 0) {
			seqs = append(seqs, c.Seq)
			continue
		}
		if (tr.MayHold(c.Before) && tr.InJSON(c.Before)) || (tr.MayHold(c.After) && tr.InJSON(c.After)) {
			seqs = append(seqs, c.Seq)
		}
	}
	return seqs
}
