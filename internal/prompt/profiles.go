package prompt

import "slices"

// Profile prompts: what models state about people. Default mode asks for
// it inside build_batch (BuildBatchData.People, BuildBatchReply.People);
// paper mode with profiles on asks the reference's way, with one
// profile_decide call when the main event changes and one profile_update
// call per person to update.

// Names of the profile prompts.
const (
	ProfileDecide = "profile_decide" // paper mode: whose profile an ended event updates
	ProfileUpdate = "profile_update" // paper mode: rewrite one person's profile
)

// PersonFact is one thing a reply states about a person: an attribute's
// value with the turns that state it, or (Ended) that it stopped holding.
type PersonFact struct {
	Entity    string   `json:"entity"`
	Attribute string   `json:"attribute"`
	Value     string   `json:"value"`
	Ended     bool     `json:"ended,omitempty"`
	TurnIDs   []string `json:"turn_ids"`
}

// KnownPerson is what memory knows now about one person, shown so that a
// model can tell what a turn changes: "home: Porto".
type KnownPerson struct {
	Name  string
	Facts []string
}

// ProfileDecideData fills the profile_decide template.
type ProfileDecideData struct {
	Event    Event
	Entities []string
}

// ProfileDecideReply is the reply to ProfileDecide.
type ProfileDecideReply struct {
	UpdateDecisions []struct {
		EntityName   string `json:"entity_name"`
		ShouldUpdate bool   `json:"should_update"`
		Reasoning    string `json:"reasoning"`
	} `json:"update_decisions"`
}

// ProfileUpdateData fills the profile_update template.
type ProfileUpdateData struct {
	Person  KnownPerson
	Summary string
	Event   Event
	Turns   []Turn
}

// ProfileUpdateReply is the reply to ProfileUpdate.
type ProfileUpdateReply struct {
	Summary string       `json:"summary"`
	Facts   []PersonFact `json:"facts"`
}

// personFacts is the schema of a list of PersonFact.
const personFacts = `{"type":"array","items":{"type":"object","properties":{"entity":{"type":"string"},"attribute":{"type":"string"},` +
	`"value":{"type":"string"},"ended":{"type":"boolean"},"turn_ids":` + strList + `},"required":["entity","attribute","value","turn_ids"]}}`

// schemaExtender is data whose prompt's reply schema depends on it.
type schemaExtender interface {
	extendSchema(schema string) string
}

// extendSchema adds the optional "people" section to build_batch's reply
// schema when asked.
func (d BuildBatchData) extendSchema(schema string) string {
	if !d.AskPeople {
		return schema
	}
	return objectSchema(append(slices.Clip(buildBatchSections), section{"people", personFacts, false}))
}

func init() {
	schemas[ProfileDecide] = `{"type":"object","properties":{"update_decisions":{"type":"array","items":{"type":"object","properties":` +
		`{"entity_name":{"type":"string"},"should_update":{"type":"boolean"},"reasoning":{"type":"string"}},"required":["entity_name","should_update"]}}},"required":["update_decisions"]}`
	schemas[ProfileUpdate] = `{"type":"object","properties":{"summary":{"type":"string"},"facts":` + personFacts + `},"required":["summary","facts"]}`
}
