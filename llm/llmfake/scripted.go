// Package llmfake provides deterministic language-model fakes that need
// no network and import no test code, so that the CLI, the benchmarks and
// the evaluation harness can run them as well as tests:
//
//   - Scripted answers every higmem prompt with valid JSON derived from the
//     prompt's own content (word overlap between the question and the turns
//     shown), so that the whole LLM pipeline runs deterministically.
//   - Junk answers everything with prose, RealJunk with the bad replies a
//     small real model gave (JunkShapes), to exercise repair and fallbacks.
//   - Endpoint (an http.Handler) is an OpenAI-compatible endpoint whose
//     replies a Handler scripts; LlamaCpp mimics llama-cpp-python's server.
//
// Package llmtest starts these endpoints on httptest servers for tests.
package llmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/higmem/higmem/llm"
)

// Scripted is a deterministic fake model for higmem's prompts. It
// recognises the prompt by Request.SchemaName and derives its reply from the
// turns, events and question in the prompt. The zero value is ready to use
// and safe for concurrent use.
type Scripted struct {
	// Delay, when set, is slept before every reply (honouring ctx), to
	// make parallelism visible in latency measurements.
	Delay time.Duration
	// Model is reported in responses (default "scripted").
	Model string

	mu    sync.Mutex // guards calls
	calls map[string]int
}

// NewScripted returns a Scripted model.
func NewScripted() *Scripted { return &Scripted{} }

// Calls returns how many requests each prompt kind received.
func (s *Scripted) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Total returns the number of requests received.
func (s *Scripted) Total() int {
	n := 0
	for _, v := range s.Calls() {
		n += v
	}
	return n
}

// Complete answers req.
func (s *Scripted) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[req.SchemaName]++
	s.mu.Unlock()
	if recordRequest != nil {
		recordRequest(req)
	}
	if s.Delay > 0 {
		t := time.NewTimer(s.Delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		case <-t.C:
		}
	}
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
	var b []byte
	if req.SchemaName == "select" {
		// The bench's prompt, read without parse (selectfast.go).
		b = appendSelect(nil, user)
	} else {
		answer, ok := replies[req.SchemaName]
		if !ok {
			return llm.Response{}, fmt.Errorf("llmfake: scripted model does not know prompt %q: %w", req.SchemaName, llm.ErrRequest)
		}
		var err error
		if b, err = json.Marshal(answer(parse(user))); err != nil {
			return llm.Response{}, err
		}
	}
	model := s.Model
	if model == "" {
		model = "scripted"
	}
	return llm.Response{
		Content: string(b),
		Model:   model,
		Usage:   llm.Usage{PromptTokens: (promptLen + 3) / 4, CompletionTokens: (len(b) + 3) / 4},
		Latency: s.Delay,
	}, nil
}

// recordRequest, when set, sees every request a Scripted model receives.
// Only builds with the llmfakerecord tag set it (record.go), to collect
// the prompts that tests and benchmarks send for the sameness tests of
// scripted_same_test.go.
var recordRequest func(llm.Request)

// replies maps each higmem prompt kind to the fake's answer.
var replies = map[string]func(parsed) map[string]any{
	"turn_note":      parsed.turnNote,
	"affiliate":      parsed.affiliate,
	"event_update":   parsed.eventUpdate,
	"event_check":    parsed.eventCheck,
	"build_batch":    parsed.buildBatch,
	"query":          parsed.query,
	"predict":        parsed.predict,
	"filter":         parsed.filter,
	"select":         parsed.selectIDs,
	"answer":         parsed.answer,
	"judge":          parsed.judge,
	"profile_decide": parsed.profileDecide,
	"profile_update": parsed.profileUpdate,
}

// Junk is a model that never returns JSON.
type Junk struct{}

// Complete answers with prose.
func (Junk) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: "I'm sorry, but I can't help with that request.", Model: "junk",
		Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 10}}, nil
}

// line is a turn line "[id] date | speaker: text".
type line struct {
	id, date, speaker, text string
}

// event is an event line "(event id) title :: summary".
type event struct {
	id, text string
}

// parsed is what the fake understood of a prompt. Turns and events are
// grouped by the section header that precedes them.
type parsed struct {
	raw      string // the user message
	question string
	sections map[string][]line
	events   map[string][]event
	order    []string
	gold     string
	graded   string
	max      int // the "at most N" of the instructions, 0 when none
}

