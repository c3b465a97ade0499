package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/jsonerr"
)

// conversation is one conversation read from an ingest file, with the
// space suffix it should go to when a file holds several.
type conversation struct {
	Name      string
	Title     string
	Turns     []api.TurnInput
	Questions []question
}

// question is an example question shipped with a conversation.
type question struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// oldSession takes the key "session" out of a turn object: files written
// for higmem before session_id was the one name of the field still use it.
// It returns the object without it and its value ("" when absent).
func oldSession(raw []byte) ([]byte, string, error) {
	if !bytes.Contains(raw, []byte(`"session"`)) {
		return raw, "", nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw, "", nil // the strict decode reports it
	}
	v, ok := m["session"]
	if !ok {
		return raw, "", nil
	}
	var session string
	if err := json.Unmarshal(v, &session); err != nil {
		return nil, "", fmt.Errorf("field \"session\": want a string, got %s", describeValue(v))
	}
	delete(m, "session")
	out, err := json.Marshal(m)
	return out, session, err
}

// parseConversations reads an ingest file in any supported format, told
// apart by the shape of the JSON, not by its text:
//   - LoCoMo: an array of samples, or one sample object (it has
//     "conversation");
//   - the simple format: an object with "turns": [{speaker, text, time,
//     session_id, id, ...}];
//   - a JSON array of such turns;
//   - JSON lines, one turn object per line (a file of one such line too).
//
// A leading UTF-8 byte order mark is skipped. Errors name the file, the
// line and the field that is wrong.
func parseConversations(data []byte, name string) ([]conversation, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: file is empty", name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil, fmt.Errorf("%s: %s", name, jsonerr.Describe(err, data))
	}
	start := skipSpace(data, 0)
	if rest := skipSpace(data, dec.InputOffset()); rest < int64(len(data)) {
		// More than one value: JSON lines, if the first value was one
		// line.
		if bytes.Contains(data[start:dec.InputOffset()], []byte("\n")) {
			return nil, fmt.Errorf("%s: %s: more JSON after the value that ends on line %d (JSON lines need one turn per line)",
				name, jsonerr.Position(data, rest), jsonerr.Line(data, dec.InputOffset()))
		}
		return parseJSONL(data, name)
	}
	switch first[0] {
	case '[':
		if looksLikeLoCoMo(first) {
			return parseLoCoMo(first, name)
		}
		elems, err := arrayElements(data, start)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		turns, err := decodeTurns(data, elems, name)
		if err != nil {
			return nil, err
		}
		return []conversation{{Name: name, Turns: turns}}, nil
	case '{':
		keys, err := objectKeys(first)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, jsonerr.Describe(err, data))
		}
		switch {
		case keys["conversation"]:
			return parseLoCoMo(first, name)
		case keys["turns"]:
			return parseSimple(data, start, name)
		case keys["text"] || keys["speaker"]:
			return parseJSONL(data, name) // JSON lines of one line
		}
		return nil, fmt.Errorf("%s: a JSON object without \"turns\": want {\"turns\": [...]}, a LoCoMo sample, or one turn per line (see `higmem ingest --help`)", name)
	}
	return nil, fmt.Errorf("%s: %s: want a JSON object or array, got %s", name, jsonerr.Position(data, start), describeValue(first))
}

// element is one value of a JSON array, with its offset in the file.
type element struct {
	raw json.RawMessage
	off int64
}

// parseJSONL reads one turn per non-empty line.
func parseJSONL(data []byte, name string) ([]conversation, error) {
	var elems []element
	off := int64(0)
	for line := range bytes.SplitAfterSeq(data, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 {
			elems = append(elems, element{raw: t, off: off + int64(bytes.Index(line, t[:1]))})
		}
		off += int64(len(line))
	}
	turns, err := decodeTurns(data, elems, name)
	if err != nil {
		return nil, err
	}
	return []conversation{{Name: name, Turns: turns}}, nil
}

// parseSimple reads {"title", "speakers", "turns", "questions"}.
func parseSimple(data []byte, start int64, name string) ([]conversation, error) {
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	if _, err := dec.Token(); err != nil { // {
		return nil, fmt.Errorf("%s: %s", name, jsonerr.Describe(err, data))
	}
	c := conversation{Name: name}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, jsonerr.Describe(err, data))
		}
		key, _ := tok.(string)
		valueAt := skipSpace(data, start+dec.InputOffset())
		if valueAt < int64(len(data)) && data[valueAt] == ':' {
			valueAt = skipSpace(data, valueAt+1)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: %s", name, jsonerr.Describe(err, data))
		}
		at := func(err error) error {
			return fmt.Errorf("%s: line %d: field %q: %s", name, jsonerr.Line(data, valueAt), key, jsonerr.Describe(err, nil))
		}
		switch key {
		case "turns":
			if raw[0] != '[' {
				return nil, fmt.Errorf("%s: line %d: field \"turns\": want an array, got %s", name, jsonerr.Line(data, valueAt), describeValue(raw))
			}
			elems, err := arrayElements(data, valueAt)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if c.Turns, err = decodeTurns(data, elems, name); err != nil {
				return nil, err
			}
		case "questions":
			if err := strictUnmarshal(raw, &c.Questions); err != nil {
				return nil, at(err)
			}
		case "title":
			if err := json.Unmarshal(raw, &c.Title); err != nil {
				return nil, at(err)
			}
		case "speakers":
			var speakers []string // informative only; checked for shape
			if err := json.Unmarshal(raw, &speakers); err != nil {
				return nil, at(err)
			}
		default:
			return nil, fmt.Errorf("%s: line %d: unknown field %q (the simple format has title, speakers, turns, questions)", name, jsonerr.Line(data, valueAt), key)
		}
	}
	return []conversation{c}, nil
}

