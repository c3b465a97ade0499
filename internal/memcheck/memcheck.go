// Package memcheck decides whether what a model returned is memory: the
// semantic checks that come after the JSON has been parsed and validated
// against its schema. A 270M model answers schema-valid junk: titles that
// are JSON fragments ("}, {"), summaries copied from the prompt's own
// instructions, the keywords "time, fact" on every event, facts reading
// "the new turn", ids the prompt never showed, runaway lists of "new:1" …
// "new:232". None of that may be stored.
//
// Every check is a pure function of a decoded reply (the prompt package's
// reply types) and of what the prompt showed the model (Shown, derived from
// the rendered prompt by FromPrompt). It repairs the reply in place where a
// part can be dropped or cut (an unknown id, a stop-word keyword, a list
// over its cap) and rejects it where nothing usable is left or a required
// field is junk. The Result says which: Valid (first try, untouched),
// Repaired (with the problems fixed) or Rejected (the caller re-asks or
// falls back, and says so).
//
// Why a package of its own: internal/jsonx knows JSON syntax and schemas,
// internal/prompt renders text; neither knows what a title or a fact is for.
// The engine calls these functions after each llm.CompleteJSON, and the
// tests of llm/llmtest's junk shapes pin what each check catches.
package memcheck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/textnorm"
)

// Verdict is the outcome of a check.
type Verdict uint8

// The verdicts, from best to worst.
const (
	// Valid means the reply was used as the model wrote it.
	Valid Verdict = iota
	// Repaired means parts were dropped or cut; what is left is memory.
	Repaired
	// Rejected means nothing usable is left, or a required field is junk.
	Rejected
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Valid:
		return "valid"
	case Repaired:
		return "repaired"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Problem kinds.
const (
	UnknownID      = "unknown_id"          // an id or label the prompt did not show
	Duplicate      = "duplicate"           // an item listed twice
	OverCap        = "over_cap"            // a list longer than its cap, or a string too long
	JunkTitle      = "junk_title"          // a title of punctuation, a JSON fragment, a label
	JunkText       = "junk_text"           // a summary, context or fact of punctuation or JSON
	Copied         = "copied_instructions" // text copied from the prompt's instructions
	CopiedEvidence = "copied_evidence"     // an answer that copies memory lines as shown ("[S3] 6 April 2024 | Priya: …")
	StopWord       = "stop_word"           // a keyword or tag that is empty, a stop word or a meta word
	Vacuous        = "vacuous"             // text that says nothing ("the new turn")
	Empty          = "empty"               // a required field left empty
	MissingID      = "missing"             // a shown turn the reply says nothing about
	Unused         = "unused"              // a new event no turn belongs to
	BadAnswer      = "bad_answer"          // an answer that is not one
)

// Problem is one thing a check found and fixed or rejected.
type Problem struct {
	Kind  string // one of the kinds above
	Field string // e.g. "turns[2].keywords"
	Value string // the offending value, shortened
}

// String formats the problem.
func (p Problem) String() string {
	if p.Value == "" {
		return p.Kind + " " + p.Field
	}
	return fmt.Sprintf("%s %s %q", p.Kind, p.Field, p.Value)
}

// Result is the outcome of one check.
type Result struct {
	Verdict  Verdict
	Problems []Problem
}

// Count returns how many problems of kind were found.
func (r Result) Count(kind string) int {
	n := 0
	for _, p := range r.Problems {
		if p.Kind == kind {
			n++
		}
	}
	return n
}

// String summarises the result: "repaired: unknown_id turns[3].id \"D9:1\"; …".
func (r Result) String() string {
	if len(r.Problems) == 0 {
		return r.Verdict.String()
	}
	parts := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		parts[i] = p.String()
	}
	return r.Verdict.String() + ": " + strings.Join(parts, "; ")
}

// result collects problems; reject marks the reply unusable.
type result struct {
	Result
}

func (r *result) fix(kind, field, value string) {
	r.Problems = append(r.Problems, Problem{kind, field, short(value)})
	if r.Verdict < Repaired {
		r.Verdict = Repaired
	}
}

func (r *result) reject(kind, field, value string) {
	r.Problems = append(r.Problems, Problem{kind, field, short(value)})
	r.Verdict = Rejected
}

func short(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:60]) + "…"
	}
	return s
}

