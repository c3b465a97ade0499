package profile

import (
	"slices"
	"strings"
	"time"
)

// Find returns the profile of entity in ps: the one with that name,
// or else the only one whose first name it is ("Joey" for "Joey
// Tribbiani").
func Find(ps []Profile, entity string) (Profile, bool) {
	k := Key(entity)
	var first []Profile
	for _, p := range ps {
		pk := Key(p.Entity)
		if pk == k {
			return p, true
		}
		if f, _, ok := strings.Cut(pk, " "); ok && f == k {
			first = append(first, p)
		}
	}
	if len(first) == 1 {
		return first[0], true
	}
	return Profile{}, false
}

// AsOf returns p with only the values that held at t (p itself when t is
// zero). The result shares nothing with p.
func AsOf(p Profile, t time.Time) Profile {
	out := Profile{Entity: p.Entity, Speaker: p.Speaker, Attributes: make([]Attribute, 0, len(p.Attributes))}
	if p.Summary != nil {
		s := *p.Summary
		s.Evidence = slices.Clone(s.Evidence)
		out.Summary = &s
	}
	for _, a := range p.Attributes {
		vs := a.Values
		if !t.IsZero() {
			vs = a.ValidAt(t)
			if len(vs) == 0 {
				continue
			}
		}
		c := Attribute{Name: a.Name, Key: a.Key, Values: make([]Value, len(vs))}
		for i, v := range vs {
			v.Evidence = slices.Clone(v.Evidence)
			v.Producers = slices.Clone(v.Producers)
			c.Values[i] = v
		}
		out.Attributes = append(out.Attributes, c)
	}
	return out
}
