package memcheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/prompt"
)

// newLabel is a label for an event the reply creates: "new:1", "NEW:2".
var newLabel = regexp.MustCompile(`(?i)^new:(\d+)$`)

// BuildBatch checks a build_batch reply, one section after the other
// (batchCheck: turns, then events, which needs to know the events the
// turns joined). Turns: items only for the new turns shown, once each;
// events among those shown or new labels "new:N", at most EventsPerTurn
// per turn and no more new events than new turns; clean keywords, tags and
// context. Events: one record per event a kept turn joined (others are
// unknown or unused), with a real summary (else the item keeps only its
// title, and the caller falls back for that event), a real title for a new
// event ("" when the model's was junk: the caller derives one), clean
// keywords, tags and facts. People: facts about people as people checks
// them. It rejects a reply with no usable turn item.
func BuildBatch(r *prompt.BuildBatchReply, s Shown, caps Caps) Result {
	b := batchCheck{s: s, c: caps.withDefaults(), joined: map[string]int{}, cited: map[string][]string{}}
	b.news = s.New
	if len(b.news) == 0 {
		b.news = s.Turns
	}
	b.turns(r)
	b.events(r)
	b.people(r)
	if len(r.Turns) == 0 {
		b.res.reject(Empty, "turns", "")
	}
	return b.res.Result
}

// batchCheck is the state of one BuildBatch check, shared by its section
// checks: a new section of the reply adds a method here.
type batchCheck struct {
	s    Shown
	c    Caps
	res  result
	news []string // the ids of the new turns shown
	// joined counts the kept turns that joined each event (shown id or
	// new label).
	joined map[string]int
	// cited holds the kept turns that joined each event, in order: the
	// turns its record must be grounded in.
	cited  map[string][]string
	labels int // distinct new labels used
}

// turns checks the "turns" section.
func (b *batchCheck) turns(r *prompt.BuildBatchReply) {
	res, c := &b.res, b.c
	allowed := set(b.news)
	seen := map[string]bool{}
	kept := make([]prompt.BatchTurn, 0, len(r.Turns))
	for i, t := range r.Turns {
		f := fmt.Sprintf("turns[%d]", i)
		id := strings.TrimSpace(t.ID)
		if !res.admit(f+".id", t.ID, id, allowed, seen) {
			continue
		}
		var evs []string
		for j, e := range t.Events {
			fe := fmt.Sprintf("%s.events[%d]", f, j)
			e = strings.TrimSpace(e)
			isNew := newLabel.MatchString(e)
			if isNew {
				e = strings.ToLower(e)
			}
			switch {
			case slices.Contains(evs, e):
				res.fix(Duplicate, fe, e)
				continue
			case b.s.events[e]:
			case isNew && (b.joined[e] > 0 || b.labels < len(b.news)):
			case isNew:
				res.fix(OverCap, fe, e)
				continue
			default:
				res.fix(UnknownID, fe, e)
				continue
			}
			if len(evs) == c.EventsPerTurn {
				res.fix(OverCap, fe, e)
				continue
			}
			if isNew && b.joined[e] == 0 {
				b.labels++
			}
			evs = append(evs, e)
			b.joined[e]++
			b.cited[e] = append(b.cited[e], id)
		}
		if len(evs) == 0 && len(t.Events) > 0 {
			res.fix(Empty, f+".events", strings.Join(t.Events, ", "))
		}
		context := res.text(b.s, f+".context", t.Context, c.TextChars)
		if other := b.s.copiedFrom(id, context); other != "" {
			res.fix(Copied, f+".context", "turn "+other+": "+context)
			context = ""
		}
		context = res.groundText(b.s, b.s.allSupport(), f+".context", context, 0)
		kept = append(kept, prompt.BatchTurn{
			ID:       id,
			Keywords: res.terms(f+".keywords", t.Keywords, c.Keywords),
			Tags:     res.terms(f+".tags", t.Tags, c.Tags),
			Context:  context,
			Events:   evs,
		})
	}
	for _, id := range b.news {
		if !seen[id] {
			res.fix(MissingID, "turns", id)
		}
	}
	b.repeated(kept)
	r.Turns = kept
}

