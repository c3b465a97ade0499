// Package exportfmt is the format of an export (JSON lines: a header, then
// turns, annotations, events, links and profile records) and the checks an
// import's lines pass before anything is written, so that a bad import
// writes nothing and names its lines. It reads the store's records, never
// the engine.
package exportfmt

import (
	"fmt"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/store"
)

// Line is one line of an export: a header, then turns, annotations,
// events, links and profile records. Vectors are not exported; Import
// recomputes them with the importing memory's embedder. Rule-derived
// profiles are not either: they follow from the turns.
type Line struct {
	Kind       string               `json:"kind"` // header, turn, annotation, event, link, profile
	Version    int                  `json:"version,omitempty"`
	Space      *store.Space         `json:"space,omitempty"`
	ExportedAt *time.Time           `json:"exported_at,omitempty"`
	Turn       *store.Turn          `json:"turn,omitempty"`
	Annotation *store.Annotation    `json:"annotation,omitempty"`
	Event      *store.Event         `json:"event,omitempty"`
	Link       *store.Link          `json:"link,omitempty"`
	Profile    *store.ProfileRecord `json:"profile,omitempty"`
}

// Validate checks that a line carries the record its kind names.
func Validate(l Line) error {
	ok := false
	switch l.Kind {
	case "header":
		ok = l.Version > 0
	case "turn":
		ok = l.Turn != nil && l.Turn.ID != "" && rules.Content(*l.Turn) != ""
	case "annotation":
		ok = l.Annotation != nil && l.Annotation.TurnID != ""
	case "event":
		ok = l.Event != nil && l.Event.ID != ""
	case "link":
		ok = l.Link != nil && l.Link.Source != "" && l.Link.Target != ""
	case "profile":
		ok = l.Profile != nil && l.Profile.ID != ""
	default:
		return fmt.Errorf("unknown kind %q", l.Kind)
	}
	if !ok {
		return fmt.Errorf("%s line misses its record or its id", l.Kind)
	}
	return nil
}

// MaxProblems is how many problems Summary lists.
const MaxProblems = 10

// Check checks what an import's records refer to before anything is
// written: every turn an annotation, event, fact, link or profile record
// names must be in the import or already stored in the space; ids are not
// given twice; times are in range and event spans in order; profile records
// are complete (store.ProfileRecord.Validate). It returns the problems with
// their line numbers, none when the import may be written. nos[i] is the
// line of lines[i]; stored reports whether a turn is stored in the space.
func Check(lines []Line, nos []int, stored func(id string) bool) []string {
	c := &importCheck{stored: stored, turnLine: map[string]int{}, annLine: map[string]int{}, eventLine: map[string]int{},
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
	return c.problems
}

// importCheck collects the problems of one import's records.
type importCheck struct {
	stored   func(id string) bool
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
	return c.stored(id)
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

// Summary describes problems (at least one) as an import error does: how
// many, and the first MaxProblems.
func Summary(problems []string) string {
	shown := problems[:min(len(problems), MaxProblems)]
	more := ""
	if len(problems) > len(shown) {
		more = fmt.Sprintf("; and %d more", len(problems)-len(shown))
	}
	noun := "problem"
	if len(problems) > 1 {
		noun = "problems"
	}
	return fmt.Sprintf("%d %s, nothing imported: %s%s", len(problems), noun, strings.Join(shown, "; "), more)
}
