// Package prompt holds higmem's prompt templates and the JSON schemas of the
// replies they ask for.
//
// Templates are embedded text/template files (templates/*.tmpl). Turns are
// always rendered as one line, "[id] date | speaker: text", and events as
// "(event id) title :: summary", so that a model sees ids, dates and speakers
// everywhere (the reference implementation hid dates and speakers from its
// predictor and filter). Golden tests in testdata pin the rendered text; run
// `go test ./internal/prompt -update` after an intended change and bump
// Version.
package prompt

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// Version identifies the prompt set. It is part of every producer string, so
// records made by older prompts can be told apart.
const Version = "p3"

//go:embed templates/*.tmpl
var files embed.FS

// tmpl holds higmem's templates; defaultSet pairs them with their schemas.
var (
	tmpl       = template.Must(template.New("").Funcs(Funcs).ParseFS(files, "templates/*.tmpl"))
	defaultSet = &Set{Prefix: "prompt", Templates: tmpl, Schemas: schemas}
)

// Funcs are the template functions every prompt set may use.
var Funcs = template.FuncMap{"join": strings.Join}

// Set is a family of prompts: templates named "<name>.tmpl" plus a
// "system.tmpl", and the JSON schema of each prompt's reply. higmem's own
// prompts are one Set; evaluation baselines (eval/amem) define theirs.
type Set struct {
	// Prefix starts error messages ("prompt", "amem").
	Prefix string
	// Templates holds system.tmpl and one template per prompt.
	Templates *template.Template
	// Schemas maps a prompt name to its reply schema.
	Schemas map[string]string
}

// Render executes the named template with data and attaches its schema,
// and the schema narrowed for data when data narrows it (see
// constrain.go).
func (s *Set) Render(name string, data any) (Prompt, error) {
	schema, ok := s.Schemas[name]
	if !ok {
		return Prompt{}, fmt.Errorf("%s: unknown prompt %q", s.Prefix, name)
	}
	if x, ok := data.(schemaExtender); ok {
		schema = x.extendSchema(schema)
	}
	system, user, ok, err := s.direct(name, data)
	if err != nil {
		return Prompt{}, fmt.Errorf("%s: render system: %w", s.Prefix, err)
	}
	if !ok {
		var sys, u bytes.Buffer
		if err := s.Templates.ExecuteTemplate(&sys, "system.tmpl", nil); err != nil {
			return Prompt{}, fmt.Errorf("%s: render system: %w", s.Prefix, err)
		}
		if err := s.Templates.ExecuteTemplate(&u, name+".tmpl", data); err != nil {
			return Prompt{}, fmt.Errorf("%s: render %s: %w", s.Prefix, name, err)
		}
		system, user = strings.TrimSpace(sys.String()), strings.TrimSpace(u.String())
	}
	var constraint json.RawMessage
	var shown *Shown
	if d, isSelect := data.(SelectData); ok && isSelect {
		// Written here: record what it shows (shown.go), with the set
		// of its turn ids the constraint's enum was built from.
		var turnSet map[string]bool
		constraint, turnSet, err = d.constraintAndSet(schema)
		shown = d.shown(system, user, turnSet)
	} else {
		constraint, err = constrain(schema, data)
	}
	if err != nil {
		return Prompt{}, fmt.Errorf("%s: %s: %w", s.Prefix, name, err)
	}
	return Prompt{
		Name:       name,
		System:     system,
		User:       user,
		Schema:     json.RawMessage(schema),
		Constraint: constraint,
		shown:      shown,
	}, nil
}

// Names of the prompts, which are also the schema names sent to models.
const (
	TurnNote    = "turn_note"    // paper mode: annotate one turn
	Affiliate   = "affiliate"    // paper mode: choose events for one turn
	EventUpdate = "event_update" // small event: rewrite summary, add facts
	EventCheck  = "event_check"  // large event: relevance + keywords/tags
	BuildBatch  = "build_batch"  // default mode: annotate and assign a batch
	Query       = "query"        // query analysis / rewrite
	Predict     = "predict"      // per-event turn prediction
	Filter      = "filter"       // relevance filter
	Select      = "select"       // default mode: one selection over events and search hits
	Answer      = "answer"       // final answer
	Judge       = "judge"        // LLM-as-judge in evaluation
)

// Turn is how a turn is shown to a model.
type Turn struct {
	ID      string
	Date    string // human date, e.g. "8 May 2023"; empty when unknown
	Speaker string
	Text    string
	// Note, when set, follows the text in parentheses (resolved dates in
	// the answer prompt: "yesterday = 7 May 2023").
	Note string
}

// Fact is one fact-sheet line.
type Fact struct {
	Time   string
	Text   string
	TurnID string
}

// Event is how an event is shown to a model.
type Event struct {
	ID       string
	Title    string
	Summary  string
	Keywords []string
	Tags     []string
	Facts    []Fact
}

