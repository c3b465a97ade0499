package prompt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/higmem/higmem/internal/jsonx"
)

// Constraints: the schema a request sends, narrowed to what can be memory.
//
// A reply schema (Prompt.Schema) says what a reply to a prompt may look
// like in general: "turns[].id" is a string. A server that enforces the
// schema it is sent (llama.cpp and its Python binding turn it into a
// grammar) lets a small model write any string there, and a 270M model
// writes ":{". Prompt.Constraint is the same schema narrowed for one
// rendering: every id field an enum of exactly the ids the prompt shows,
// arrays with minItems/maxItems where the prompt states a count or a cap,
// strings with minLength/maxLength, and every key the prompt asks for
// required. Sent instead of the schema, it makes those replies impossible
// on a server that enforces it.
//
// Only the request carries it. Replies are still validated against
// Schema, the broad one (llm.Request.Constraint says why): a server that
// does not enforce schemas (OpenAI json_object or json_schema without
// strict, Ollama's JSON mode, plain text) may write a title two
// characters over the bound or an id outside the enum, and such a reply
// must reach the semantic checks of internal/memcheck, which repair or
// reject it as before, not fail validation and cost a re-ask. So the
// narrowed schema only ever adds keywords to the broad one, so that an
// instance of it is an instance of Schema (TestConstraintOnlyNarrows), and
// a change to a reply schema carries over by itself.

// Bounds of the strings a constraint sets (characters). They follow what
// the prompts ask ("a short title", "one sentence", "2 to 3 sentences")
// with room to spare; internal/memcheck's caps are looser still, so a
// reply from a server that ignores them is cut there, not rejected. They
// are tight on purpose: a grammar-constrained small model tends to write
// a string or a list until the grammar closes it, and under a grammar
// every token is slow (on the reference server about 9 tokens/s against
// 33 without), so the bounds are what keeps a reply within its budget
// (prompt.MaxTokens). On the real server, a build reply for 18 turns
// under looser bounds (72 facts allowed) ran on listing facts until it
// was cut at its 3,040-token budget after 5.5 minutes.
const (
	maxTermChars    = 24  // a keyword, tag or entity
	maxTitleChars   = 60  // a short title (the engine's cap is 90)
	maxContextChars = 160 // one sentence
	maxSummaryChars = 400 // 2 to 3 sentences
	maxFactChars    = 120 // one short statement
	maxTimeChars    = 24  // "7 May 2023", "the week before 9 June 2023"
	maxQueryChars   = 160
	maxAnswerChars  = 200
	maxReasonChars  = 160
	maxValueChars   = 60 // a profile attribute or value, a person's name
	maxProfileChars = 600

	// factsPerRecord caps the facts of one event record in a
	// build_batch reply (the engine keeps at most 4 per new turn).
	factsPerRecord = 3
	// peoplePerBatch caps the person facts of one build_batch reply.
	peoplePerBatch = 8
)

// constrainer is prompt data that narrows its prompt's reply schema.
type constrainer interface {
	// constrain narrows root, the decoded reply schema, in place.
	constrain(root node)
}

// constrain returns schema narrowed for data, or nil when data has no
// narrowing or the schema is empty.
func constrain(schema string, data any) (json.RawMessage, error) {
	if d, ok := data.(SelectData); ok {
		if out, ok := d.directConstraint(schema); ok {
			return out, nil
		}
	}
	return constrainGeneral(schema, data)
}

// constrainGeneral is constrain through the decoded schema, for every
// kind of data.
func constrainGeneral(schema string, data any) (json.RawMessage, error) {
	c, ok := data.(constrainer)
	if !ok || strings.TrimSpace(schema) == "" {
		return nil, nil
	}
	root, err := decodedSchema(schema)
	if err != nil {
		return nil, err
	}
	c.constrain(node{root})
	// MarshalJSON writes what json.Marshal(root) writes (compact,
	// HTML-safe; jsonx's TestMarshalMatchesNested), without json.Marshal
	// validating and copying the text again: every call of a retrieval
	// round constrains its reply, a select call with every id shown.
	return root.MarshalJSON()
}