// repeated drops what three or more kept turn items of a batch say word
// for word alike: a context (it says what its turn is about, and turns
// differ) or a whole keyword list. The real 270M model, its ids fixed by
// the narrowed schema, wrote "the key of the event" with the keywords
// ["key"] for all twelve turns of a batch, and "I'm a doctor" for six.
// Tags are left alone: a batch on one topic may well share its broad
// categories.
func (b *batchCheck) repeated(kept []prompt.BatchTurn) {
	same := func(field string, get func(*prompt.BatchTurn) string, clear func(*prompt.BatchTurn)) {
		n := map[string]int{}
		for i := range kept {
			if v := get(&kept[i]); v != "" {
				n[v]++
			}
		}
		for i := range kept {
			if v := get(&kept[i]); v != "" && n[v] >= 3 {
				b.res.fix(Duplicate, fmt.Sprintf("turns[%d].%s", i, field), v)
				clear(&kept[i])
			}
		}
	}
	same("context", func(t *prompt.BatchTurn) string { return strings.Join(words(t.Context), " ") },
		func(t *prompt.BatchTurn) { t.Context = "" })
	same("keywords", func(t *prompt.BatchTurn) string {
		ks := make([]string, len(t.Keywords))
		for i, k := range t.Keywords {
			ks[i] = strings.ToLower(k)
		}
		slices.Sort(ks)
		return strings.Join(ks, "; ")
	}, func(t *prompt.BatchTurn) { t.Keywords = nil })
}

// events checks the "events" section: one record per event the kept
// turns joined.
func (b *batchCheck) events(r *prompt.BuildBatchReply) {
	res, c := &b.res, b.c
	seen := map[string]bool{}
	kept := make([]prompt.BatchEvent, 0, len(r.Events))
	for i, e := range r.Events {
		f := fmt.Sprintf("events[%d]", i)
		id := strings.TrimSpace(e.ID)
		isNew := newLabel.MatchString(id)
		if isNew {
			id = strings.ToLower(id)
		}
		switch {
		case b.joined[id] == 0 && (isNew || b.s.events[id]):
			res.fix(Unused, f+".id", e.ID)
			continue
		case b.joined[id] == 0:
			res.fix(UnknownID, f+".id", e.ID)
			continue
		case seen[id]:
			res.fix(Duplicate, f+".id", e.ID)
			continue
		}
		seen[id] = true
		e.ID = id
		title := strings.TrimSpace(e.Title)
		switch {
		case !isNew:
			title = "" // an event shown keeps its title
		case title == "":
			res.fix(Empty, f+".title", "")
		case b.s.junkTitle(title) != "":
			res.fix(b.s.junkTitle(title), f+".title", e.Title)
			title = ""
		case b.s.grounded() && b.s.recordSupport(b.cited[id], "").ungrounded(title, groundShare) != "":
			res.fix(Ungrounded, f+".title", b.s.recordSupport(b.cited[id], "").ungrounded(title, groundShare)+": "+e.Title)
			title = ""
		case cut(title, c.TitleChars) != title:
			res.fix(OverCap, f+".title", e.Title)
			title = cut(title, c.TitleChars)
		}
		e.Title = title
		one := c
		if one.Facts <= 0 {
			one.Facts = 4 * b.joined[id]
		}
		shown := ""
		if !isNew {
			shown = id
		}
		up := eventUpdate(&e.EventUpdateReply, b.s, one, b.s.recordSupport(b.cited[id], shown))
		for _, p := range up.Problems {
			res.fix(p.Kind, f+"."+p.Field, p.Value)
		}
		if up.Verdict == Rejected {
			// Nothing of the record is used but a new event's title.
			e.EventUpdateReply = prompt.EventUpdateReply{}
		}
		if e.Title == "" && e.Summary == "" {
			continue
		}
		kept = append(kept, e)
	}
	for _, id := range slices.Sorted(maps.Keys(b.joined)) {
		if !seen[id] {
			res.fix(MissingID, "events", id)
		}
	}
	r.Events = b.alike(kept)
}

// alike drops the summaries and titles that two or more records of one
// reply share: a summary covers its own event, and the real 270M model
// wrote the same one for every event of a batch. A record left with
// neither is dropped (its event falls back).
func (b *batchCheck) alike(kept []prompt.BatchEvent) []prompt.BatchEvent {
	summaries, titles := map[string]int{}, map[string]int{}
	for _, e := range kept {
		summaries[strings.Join(words(e.Summary), " ")]++
		titles[strings.Join(words(e.Title), " ")]++
	}
	out := kept[:0]
	for i, e := range kept {
		if e.Summary != "" && summaries[strings.Join(words(e.Summary), " ")] > 1 {
			b.res.fix(Duplicate, fmt.Sprintf("events[%d].summary", i), e.Summary)
			e.EventUpdateReply = prompt.EventUpdateReply{}
		}
		if e.Title != "" && titles[strings.Join(words(e.Title), " ")] > 1 {
			b.res.fix(Duplicate, fmt.Sprintf("events[%d].title", i), e.Title)
			e.Title = ""
		}
		if e.Title != "" || e.Summary != "" {
			out = append(out, e)
		}
	}
	return out
}