// parse reads a prompt's user message line by line. It is written out by
// hand, not with regular expressions: the fake answers every prompt of a
// benchmark, whose timings it should not weigh on. Each reader below
// says which expression it stands for; the old expressions are kept in
// oldfake_test.go, which checks that both read every prompt alike.
func parse(s string) parsed {
	p := parsed{raw: s, sections: map[string][]line{}, events: map[string][]event{}}
	p.max = atMost(s)
	section := ""
	// The turns and events of section, with those read under the same
	// header before: kept in the maps when the section ends.
	var turns []line
	var events []event
	for rest, more := s, true; more; {
		var l string
		l, rest, more = strings.Cut(rest, "\n")
		switch {
		case strings.HasPrefix(l, "Question: "):
			p.question = strings.TrimPrefix(l, "Question: ")
		case strings.HasPrefix(l, "Gold answer: "):
			p.gold = strings.TrimPrefix(l, "Gold answer: ")
		case strings.HasPrefix(l, "Answer to grade: "):
			p.graded = strings.TrimPrefix(l, "Answer to grade: ")
		default:
			if t, ok := turnLine(l); ok {
				turns = append(turns, t)
			} else if ev, ok := eventLine(l); ok {
				events = append(events, ev)
			} else if h := strings.TrimSpace(l); strings.HasSuffix(h, ":") && !strings.HasPrefix(l, "-") {
				p.keep(section, turns, events)
				section = h
				p.order = append(p.order, section)
				turns, events = p.sections[section], p.events[section]
			}
		}
	}
	p.keep(section, turns, events)
	return p
}

// keep stores the turns and events read under section, if any.
func (p *parsed) keep(section string, turns []line, events []event) {
	if len(turns) > 0 {
		p.sections[section] = turns
	}
	if len(events) > 0 {
		p.events[section] = events
	}
}

// atMost returns N of the first "at most N" in s (N a run of ASCII
// digits, as strconv.Atoi reads it), or 0: the regular expression
// `at most (\d+)`. It looks for "most ", whose 'm' is rarer than 'a' in
// English, and then for the "at " before it.
func atMost(s string) int {
	const most = "most "
	for i := 0; ; {
		j := strings.Index(s[i:], most)
		if j < 0 {
			return 0
		}
		at := i + j // where "most " starts
		start := at + len(most)
		end := start
		for end < len(s) && '0' <= s[end] && s[end] <= '9' {
			end++
		}
		if end > start && at >= 3 && s[at-3:at] == "at " {
			n, _ := strconv.Atoi(s[start:end])
			return n
		}
		i = at + 1
	}
}

// turnLine reads a turn line "[id] date | speaker: text": the regular
// expression `^\[([^\]]+)\] (.*?) \| ([^:]*): (.*)$` on a line without
// "\n". The id runs to the first ']'; the date is the shortest that is
// followed by " | " and then a speaker (no ':') and ": ".
func turnLine(l string) (line, bool) {
	if len(l) == 0 || l[0] != '[' {
		return line{}, false
	}
	end := strings.IndexByte(l, ']')
	if end < 2 || end+1 >= len(l) || l[end+1] != ' ' {
		return line{}, false
	}
	id, rest := l[1:end], l[end+2:]
	for from := 0; ; {
		// The first " | " from from on: the first '|' with a space on
		// either side, at from+1 or after.
		if from+len(" | ") > len(rest) {
			return line{}, false
		}
		bar := strings.IndexByte(rest[from+1:], '|')
		if bar < 0 {
			return line{}, false
		}
		bar += from // where its " | " starts
		if bar+2 >= len(rest) || rest[bar] != ' ' || rest[bar+2] != ' ' {
			from = bar + 1
			continue
		}
		after := rest[bar+len(" | "):]
		if c := strings.IndexByte(after, ':'); c >= 0 && c+1 < len(after) && after[c+1] == ' ' {
			return line{id: id, date: rest[:bar], speaker: after[:c], text: after[c+2:]}, true
		}
		from = bar + 1
	}
}

// eventLine reads an event line "(event id) title :: summary": the
// regular expression `^\(event ([^)]+)\) (.*)$` on a line without "\n".
func eventLine(l string) (event, bool) {
	rest, ok := strings.CutPrefix(l, "(event ")
	if !ok {
		return event{}, false
	}
	end := strings.IndexByte(rest, ')')
	if end < 1 || end+1 >= len(rest) || rest[end+1] != ' ' {
		return event{}, false
	}
	return event{id: rest[:end], text: rest[end+2:]}, true
}

