package ui

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
)

// The profile pages: what memory knows about each person of a space, and
// one person's attributes with every value they held, when, by whose
// statement and on which turns.

// profileRow is one person of the profiles list.
type profileRow struct {
	Profile api.Profile
	// Current are the values that hold now, as "label: value"; Closed
	// counts the others.
	Current []string
	Closed  int
	// Models is true when a model stated some value or the summary.
	Models bool
}

type profilesView struct {
	Profiles []profileRow
}

// label is an attribute's name with its key: "favorite book".
func label(a api.ProfileAttribute) string {
	if a.Key == "" {
		return a.Name
	}
	return a.Name + " " + a.Key
}

// byModel reports whether a value was stated by a model.
func byModel(v api.ProfileValue) bool {
	for _, p := range v.Producers {
		if p != "rules" {
			return true
		}
	}
	return false
}

// profiles lists the people of a space.
func (h *Handler) profiles(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	var v profilesView
	err := h.read(r.Context(), func(ctx context.Context) error {
		l, err := h.local.Profiles(ctx, api.ProfilesRequest{Scope: sc})
		if err != nil {
			return err
		}
		for _, p := range l.Profiles {
			row := profileRow{Profile: p, Models: p.Summary != nil}
			for _, a := range p.Attributes {
				for _, val := range a.Values {
					if val.Current {
						row.Current = append(row.Current, label(a)+": "+val.Value)
					} else {
						row.Closed++
					}
					row.Models = row.Models || byModel(val)
				}
			}
			v.Profiles = append(v.Profiles, row)
		}
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, http.StatusOK, "profiles", newPage(q, "Profiles", "profiles", &sc, v))
}

// evidenceRef is one evidence turn as the profile page shows it: the
// turn, and the events holding it.
type evidenceRef struct {
	ID     string
	Turn   *api.Turn // nil when the turn cannot be read
	Events []api.Event
}

// valueRow is one value of an attribute on the profile page.
type valueRow struct {
	api.ProfileValue
	Evidence []evidenceRef
	// ClosedTurn is the turn that closed the value, when it can be read.
	ClosedTurn *api.Turn
}

// attributeRow is one attribute of the profile page.
type attributeRow struct {
	Label  string
	Values []valueRow
}

type profileView struct {
	Profile    api.Profile
	Attributes []attributeRow
	Summary    []evidenceRef // the turns the summary cites
	AsOf       string        // the as-of date asked, as typed
	AsOfError  string
}

// profile shows one person: every attribute with the values it held, their
// validity on both clocks, what stated and what closed them, and links to
// the evidence turns and their events. ?as_of= keeps the values that held
// then.
func (h *Handler) profile(w http.ResponseWriter, r *http.Request, q *request) {
	sc, ok := h.scope(w, r, q)
	if !ok {
		return
	}
	entity := r.FormValue("entity")
	v := profileView{AsOf: strings.TrimSpace(r.FormValue("as_of"))}
	var asOf time.Time
	status := http.StatusOK
	if v.AsOf != "" {
		t, err := parseBound(v.AsOf, true)
		if err != nil {
			v.AsOfError = "Dates are YYYY-MM-DD (or RFC 3339 times); every value is shown."
			v.AsOf, status = "", http.StatusBadRequest
		}
		asOf = t
	}
	err := h.read(r.Context(), func(ctx context.Context) error {
		p, err := h.local.Profile(ctx, api.ProfilesRequest{Scope: sc, Entity: entity, AsOf: asOf})
		if err != nil {
			return err
		}
		v.Profile = *p
		refs, err := h.evidence(ctx, sc, *p)
		if err != nil {
			return err
		}
		for _, a := range p.Attributes {
			ar := attributeRow{Label: label(a)}
			for _, val := range a.Values {
				vr := valueRow{ProfileValue: val}
				for _, id := range val.Evidence {
					vr.Evidence = append(vr.Evidence, refs[id])
				}
				if val.ClosedBy != "" {
					vr.ClosedTurn = refs[val.ClosedBy].Turn
				}
				ar.Values = append(ar.Values, vr)
			}
			v.Attributes = append(v.Attributes, ar)
		}
		if p.Summary != nil {
			for _, id := range p.Summary.Evidence {
				v.Summary = append(v.Summary, refs[id])
			}
		}
		return nil
	})
	if err != nil {
		h.failErr(w, r, q, err)
		return
	}
	h.render(w, r, status, "profile", newPage(q, "Profile: "+v.Profile.Entity, "profiles", &sc, v))
}

// evidence returns the turns a profile cites (evidence, closing turns, the
// summary's) with the events holding each, by id.
func (h *Handler) evidence(ctx context.Context, sc api.Scope, p api.Profile) (map[string]evidenceRef, error) {
	refs := map[string]evidenceRef{}
	want := func(id string) {
		if _, ok := refs[id]; !ok && id != "" {
			refs[id] = evidenceRef{ID: id}
		}
	}
	for _, a := range p.Attributes {
		for _, v := range a.Values {
			for _, id := range v.Evidence {
				want(id)
			}
			want(v.ClosedBy)
		}
	}
	if p.Summary != nil {
		for _, id := range p.Summary.Evidence {
			want(id)
		}
	}
	if len(refs) == 0 {
		return refs, nil
	}
	evs, err := h.local.Events(ctx, sc)
	if err != nil {
		return nil, err
	}
	for _, e := range evs.Events {
		for i := range e.Turns {
			t := e.Turns[i]
			ref, ok := refs[t.ID]
			if !ok {
				continue
			}
			ref.Turn = &t
			ref.Events = append(ref.Events, e.Event)
			refs[t.ID] = ref
		}
	}
	for id, ref := range refs {
		if ref.Turn != nil {
			continue
		}
		// A turn no event holds.
		t, err := h.local.Turn(ctx, sc, id)
		if err != nil {
			continue // gone meanwhile: shown as an id
		}
		ref.Turn = t
		refs[id] = ref
	}
	return refs, nil
}