// people checks the "people" section (what the turns state about
// people): at most peoplePerTurn facts per new turn.
func (b *batchCheck) people(r *prompt.BuildBatchReply) {
	r.People = b.res.people(b.s, "people", r.People, peoplePerTurn*max(1, len(b.news)))
}

// admit reports whether id (written raw) may be kept: allowed and not seen
// before, and marks it seen; otherwise it records why not under field.
func (res *result) admit(field, raw, id string, allowed, seen map[string]bool) bool {
	switch {
	case !allowed[id]:
		res.fix(UnknownID, field, raw)
		return false
	case seen[id]:
		res.fix(Duplicate, field, raw)
		return false
	}
	seen[id] = true
	return true
}

// EventUpdate checks an event_update reply: a real summary (else rejected),
// clean keywords and tags, facts that say something, once each, with a
// shown turn id or none, at most Facts (default four per new turn).
func EventUpdate(r *prompt.EventUpdateReply, s Shown, caps Caps) Result {
	return eventUpdate(r, s, caps, s.allSupport())
}

// eventUpdate is EventUpdate with the record's support (grounding.go):
// every turn and the event an update prompt showed, or, in a build reply,
// the turns that joined the event and its record shown.
func eventUpdate(r *prompt.EventUpdateReply, s Shown, caps Caps, sp *support) Result {
	c := caps.withDefaults()
	if c.Facts <= 0 {
		c.Facts = 4 * max(1, len(s.New))
	}
	var res result
	r.Summary = res.summary(s, r.Summary, c.TextChars)
	if r.Summary != "" && s.grounded() {
		if rolePlay(r.Summary) {
			res.reject(RolePlay, "summary", r.Summary)
		} else if why := sp.ungrounded(r.Summary, groundShare); why != "" {
			res.reject(Ungrounded, "summary", why+": "+r.Summary)
		}
	}
	r.Keywords = res.terms("keywords", r.Keywords, c.Keywords)
	if s.grounded() {
		kept := r.Keywords[:0]
		for i, k := range r.Keywords {
			if sp.keywordGrounded(k) {
				kept = append(kept, k)
			} else {
				res.fix(Ungrounded, fmt.Sprintf("keywords[%d]", i), k)
			}
		}
		r.Keywords = kept
	}
	r.Tags = res.terms("tags", r.Tags, c.Tags)
	r.NewFacts = res.facts(s, r.NewFacts, c)
	if s.grounded() {
		kept := r.NewFacts[:0]
		for i, f := range r.NewFacts {
			if t := res.groundText(s, sp, fmt.Sprintf("new_facts[%d].fact", i), f.Fact, 0); t != "" {
				kept = append(kept, f)
			}
		}
		r.NewFacts = kept
	}
	return res.Result
}

// groundText returns text, or "" (with the problem recorded) when it is
// written in the first person or its names, dates or (share > 0) words
// are not in sp. A Shown without the prompt's text checks nothing.
func (r *result) groundText(s Shown, sp *support, field, text string, share float64) string {
	if text == "" || !s.grounded() {
		return text
	}
	if rolePlay(text) {
		r.fix(RolePlay, field, text)
		return ""
	}
	if why := sp.ungrounded(text, share); why != "" {
		r.fix(Ungrounded, field, why+": "+text)
		return ""
	}
	return text
}

// summary checks a required summary: it rejects an empty or junk one and
// cuts a long one to max.
func (res *result) summary(s Shown, text string, max int) string {
	summary := strings.TrimSpace(text)
	if summary == "" {
		res.reject(Empty, "summary", "")
	} else if why := s.junkText(summary); why != "" {
		res.reject(why, "summary", summary)
	} else if t := cut(summary, max); t != summary {
		res.fix(OverCap, "summary", summary)
		summary = t
	}
	return summary
}

