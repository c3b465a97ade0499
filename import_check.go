package higmem

import (
	"fmt"
	"strings"
	"time"

	"github.com/higmem/higmem/store"
)

// Import's checks of what its records refer to, run over every line before
// anything is written, so that a bad import writes nothing and names its
// lines.

// maxImportProblems is how many problems an import error lists.
const maxImportProblems = 10

// checkImport checks what an import's records refer to before anything is
// written: every turn an annotation, event, fact, link or profile record
// names must be in the import or already stored in the space; ids are not
// given twice; times are in range and event spans in order; profile records
// are complete (store.ProfileRecord.Validate). It returns one ErrInvalidInput
// listing the first problems with their line numbers, or nil. nos[i] is
// the line of lines[i]. Caller holds st.mu for reading.
func checkImport(st *spaceState, lines []exportLine, nos []int) error {
	c := &importCheck{st: st, turnLine: map[string]int{}, annLine: map[string]int{}, eventLine: map[string]int{},
		profileLine: map[string]int{}}
	for i, l := range lines {
		if l.Kind == "turn" {
			if first, ok := again(c.turnLine, l.Turn.ID, nos[i]); ok {
				c.add(nos[i], "turn %q given twice (first on line %d)", l.Turn.ID, first)
			}
		}
	}
	headers := 0
	for i, l := range lines {
		no := nos[i]
		switch l.Kind {
		case "header":
			if headers++; headers > 1 {
				c.add(no, "a second header line")
			}
		case "turn":
			t := l.Turn
			if badTime(t.OccurredAt) || badTime(t.RecordedAt) {
				c.add(no, "turn %q: a time outside the years 1 to 9999", t.ID)
			}
		case "annotation":
			c.annotation(no, l.Annotation)
		case "event":
			c.event(no, l.Event)
		case "link":
			c.link(no, l.Link)
		case "profile":
			c.profile(no, l.Profile)
		}
	}
	return c.err()
}

// importCheck collects the problems of one import's records.
type importCheck struct {
	st       *spaceState
	problems []string
	// The line each turn, annotation (by turn), event and profile record
	// of the import is first on.
	turnLine, annLine, eventLine, profileLine map[string]int
}

// add records a problem on line.
func (c *importCheck) add(line int, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// known reports whether turn id is in the import or stored in the space.
func (c *importCheck) known(id string) bool {
	if _, ok := c.turnLine[id]; ok {
		return true
	}
	_, ok := c.st.turn(id)
	return ok
}

// again records id on line no in seen and returns the line it was first
// seen on, if any.
func again(seen map[string]int, id string, no int) (int, bool) {
	first, ok := seen[id]
	if !ok {
		seen[id] = no
	}
	return first, ok
}

// badTime reports a time outside the years 1 to 9999 (the zero time is
// none).
func badTime(t time.Time) bool { return !t.IsZero() && (t.Year() < 1 || t.Year() > 9999) }

// annotation, event, link and profile check line no, of their kind.
func (c *importCheck) annotation(no int, a *store.Annotation) {
	if first, ok := again(c.annLine, a.TurnID, no); ok {
		c.add(no, "a second annotation of turn %q (first on line %d)", a.TurnID, first)
	}
	if !c.known(a.TurnID) {
		c.add(no, "annotation of turn %q, which is neither in the import nor stored", a.TurnID)
	}
}

func (c *importCheck) event(no int, e *store.Event) {
	if first, ok := again(c.eventLine, e.ID, no); ok {
		c.add(no, "event %q given twice (first on line %d)", e.ID, first)
	}
	if len(e.TurnIDs) == 0 {
		c.add(no, "event %q has no turns", e.ID)
	}
	seen := map[string]bool{}
	for _, id := range e.TurnIDs {
		switch {
		case seen[id]:
			c.add(no, "event %q lists turn %q twice", e.ID, id)
		case !c.known(id):
			c.add(no, "event %q names turn %q, which is neither in the import nor stored", e.ID, id)
		}
		seen[id] = true
	}
	for _, f := range e.Facts {
		if f.TurnID != "" && !c.known(f.TurnID) {
			c.add(no, "event %q: a fact cites turn %q, which is neither in the import nor stored", e.ID, f.TurnID)
		}
	}
	if badTime(e.Start) || badTime(e.End) || badTime(e.CreatedAt) || badTime(e.UpdatedAt) {
		c.add(no, "event %q: a time outside the years 1 to 9999", e.ID)
	}
	if !e.Start.IsZero() && !e.End.IsZero() && e.End.Before(e.Start) {
		c.add(no, "event %q ends (%s) before it starts (%s)", e.ID, e.End.Format(time.RFC3339), e.Start.Format(time.RFC3339))
	}
}

func (c *importCheck) link(no int, k *store.Link) {
	for _, id := range []string{k.Source, k.Target} {
		if !c.known(id) {
			c.add(no, "link %s -> %s names turn %q, which is neither in the import nor stored", k.Source, k.Target, id)
		}
	}
	if badTime(k.CreatedAt) || badTime(k.InvalidatedAt) {
		c.add(no, "link %s -> %s: a time outside the years 1 to 9999", k.Source, k.Target)
	}
}

func (c *importCheck) profile(no int, p *store.ProfileRecord) {
	if first, ok := again(c.profileLine, p.ID, no); ok {
		c.add(no, "profile record %q given twice (first on line %d)", p.ID, first)
	}
	if err := p.Validate(); err != nil {
		c.add(no, "profile record %q: %v", p.ID, strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
	}
	for _, id := range p.TurnIDs {
		if id != "" && !c.known(id) {
			c.add(no, "profile record %q cites turn %q, which is neither in the import nor stored", p.ID, id)
		}
	}
	if badTime(p.StatedAt) || badTime(p.CreatedAt) {
		c.add(no, "profile record %q: a time outside the years 1 to 9999", p.ID)
	}
}

// err returns nil without problems, else one ErrInvalidInput listing the
// first maxImportProblems.
func (c *importCheck) err() error {
	problems := c.problems
	if len(problems) == 0 {
		return nil
	}
	shown := problems[:min(len(problems), maxImportProblems)]
	more := ""
	if len(problems) > len(shown) {
		more = fmt.Sprintf("; and %d more", len(problems)-len(shown))
	}
	noun := "problem"
	if len(problems) > 1 {
		noun = "problems"
	}
	return fmt.Errorf("%w: import: %d %s, nothing imported: %s%s", ErrInvalidInput, len(problems), noun, strings.Join(shown, "; "), more)
}