// turnsIn returns the turns of the first section whose header starts with
// prefix.
func (p parsed) turnsIn(prefix string) []line {
	for _, s := range p.order {
		if strings.HasPrefix(s, prefix) {
			return p.sections[s]
		}
	}
	return nil
}

func (p parsed) eventsIn(prefix string) []event {
	for _, s := range p.order {
		if strings.HasPrefix(s, prefix) {
			return p.events[s]
		}
	}
	return nil
}

func capitalised(s string) []string {
	out := []string{}
	for _, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
		if w != "" && unicode.IsUpper([]rune(w)[0]) && !slices.Contains(out, w) && !fakeStop[strings.ToLower(w)] {
			out = append(out, w)
		}
	}
	return out
}

func (p parsed) turnNote() map[string]any {
	ts := p.turnsIn("Turn to annotate")
	if len(ts) == 0 {
		return map[string]any{"keywords": []string{}, "tags": []string{}, "context": ""}
	}
	t := ts[0]
	kw := keywords(t.text, 5)
	r := map[string]any{
		"keywords": kw,
		"tags":     []string{"conversation"},
		"context":  fmt.Sprintf("%s talks about %s.", t.speaker, strings.Join(kw, ", ")),
		"entities": capitalised(t.text),
	}
	if w := p.turnsIn("Earlier turns"); len(w) > 0 {
		r["links"] = []map[string]string{{"target": w[len(w)-1].id, "relation": "continues"}}
	}
	return r
}

// bestEvent returns the event sharing the most words with text (at least
// min), or "".
func bestEvent(evs []event, text string, min int) string {
	best, bestN := "", min-1
	var ws wordSet
	ws.reset(text)
	for _, e := range evs {
		if n := ws.count(e.text); n > bestN {
			best, bestN = e.id, n
		}
	}
	return best
}

func (p parsed) affiliate() map[string]any {
	ts := p.turnsIn("New turn")
	aff := []string{"NEW"}
	if len(ts) > 0 {
		if id := bestEvent(p.eventsIn("Candidate events"), ts[0].text, 2); id != "" {
			aff = []string{id}
		}
	}
	return map[string]any{"reasoning": "word overlap", "affiliations": aff}
}

func (p parsed) eventUpdate() map[string]any {
	return record(p.turnsIn("New turn"))
}

