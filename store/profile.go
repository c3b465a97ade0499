package store

import (
	"fmt"
	"time"
)

// ProfileSummary is the Attribute of a ProfileRecord that holds a narrative
// of the person (paper mode's profile summary) rather than one value: its
// Value is the text, citing turns as [turn id], and its TurnIDs the turns it
// cites.
const ProfileSummary = "summary"

// ProfileRecord is one thing a model stated about a person of the space:
// one value of one attribute ("home" = "Lisbon") with the turns that state
// it, or (Attribute ProfileSummary) a narrative of the person. The engine
// merges these records with the profiles its rules derive from the turns;
// rule-derived profiles are not stored.
//
// Records point to turns: a record is only stored while every turn it cites
// is stored in the space, and DeleteTurn removes every record citing the
// deleted turn (the engine may then store a rebuilt one without it).
type ProfileRecord struct {
	// ID is unique within the space; the engine derives it from what the
	// record states.
	ID string `json:"id"`
	// Entity is the person, as named in the conversation.
	Entity string `json:"entity"`
	// Attribute is the attribute's label ("home", "favorite book", a
	// model's own lower-case key such as "hobby") or ProfileSummary.
	Attribute string `json:"attribute"`
	// Value is the value as stated ("Lisbon", "Max (dog)"), or the
	// summary's text.
	Value string `json:"value"`
	// Ended marks a value stated as no longer holding ("my cat Luna passed
	// away", "I left Google").
	Ended bool `json:"ended,omitempty"`
	// TurnIDs are the turns that state the value (or that the summary
	// cites), each once; never empty.
	TurnIDs []string `json:"turn_ids"`
	// StatedAt is when the value was stated in the conversation: the time
	// its latest evidence turn was said (zero when unknown).
	StatedAt time.Time `json:"stated_at,omitzero"`
	// Producer names what stated it: a model and prompt version.
	Producer string `json:"producer,omitempty"`
	// CreatedAt is when the record was stored.
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// Validate reports whether a profile record can be stored: it needs an id,
// an entity, an attribute and at least one evidence turn, none empty or
// given twice.
func (r ProfileRecord) Validate() error {
	if r.ID == "" || r.Entity == "" || r.Attribute == "" {
		return fmt.Errorf("%w: profile record needs an id, an entity and an attribute (got %q, %q, %q)", ErrInvalid, r.ID, r.Entity, r.Attribute)
	}
	if len(r.TurnIDs) == 0 {
		return fmt.Errorf("%w: profile record %q cites no turn", ErrInvalid, r.ID)
	}
	seen := make(map[string]bool, len(r.TurnIDs))
	for _, id := range r.TurnIDs {
		if id == "" || seen[id] {
			return fmt.Errorf("%w: profile record %q cites an empty or repeated turn id %q", ErrInvalid, r.ID, id)
		}
		seen[id] = true
	}
	return nil
}
