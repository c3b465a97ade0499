package llmfake

// The scripted fake as it was before it was made cheap (scripted.go at
// commit e276642; people.go, unchanged, is called through asNew), kept to
// prove that the new one replies the same: every name is prefixed "old".
// Do not edit, except to keep it compiling; scripted_same_test.go
// compares the two.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/higmem/higmem/llm"
)

// oldComplete is the old Scripted.Complete with Delay and Model unset.
func oldComplete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	var user string
	promptLen := 0
	for _, m := range req.Messages {
		promptLen += len(m.Content)
		if m.Role == "user" {
			user = m.Content
		}
	}
	p := oldParse(user)
	answer, ok := oldReplies[req.SchemaName]
	if !ok {
		return llm.Response{}, fmt.Errorf("llmfake: scripted model does not know prompt %q: %w", req.SchemaName, llm.ErrRequest)
	}
	reply := answer(p)
	b, err := json.Marshal(reply)
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{
		Content: string(b),
		Model:   "scripted",
		Usage:   llm.Usage{PromptTokens: (promptLen + 3) / 4, CompletionTokens: (len(b) + 3) / 4},
	}, nil
}

// replies maps each higmem prompt kind to the fake's answer.
var oldReplies = map[string]func(oldParsed) map[string]any{
	"turn_note":      oldParsed.turnNote,
	"affiliate":      oldParsed.affiliate,
	"event_update":   oldParsed.eventUpdate,
	"event_check":    oldParsed.eventCheck,
	"build_batch":    oldParsed.buildBatch,
	"query":          oldParsed.query,
	"predict":        oldParsed.predict,
	"filter":         oldParsed.filter,
	"select":         oldParsed.selectIDs,
	"answer":         oldParsed.answer,
	"judge":          oldParsed.judge,
	"profile_decide": oldParsed.profileDecide,
	"profile_update": oldParsed.profileUpdate,
}

// line is a turn line "[id] date | speaker: text".
type oldLine struct {
	id, date, speaker, text string
}

// event is an event line "(event id) title :: summary".
type oldEvent struct {
	id, text string
}

// parsed is what the fake understood of a prompt. Turns and events are
// grouped by the section header that precedes them.
type oldParsed struct {
	raw      string // the user message
	question string
	sections map[string][]oldLine
	events   map[string][]oldEvent
	order    []string
	gold     string
	graded   string
	max      int // the "at most N" of the instructions, 0 when none
}

var oldAtMostRE = regexp.MustCompile(`at most (\d+)`)

var (
	oldTurnRE  = regexp.MustCompile(`^\[([^\]]+)\] (.*?) \| ([^:]*): (.*)$`)
	oldEventRE = regexp.MustCompile(`^\(event ([^)]+)\) (.*)$`)
)

func oldParse(s string) oldParsed {
	p := oldParsed{raw: s, sections: map[string][]oldLine{}, events: map[string][]oldEvent{}}
	section := ""
	if m := oldAtMostRE.FindStringSubmatch(s); m != nil {
		p.max, _ = strconv.Atoi(m[1])
	}
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "Question: "):
			p.question = strings.TrimPrefix(l, "Question: ")
		case strings.HasPrefix(l, "Gold answer: "):
			p.gold = strings.TrimPrefix(l, "Gold answer: ")
		case strings.HasPrefix(l, "Answer to grade: "):
			p.graded = strings.TrimPrefix(l, "Answer to grade: ")
		case oldTurnRE.MatchString(l):
			m := oldTurnRE.FindStringSubmatch(l)
			p.sections[section] = append(p.sections[section], oldLine{m[1], m[2], m[3], m[4]})
		case oldEventRE.MatchString(l):
			m := oldEventRE.FindStringSubmatch(l)
			p.events[section] = append(p.events[section], oldEvent{m[1], m[2]})
		case strings.HasSuffix(strings.TrimSpace(l), ":") && !strings.HasPrefix(l, "-"):
			section = strings.TrimSpace(l)
			p.order = append(p.order, section)
		}
	}
	return p
}

// turnsIn returns the turns of the first section whose header starts with
// prefix.
func (p oldParsed) turnsIn(prefix string) []oldLine {
	for _, s := range p.order {
		if strings.HasPrefix(s, prefix) {
			return p.sections[s]
		}
	}
	return nil
}

func (p oldParsed) eventsIn(prefix string) []oldEvent {
	for _, s := range p.order {
		if strings.HasPrefix(s, prefix) {
			return p.events[s]
		}
	}
	return nil
}

// words returns the lower-case content words of s.
func oldWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 2 && !fakeStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// overlap counts distinct content words shared by a and b.
func oldOverlap(a, b string) int {
	bw := oldWords(b)
	n := 0
	seen := map[string]bool{}
	for _, w := range oldWords(a) {
		if !seen[w] && slices.Contains(bw, w) {
			n++
		}
		seen[w] = true
	}
	return n
}