// record is the fake's record of an event whose new turns are ts: the
// speakers and their first keywords, and one fact per turn.
func record(ts []line) map[string]any {
	var kws []string
	var speakers []string
	facts := []map[string]string{}
	for _, t := range ts {
		for _, k := range keywords(t.text, 3) {
			if !slices.Contains(kws, k) {
				kws = append(kws, k)
			}
		}
		if !slices.Contains(speakers, t.speaker) {
			speakers = append(speakers, t.speaker)
		}
		fact := t.text
		if len(fact) > 80 {
			fact = fact[:80]
		}
		facts = append(facts, map[string]string{"time": t.date, "fact": t.speaker + ": " + fact, "turn_id": t.id})
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

func (p parsed) eventCheck() map[string]any {
	ts := p.turnsIn("New turn")
	evs := p.eventsIn("Event")
	rel := len(ts) > 0 && len(evs) > 0 && overlap(ts[0].text, evs[0].text) > 0
	kw := []string{}
	if len(ts) > 0 {
		kw = keywords(ts[0].text, 3)
	}
	return map[string]any{"is_relevant": rel, "keywords": kw, "tags": []string{"conversation"}}
}

// buildBatch answers build_batch: each turn joins the candidate event it
// shares most words with, else the running event while it stays on topic
// (a shared word, or a short reply), else a new one; then one record per
// event joined, written from its new turns as eventUpdate does.
func (p parsed) buildBatch() map[string]any {
	cands := p.eventsIn("Existing events")
	var items []map[string]any
	titles := map[string]string{}
	var order []string            // events joined, first join first
	joined := map[string][]line{} // event → its new turns
	cur, curText, labels := "", "", 0
	for _, t := range p.turnsIn("New turns") {
		ev := bestEvent(cands, t.text, 2)
		switch {
		case ev != "":
		case cur != "" && (overlap(t.text, curText) > 0 || len(words(t.text)) < 5):
			// Same topic as the running event: shares a word, or is a
			// short reply.
			ev = cur
		default:
			labels++
			ev = fmt.Sprintf("new:%d", labels)
			titles[ev] = t.speaker + " on " + strings.Join(keywords(t.text, 3), ", ")
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
		kw := keywords(t.text, 4)
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
		r := record(joined[ev])
		r["id"] = ev
		if t := titles[ev]; t != "" {
			r["title"] = t
		}
		events = append(events, r)
	}
	r := map[string]any{"turns": items, "events": events}
	if strings.Contains(p.raw, `Also return "people"`) {
		r["people"] = peopleJSON(peopleFacts(p.turnsIn("New turns"), knownFacts(p.raw, "")))
	}
	return r
}

func (p parsed) query() map[string]any {
	q := strings.ToLower(p.question)
	temporal := strings.HasPrefix(q, "when") || strings.Contains(q, "how long") || strings.Contains(q, "what year")
	return map[string]any{
		"keyword_query": strings.Join(keywords(p.question, 10), " "),
		"entities":      capitalised(p.question),
		"temporal":      temporal,
	}
}

// ranked returns the ids of turns sharing at least one word with the
// question, best first, at most n.
func (p parsed) ranked(ts []line, n int) []string {
	type hit struct {
		id string
		n  int
	}
	hs := make([]hit, 0, len(ts))
	var ws wordSet
	ws.reset(p.question)
	for _, t := range ts {
		// overlap(p.question, t.speaker+" "+t.text), the question read
		// once.
		if k := ws.count(t.speaker, t.text); k > 0 {
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

func (p parsed) predict() map[string]any {
	return map[string]any{"turn_ids": p.ranked(p.turnsIn("Turns of this event"), 3)}
}

func (p parsed) filter() map[string]any {
	return map[string]any{"relevant_ids": p.ranked(p.turnsIn("Items"), 10)}
}

func (p parsed) answer() map[string]any {
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

func (p parsed) judge() map[string]any {
	label := "WRONG"
	if overlap(p.gold, p.graded) > 0 || strings.EqualFold(strings.TrimSpace(p.gold), strings.TrimSpace(p.graded)) {
		label = "CORRECT"
	}
	return map[string]any{"label": label, "reasoning": "word overlap"}
}

// Handler returns an endpoint handler (see Endpoint) that answers like s:
// it recovers the prompt kind from response_format.json_schema.name and the
// messages from the request. Use it to run the real llm/openai client, and
// the CLI, against scripted answers.
func (s *Scripted) Handler() Handler { return ModelHandler(s) }

// ModelHandler returns a fake-server handler answering like m (a scripted
// fake, or one wrapping it): the request becomes an llm.Request whose
// SchemaName is response_format.json_schema.name, or, in plain and
// json_object modes where the name is not on the wire, the prompt kind
// recognised from the prompt's first words.
func ModelHandler(m llm.Model) Handler {
	return func(_ int, req *ChatRequest) Reply {
		var rf struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		}
		_ = json.Unmarshal(req.ResponseFormat, &rf)
		name := rf.JSONSchema.Name
		if name == "" {
			// Plain or json_object mode: the kind is not on the wire;
			// guess it from the prompt's first line.
			name = kindFromPrompt(req.Messages)
		}
		resp, err := m.Complete(context.Background(), llm.Request{Messages: req.Messages, SchemaName: name})
		if err != nil {
			b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}})
			return Reply{Status: 400, Body: string(b)}
		}
		return Reply{Content: resp.Content}
	}
}

// kindFromPrompt recognises higmem's prompts by their opening words.
func kindFromPrompt(msgs []llm.Message) string {
	var best, found string
	var user string // the first user message: a re-ask adds a correction after it
	for _, m := range msgs {
		if m.Role == "user" && user == "" {
			user = m.Content
		}
	}
	for prefix, kind := range map[string]string{
		"Annotate one conversation turn":         "turn_note",
		"Decide which ongoing event":             "affiliate",
		"Update the memory record":               "event_update",
		"A large event in memory":                "event_check",
		"Organise new conversation turns":        "build_batch",
		"Prepare a memory search":                "query",
		"Pick the turns of one memory event":     "predict",
		"Judge which memory items":               "filter",
		"Pick the memory turns that answer":      "select",
		"Answer a question about past":           "answer",
		"Grade an answer to a question about":    "judge",
		"An event of the conversation has ended": "profile_decide",
		"Update what memory knows about":         "profile_update",
	} {
		// The longest prefix wins, should one prompt's opening start
		// another's.
		if strings.HasPrefix(user, prefix) && len(prefix) > len(best) {
			best, found = prefix, kind
		}
	}
	return found
}