// schemaCacheMax bounds the schemas decodedSchema keeps decoded (the
// prompts' schemas are a fixed few).
const schemaCacheMax = 64

// schemaCache holds each schema decodedSchema decoded, never handed out
// (constrain rewrites what it gets): schema text → *jsonx.Object.
var (
	schemaCache  sync.Map
	schemaCached atomic.Int64
)

// decodedSchema returns schema decoded (jsonx.DecodeOrdered), a copy of
// its own for the caller to rewrite: decoded once, then cloned, which
// costs a fraction of decoding again (every call of a retrieval round
// constrains its reply).
func decodedSchema(schema string) (*jsonx.Object, error) {
	if v, ok := schemaCache.Load(schema); ok {
		return jsonx.Clone(v).(*jsonx.Object), nil
	}
	v, err := jsonx.DecodeOrdered([]byte(schema))
	if err != nil {
		return nil, fmt.Errorf("constraint: %w", err)
	}
	root, ok := v.(*jsonx.Object)
	if !ok {
		return nil, fmt.Errorf("constraint: the schema is not an object")
	}
	if schemaCached.Load() < schemaCacheMax {
		if _, loaded := schemaCache.LoadOrStore(schema, jsonx.Clone(root)); !loaded {
			schemaCached.Add(1)
		}
	}
	return root, nil
}

// NewEvents is how many new events a build_batch reply for n new turns
// may create under its constraint: about one per three turns, at least
// two (at most n). Free to label every turn "new:k", the real 270M model
// made up to two new events per turn; a batch of a conversation's turns
// holds a few topics.
func NewEvents(n int) int { return min(n, max(2, (n+2)/3)) }

// NewLabels returns the labels "new:1" … "new:n" a build_batch reply may
// give the events it creates.
func NewLabels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("new:%d", i+1)
	}
	return out
}

// turnIDs returns the ids of turns.
func turnIDs(turns []Turn) []string {
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.ID
	}
	return out
}

