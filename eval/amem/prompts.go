package amem

import (
	"embed"
	"text/template"

	"github.com/higmem/higmem/internal/prompt"
)

// PromptVersion identifies the A-Mem prompt set. Bump it whenever a
// template or schema changes (and rerun the golden tests with -update).
const PromptVersion = "amem-p1"

// Names of the A-Mem prompts; they are also the schema names sent to models
// and the operations recorded for accounting.
const (
	PromptNote   = "amem_note"   // note construction: keywords, context, tags
	PromptEvolve = "amem_evolve" // link generation and memory evolution
	PromptQuery  = "amem_query"  // question → search keywords
	PromptAnswer = "amem_answer" // the answer
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

var set = &prompt.Set{
	Prefix:    "amem",
	Templates: template.Must(template.New("").Funcs(prompt.Funcs).ParseFS(templateFiles, "templates/*.tmpl")),
	Schemas:   schemas,
}

const strList = `{"type":"array","items":{"type":"string"}}`

var schemas = map[string]string{
	PromptNote: `{"type":"object","properties":{"keywords":` + strList + `,"context":{"type":"string"},"tags":` + strList +
		`},"required":["keywords","context","tags"]}`,
	PromptEvolve: `{"type":"object","properties":{"should_evolve":{"type":"boolean"},"actions":` + strList +
		`,"suggested_connections":{"type":"array","items":{"type":"integer"}},"tags_to_update":` + strList +
		`,"new_context_neighborhood":` + strList + `,"new_tags_neighborhood":{"type":"array","items":` + strList + `}},` +
		`"required":["should_evolve","actions","suggested_connections","tags_to_update","new_context_neighborhood","new_tags_neighborhood"]}`,
	PromptQuery:  `{"type":"object","properties":{"keywords":{"type":"string"}},"required":["keywords"]}`,
	PromptAnswer: `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`,
}

// NoteData fills the amem_note template.
type NoteData struct {
	Content string
}

// Neighbour is an existing note as shown to the evolution prompt.
type Neighbour struct {
	Index    int // position of the note in insertion order
	Time     string
	Content  string
	Context  string
	Keywords []string
	Tags     []string
}

// EvolveData fills the amem_evolve template.
type EvolveData struct {
	Content    string
	Context    string
	Keywords   []string
	Neighbours []Neighbour
}

// QueryData fills the amem_query template.
type QueryData struct {
	Question string
}

// AnswerData fills the amem_answer template.
type AnswerData struct {
	Question string
	// Context is the rendered memories (see Result.Context).
	Context string
	// Temporal selects the date instruction.
	Temporal bool
}

// Prompt is a rendered prompt.
type Prompt = prompt.Prompt

// Render renders the named A-Mem prompt with data.
func Render(name string, data any) (Prompt, error) { return set.Render(name, data) }

// NoteReply is the reply to PromptNote.
type NoteReply struct {
	Keywords []string `json:"keywords"`
	Context  string   `json:"context"`
	Tags     []string `json:"tags"`
}

// EvolveReply is the reply to PromptEvolve.
type EvolveReply struct {
	ShouldEvolve           bool       `json:"should_evolve"`
	Actions                []string   `json:"actions"`
	SuggestedConnections   []int      `json:"suggested_connections"`
	TagsToUpdate           []string   `json:"tags_to_update"`
	NewContextNeighborhood []string   `json:"new_context_neighborhood"`
	NewTagsNeighborhood    [][]string `json:"new_tags_neighborhood"`
}

// QueryReply is the reply to PromptQuery.
type QueryReply struct {
	Keywords string `json:"keywords"`
}

// AnswerReply is the reply to PromptAnswer.
type AnswerReply struct {
	Answer string `json:"answer"`
}