// Caps bound what one reply may hold. The zero value uses the defaults.
type Caps struct {
	Keywords      int // per record (default 10)
	Tags          int // per record (default 6)
	EventsPerTurn int // events one turn may join (default 3)
	Facts         int // new facts per update (default 4 per new turn shown, at least 4)
	IDs           int // ids of a predict or filter reply (default: as many as shown)
	TitleChars    int // default 100
	TextChars     int // summary, context and fact length (default 800)
}

func (c Caps) withDefaults() Caps {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Keywords, 10)
	def(&c.Tags, 6)
	def(&c.EventsPerTurn, 3)
	def(&c.TitleChars, 100)
	def(&c.TextChars, 800)
	return c
}

// Shown is what a prompt showed the model: the ids of its turns and events
// and its instructions (every line that is not data).
type Shown struct {
	// Turns and Events are the ids shown, in order.
	Turns, Events []string
	// New is the ids of the turns shown as new (to annotate or assign);
	// empty when the prompt has no such section.
	New []string

	turns, events map[string]bool
	// said holds the folded words of each turn shown, by id.
	said map[string][]string
	// turnText holds each turn's line without its id (date, speaker and
	// text), eventText each event's line and the data lines under it
	// (keywords, tags, facts): what a record may draw on (grounding.go).
	turnText, eventText map[string]string
	instr               map[string]bool // word trigrams of the instructions
	instrText           string          // the instructions, folded
	// examples holds the folded texts the instructions quote ("…"): a
	// reply may equal one (an answer "14 March 2021" where the prompt
	// shows that date as the form of an answer) without copying.
	examples map[string]bool
	// names holds the lower-cased words that may name a person: the
	// speakers of the turns shown, the capitalised words of their texts
	// and the people the prompt lists (see people.go).
	names map[string]bool
	// speakers holds the folded speakers of the turns shown (a turn
	// line reads "[id] date | speaker: text").
	speakers map[string]bool
}

var quoted = regexp.MustCompile(`"([^"\n]+)"`)

// turnLine returns the id of a turn line "[id] …" and the length of its
// head "[id] ": the line opens with "[", the id is one byte or more up
// to the first "]", and a space follows it (as the regexp
// `^\[([^\]]+)\] ` reads it, without its cost: every retrieval call's
// prompt is read line by line).
func turnLine(t string) (id string, head int, ok bool) { return lineID(t, "[", ']') }

// eventLine is turnLine for an event line "(event id) …" (the regexp
// `^\(event ([^)]+)\) `).
func eventLine(t string) (id string, head int, ok bool) { return lineID(t, "(event ", ')') }

// lineID returns the id of a line that opens with open, then an id of
// one byte or more up to the first end, then a space; head is the length
// of that opening.
func lineID(t, open string, end byte) (id string, head int, ok bool) {
	if !strings.HasPrefix(t, open) {
		return "", 0, false
	}
	rest := t[len(open):]
	i := strings.IndexByte(rest, end)
	if i < 1 || i+1 >= len(rest) || rest[i+1] != ' ' {
		return "", 0, false
	}
	return rest[:i], len(open) + i + 2, true
}

// FromPrompt reads what p showed: turn lines "[id] date | speaker: text",
// event lines "(event id) title :: summary", and the instructions, which
// are all other lines except the data lines that follow "Keywords:",
// "Tags:", "Question:", fact lines "- (date) …" and what the prompt says
// memory knows about people (see peopleData). Turns listed after a header
// starting with "New turn" are also the New turns.
func FromPrompt(p prompt.Prompt) Shown {
	var turns, events, news []string
	var instr strings.Builder
	names := map[string]bool{}
	said := map[string][]string{}
	speakers := map[string]bool{}
	turnText, eventText := map[string]string{}, map[string]string{}
	inNew, inKnown := false, false
	event := "" // the event whose data lines follow
	for _, l := range strings.Split(p.System+"\n"+p.User, "\n") {
		t := strings.TrimSpace(l)
		addNames(names, t)
		evID, evHead, isEvent := eventLine(t)
		switch {
		case isEvent:
			event = evID
			eventText[event] += t[evHead:] + "\n"
		case event != "" && (strings.HasPrefix(t, "Keywords:") || strings.HasPrefix(t, "Tags:") || strings.HasPrefix(t, "- (")):
			eventText[event] += t + "\n"
		case t != "Fact sheet:":
			event = ""
		}
		inKnown = inKnown && strings.HasPrefix(t, "- ")
		if peopleData(t) || inKnown {
			// What memory knows about people is data, not instructions:
			// a reply may restate it (a value it ends).
			inKnown = inKnown || strings.HasPrefix(t, knownHeader)
			continue
		}
		id, head, isTurn := turnLine(t)
		switch {
		case isTurn:
			turns = append(turns, id)
			turnText[id] = t[head:]
			if _, text, ok := strings.Cut(t, ": "); ok {
				said[id] = words(text)
			}
			if _, rest, ok := strings.Cut(turnText[id], " | "); ok {
				if who, _, ok := strings.Cut(rest, ": "); ok {
					speakers[strings.Join(words(who), " ")] = true
				}
			}
			if inNew {
				news = append(news, id)
			}
		case isEvent:
			events = append(events, evID)
		case strings.HasPrefix(t, "Keywords:"), strings.HasPrefix(t, "Tags:"), strings.HasPrefix(t, "Question:"),
			strings.HasPrefix(t, "- ("):
		default:
			if strings.HasSuffix(t, ":") {
				inNew = strings.HasPrefix(t, "New turn")
			}
			instr.WriteString(t)
			instr.WriteByte('\n')
		}
	}
	s := NewShown(turns, events, news, instr.String())
	s.names = names
	s.said = said
	s.speakers = speakers
	s.turnText, s.eventText = turnText, eventText
	return s
}

