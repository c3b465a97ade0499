package prompt

import (
	"strconv"
	"strings"
	"sync"
)

// Prompts written without text/template: every retrieval in default mode
// renders a select prompt, and text/template's reflection walk over its
// dozens of turns cost about as much as the rest of the call's engine
// work. The writers here produce exactly what higmem's templates do
// (TestDirectMatchesTemplates renders both on random data), and serve
// higmem's own Set only: another Set's templates always run.

// directWriter is prompt data that writes its user prompt itself, as
// higmem's template of that name would, before trimming.
type directWriter interface {
	writeUser(b *strings.Builder)
}

// directSystem is higmem's system prompt, rendered once (it takes no
// data).
var directSystem = sync.OnceValues(func() (string, error) {
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, "system.tmpl", nil); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
})

// direct returns the system and user prompts of name for data when s is
// higmem's own Set and data writes itself; ok is false otherwise.
func (s *Set) direct(name string, data any) (system, user string, ok bool, err error) {
	if s.Templates != tmpl {
		return "", "", false, nil
	}
	w, isWriter := data.(directWriter)
	if !isWriter || name != Select {
		return "", "", false, nil
	}
	if system, err = directSystem(); err != nil {
		return "", "", false, err
	}
	if d, isSelect := w.(SelectData); isSelect {
		// Called on the type, b stays on the stack: no write barrier
		// for each of the prompt's ~500 writes while a GC runs.
		var b strings.Builder
		d.writeUser(&b)
		return system, strings.TrimSpace(b.String()), true, nil
	}
	var b strings.Builder
	w.writeUser(&b)
	return system, strings.TrimSpace(b.String()), true, nil
}

// writeTurn writes partials.tmpl's "turn".
func writeTurn(b *strings.Builder, t *Turn) {
	b.WriteByte('[')
	b.WriteString(t.ID)
	b.WriteString("] ")
	if t.Date != "" {
		b.WriteString(t.Date)
	} else {
		b.WriteString("unknown date")
	}
	b.WriteString(" | ")
	b.WriteString(t.Speaker)
	b.WriteString(": ")
	b.WriteString(t.Text)
	if t.Note != "" {
		b.WriteString(" (")
		b.WriteString(t.Note)
		b.WriteByte(')')
	}
}

// writeEvent writes partials.tmpl's "event".
func writeEvent(b *strings.Builder, e *Event) {
	b.WriteString("(event ")
	b.WriteString(e.ID)
	b.WriteString(") ")
	b.WriteString(e.Title)
	if e.Summary != "" {
		b.WriteString(" :: ")
		b.WriteString(e.Summary)
	}
}

// writeUser writes select.tmpl.
func (d SelectData) writeUser(b *strings.Builder) {
	n := len(d.Question) + 512
	for i := range d.Events {
		e := &d.Events[i]
		n += len(e.Event.ID) + len(e.Event.Title) + len(e.Event.Summary) + 40
		for j := range e.Turns {
			n += turnLen(&e.Turns[j])
		}
	}
	for j := range d.Turns {
		n += turnLen(&d.Turns[j])
	}
	b.Grow(n)
	b.WriteString("Pick the memory turns that answer a question. Memory is grouped into events; each event below shows its turns closest to the question")
	if len(d.Turns) > 0 {
		b.WriteString(", and turns found by search follow")
	}
	b.WriteString(".\n\nQuestion: ")
	b.WriteString(d.Question)
	b.WriteByte('\n')
	for i := range d.Events {
		e := &d.Events[i]
		b.WriteString("\nEvent:\n")
		writeEvent(b, &e.Event)
		b.WriteString("\nIts turns:\n")
		for j := range e.Turns {
			writeTurn(b, &e.Turns[j])
			b.WriteByte('\n')
		}
	}
	if len(d.Turns) > 0 {
		b.WriteString("\nTurns found by search:\n")
		for j := range d.Turns {
			writeTurn(b, &d.Turns[j])
			b.WriteByte('\n')
		}
	}
	b.WriteString("\nReturn \"turn_ids\": the ids of the turns that contain the answer or evidence for it (including a turn that gives the date or says who), at most ")
	b.WriteString(strconv.Itoa(d.Max))
	b.WriteString(", most useful first; [] when none helps. Use only ids from the lists.\n")
}

// turnLen is about the length of writeTurn's line.
func turnLen(t *Turn) int {
	return len(t.ID) + len(t.Date) + len(t.Speaker) + len(t.Text) + len(t.Note) + 24
}