// facts cleans new facts.
func (res *result) facts(s Shown, in []prompt.FactReply, c Caps) []prompt.FactReply {
	out := make([]prompt.FactReply, 0, len(in))
	seen := map[string]bool{}
	for i, f := range in {
		field := fmt.Sprintf("new_facts[%d]", i)
		text := res.text(s, field+".fact", f.Fact, c.TextChars)
		if text == "" {
			if strings.TrimSpace(f.Fact) == "" {
				res.fix(Empty, field+".fact", "")
			}
			continue
		}
		key := strings.Join(words(text), " ")
		if seen[key] {
			res.fix(Duplicate, field, text)
			continue
		}
		if len(out) == c.Facts {
			res.fix(OverCap, field, text)
			continue
		}
		seen[key] = true
		f.Fact = text
		f.TurnID = strings.TrimSpace(f.TurnID)
		if f.TurnID != "" && !s.turns[f.TurnID] {
			res.fix(UnknownID, field+".turn_id", f.TurnID)
			f.TurnID = ""
		}
		f.Time = strings.TrimSpace(f.Time)
		if f.Time != "" && (!hasLetter(f.Time) || jsonish(f.Time) || s.copied(f.Time)) {
			res.fix(JunkText, field+".time", f.Time)
			f.Time = ""
		}
		out = append(out, f)
	}
	return out
}

// EventCheck checks an event_check reply's keywords and tags.
func EventCheck(r *prompt.EventCheckReply, s Shown, caps Caps) Result {
	c := caps.withDefaults()
	var res result
	r.Keywords = res.terms("keywords", r.Keywords, c.Keywords)
	r.Tags = res.terms("tags", r.Tags, c.Tags)
	return res.Result
}

// TurnNote checks a turn_note reply: clean keywords, tags and entities, a
// real context, links to shown turns only. It rejects a note with neither
// keywords nor context left.
func TurnNote(r *prompt.TurnNoteReply, s Shown, caps Caps) Result {
	c := caps.withDefaults()
	var res result
	r.Keywords = res.terms("keywords", r.Keywords, c.Keywords)
	r.Tags = res.terms("tags", r.Tags, c.Tags)
	r.Entities = res.terms("entities", r.Entities, 2*c.Keywords)
	r.Context = res.text(s, "context", r.Context, c.TextChars)
	links := r.Links[:0]
	seen := map[string]bool{}
	for i, l := range r.Links {
		l.Target = strings.TrimSpace(l.Target)
		switch {
		case !s.turns[l.Target]:
			res.fix(UnknownID, fmt.Sprintf("links[%d].target", i), l.Target)
		case seen[l.Target]:
			res.fix(Duplicate, fmt.Sprintf("links[%d].target", i), l.Target)
		default:
			seen[l.Target] = true
			links = append(links, l)
		}
	}
	r.Links = links
	if len(r.Keywords) == 0 && r.Context == "" {
		res.reject(Empty, "keywords", "")
	}
	return res.Result
}

// Affiliate checks an affiliate reply: shown event ids or "NEW", once
// each, at most EventsPerTurn. It rejects a reply left with none.
func Affiliate(r *prompt.AffiliateReply, s Shown, caps Caps) Result {
	c := caps.withDefaults()
	var res result
	out := make([]string, 0, len(r.Affiliations))
	seen := map[string]bool{}
	for i, a := range r.Affiliations {
		a = strings.TrimSpace(a)
		if strings.EqualFold(a, "new") {
			a = "NEW"
		}
		f := fmt.Sprintf("affiliations[%d]", i)
		switch {
		case a != "NEW" && !s.events[a]:
			res.fix(UnknownID, f, a)
		case seen[a]:
			res.fix(Duplicate, f, a)
		case len(out) == c.EventsPerTurn:
			res.fix(OverCap, f, a)
		default:
			seen[a] = true
			out = append(out, a)
		}
	}
	if seen["NEW"] && len(out) > 1 {
		// "NEW" beside real events means the real ones.
		res.fix(Duplicate, "affiliations", "NEW")
		out = deleteValue(out, "NEW")
	}
	r.Affiliations = out
	if len(out) == 0 {
		res.reject(Empty, "affiliations", "")
	}
	return res.Result
}