// eventIDs returns the ids of events.
func eventIDs(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

// terms bounds a list of keywords, tags or entities: at least lo (when
// the prompt asks for some) and at most hi items of 1 to maxTermChars.
func terms(o node, lo, hi int) {
	o.count(lo, hi)
	o.items().length(1, maxTermChars)
}

// constrain narrows build_batch: one turn item per new turn, each with
// the id of a new turn and events among the candidates and the new
// labels; one record per event with an id among the same; facts citing
// the new turns; people citing them too.
func (d BuildBatchData) constrain(root node) {
	news := turnIDs(d.New)
	labels := append(eventIDs(d.Candidates), NewLabels(NewEvents(len(d.New)))...)
	root.requireAll()

	turns := root.prop("turns")
	turns.count(len(news), len(news))
	t := turns.items()
	t.requireAll()
	t.prop("id").oneOf(news)
	terms(t.prop("keywords"), 1, 6)
	terms(t.prop("tags"), 1, 3)
	t.prop("context").length(1, maxContextChars)
	ev := t.prop("events")
	ev.count(1, 2) // "a turn usually belongs to one event"
	ev.items().oneOf(labels)

	events := root.prop("events")
	events.count(1, len(labels))
	e := events.items()
	e.requireAll()
	e.prop("id").oneOf(labels)
	e.prop("title").length(0, maxTitleChars)
	e.prop("summary").length(1, maxSummaryChars)
	terms(e.prop("keywords"), 1, 10)
	terms(e.prop("tags"), 1, 6)
	facts(e.prop("new_facts"), news, min(factsPerRecord, 4*len(news)))

	people(root.prop("people"), news, min(peoplePerBatch, 3*len(news)), nil) // when asked
}

// facts narrows a list of facts: at most hi, each citing one of ids.
func facts(o node, ids []string, hi int) {
	if len(ids) == 0 {
		o.count(0, 0)
		return
	}
	o.count(0, hi)
	f := o.items()
	f.requireAll()
	f.prop("time").length(0, maxTimeChars)
	f.prop("fact").length(1, maxFactChars)
	f.prop("turn_id").oneOf(ids)
}

// people narrows a list of person facts: at most hi, citing ids, about
// one of names when names is not empty.
func people(o node, ids []string, hi int, names []string) {
	if len(ids) == 0 {
		o.count(0, 0)
		return
	}
	o.count(0, hi)
	p := o.items()
	p.require("entity", "attribute", "value", "turn_ids")
	if len(names) > 0 {
		p.prop("entity").oneOf(names)
	} else {
		p.prop("entity").length(1, maxValueChars)
	}
	p.prop("attribute").length(1, maxValueChars)
	p.prop("value").length(1, maxValueChars)
	tid := p.prop("turn_ids")
	tid.count(1, min(3, len(ids)))
	tid.items().oneOf(ids)
}

// constrain narrows turn_note: terms as the prompt asks, links (when
// asked) to the earlier turns shown.
func (d TurnNoteData) constrain(root node) {
	terms(root.prop("keywords"), 1, 8)
	terms(root.prop("tags"), 1, 5)
	terms(root.prop("entities"), 0, 10)
	root.prop("context").length(1, maxContextChars)
	links := root.prop("links")
	if !d.Links {
		root.require("keywords", "tags", "context", "entities")
		links.count(0, 0)
		return
	}
	root.requireAll()
	window := turnIDs(d.Window)
	if len(window) == 0 {
		links.count(0, 0)
		return
	}
	links.count(0, min(5, len(window)))
	l := links.items()
	l.requireAll()
	l.prop("target").oneOf(window)
	l.prop("relation").oneOf([]string{"answers", "continues", "refers_to", "contradicts"})
}

// constrain narrows affiliate: one to three of the events shown, or NEW.
func (d AffiliateData) constrain(root node) {
	root.prop("reasoning").length(0, maxReasonChars)
	ids := eventIDs(d.Candidates)
	if d.Last != nil && !slices.Contains(ids, d.Last.ID) {
		ids = append(ids, d.Last.ID)
	}
	a := root.prop("affiliations")
	a.count(1, 3)
	a.items().oneOf(append(ids, "NEW"))
}

// constrain narrows event_update: the record's bounds, facts citing the
// new turns.
func (d EventUpdateData) constrain(root node) {
	root.requireAll()
	root.prop("summary").length(1, maxSummaryChars)
	terms(root.prop("keywords"), 1, 10)
	terms(root.prop("tags"), 0, 6)
	facts(root.prop("new_facts"), turnIDs(d.New), 4*max(1, len(d.New)))
}

// event_check is narrowed as event_update is; it shares the data type, so
// the keys absent from its schema are skipped (see node).

// constrain narrows query.
func (QueryData) constrain(root node) {
	root.requireAll()
	root.prop("keyword_query").length(1, maxQueryChars)
	terms(root.prop("entities"), 0, 10)
}

// constrain narrows predict: at most Max of the turns shown.
func (d PredictData) constrain(root node) {
	idList(root.prop("turn_ids"), turnIDs(d.Turns), d.Max)
}

// constrain narrows filter: the turns shown, each at most once.
func (d FilterData) constrain(root node) {
	ids := turnIDs(d.Turns)
	idList(root.prop("relevant_ids"), ids, len(ids))
}

// constrain narrows select: at most Max of the turns shown, under the
// events and among the search hits.
func (d SelectData) constrain(root node) {
	// idList over the events' turn ids then the loose turns' not among
	// them, in one pass: listed counts that list (its duplicates across
	// events included, as the cap counted them), enum is it once each.
	n := len(d.Turns)
	for _, e := range d.Events {
		n += len(e.Turns)
	}
	enum := make([]any, 0, n)
	seen := make(map[string]bool, n)
	listed := 0
	for _, e := range d.Events {
		for _, t := range e.Turns {
			listed++
			if !seen[t.ID] {
				seen[t.ID] = true
				enum = append(enum, t.ID)
			}
		}
	}
	for _, t := range d.Turns {
		if !seen[t.ID] {
			seen[t.ID] = true
			listed++
			enum = append(enum, t.ID)
		}
	}
	o := root.prop("turn_ids")
	if listed == 0 {
		o.count(0, 0)
		return
	}
	hi := d.Max
	if hi <= 0 || hi > listed {
		hi = listed
	}
	o.count(0, hi)
	if it := o.items(); it.o != nil {
		it.o.Set("enum", enum)
	}
}

// idList narrows a list of ids to those shown, at most hi (no bound when
// hi is 0).
func idList(o node, ids []string, hi int) {
	if len(ids) == 0 {
		o.count(0, 0)
		return
	}
	if hi <= 0 || hi > len(ids) {
		hi = len(ids)
	}
	o.count(0, hi)
	o.items().oneOf(ids)
}

// constrain narrows answer.
func (AnswerData) constrain(root node) {
	root.prop("answer").length(1, maxAnswerChars)
}

// constrain narrows judge.
func (JudgeData) constrain(root node) {
	root.requireAll()
	root.prop("reasoning").length(0, maxReasonChars)
}

// constrain narrows profile_decide: one decision per person listed.
func (d ProfileDecideData) constrain(root node) {
	u := root.prop("update_decisions")
	if len(d.Entities) == 0 {
		u.count(0, 0)
		return
	}
	u.count(len(d.Entities), len(d.Entities))
	it := u.items()
	it.requireAll()
	it.prop("entity_name").oneOf(d.Entities)
	it.prop("reasoning").length(0, maxReasonChars)
}

// constrain narrows profile_update: facts about the person, citing the
// turns shown.
func (d ProfileUpdateData) constrain(root node) {
	root.prop("summary").length(1, maxProfileChars)
	ids := turnIDs(d.Turns)
	people(root.prop("facts"), ids, 3*max(1, len(ids)), []string{d.Person.Name})
}

// node is a schema (or a part of one) being narrowed: an ordered object
// (jsonx.Object keeps the property order a grammar writes keys in). The
// zero node stands for a part the schema does not have: every method is a
// no-op on it, so one narrowing serves schemas with and without an
// optional section.
type node struct{ o *jsonx.Object }

// prop returns the schema of property name.
func (n node) prop(name string) node {
	props, _ := n.o.Get("properties").(*jsonx.Object)
	p, _ := props.Get(name).(*jsonx.Object)
	return node{p}
}

// items returns the schema of an array's items.
func (n node) items() node {
	it, _ := n.o.Get("items").(*jsonx.Object)
	return node{it}
}

// requireAll makes every property required, in property order.
func (n node) requireAll() {
	props, _ := n.o.Get("properties").(*jsonx.Object)
	n.require(props.Keys()...)
}

// require makes names required too, keeping the list in property order
// (the order a grammar writes required keys in anyway).
func (n node) require(names ...string) {
	props, _ := n.o.Get("properties").(*jsonx.Object)
	if props == nil {
		return
	}
	have, _ := n.o.Get("required").([]any)
	req := make([]any, 0, len(props.Keys()))
	for _, k := range props.Keys() {
		if slices.Contains(have, any(k)) || slices.Contains(names, k) {
			req = append(req, k)
		}
	}
	n.o.Set("required", req)
}

// oneOf restricts a string schema to the values given (an enum). An empty
// list leaves it alone: an enum of nothing admits nothing (and grammar
// converters refuse it); callers bound the enclosing list to zero items
// instead.
func (n node) oneOf(values []string) {
	if n.o == nil || len(values) == 0 {
		return
	}
	enum := make([]any, 0, len(values))
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			enum = append(enum, v)
		}
	}
	n.o.Set("enum", enum)
}

// count bounds an array's length: at least lo (when above 0), at most hi.
func (n node) count(lo, hi int) {
	if n.o == nil {
		return
	}
	if lo > 0 {
		n.o.Set("minItems", json.Number(fmt.Sprint(lo)))
	}
	n.o.Set("maxItems", json.Number(fmt.Sprint(max(hi, lo))))
}

// length bounds a string's length in characters: at least lo (when above
// 0), at most hi.
func (n node) length(lo, hi int) {
	if n.o == nil {
		return
	}
	if lo > 0 {
		n.o.Set("minLength", json.Number(fmt.Sprint(lo)))
	}
	n.o.Set("maxLength", json.Number(fmt.Sprint(hi)))
}
