package exportfmt

import (
	"context"

	"github.com/higmem/higmem/store"
)

// Records is what an export of a space holds.
type Records struct {
	Turns    []store.Turn
	Anns     []store.Annotation
	Events   []store.Event
	Links    []store.Link
	Profiles []store.ProfileRecord
}

// Read reads the records an export of sp holds from r.
func Read(ctx context.Context, r store.Reader, sp store.Space) (Records, error) {
	var recs Records
	var err error
	if recs.Turns, err = r.ListTurns(ctx, sp, store.TurnQuery{}); err != nil {
		return recs, err
	}
	if recs.Anns, err = r.ListAnnotations(ctx, sp, nil); err != nil {
		return recs, err
	}
	if recs.Events, err = r.ListEvents(ctx, sp); err != nil {
		return recs, err
	}
	if recs.Links, err = r.ListLinks(ctx, sp, nil); err != nil {
		return recs, err
	}
	recs.Profiles, err = r.ListProfileRecords(ctx, sp, "")
	return recs, err
}
