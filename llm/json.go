package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/higmem/higmem/internal/jsonx"
)

// excerptLen is how many characters of a bad reply an error quotes.
const excerptLen = 200

// CompleteJSON sends req to m and decodes the JSON reply into v (a pointer,
// as for json.Unmarshal; nil only validates).
//
// The reply is read tolerantly: JSON is extracted from code fences and
// prose, repaired when truncated or sloppy, wrapped into the schema's single
// required key when the model answered with a bare value, coerced where safe
// and validated against req.Schema (any JSON when Schema is nil). When that
// fails, CompleteJSON asks once more, sending the original messages, the bad
// reply as the assistant's turn and a user message saying exactly what was
// wrong. If the second reply fails too, the error wraps ErrInvalidOutput and
// quotes the problem and the start of the reply.
//
// Errors from m.Complete are returned wrapped as they are (they already
// carry ErrRateLimited, ErrUnavailable and so on) and are not re-asked.
//
// The returned Response is the one whose content was decoded (the re-ask's
// when there was one), with Usage and Latency summed over both calls and
// Cached true only when both came from a cache.
func CompleteJSON(ctx context.Context, m Model, req Request, v any) (Response, error) {
	resp, err := m.Complete(ctx, req)
	if err != nil {
		return resp, fmt.Errorf("llm: %s: %w", opName(req), err)
	}
	problem := decodeInto(resp.Content, req.Schema, v)
	if problem == nil {
		return resp, nil
	}
	if err := ctx.Err(); err != nil {
		return resp, fmt.Errorf("llm: %s: %w", opName(req), err)
	}

	retry := req
	retry.Messages = append(append(make([]Message, 0, len(req.Messages)+2), req.Messages...),
		Message{Role: "assistant", Content: resp.Content},
		Message{Role: "user", Content: Correction(problem, req.Schema)},
	)
	second, err := m.Complete(ctx, retry)
	total := second
	total.Usage = resp.Usage.Add(second.Usage)
	total.Latency = resp.Latency + second.Latency
	total.Cached = resp.Cached && second.Cached
	if err != nil {
		total.Content = resp.Content
		return total, fmt.Errorf("llm: %s: re-asking after invalid output (%s): %w", opName(req), problemText(problem), err)
	}
	if problem2 := decodeInto(second.Content, req.Schema, v); problem2 != nil {
		return total, fmt.Errorf("%w: %s: after one corrective re-ask: %s (reply: %s)",
			ErrInvalidOutput, opName(req), problemText(problem2), excerpt(second.Content))
	}
	return total, nil
}

// Correction is the user message CompleteJSON sends after an unusable
// reply: what was wrong, and the schema to follow. Fakes can match on it.
func Correction(problem error, schema json.RawMessage) string {
	var b strings.Builder
	b.WriteString("Your previous reply could not be used: ")
	b.WriteString(problemText(problem))
	b.WriteString(".\n")
	if len(schema) == 0 {
		b.WriteString("Reply again with only valid JSON: no explanations, no code fences, no text before or after it.")
		return b.String()
	}
	b.WriteString("Reply again with only a JSON object that matches this JSON Schema (all required keys, correct types), ")
	b.WriteString("with no explanations, no code fences and no text before or after it:\n")
	b.Write(schema)
	return b.String()
}

// decodeInto parses content against schema and unmarshals into v. It
// returns the problem, or nil.
func decodeInto(content string, schema json.RawMessage, v any) error {
	doc, err := jsonx.Parse(content, schema)
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(doc, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("key %q: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}

// problemText phrases a parse problem for people and models alike.
func problemText(err error) string {
	return strings.TrimPrefix(err.Error(), "jsonx: ")
}

// opName names the request in errors.
func opName(req Request) string {
	switch {
	case req.Operation != "":
		return req.Operation
	case req.SchemaName != "":
		return req.SchemaName
	}
	return "complete"
}

// excerpt quotes the start of a reply for an error message.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "empty"
	}
	if utf8.RuneCountInString(s) <= excerptLen {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q…", string(r[:excerptLen]))
}
