package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/eval/locomo"
)

// conversation is one conversation read from an ingest file, with the
// space suffix it should go to when a file holds several.
type conversation struct {
	Name      string
	Turns     []higmem.TurnInput
	Questions []question
}

// question is an example question shipped with a conversation.
type question struct {
	Question string   `json:"question"`
	Answer   string   `json:"answer,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// parseConversations reads an ingest file in any supported format:
//   - the LoCoMo format (an array of samples, or one sample object);
//   - the simple format: {"turns": [{speaker, text, time, session, id}]};
//   - a JSON array of such turns;
//   - JSON lines, one turn per line.
//
// Errors name the line (and for JSON lines the field) that was wrong.
func parseConversations(data []byte, name string) ([]conversation, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: file is empty", name)
	}
	if looksLikeLoCoMo(trimmed) {
		return parseLoCoMo(trimmed, name)
	}
	switch trimmed[0] {
	case '[':
		var raw []json.RawMessage
		if err := json.Unmarshal(trimmed, &raw); err != nil {
			// Maybe JSON lines that start with an array? No: report.
			return nil, syntaxError(name, data, err)
		}
		turns, err := decodeTurns(raw, name, false)
		if err != nil {
			return nil, err
		}
		return []conversation{{Name: name, Turns: turns}}, nil
	case '{':
		// One object: the simple format, unless it is JSON lines.
		if lines := nonEmptyLines(trimmed); len(lines) > 1 && json.Valid(lines[0]) {
			return parseJSONL(lines, name)
		}
		var f struct {
			Title     string            `json:"title"`
			Speakers  []string          `json:"speakers"`
			Turns     []json.RawMessage `json:"turns"`
			Questions []question        `json:"questions"`
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, syntaxError(name, data, err)
		}
		if f.Turns == nil {
			return nil, fmt.Errorf("%s: no \"turns\" array (see README for the formats higmem reads)", name)
		}
		turns, err := decodeTurns(f.Turns, name, false)
		if err != nil {
			return nil, err
		}
		return []conversation{{Name: name, Turns: turns, Questions: f.Questions}}, nil
	}
	return nil, fmt.Errorf("%s: not JSON or JSON lines (first byte %q)", name, trimmed[0])
}

func nonEmptyLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func parseJSONL(lines [][]byte, name string) ([]conversation, error) {
	raw := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		raw[i] = l
	}
	turns, err := decodeTurns(raw, name, true)
	if err != nil {
		return nil, err
	}
	return []conversation{{Name: name, Turns: turns}}, nil
}

// decodeTurns decodes turns strictly (unknown fields are errors) and checks
// the required ones.
func decodeTurns(raw []json.RawMessage, name string, lines bool) ([]higmem.TurnInput, error) {
	unit := "turn"
	if lines {
		unit = "line"
	}
	out := make([]higmem.TurnInput, 0, len(raw))
	for i, r := range raw {
		var t higmem.TurnInput
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %s %d: %v", name, unit, i+1, describeJSONError(err))
		}
		if strings.TrimSpace(t.Text) == "" && len(t.Attachments) == 0 {
			return nil, fmt.Errorf("%s: %s %d: field \"text\" is missing or empty", name, unit, i+1)
		}
		if strings.TrimSpace(t.Speaker) == "" {
			return nil, fmt.Errorf("%s: %s %d: field \"speaker\" is missing or empty", name, unit, i+1)
		}
		out = append(out, t)
	}
	return out, nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q should be %s, not %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// syntaxError turns a JSON error into one naming the line.
func syntaxError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("%s: line %d: %v", name, line, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		line := 1 + bytes.Count(data[:min(int(te.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("%s: line %d: %s", name, line, describeJSONError(err))
	}
	return fmt.Errorf("%s: %v", name, err)
}

func looksLikeLoCoMo(b []byte) bool {
	head := b[:min(len(b), 4096)]
	return bytes.Contains(head, []byte(`"conversation"`)) || bytes.Contains(head, []byte(`"speaker_a"`)) ||
		bytes.Contains(head, []byte(`"qa"`)) && bytes.Contains(b, []byte(`"conversation"`))
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
				ti := higmem.TurnInput{
					ID:        t.DiaID,
					SessionID: strconv.Itoa(sess.N),
					Speaker:   t.Speaker,
					Text:      t.Text,
					Time:      sess.DateTime,
				}
				if t.Caption != "" || len(t.ImgURL) > 0 {
					a := higmem.Attachment{Kind: "image", Caption: t.Caption}
					if len(t.ImgURL) > 0 {
						a.URL = t.ImgURL[0]
					}
					ti.Attachments = []higmem.Attachment{a}
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
