package higmem

import (
	"fmt"
	"strings"
	"time"

	"github.com/higmem/higmem/store"
)

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
	var problems []string
	add := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}
	turnLine := map[string]int{}
	for i, l := range lines {
		if l.Kind == "turn" {
			if first, ok := turnLine[l.Turn.ID]; ok {
				add(nos[i], "turn %q given twice (first on line %d)", l.Turn.ID, first)
			} else {
				turnLine[l.Turn.ID] = nos[i]
			}
		}
	}
	known := func(id string) bool {
		if _, ok := turnLine[id]; ok {
			return true
		}
		_, ok := st.turn(id)
		return ok
	}
	badTime := func(t time.Time) bool { return !t.IsZero() && (t.Year() < 1 || t.Year() > 9999) }
	annLine, eventLine, profileLine := map[string]int{}, map[string]int{}, map[string]int{}
	// again records id on line no in seen and returns the line it was first
	// seen on, if any.
	again := func(seen map[string]int, id string, no int) (int, bool) {
		first, ok := seen[id]
		if !ok {
			seen[id] = no
		}
		return first, ok
	}
	headers := 0
	for i, l := range lines {
		no := nos[i]
		switch l.Kind {
		case "header":
			if headers++; headers > 1 {
				add(no, "a second header line")
			}
		case "turn":
			t := l.Turn
			if badTime(t.OccurredAt) || badTime(t.RecordedAt) {
				add(no, "turn %q: a time outside the years 1 to 9999", t.ID)
			}
		case "annotation":
			a := l.Annotation
			if first, ok := again(annLine, a.TurnID, no); ok {
				add(no, "a second annotation of turn %q (first on line %d)", a.TurnID, first)
			}
			if !known(a.TurnID) {
				add(no, "annotation of turn %q, which is neither in the import nor stored", a.TurnID)
			}
		case "event":
			e := l.Event
			if first, ok := again(eventLine, e.ID, no); ok {
				add(no, "event %q given twice (first on line %d)", e.ID, first)
			}
			if len(e.TurnIDs) == 0 {
				add(no, "event %q has no turns", e.ID)
			}
			seen := map[string]bool{}
			for _, id := range e.TurnIDs {
				switch {
				case seen[id]:
					add(no, "event %q lists turn %q twice", e.ID, id)
				case !known(id):
					add(no, "event %q names turn %q, which is neither in the import nor stored", e.ID, id)
				}
				seen[id] = true
			}
			for _, f := range e.Facts {
				if f.TurnID != "" && !known(f.TurnID) {
					add(no, "event %q: a fact cites turn %q, which is neither in the import nor stored", e.ID, f.TurnID)
				}
			}
			if badTime(e.Start) || badTime(e.End) || badTime(e.CreatedAt) || badTime(e.UpdatedAt) {
				add(no, "event %q: a time outside the years 1 to 9999", e.ID)
			}
			if !e.Start.IsZero() && !e.End.IsZero() && e.End.Before(e.Start) {
				add(no, "event %q ends (%s) before it starts (%s)", e.ID, e.End.Format(time.RFC3339), e.Start.Format(time.RFC3339))
			}
		case "link":
			k := l.Link
			for _, id := range []string{k.Source, k.Target} {
				if !known(id) {
					add(no, "link %s -> %s names turn %q, which is neither in the import nor stored", k.Source, k.Target, id)
				}
			}
			if badTime(k.CreatedAt) || badTime(k.InvalidatedAt) {
				add(no, "link %s -> %s: a time outside the years 1 to 9999", k.Source, k.Target)
			}
		case "profile":
			p := l.Profile
			if first, ok := again(profileLine, p.ID, no); ok {
				add(no, "profile record %q given twice (first on line %d)", p.ID, first)
			}
			if err := p.Validate(); err != nil {
				add(no, "profile record %q: %v", p.ID, strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
			}
			for _, id := range p.TurnIDs {
				if id != "" && !known(id) {
					add(no, "profile record %q cites turn %q, which is neither in the import nor stored", p.ID, id)
				}
			}
			if badTime(p.StatedAt) || badTime(p.CreatedAt) {
				add(no, "profile record %q: a time outside the years 1 to 9999", p.ID)
			}
		}
	}
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