func deleteValue(xs []string, v string) []string {
	out := xs[:0]
	for _, x := range xs {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// Predict checks a predict reply: shown turn ids, once each, at most
// caps.IDs (the prompt's own maximum; default all shown). An empty list is
// a valid answer.
func Predict(r *prompt.PredictReply, s Shown, caps Caps) Result {
	var res result
	r.TurnIDs = res.ids("turn_ids", r.TurnIDs, s.turns, caps.IDs)
	return res.Result
}

// Select checks a select reply like Predict: shown turn ids, once each,
// at most caps.IDs (the prompt's maximum). An empty list is a valid
// answer; a list of none but ids that were not shown is rejected (the
// caller falls back to its search hits).
func Select(r *prompt.SelectReply, s Shown, caps Caps) Result {
	var res result
	listed := len(r.TurnIDs)
	r.TurnIDs = res.ids("turn_ids", r.TurnIDs, s.turns, caps.IDs)
	if listed > 0 && len(r.TurnIDs) == 0 {
		res.reject(UnknownID, "turn_ids", "")
	}
	return res.Result
}

// Filter checks a filter reply like Predict.
func Filter(r *prompt.FilterReply, s Shown, caps Caps) Result {
	var res result
	r.RelevantIDs = res.ids("relevant_ids", r.RelevantIDs, s.turns, caps.IDs)
	return res.Result
}

// Query checks a query reply: a keyword query that is neither empty, nor
// JSON, nor copied from the instructions (else rejected: the caller
// searches with the question itself), and clean entities.
func Query(r *prompt.QueryReply, s Shown, caps Caps) Result {
	c := caps.withDefaults()
	var res result
	q := strings.TrimSpace(r.KeywordQuery)
	switch {
	case q == "" || !hasLetter(q):
		res.reject(Empty, "keyword_query", q)
	case jsonish(q):
		res.reject(JunkText, "keyword_query", q)
	case s.copied(q):
		res.reject(Copied, "keyword_query", q)
	}
	r.KeywordQuery = q
	r.Entities = res.terms("entities", r.Entities, 2*c.Keywords)
	return res.Result
}

// notMentioned is the answer the answer prompt asks for when memory does
// not hold one; it is copied from the instructions on purpose.
const notMentioned = "not mentioned in the conversation"

// Answer checks an answer reply: not empty, not JSON, not the
// instructions read back (the "not mentioned" answer the prompt defines
// is fine). It rejects what is not an answer.
func Answer(r *prompt.AnswerReply, s Shown, caps Caps) Result {
	var res result
	a := strings.TrimSpace(r.Answer)
	switch {
	case strings.HasPrefix(strings.Join(words(a), " "), notMentioned):
	case a == "" || !hasLetter(a):
		res.reject(Empty, "answer", a)
	case jsonish(a):
		res.reject(BadAnswer, "answer", a)
	case s.copiedEvidence(a):
		// The memory block read back: SmolLM2 answered "[S3] 6 April
		// 2024 | Priya: Smart! How did it go? …" (its Ollama cassette).
		res.reject(CopiedEvidence, "answer", a)
	case s.copied(a) && (!s.examples[strings.Join(words(a), " ")] || !s.yearsNear(a)):
		// An answer equal to a quoted example (a date in the form the
		// prompt asks for) may be the right one, when the turns shown
		// are of its years: SmolLM2 and Gemma 3 270M answered the
		// example dates "14 March 2021" and "the week before 2 October
		// 2019" about turns of 2024 and 2023.
		res.reject(Copied, "answer", a)
	}
	r.Answer = a
	return res.Result
}

var (
	// evidenceID is a memory line's head as the prompts lay it out,
	// "[id] date |": a bracketed id (no spaces, so not an "[Image: …]"
	// caption) and, within a date's length, the bar before the speaker.
	evidenceID = regexp.MustCompile(`\[[^\]\s]+\][^|\[\]\n]{0,40}\|`)
	// evidenceSpeaker is the bar and speaker of a memory line, "| Priya:".
	evidenceSpeaker = regexp.MustCompile(`\|\s*([^|:\n]{1,60}?)\s*:`)
	// evidenceDate is a memory line's date, bar and a capitalised
	// speaker, whoever it is ("6 April 2024 | Priya:", "unknown date |
	// Tom:"): a model copies lines of turns it was not shown this time.
	evidenceDate = regexp.MustCompile(`(\b(19|20)\d\d|unknown date)\s*\|\s*\p{Lu}[^|:\n]{0,40}:`)
)

// copiedEvidence reports whether an answer copies the memory block as the
// prompt showed it: the layout of a memory line ("[id] date | speaker:
// text"), a bracketed id followed by a date and the bar, a date (its
// year) followed by the bar and a capitalised name, or the bar followed
// by a speaker of the turns shown ("| Priya:"; any capitalised name when
// no turn was shown). A date, a name or a phrase quoted from a
// turn, or a turn id cited alone ("in [D1:3]"), is an answer.
func (s Shown) copiedEvidence(a string) bool {
	if evidenceID.MatchString(a) || evidenceDate.MatchString(a) {
		return true
	}
	for _, m := range evidenceSpeaker.FindAllStringSubmatch(a, -1) {
		who := strings.Join(words(m[1]), " ")
		if who == "" {
			continue
		}
		if len(s.speakers) == 0 {
			if r, _ := utf8.DecodeRuneInString(strings.TrimSpace(m[1])); unicode.IsUpper(r) && len(words(m[1])) <= 3 {
				return true
			}
			continue
		}
		if s.speakers[who] {
			return true
		}
	}
	return false
}

// yearsNear reports whether every year text names is within a year of a
// year of the turns or events shown (a date worked out from "last week"
// may fall in the year before its turn's), or nothing was shown.
func (s Shown) yearsNear(text string) bool {
	if !s.grounded() {
		return true
	}
	sp := s.allSupport()
	for _, w := range words(text) {
		if !yearRE.MatchString(w) {
			continue
		}
		y, _ := strconv.Atoi(w)
		if !sp.years[w] && !sp.years[strconv.Itoa(y-1)] && !sp.years[strconv.Itoa(y+1)] {
			return false
		}
	}
	return true
}

// Check decodes doc (a reply already parsed and validated against the
// schema of prompt kind) into its reply type and runs the check of that
// kind. It returns the result and the repaired reply (a pointer to the
// prompt package's reply type), or an error for a kind without a check
// or a document that does not decode.
func Check(kind string, doc []byte, s Shown, caps Caps) (Result, any, error) {
	reply := newReply(kind)
	if reply == nil {
		return Result{}, nil, fmt.Errorf("memcheck: no check for %q", kind)
	}
	if err := json.Unmarshal(doc, reply); err != nil {
		return Result{}, nil, fmt.Errorf("memcheck: %s: %w", kind, err)
	}
	res, _ := Reply(reply, s, caps)
	return res, reply, nil
}

// newReply returns a new reply of prompt kind, nil for a kind without a
// check.
func newReply(kind string) any {
	switch kind {
	case prompt.BuildBatch:
		return &prompt.BuildBatchReply{}
	case prompt.EventUpdate:
		return &prompt.EventUpdateReply{}
	case prompt.EventCheck:
		return &prompt.EventCheckReply{}
	case prompt.TurnNote:
		return &prompt.TurnNoteReply{}
	case prompt.Affiliate:
		return &prompt.AffiliateReply{}
	case prompt.Predict:
		return &prompt.PredictReply{}
	case prompt.Filter:
		return &prompt.FilterReply{}
	case prompt.Select:
		return &prompt.SelectReply{}
	case prompt.Query:
		return &prompt.QueryReply{}
	case prompt.Answer:
		return &prompt.AnswerReply{}
	case prompt.ProfileDecide:
		return &prompt.ProfileDecideReply{}
	case prompt.ProfileUpdate:
		return &prompt.ProfileUpdateReply{}
	}
	return nil
}

// Reply runs the check of reply's type (a pointer to one of the prompt
// package's reply types), repairing it in place, as the engine does after
// each call; ok is false for a type without a check.
func Reply(reply any, s Shown, caps Caps) (res Result, ok bool) {
	switch r := reply.(type) {
	case *prompt.BuildBatchReply:
		return BuildBatch(r, s, caps), true
	case *prompt.EventUpdateReply:
		return EventUpdate(r, s, caps), true
	case *prompt.EventCheckReply:
		return EventCheck(r, s, caps), true
	case *prompt.TurnNoteReply:
		return TurnNote(r, s, caps), true
	case *prompt.AffiliateReply:
		return Affiliate(r, s, caps), true
	case *prompt.PredictReply:
		return Predict(r, s, caps), true
	case *prompt.FilterReply:
		return Filter(r, s, caps), true
	case *prompt.SelectReply:
		return Select(r, s, caps), true
	case *prompt.QueryReply:
		return Query(r, s, caps), true
	case *prompt.AnswerReply:
		return Answer(r, s, caps), true
	case *prompt.ProfileDecideReply:
		return ProfileDecide(r, s, caps), true
	case *prompt.ProfileUpdateReply:
		return ProfileUpdate(r, s, caps), true
	}
	return Result{}, false
}
