package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
// A reply cut at the token limit (finish_reason "length") is re-asked
// differently, never identically, since the same request would be cut the
// same way: the re-ask leaves the cut reply out, asks for a shorter reply
// (see Shorter), doubles the budget (the request's MaxTokens, else the
// length of the cut reply, which used the backend's default), and samples at
// TruncatedTemperature at least. When the re-ask fails but the cut reply
// could be repaired into valid JSON, the repaired reply is used, the
// returned Response still reports finish_reason "length" and its ReaskErr
// says why the re-ask failed.
//
// Errors from m.Complete are returned wrapped as they are (they already
// carry ErrRateLimited, ErrUnavailable and so on) and are not re-asked.
//
// The returned Response is the one whose content was decoded (the re-ask's
// when there was one), with Usage, Latency and Requests summed over both
// calls (a failed re-ask's included), Reasked set, and Cached true only
// when both came from a cache.
func CompleteJSON(ctx context.Context, m Model, req Request, v any) (Response, error) {
	resp, err := m.Complete(ctx, req)
	if err != nil {
		return resp, fmt.Errorf("llm: %s: %w", opName(req), err)
	}
	doc, decoded, problem := parseDoc(resp.Content, req.Schema, v)
	if problem == nil && !resp.Truncated() {
		return resp, storeInto(doc, decoded, v)
	}
	if err := ctx.Err(); err != nil {
		return resp, fmt.Errorf("llm: %s: %w", opName(req), err)
	}

	retry := reask(req, resp, problem)
	second, err := m.Complete(ctx, retry)
	total := second
	total.Usage = resp.Usage.Add(second.Usage)
	total.Latency = resp.Latency + second.Latency
	total.Requests = resp.Requests + second.Requests
	total.Cached = resp.Cached && second.Cached
	total.Reasked = true
	// useFirst returns the repaired cut reply, when it could be repaired.
	useFirst := func() (Response, bool) {
		if problem != nil {
			return Response{}, false
		}
		first := total
		first.Content, first.Model, first.FinishReason = resp.Content, resp.Model, resp.FinishReason
		return first, unmarshalInto(doc, v) == nil
	}
	if err != nil {
		if first, ok := useFirst(); ok && ctx.Err() == nil {
			first.ReaskErr = err
			return first, nil
		}
		total.Content = resp.Content
		why := "reply cut at the token limit"
		if problem != nil {
			why = "invalid output (" + problemText(problem) + ")"
		}
		return total, fmt.Errorf("llm: %s: re-asking after %s: %w", opName(req), why, err)
	}
	doc2, _, problem2 := parseDoc(second.Content, req.Schema, v)
	if problem2 == nil {
		return total, unmarshalInto(doc2, v)
	}
	if first, ok := useFirst(); ok {
		return first, nil
	}
	return total, fmt.Errorf("%w: %s: after one corrective re-ask: %s (reply: %s)",
		ErrInvalidOutput, opName(req), problemText(problem2), excerpt(second.Content))
}

// TruncatedTemperature is the lowest sampling temperature of a re-ask after
// a reply cut at the token limit: at temperature 0 a model that looped once
// loops again.
const TruncatedTemperature = 0.4

// reask builds the second request after a bad first reply.
func reask(req Request, first Response, problem error) Request {
	retry := req
	if first.Truncated() {
		// The cut reply is left out: it is long, and showing it primes the
		// model to repeat it.
		retry.Messages = append(append(make([]Message, 0, len(req.Messages)+1), req.Messages...),
			Message{Role: "user", Content: Shorter(first.Usage.CompletionTokens, req.SentSchema())})
		switch {
		case req.MaxTokens > 0:
			retry.MaxTokens = 2 * req.MaxTokens
		case first.Usage.CompletionTokens > 0:
			// The backend's default budget was used: the cut reply is
			// as long as it.
			retry.MaxTokens = 2 * first.Usage.CompletionTokens
		}
		retry.Temperature = max(req.Temperature, TruncatedTemperature)
		return retry
	}
	retry.Messages = append(append(make([]Message, 0, len(req.Messages)+2), req.Messages...),
		Message{Role: "assistant", Content: first.Content},
		Message{Role: "user", Content: Correction(problem, req.SentSchema())},
	)
	return retry
}

// Shorter is the user message CompleteJSON sends after a reply cut at the
// token limit (tokens is how long the cut reply was, 0 when unknown).
// Fakes can match on it.
func Shorter(tokens int, schema json.RawMessage) string {
	var b strings.Builder
	b.WriteString("Your previous reply was too long and was cut off")
	if tokens > 0 {
		fmt.Fprintf(&b, " after %d tokens", tokens)
	}
	b.WriteString(". Reply again, much shorter: only the JSON object, every string brief, each item listed once, ")
	b.WriteString("no repeated or numbered runs of items, nothing that was not asked for.")
	if len(schema) > 0 {
		b.WriteString(" It must match this JSON Schema:\n")
		b.Write(schema)
	}
	return b.String()
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

// parseDoc parses content against schema and checks that it unmarshals
// into a value of v's type (without touching v). It returns the document,
// or the problem.
//
// It also returns the pointer to the value doc was decoded into (a new
// value of v's type, invalid when v is nil or not a pointer), which
// storeInto can hand to v instead of decoding doc again. A plain reply
// type is decoded by decodeFast (fastdecode.go), to the value
// json.Unmarshal gives; other types and documents by unmarshalInto.
func parseDoc(content string, schema json.RawMessage, v any) (json.RawMessage, reflect.Value, error) {
	doc, err := jsonx.Parse(content, schema)
	if err != nil {
		return nil, reflect.Value{}, err
	}
	if v == nil {
		return doc, reflect.Value{}, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return doc, reflect.Value{}, nil // unmarshalInto reports it
	}
	fresh := reflect.New(rv.Type().Elem())
	if decodeFast(doc, fresh.Elem()) {
		return doc, fresh, nil
	}
	fresh = reflect.New(rv.Type().Elem()) // decodeFast may have set part of it
	if err := unmarshalInto(doc, fresh.Interface()); err != nil {
		return nil, reflect.Value{}, err
	}
	return doc, fresh, nil
}

// storeInto decodes doc into v as unmarshalInto does. When v points to a
// zero value and decoded (from parseDoc) holds doc already decoded into a
// new value of v's type, that value is copied into v instead: decoding
// into a zero value and into a new one give the same result. A v that
// holds something already is decoded into, so that doc is merged into it
// as json.Unmarshal merges.
func storeInto(doc json.RawMessage, decoded reflect.Value, v any) error {
	if decoded.IsValid() {
		if dst := reflect.ValueOf(v).Elem(); dst.IsZero() {
			dst.Set(decoded.Elem())
			return nil
		}
	}
	return unmarshalInto(doc, v)
}

// unmarshalInto decodes doc into v, phrasing type errors for the model.
func unmarshalInto(doc json.RawMessage, v any) error {
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