// ForReply returns what p showed as the check of reply's type (see Reply)
// reads it: for the replies checked against the turn ids shown alone
// (predict, filter, select: every retrieval round's calls), the ids of
// FromPrompt without the rest (words, names, instructions), which costs a
// fraction of it; for the others, FromPrompt(p). For a prompt whose ids
// Render recorded (prompt.Prompt.Shown: select prompts), the ids are
// those, when the system prompt's lines add none and leave no section
// open; else they are read from the text.
func ForReply(reply any, p prompt.Prompt) Shown {
	switch reply.(type) {
	case *prompt.PredictReply, *prompt.FilterReply, *prompt.SelectReply:
		if sh := p.Shown(); sh != nil && quietSystem(p.System) {
			return Shown{Turns: sh.Turns, Events: sh.Events, turns: sh.TurnSet, events: set(sh.Events)}
		}
		return idsFromPrompt(p)
	}
	return FromPrompt(p)
}

// quietSystem reports whether the lines of a system prompt, read as
// idsFromPrompt reads them, show no id and leave it reading the next line
// afresh (outside a "New turn" or a known-people section).
func quietSystem(system string) bool {
	var r idReader
	r.lines(system)
	return len(r.turns) == 0 && len(r.events) == 0 && !r.inNew && !r.inKnown
}

// lines reads every line of s, an empty last one too.
func (r *idReader) lines(s string) {
	for {
		l, rest, more := strings.Cut(s, "\n")
		r.line(l)
		if !more {
			return
		}
		s = rest
	}
}

// idsFromPrompt returns the Turns, Events and New of FromPrompt(p), and
// the sets of the turn and event ids, read by the same rules; nothing else
// of the Shown is set.
func idsFromPrompt(p prompt.Prompt) Shown {
	// About as many turns as lines opening with '[' (a capacity only).
	r := idReader{turns: make([]string, 0, strings.Count(p.User, "\n[")+1)}
	// The lines of p.System + "\n" + p.User, without building it: every
	// line of the system prompt, then every line of the user prompt but
	// an empty last one (FromPrompt's loop ends with the text).
	r.lines(p.System)
	text := p.User
	for len(text) > 0 {
		var l string
		l, text, _ = strings.Cut(text, "\n")
		r.line(l)
	}
	turns := r.turns
	if len(turns) == 0 {
		turns = nil // as FromPrompt leaves it
	}
	return Shown{Turns: turns, Events: r.events, New: r.news, turns: set(turns), events: set(r.events)}
}

// idReader reads a prompt's ids line by line for idsFromPrompt.
type idReader struct {
	turns, events, news []string
	inNew, inKnown      bool
}

// line reads one line.
func (r *idReader) line(l string) {
	t := strings.TrimSpace(l)
	r.inKnown = r.inKnown && strings.HasPrefix(t, "- ")
	if peopleData(t) || r.inKnown {
		r.inKnown = r.inKnown || strings.HasPrefix(t, knownHeader)
		return
	}
	if id, _, ok := turnLine(t); ok {
		r.turns = append(r.turns, id)
		if r.inNew {
			r.news = append(r.news, id)
		}
		return
	}
	if id, _, ok := eventLine(t); ok {
		r.events = append(r.events, id)
		return
	}
	switch {
	case strings.HasPrefix(t, "Keywords:"), strings.HasPrefix(t, "Tags:"), strings.HasPrefix(t, "Question:"),
		strings.HasPrefix(t, "- ("):
	default:
		if strings.HasSuffix(t, ":") {
			r.inNew = strings.HasPrefix(t, "New turn")
		}
	}
}

