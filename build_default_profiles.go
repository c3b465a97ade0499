package higmem

import (
	"slices"

	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/store"
)

// Default mode's profile facts: the one build_batch call of a batch also
// returns what the batch's turns state about people ("people"), checked by
// memcheck (a person the prompt named, a known or normalised attribute, a
// value that says something, turn ids of the batch). No call is added. The
// prompt shows what memory knows now about the batch's speakers, so that
// the model can say what a turn ends. Ablations.NoProfiles leaves it out.

// knownPeopleShown caps the people whose current values a build prompt
// shows.
const knownPeopleShown = 6

// knownPeople returns what the profiles of st say now about the speakers of
// turns, for the build prompt: people with at least one current value.
// Caller holds st.mu.
func knownPeople(st *spaceState, turns []store.Turn) []prompt.KnownPerson {
	ps := st.profiles()
	var out []prompt.KnownPerson
	var seen []string
	for _, t := range turns {
		if t.Speaker == "" || slices.Contains(seen, t.Speaker) || len(out) == knownPeopleShown {
			continue
		}
		seen = append(seen, t.Speaker)
		if kp, _ := profilerec.Known(ps, t.Speaker); len(kp.Facts) > 0 {
			out = append(out, kp)
		}
	}
	return out
}
