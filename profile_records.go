package higmem

import (
	"context"
	"slices"
	"time"

	"github.com/higmem/higmem/internal/history"
	"github.com/higmem/higmem/internal/profilerec"
	"github.com/higmem/higmem/store"
)

// Profile records: what a model stated about a person, stored with the
// batch that stated it and merged with the rules' reading on every read
// (profile.go), their set, ids and delete plan in internal/profilerec. Delete
// forgets them with the turns they cite (planForget).

// writeProfileRecords stores profile records with their history; the
// records of old (the space's before) are replaced ("update").
func writeProfileRecords(ctx context.Context, tx store.Tx, sp store.Space, recs []store.ProfileRecord, old *profilerec.Set, now time.Time) error {
	for _, r := range recs {
		if err := tx.PutProfileRecord(ctx, sp, r); err != nil {
			return err
		}
		action := "create"
		if slices.ContainsFunc(old.List(), func(o store.ProfileRecord) bool { return o.ID == r.ID }) {
			action = "update"
		}
		if err := history.Append(ctx, tx, sp, "profile", r.ID, action, r.Producer, nil, r, now); err != nil {
			return err
		}
	}
	return nil
}

// applyProfileForget writes the profile records' part of a delete, after
// the turn's delete.
func applyProfileForget(ctx context.Context, tx store.Tx, sp store.Space, p profilerec.Forget, now time.Time) error {
	for _, id := range p.Gone {
		if err := history.Append(ctx, tx, sp, "profile", id, "delete", "user", nil, nil, now); err != nil {
			return err
		}
	}
	for _, r := range p.Rebuilt {
		if err := tx.PutProfileRecord(ctx, sp, r); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "profile", r.ID, "update", "user", nil, r, now); err != nil {
			return err
		}
	}
	for _, id := range p.Dropped {
		if err := tx.DeleteProfileRecord(ctx, sp, id); err != nil {
			return err
		}
		if err := history.Append(ctx, tx, sp, "profile", id, "delete", "user", nil, nil, now); err != nil {
			return err
		}
	}
	return nil
}
