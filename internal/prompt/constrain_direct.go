package prompt

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/higmem/higmem/internal/jsonx"
)

// The select constraint written without decoding the schema: every
// retrieval in default mode renders a select prompt, and narrowing its
// schema through jsonx.Object (decoding or cloning it, boxing each id,
// writing it out again) cost about as much as writing the prompt. The
// constraint of a select prompt is the schema's text with two holes, the
// enum of ids and maxItems; selectTemplate finds the text around them
// once, by narrowing the schema for probe data the general way, and
// checks it on more probes. TestSelectConstraintDirect compares both ways
// on random data.

// constraintTemplate is a constraint's text around its holes: head, the
// enum, mid, maxItems, tail.
type constraintTemplate struct {
	head, mid, tail string
	ok              bool // the template reproduced every probe
}

// selectTemplate is the template of the select constraint of higmem's
// select schema (schemas[Select]).
var selectTemplate = sync.OnceValue(func() constraintTemplate {
	return deriveTemplate(schemas[Select])
})

// deriveTemplate finds the select constraint's template for schema, or
// one with ok false when the general path's text does not follow one.
func deriveTemplate(schema string) constraintTemplate {
	probe, err := constrainGeneral(schema, SelectData{Turns: []Turn{{ID: "a"}}})
	if err != nil {
		return constraintTemplate{}
	}
	text := string(probe)
	const enum = `["a"]`
	i := strings.Index(text, enum)
	if i < 0 || strings.Count(text, enum) != 1 {
		return constraintTemplate{}
	}
	rest := text[i+len(enum):]
	j := strings.IndexByte(rest, '1')
	if j < 0 || strings.Count(rest, "1") != 1 {
		return constraintTemplate{}
	}
	t := constraintTemplate{head: text[:i], mid: rest[:j], tail: rest[j+1:], ok: true}
	probes := []SelectData{
		{Events: []SelectEvent{{Turns: []Turn{{ID: "x<&"}, {ID: "y"}, {ID: "x<&"}}}}, Turns: []Turn{{ID: "y"}, {ID: "z\u2028\"é"}}, Max: 2},
		{Turns: []Turn{{ID: "1"}, {ID: "2"}, {ID: "3"}, {ID: "4"}, {ID: "5"}, {ID: "6"}, {ID: "7"}, {ID: "8"}, {ID: "9"}, {ID: "10"}, {ID: "11"}, {ID: "12"}}},
		{Events: []SelectEvent{{Turns: []Turn{{ID: "a"}}}, {Turns: []Turn{{ID: "a"}}}}, Max: -1},
	}
	for _, d := range probes {
		want, err := constrainGeneral(schema, d)
		got, ok := d.constraintFrom(t)
		if err != nil || !ok || string(got) != string(want) {
			return constraintTemplate{}
		}
	}
	return t
}

// directConstraint returns the select constraint of d for schema, when
// schema is higmem's select schema and d shows ids (else ok is false:
// the general path decides).
func (d SelectData) directConstraint(schema string) ([]byte, bool) {
	b, _, ok := d.directConstraintSet(schema)
	return b, ok
}

// directConstraintSet is directConstraint also returning the set of the
// turn ids shown (the enum's).
func (d SelectData) directConstraintSet(schema string) ([]byte, map[string]bool, bool) {
	if schema != schemas[Select] {
		return nil, nil, false
	}
	t := selectTemplate()
	if !t.ok {
		return nil, nil, false
	}
	return d.constraintSet(t)
}

// constraintAndSet returns constrain(schema, d) and, when it was written
// from the template, the set of the turn ids shown (else nil).
func (d SelectData) constraintAndSet(schema string) (json.RawMessage, map[string]bool, error) {
	if b, set, ok := d.directConstraintSet(schema); ok {
		return b, set, nil
	}
	b, err := constrainGeneral(schema, d)
	return b, nil, err
}

// constraintFrom writes the select constraint of d in t: the enum of the
// ids shown, the events' then the loose turns', once each, in order, and
// maxItems the prompt's maximum bounded by the count of ids listed (see
// SelectData.constrain). ok is false when no id is shown (the general
// path bounds the list to none and sets no enum).
func (d SelectData) constraintFrom(t constraintTemplate) ([]byte, bool) {
	b, _, ok := d.constraintSet(t)
	return b, ok
}

// constraintSet is constraintFrom also returning the set of the ids in
// the enum.
func (d SelectData) constraintSet(t constraintTemplate) ([]byte, map[string]bool, bool) {
	n, size := len(d.Turns), 0
	for _, e := range d.Events {
		n += len(e.Turns)
	}
	if n == 0 {
		return nil, nil, false
	}
	seen := make(map[string]bool, n)
	b := make([]byte, 0, len(t.head)+len(t.mid)+len(t.tail)+8+n*12)
	b = append(b, t.head...)
	b = append(b, '[')
	listed := 0
	add := func(id string) {
		if size > 0 {
			b = append(b, ',')
		}
		size++
		seen[id] = true
		b = jsonx.AppendString(b, id)
	}
	for _, e := range d.Events {
		for _, tu := range e.Turns {
			listed++
			if !seen[tu.ID] {
				add(tu.ID)
			}
		}
	}
	for _, tu := range d.Turns {
		if !seen[tu.ID] {
			listed++
			add(tu.ID)
		}
	}
	hi := d.Max
	if hi <= 0 || hi > listed {
		hi = listed
	}
	b = append(b, ']')
	b = append(b, t.mid...)
	b = strconv.AppendInt(b, int64(hi), 10)
	b = append(b, t.tail...)
	return b, seen, true
}
