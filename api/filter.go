package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrBadFilter is wrapped by every filter parsing or validation error.
var ErrBadFilter = errors.New("api: bad filter")

// Filters selects turns by their metadata, mem0 style: each key names a
// metadata field and every condition must hold (AND). In JSON a condition is
// either a string (shorthand for eq) or an object of operators:
//
//	{"topic": "travel", "lang": {"ne": "fr"}, "tag": {"in": ["a", "b"]}, "note": {"contains": "visa"}}
type Filters map[string]Condition

// Condition is a set of operators on one metadata field; all given
// operators must hold. A missing field matches only ne.
type Condition struct {
	// Eq holds when the field equals the value.
	Eq *string `json:"eq,omitempty"`
	// Ne holds when the field is missing or differs from the value.
	Ne *string `json:"ne,omitempty"`
	// In holds when the field equals one of the values.
	In []string `json:"in,omitempty"`
	// Contains holds when the field contains the value as a substring.
	Contains *string `json:"contains,omitempty"`
}

// Eq returns the condition field == v.
func Eq(v string) Condition { return Condition{Eq: &v} }

// Ne returns the condition field != v (or missing).
func Ne(v string) Condition { return Condition{Ne: &v} }

// In returns the condition field ∈ vs.
func In(vs ...string) Condition { return Condition{In: vs} }

// Contains returns the condition "field contains v".
func Contains(v string) Condition { return Condition{Contains: &v} }

// maxFilterKeys bounds the conditions of one request.
const maxFilterKeys = 32

// UnmarshalJSON accepts a string (eq) or an object of known operators, and
// rejects unknown operators and wrong types, naming them.
func (c *Condition) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("%w: %v", ErrBadFilter, err)
		}
		*c = Condition{Eq: &s}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: a condition must be a string or an object of operators (eq, ne, in, contains)", ErrBadFilter)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	var out Condition
	ops := make([]string, 0, len(raw))
	for op := range raw {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		v := raw[op]
		var err error
		switch op {
		case "eq":
			out.Eq, err = str(v)
		case "ne":
			out.Ne, err = str(v)
		case "contains":
			out.Contains, err = str(v)
		case "in":
			var vs []string
			if e := json.Unmarshal(v, &vs); e != nil || vs == nil {
				err = errors.New("want an array of strings")
			}
			out.In = vs
		default:
			return fmt.Errorf("%w: unknown operator %q (want eq, ne, in or contains)", ErrBadFilter, op)
		}
		if err != nil {
			return fmt.Errorf("%w: operator %q: %v", ErrBadFilter, op, err)
		}
	}
	if err := out.validate(); err != nil {
		return err
	}
	*c = out
	return nil
}

func str(v json.RawMessage) (*string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, errors.New("want a string")
	}
	return &s, nil
}

func (c Condition) validate() error {
	if c.Eq == nil && c.Ne == nil && c.In == nil && c.Contains == nil {
		return fmt.Errorf("%w: empty condition (want eq, ne, in or contains)", ErrBadFilter)
	}
	if c.In != nil && len(c.In) == 0 {
		return fmt.Errorf("%w: operator \"in\" needs at least one value", ErrBadFilter)
	}
	return nil
}

// Validate reports whether the filters can be evaluated.
func (f Filters) Validate() error {
	if len(f) > maxFilterKeys {
		return fmt.Errorf("%w: %d conditions, at most %d allowed", ErrBadFilter, len(f), maxFilterKeys)
	}
	for k, c := range f {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("%w: empty metadata key", ErrBadFilter)
		}
		if err := c.validate(); err != nil {
			return fmt.Errorf("%w (key %q)", err, k)
		}
	}
	return nil
}

// Match reports whether metadata satisfies every condition.
func (f Filters) Match(md map[string]string) bool {
	for k, c := range f {
		v, ok := md[k]
		if c.Eq != nil && (!ok || v != *c.Eq) {
			return false
		}
		if c.Ne != nil && ok && v == *c.Ne {
			return false
		}
		if c.In != nil && (!ok || !slices.Contains(c.In, v)) {
			return false
		}
		if c.Contains != nil && (!ok || !strings.Contains(v, *c.Contains)) {
			return false
		}
	}
	return true
}

// ParseFilters parses the JSON form of filters (as sent in the "filters"
// query parameter) and validates it.
func ParseFilters(s string) (Filters, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var f Filters
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, ErrBadFilter) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the filter object", ErrBadFilter)
	}
	if f == nil {
		return nil, fmt.Errorf("%w: want a JSON object", ErrBadFilter)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}