// arrayElements returns the values of the JSON array that starts at off.
func arrayElements(data []byte, off int64) ([]element, error) {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if _, err := dec.Token(); err != nil {
		return nil, errors.New(jsonerr.Describe(err, data))
	}
	var out []element
	for dec.More() {
		at := skipSpace(data, off+dec.InputOffset())
		if at < int64(len(data)) && data[at] == ',' {
			at = skipSpace(data, at+1)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errors.New(jsonerr.Describe(err, data))
		}
		out = append(out, element{raw: raw, off: at})
	}
	return out, nil
}

// decodeTurns decodes turns strictly (unknown fields are errors) and checks
// the required ones; errors name the line of the turn in data.
func decodeTurns(data []byte, elems []element, name string) ([]api.TurnInput, error) {
	out := make([]api.TurnInput, 0, len(elems))
	numbered := len(elems) > 1 && !isJSONLines(data, elems)
	for i, e := range elems {
		where := fmt.Sprintf("%s: line %d", name, jsonerr.Line(data, e.off))
		if numbered {
			where += fmt.Sprintf(" (turn %d)", i+1)
		}
		if e.raw[0] != '{' {
			return nil, fmt.Errorf("%s: want a turn object, got %s", where, describeValue(e.raw))
		}
		raw, session, err := oldSession(e.raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		var t api.TurnInput
		if err := strictUnmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("%s: %s", where, jsonerr.Describe(err, nil))
		}
		if session != "" {
			if t.SessionID != "" && t.SessionID != session {
				return nil, fmt.Errorf("%s: \"session\" (%q) and \"session_id\" (%q) differ; give session_id only", where, session, t.SessionID)
			}
			t.SessionID = session
		}
		hasCaption := false
		for _, a := range t.Attachments {
			hasCaption = hasCaption || strings.TrimSpace(a.Caption) != ""
		}
		if strings.TrimSpace(t.Text) == "" && !hasCaption {
			return nil, fmt.Errorf("%s: field \"text\" is missing or empty", where)
		}
		if strings.TrimSpace(t.Speaker) == "" {
			return nil, fmt.Errorf("%s: field \"speaker\" is missing or empty", where)
		}
		out = append(out, t)
	}
	return out, nil
}

// isJSONLines reports whether every element starts its own line.
func isJSONLines(data []byte, elems []element) bool {
	for _, e := range elems {
		if e.off > 0 && data[e.off-1] != '\n' {
			return false
		}
	}
	return true
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the value")
	}
	return nil
}

// objectKeys returns the keys of a JSON object.
func objectKeys(raw []byte) (map[string]bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys, nil
}

// looksLikeLoCoMo reports whether a JSON array holds LoCoMo samples: its
// first element is an object with a "conversation".
func looksLikeLoCoMo(arr []byte) bool {
	var elems []json.RawMessage
	if json.Unmarshal(arr, &elems) != nil || len(elems) == 0 || bytes.TrimSpace(elems[0])[0] != '{' {
		return false
	}
	keys, err := objectKeys(elems[0])
	return err == nil && keys["conversation"]
}

func describeValue(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
		off++
	}
	return off
}

// parseLoCoMo reads LoCoMo samples: one conversation per sample, sessions
// in numeric order, the session date on every turn, image captions as
// attachments.
func parseLoCoMo(b []byte, name string) ([]conversation, error) {
	if b[0] == '{' {
		b = append(append([]byte{'['}, b...), ']')
	}
	samples, err := locomo.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]conversation, 0, len(samples))
	for _, s := range samples {
		c := conversation{Name: s.ID}
		for _, sess := range s.Sessions {
			for _, t := range sess.Turns {
				ti := api.TurnInput{
					ID:        t.DiaID,
					SessionID: strconv.Itoa(sess.N),
					Speaker:   t.Speaker,
					Text:      t.Text,
					Time:      sess.DateTime,
				}
				if t.Caption != "" || len(t.ImgURL) > 0 {
					a := api.Attachment{Kind: "image", Caption: t.Caption}
					if len(t.ImgURL) > 0 {
						a.URL = t.ImgURL[0]
					}
					ti.Attachments = []api.Attachment{a}
				}
				c.Turns = append(c.Turns, ti)
			}
		}
		for _, q := range s.QA {
			c.Questions = append(c.Questions, question{Question: q.Question, Answer: q.Answer, Evidence: q.Evidence})
		}
		out = append(out, c)
	}
	return out, nil
}

// selectSamples keeps the conversations named by sel: indexes ("0", "2")
// or names ("conv-26"). Empty sel keeps all.
func selectSamples(all []conversation, sel []string) ([]conversation, error) {
	if len(sel) == 0 {
		return all, nil
	}
	var out []conversation
	for _, s := range sel {
		found := false
		for i, c := range all {
			if c.Name == s || strconv.Itoa(i) == s {
				out = append(out, c)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no conversation %q in the file (it has %d: use an index 0..%d or a sample id)", s, len(all), len(all)-1)
		}
	}
	return out, nil
}