func oldKeywords(s string, n int) []string {
	var out []string
	for _, w := range oldWords(s) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
		if len(out) == n {
			break
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func oldCapitalised(s string) []string {
	out := []string{}
	for _, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
		if w != "" && unicode.IsUpper([]rune(w)[0]) && !slices.Contains(out, w) && !fakeStop[strings.ToLower(w)] {
			out = append(out, w)
		}
	}
	return out
}

func (p oldParsed) turnNote() map[string]any {
	ts := p.turnsIn("Turn to annotate")
	if len(ts) == 0 {
		return map[string]any{"keywords": []string{}, "tags": []string{}, "context": ""}
	}
	t := ts[0]
	kw := oldKeywords(t.text, 5)
	r := map[string]any{
		"keywords": kw,
		"tags":     []string{"conversation"},
		"context":  fmt.Sprintf("%s talks about %s.", t.speaker, strings.Join(kw, ", ")),
		"entities": oldCapitalised(t.text),
	}
	if w := p.turnsIn("Earlier turns"); len(w) > 0 {
		r["links"] = []map[string]string{{"target": w[len(w)-1].id, "relation": "continues"}}
	}
	return r
}

// bestEvent returns the event sharing the most words with text (at least
// min), or "".
func oldBestEvent(evs []oldEvent, text string, min int) string {
	best, bestN := "", min-1
	for _, e := range evs {
		if n := oldOverlap(text, e.text); n > bestN {
			best, bestN = e.id, n
		}
	}
	return best
}

func (p oldParsed) affiliate() map[string]any {
	ts := p.turnsIn("New turn")
	aff := []string{"NEW"}
	if len(ts) > 0 {
		if id := oldBestEvent(p.eventsIn("Candidate events"), ts[0].text, 2); id != "" {
			aff = []string{id}
		}
	}
	return map[string]any{"reasoning": "word overlap", "affiliations": aff}
}

func (p oldParsed) eventUpdate() map[string]any {
	return oldRecord(p.turnsIn("New turn"))
}

// record is the fake's record of an event whose new turns are ts: the
// speakers and their first keywords, and one fact per turn.
func oldRecord(ts []oldLine) map[string]any {
	var kws []string
	var speakers []string
	facts := []map[string]string{}
	for _, t := range ts {
		for _, k := range oldKeywords(t.text, 3) {
			if !slices.Contains(kws, k) {
				kws = append(kws, k)
			}
		}
		if !slices.Contains(speakers, t.speaker) {
			speakers = append(speakers, t.speaker)
		}
		oldFact := t.text
		if len(oldFact) > 80 {
			oldFact = oldFact[:80]
		}
		facts = append(facts, map[string]string{"time": t.date, "fact": t.speaker + ": " + oldFact, "turn_id": t.id})
	}
	if kws == nil {
		kws = []string{}
	}
	return map[string]any{
		"summary":   fmt.Sprintf("%s talked about %s.", strings.Join(speakers, " and "), strings.Join(kws, ", ")),
		"keywords":  kws,
		"tags":      []string{"conversation"},
		"new_facts": facts,
	}
}

func (p oldParsed) eventCheck() map[string]any {
	ts := p.turnsIn("New turn")
	evs := p.eventsIn("Event")
	rel := len(ts) > 0 && len(evs) > 0 && oldOverlap(ts[0].text, evs[0].text) > 0
	kw := []string{}
	if len(ts) > 0 {
		kw = oldKeywords(ts[0].text, 3)
	}
	return map[string]any{"is_relevant": rel, "keywords": kw, "tags": []string{"conversation"}}
}

// buildBatch answers build_batch: each turn joins the candidate event it
// shares most words with, else the running event while it stays on topic
// (a shared word, or a short reply), else a new one; then one record per
// event joined, written from its new turns as eventUpdate does.
func (p oldParsed) buildBatch() map[string]any {
	cands := p.eventsIn("Existing events")
	var items []map[string]any
	titles := map[string]string{}
	var order []string               // events joined, first join first
	joined := map[string][]oldLine{} // event → its new turns
	cur, curText, labels := "", "", 0
	for _, t := range p.turnsIn("New turns") {
		ev := oldBestEvent(cands, t.text, 2)
		switch {
		case ev != "":
		case cur != "" && (oldOverlap(t.text, curText) > 0 || len(oldWords(t.text)) < 5):
			// Same topic as the running event: shares a word, or is a
			// short reply.
			ev = cur
		default:
			labels++
			ev = fmt.Sprintf("new:%d", labels)
			titles[ev] = t.speaker + " on " + strings.Join(oldKeywords(t.text, 3), ", ")
		}
		if ev != cur {
			curText = ""
		}
		cur = ev
		curText += " " + t.text
		if joined[ev] == nil {
			order = append(order, ev)
		}
		joined[ev] = append(joined[ev], t)
		kw := oldKeywords(t.text, 4)
		items = append(items, map[string]any{
			"id": t.id, "keywords": kw, "tags": []string{"conversation"},
			"context": fmt.Sprintf("%s talks about %s.", t.speaker, strings.Join(kw, ", ")),
			"events":  []string{ev},
		})
	}
	if items == nil {
		items = []map[string]any{}
	}
	events := []map[string]any{}
	for _, ev := range order {
		r := oldRecord(joined[ev])
		r["id"] = ev
		if t := titles[ev]; t != "" {
			r["title"] = t
		}
		events = append(events, r)
	}
	r := map[string]any{"turns": items, "events": events}
	if strings.Contains(p.raw, `Also return "people"`) {
		r["people"] = peopleJSON(peopleFacts(p.asNew().turnsIn("New turns"), knownFacts(p.raw, "")))
	}
	return r
}

func (p oldParsed) query() map[string]any {
	q := strings.ToLower(p.question)
	temporal := strings.HasPrefix(q, "when") || strings.Contains(q, "how long") || strings.Contains(q, "what year")
	return map[string]any{
		"keyword_query": strings.Join(oldKeywords(p.question, 10), " "),
		"entities":      oldCapitalised(p.question),
		"temporal":      temporal,
	}
}

// ranked returns the ids of turns sharing at least one word with the
// question, best first, at most n.
func (p oldParsed) ranked(ts []oldLine, n int) []string {
	type hit struct {
		id string
		n  int
	}
	var hs []hit
	for _, t := range ts {
		if k := oldOverlap(p.question, t.speaker+" "+t.text); k > 0 {
			hs = append(hs, hit{t.id, k})
		}
	}
	slices.SortStableFunc(hs, func(a, b hit) int { return b.n - a.n })
	out := []string{}
	for _, h := range hs {
		if len(out) == n {
			break
		}
		out = append(out, h.id)
	}
	return out
}

func (p oldParsed) predict() map[string]any {
	return map[string]any{"turn_ids": p.ranked(p.turnsIn("Turns of this event"), 3)}
}

func (p oldParsed) filter() map[string]any {
	return map[string]any{"relevant_ids": p.ranked(p.turnsIn("Items"), 10)}
}

// selectIDs answers select: the turns of every list sharing most words
// with the question, at most the prompt's maximum.
func (p oldParsed) selectIDs() map[string]any {
	var all []oldLine
	seen := map[string]bool{}
	for _, sec := range p.order {
		for _, t := range p.sections[sec] {
			if !seen[t.id] {
				seen[t.id] = true
				all = append(all, t)
			}
		}
	}
	return map[string]any{"turn_ids": p.ranked(all, max(p.max, 1))}
}

func (p oldParsed) answer() map[string]any {
	ts := p.turnsIn("Memory")
	best := p.ranked(ts, 1)
	if len(best) == 0 {
		return map[string]any{"answer": "Not mentioned in the conversation"}
	}
	for _, t := range ts {
		if t.id == best[0] {
			a := t.text
			if len(a) > 80 {
				a = a[:80]
			}
			return map[string]any{"answer": a}
		}
	}
	return map[string]any{"answer": "Not mentioned in the conversation"}
}

func (p oldParsed) judge() map[string]any {
	label := "WRONG"
	if oldOverlap(p.gold, p.graded) > 0 || strings.EqualFold(strings.TrimSpace(p.gold), strings.TrimSpace(p.graded)) {
		label = "CORRECT"
	}
	return map[string]any{"label": label, "reasoning": "word overlap"}
}

// profileDecide and profileUpdate answer with people.go, which the
// rewrite left as it was: the old parse's reading of the prompt, as the
// new code's type, so that the profile kinds still compare the two parses.
func (p oldParsed) profileDecide() map[string]any { return p.asNew().profileDecide() }

func (p oldParsed) profileUpdate() map[string]any { return p.asNew().profileUpdate() }

// asNew is p as the new code's parsed (the same fields).
func (p oldParsed) asNew() parsed {
	n := parsed{raw: p.raw, question: p.question, order: p.order, gold: p.gold, graded: p.graded, max: p.max,
		sections: map[string][]line{}, events: map[string][]event{}}
	for k, ls := range p.sections {
		for _, l := range ls {
			n.sections[k] = append(n.sections[k], line(l))
		}
	}
	for k, es := range p.events {
		for _, e := range es {
			n.events[k] = append(n.events[k], event(e))
		}
	}
	return n
}
