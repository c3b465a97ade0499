package llmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// strictUnsupported are keywords OpenAI's strict structured outputs have
// refused ("'minLength' is not permitted"): the strict subset is what
// its constrained decoding compiles.
var strictUnsupported = []string{"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "patternProperties"}

// OpenAIStrictSchemas mimics how OpenAI checks a json_schema
// response_format before it answers: with "strict": true the schema must
// keep to the strict subset (every property required, additionalProperties
// false on every object, none of strictUnsupported), else the request is
// refused with 400 and OpenAI's "Invalid schema" message; without strict
// the schema is only a hint and anything passes. Other requests go to
// next.
func OpenAIStrictSchemas(next Handler) Handler {
	return func(n int, req *ChatRequest) Reply {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if json.Unmarshal(req.ResponseFormat, &rf) == nil && rf.Type == "json_schema" && rf.JSONSchema.Strict {
			var s any
			if err := json.Unmarshal(rf.JSONSchema.Schema, &s); err != nil {
				return Reply{Status: http.StatusBadRequest, Body: errorBody("invalid_request_error", err.Error(), "response_format")}
			}
			if why := strictProblem(s, "root"); why != "" {
				msg := fmt.Sprintf("Invalid schema for response_format '%s': In context=(%s).", rf.JSONSchema.Name, why)
				return Reply{Status: http.StatusBadRequest, Body: errorBody("invalid_request_error", msg, "response_format")}
			}
		}
		return next(n, req)
	}
}

// strictProblem returns what keeps schema s out of the strict subset, or
// "".
func strictProblem(s any, at string) string {
	m, ok := s.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range strictUnsupported {
		if _, ok := m[k]; ok {
			return fmt.Sprintf("'%s'), '%s' is not permitted", at, k)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if m["additionalProperties"] != false {
			return fmt.Sprintf("'%s'), 'additionalProperties' is required to be supplied and to be false", at)
		}
		req := map[string]bool{}
		for _, r := range asList(m["required"]) {
			if name, ok := r.(string); ok {
				req[name] = true
			}
		}
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !req[name] {
				return fmt.Sprintf("'%s'), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'", at, name)
			}
			if why := strictProblem(props[name], at+"."+name); why != "" {
				return why
			}
		}
	}
	return strictProblem(m["items"], at+"[]")
}