// NewShown builds a Shown from its parts.
func NewShown(turns, events, news []string, instructions string) Shown {
	s := Shown{Turns: turns, Events: events, New: news, turns: set(turns), events: set(events), instr: map[string]bool{},
		examples: map[string]bool{}}
	for _, q := range quoted.FindAllStringSubmatch(instructions, -1) {
		s.examples[strings.Join(words(q[1]), " ")] = true
	}
	w := words(instructions)
	for i := 0; i+3 <= len(w); i++ {
		s.instr[strings.Join(w[i:i+3], " ")] = true
	}
	s.instrText = " " + strings.Join(w, " ") + " "
	return s
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// words folds s to lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// copied reports whether s was copied from the instructions: at least three
// words, most of whose word trigrams occur there, or the whole of s found
// in them word for word.
func (s Shown) copied(text string) bool {
	w := words(text)
	if len(w) < 3 {
		return false
	}
	if strings.Contains(s.instrText, " "+strings.Join(w, " ")+" ") {
		return true
	}
	hit, n := 0, 0
	for i := 0; i+3 <= len(w); i++ {
		n++
		if s.instr[strings.Join(w[i:i+3], " ")] {
			hit++
		}
	}
	return n > 0 && 2*hit >= n
}

// copiedFrom returns the id of a turn shown, other than own, whose text
// text copies (at least five words, most of whose word trigrams are that
// turn's), or "". A 270M model wrote one turn's text as the context of
// every turn of its batch; a context that restates its own turn is not
// caught.
func (s Shown) copiedFrom(own, text string) string {
	w := words(text)
	if len(w) < 5 {
		return ""
	}
	grams := func(ws []string) map[string]bool {
		m := map[string]bool{}
		for i := 0; i+3 <= len(ws); i++ {
			m[strings.Join(ws[i:i+3], " ")] = true
		}
		return m
	}
	if ownGrams := grams(s.said[own]); overlap(w, ownGrams)*2 >= len(w)-2 {
		return ""
	}
	for _, id := range s.Turns {
		if id != own && overlap(w, grams(s.said[id]))*5 >= 4*(len(w)-2) {
			return id
		}
	}
	return ""
}

// overlap counts the word trigrams of w found in grams.
func overlap(w []string, grams map[string]bool) int {
	n := 0
	for i := 0; i+3 <= len(w); i++ {
		if grams[strings.Join(w[i:i+3], " ")] {
			n++
		}
	}
	return n
}

// metaWords are the words of the task itself: a record whose content words
// are all among them says nothing about the conversation.
var metaWords = set(strings.Fields(`time times fact facts event events turn turns new summary summaries keyword keywords
	tag tags context contexts title titles label labels id ids record records memory memories
	speaker speakers date dates json schema object objects string strings list lists item items reply replies answer
	question questions topic topics happening example examples none null nil unknown n a na etc text value values field
	fields short brief sentence sentences statement statements one two three entity entities category categories
	information info detail details thing things something stuff general misc miscellaneous other update updated
	relevant irrelevant true false yes no ok okay people person persons conversation conversations`))

// vacuous reports whether text has no content word outside the stop and
// meta words.
func vacuous(text string) bool {
	for _, w := range words(text) {
		if !metaWords[w] && !textnorm.IsStop(w) && !isNumber(w) {
			return false
		}
	}
	return true
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// jsonish reports whether s looks like a piece of JSON rather than prose.
// Square brackets alone are prose: conversations carry "[Image: …]"
// captions and turn ids, and answers quote them; a JSON array is not.
func jsonish(s string) bool {
	t := strings.TrimSpace(s)
	if strings.ContainsAny(t, "{}") || strings.HasPrefix(t, `["`) || strings.HasPrefix(t, "[") && json.Valid([]byte(t)) {
		return true
	}
	return strings.Contains(t, `":`) || strings.Contains(t, `",`) || strings.HasPrefix(t, `"`) && strings.HasSuffix(t, `":`)
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

var labelRE = regexp.MustCompile(`(?i)^\s*(new|e\d+|event)\s*(:\s*\d+)?\s*$`)

// junkTitle says why a title is not one, or "".
func (s Shown) junkTitle(t string) string {
	switch {
	case !hasLetter(t), jsonish(t), labelRE.MatchString(t), s.events[strings.TrimSpace(t)], strings.Contains(t, " :: "),
		idTitleRE.MatchString(t), s.turns[strings.Trim(strings.TrimSpace(t), "[]")]:
		return JunkTitle
	case rolePlay(t):
		return RolePlay
	case s.copied(t):
		return Copied
	case vacuous(t), talksTask(t):
		return Vacuous
	}
	return ""
}

// junkText says why a summary, context or fact is not one, or "".
func (s Shown) junkText(t string) string {
	switch {
	case !hasLetter(t), jsonish(t), strings.Contains(t, " :: "):
		// " :: " parts an event's title from its summary in the prompts:
		// a text holding it copies the prompt's layout.
		return JunkText
	case s.copied(t):
		return Copied
	case vacuous(t), talksTask(t):
		return Vacuous
	}
	return ""
}

// taskTalk are phrases about the task rather than the conversation, which
// the real 270M model wrote as summaries and titles: "The new events are
// the same as the old ones, but they have different people and places.",
// "The new event is a person's name, and it was created by …".
var taskTalk = []string{"new turn", "new turns", "new events", "the new event", "these turns", "the turns"}

// talksTask reports whether text speaks of the task (see taskTalk).
func talksTask(text string) bool {
	joined := " " + strings.Join(words(text), " ") + " "
	for _, p := range taskTalk {
		if strings.Contains(joined, " "+p+" ") {
			return true
		}
	}
	return false
}

// cut shortens s to at most n characters, at a word boundary.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	t := string(r[:n])
	if i := strings.LastIndexByte(t, ' '); i > n/2 {
		t = t[:i]
	}
	return strings.TrimRight(t, " ,;:-")
}

// Terms returns the keywords or tags of in that a check would keep, at
// most max: for lists the engine writes itself (an offline summary
// standing in for a model's), so that nothing it stores beside model
// output reads as junk.
func Terms(in []string, max int) []string {
	var r result
	return r.terms("", in, max)
}

// terms cleans a keyword or tag list: trimmed of quotes and punctuation,
// without empty, stop, meta and JSON-fragment entries or duplicates, cut
// to max.
func (r *result) terms(field string, in []string, max int) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for i, k := range in {
		t := strings.TrimFunc(k, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsPunct(c) && c != '&' })
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case t == "" || !hasLetter(t) || jsonish(k) || utf8.RuneCountInString(t) > 60 || vacuous(t):
			r.fix(StopWord, f, k)
		case seen[strings.ToLower(t)]:
			r.fix(Duplicate, f, k)
		case len(out) == max:
			r.fix(OverCap, f, k)
		default:
			seen[strings.ToLower(t)] = true
			out = append(out, t)
		}
	}
	return out
}