// TurnNoteData fills the turn_note template.
type TurnNoteData struct {
	Turn   Turn
	Window []Turn // earlier turns, shown only when Links is true
	Links  bool
}

// AffiliateData fills the affiliate template.
type AffiliateData struct {
	Last       *Event
	Candidates []Event
	Turn       Turn
}

// EventUpdateData fills the event_update and event_check templates.
type EventUpdateData struct {
	Event  Event
	Window []Turn
	New    []Turn
}

// BuildBatchData fills the build_batch template: the events the batch
// may continue, each with its current record (title, summary, keywords
// and its latest facts: the caller bounds how many), and the batch's
// turns.
type BuildBatchData struct {
	Candidates []Event
	New        []Turn
	// AskPeople asks for what the turns state about people ("people" in
	// the reply, see profiles.go); People is what memory knows of them now.
	AskPeople bool
	People    []KnownPerson
}

// QueryData fills the query template.
type QueryData struct {
	Question string
}

// PredictData fills the predict template.
type PredictData struct {
	Question string
	Event    Event
	Turns    []Turn
	Part     string // "2 of 3" when a large event is shown in chunks
	Max      int
}

// SelectEvent is one event of a Select prompt with the member turns shown.
type SelectEvent struct {
	Event Event
	Turns []Turn
}

// SelectData fills the select template: candidate events with their turns
// closest to the question, then search hits shown under no event.
type SelectData struct {
	Question string
	Events   []SelectEvent
	Turns    []Turn
	Max      int
}

// FilterData fills the filter template.
type FilterData struct {
	Question string
	Turns    []Turn
}

// AnswerData fills the answer template.
type AnswerData struct {
	Question string
	Turns    []Turn
	Temporal bool
}

// JudgeData fills the judge template.
type JudgeData struct {
	Question string
	Gold     string
	Answer   string
}

// Prompt is a rendered prompt ready to send.
type Prompt struct {
	Name   string
	System string
	User   string
	// Schema is the reply schema: what any reply to this kind of prompt
	// must satisfy. Replies are validated against it.
	Schema json.RawMessage
	// Constraint is Schema narrowed to this rendering (the ids it shows as
	// enums, counts and lengths bounded), to send in its place
	// (llm.Request.Constraint); nil when the prompt has no narrowing.
	Constraint json.RawMessage

	// shown is what Render recorded the prompt shows (Shown), or nil.
	shown *Shown
}

// Render renders one of higmem's prompts.
func Render(name string, data any) (Prompt, error) { return defaultSet.Render(name, data) }

const strList = `{"type":"array","items":{"type":"string"}}`

var factList = `{"type":"array","items":{"type":"object","properties":{"time":{"type":"string"},"fact":{"type":"string"},"turn_id":{"type":"string"}},"required":["fact"]}}`

// section is one top-level property of a reply object.
type section struct {
	name, schema string
	required     bool
}

// buildBatchSections are the sections of a build_batch reply, in schema
// order. Only "turns" is required: the engine falls back per event when
// "events" is missing or junk. Another optional section (say, profile
// facts) is one more entry here, one more field of BuildBatchReply, its
// check in internal/memcheck (BuildBatch runs one check per section) and
// its use in the engine's default construction.
var buildBatchSections = []section{
	{"turns", `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"keywords":` + strList +
		`,"tags":` + strList + `,"context":{"type":"string"},"events":` + strList + `},"required":["id","events"]}}`, true},
	{"events", `{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"summary":{"type":"string"},"keywords":` + strList +
		`,"tags":` + strList + `,"new_facts":` + factList + `},"required":["id","summary"]}}`, false},
}