// text checks a free-text field; it returns the cleaned text, "" when the
// text is junk.
func (r *result) text(s Shown, field, v string, max int) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if why := s.junkText(v); why != "" {
		r.fix(why, field, v)
		return ""
	}
	if c := cut(v, max); c != v {
		r.fix(OverCap, field, v)
		v = c
	}
	return v
}

// itemName names item i of a list field, as fmt's "%s[%d]" does.
func itemName(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// seenScan is the longest list of ids whose duplicates ids finds by
// searching the ids kept, without a map.
const seenScan = 48

// ids keeps the ids of in that were shown, once each, at most max.
func (r *result) ids(field string, in []string, shown map[string]bool, max int) []string {
	out := make([]string, 0, len(in))
	// The ids kept so far are out's: a short list is searched, a long
	// one gets a map.
	var seen map[string]bool
	if len(in) > seenScan {
		seen = make(map[string]bool, len(in))
	}
	for i, id := range in {
		id = strings.TrimSpace(id)
		// The item's name ("turn_ids[3]") is written only for a fix:
		// most ids are kept.
		switch {
		case !shown[id]:
			r.fix(UnknownID, itemName(field, i), id)
		case seen[id] || seen == nil && slices.Contains(out, id):
			r.fix(Duplicate, itemName(field, i), id)
		case max > 0 && len(out) == max:
			r.fix(OverCap, itemName(field, i), id)
		default:
			if seen != nil {
				seen[id] = true
			}
			out = append(out, id)
		}
	}
	return out
}