// objectSchema is the schema of an object with the given sections.
func objectSchema(secs []section) string {
	var props, req []string
	for _, s := range secs {
		props = append(props, fmt.Sprintf("%q:%s", s.name, s.schema))
		if s.required {
			req = append(req, fmt.Sprintf("%q", s.name))
		}
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]}`
}

var schemas = map[string]string{
	TurnNote: `{"type":"object","properties":{"keywords":` + strList + `,"tags":` + strList +
		`,"context":{"type":"string"},"entities":` + strList +
		`,"links":{"type":"array","items":{"type":"object","properties":{"target":{"type":"string"},"relation":{"type":"string"}},"required":["target"]}}},"required":["keywords","tags","context"]}`,
	Affiliate: `{"type":"object","properties":{"reasoning":{"type":"string"},"affiliations":` + strList + `},"required":["affiliations"]}`,
	EventUpdate: `{"type":"object","properties":{"summary":{"type":"string"},"keywords":` + strList + `,"tags":` + strList +
		`,"new_facts":` + factList + `},"required":["summary","keywords"]}`,
	EventCheck: `{"type":"object","properties":{"is_relevant":{"type":"boolean"},"keywords":` + strList + `,"tags":` + strList + `},"required":["is_relevant"]}`,
	BuildBatch: objectSchema(buildBatchSections),
	Query: `{"type":"object","properties":{"keyword_query":{"type":"string"},"entities":` + strList +
		`,"temporal":{"type":"boolean"}},"required":["keyword_query","temporal"]}`,
	Predict: `{"type":"object","properties":{"turn_ids":` + strList + `},"required":["turn_ids"]}`,
	Filter:  `{"type":"object","properties":{"relevant_ids":` + strList + `},"required":["relevant_ids"]}`,
	Select:  `{"type":"object","properties":{"turn_ids":` + strList + `},"required":["turn_ids"]}`,
	Answer:  `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`,
	Judge:   `{"type":"object","properties":{"label":{"type":"string","enum":["CORRECT","WRONG"]},"reasoning":{"type":"string"}},"required":["label"]}`,
}

// Reply types: what each prompt's JSON decodes into.

// TurnNoteReply is the reply to TurnNote.
type TurnNoteReply struct {
	Keywords []string `json:"keywords"`
	Tags     []string `json:"tags"`
	Context  string   `json:"context"`
	Entities []string `json:"entities"`
	Links    []struct {
		Target   string `json:"target"`
		Relation string `json:"relation"`
	} `json:"links"`
}

// AffiliateReply is the reply to Affiliate.
type AffiliateReply struct {
	Reasoning    string   `json:"reasoning"`
	Affiliations []string `json:"affiliations"`
}

// FactReply is one fact in an EventUpdateReply.
type FactReply struct {
	Time   string `json:"time"`
	Fact   string `json:"fact"`
	TurnID string `json:"turn_id"`
}

// EventUpdateReply is the reply to EventUpdate.
type EventUpdateReply struct {
	Summary  string      `json:"summary"`
	Keywords []string    `json:"keywords"`
	Tags     []string    `json:"tags"`
	NewFacts []FactReply `json:"new_facts"`
}

// EventCheckReply is the reply to EventCheck.
type EventCheckReply struct {
	IsRelevant bool     `json:"is_relevant"`
	Keywords   []string `json:"keywords"`
	Tags       []string `json:"tags"`
}

// BuildBatchReply is the reply to BuildBatch: one item per new turn
// (its annotation and the events it joins) and one record per event the
// turns continue or start (see buildBatchSections for adding a section).
type BuildBatchReply struct {
	Turns  []BatchTurn  `json:"turns"`
	Events []BatchEvent `json:"events"`
	// People holds what the turns state about people (when asked:
	// BuildBatchData.AskPeople).
	People []PersonFact `json:"people"`
}

// BatchTurn is one turn of a BuildBatchReply: its annotation and the
// events it joins (ids of events shown, or labels "new:N" of new ones).
type BatchTurn struct {
	ID       string   `json:"id"`
	Keywords []string `json:"keywords"`
	Tags     []string `json:"tags"`
	Context  string   `json:"context"`
	Events   []string `json:"events"`
}

// BatchEvent is one event of a BuildBatchReply: the id of an event shown
// or the label of a new one, its title (new events), and its record
// rewritten for the turns that joined it.
type BatchEvent struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	EventUpdateReply
}

// QueryReply is the reply to Query.
type QueryReply struct {
	KeywordQuery string   `json:"keyword_query"`
	Entities     []string `json:"entities"`
	Temporal     bool     `json:"temporal"`
}

// PredictReply is the reply to Predict.
type PredictReply struct {
	TurnIDs []string `json:"turn_ids"`
}

// SelectReply is the reply to Select.
type SelectReply struct {
	TurnIDs []string `json:"turn_ids"`
}

// FilterReply is the reply to Filter.
type FilterReply struct {
	RelevantIDs []string `json:"relevant_ids"`
}

// AnswerReply is the reply to Answer.
type AnswerReply struct {
	Answer string `json:"answer"`
}

// JudgeReply is the reply to Judge.
type JudgeReply struct {
	Label     string `json:"label"`
	Reasoning string `json:"reasoning"`
}

// MaxTokens is a completion budget for a reply to prompt name that covers
// n items (the new turns of BuildBatch, the turns shown to Predict, Filter
// and Select; n is ignored for the others). It is about twice what a
// complete, terse reply takes (measured on LoCoMo with the scripted model:
// about 90 tokens per turn of a build batch, its share of the event records
// included, 8–15 per prediction), so that a good reply is never cut and a
// runaway one stops early. 0 for an unknown prompt.
func MaxTokens(name string, n int) int {
	n = max(n, 1)
	switch name {
	case BuildBatch:
		return min(160+160*n, 8192)
	case EventUpdate:
		return 512
	case EventCheck:
		return 160
	case TurnNote:
		return 192
	case Affiliate:
		return 96
	case Query:
		return 128
	case Predict, Filter:
		return min(32+12*n, 1024)
	case Select:
		return 32 + 12*min(n, 40)
	case Answer:
		return 128
	case Judge:
		return 96
	case ProfileDecide:
		return 192
	case ProfileUpdate:
		return 640
	}
	return 0
}
