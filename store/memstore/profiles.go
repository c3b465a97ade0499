package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/higmem/higmem/store"
)

// Profile records: kept by id in space.profiles, as private deep copies.

func copyProfile(r store.ProfileRecord) store.ProfileRecord {
	r.TurnIDs = slices.Clone(r.TurnIDs)
	return r
}

// listProfiles returns the records of entity (all when empty), ordered by
// (Entity, ID).
func (sp *space) listProfiles(entity string) []store.ProfileRecord {
	if sp == nil {
		return nil
	}
	var out []store.ProfileRecord
	for _, r := range sp.profiles {
		if entity == "" || r.Entity == entity {
			out = append(out, copyProfile(r))
		}
	}
	slices.SortFunc(out, func(a, b store.ProfileRecord) int {
		return cmp.Or(cmp.Compare(a.Entity, b.Entity), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// dropProfilesCiting removes the records that cite turn id (with the
// turn's tombstone, they leave none of their own).
func (sp *space) dropProfilesCiting(id string) {
	maps.DeleteFunc(sp.profiles, func(pid string, r store.ProfileRecord) bool {
		if slices.Contains(r.TurnIDs, id) {
			delete(sp.written, profileKey(pid))
			return true
		}
		return false
	})
}

// ListProfileRecords implements store.Reader.
func (s *Store) ListProfileRecords(ctx context.Context, sp store.Space, entity string) (rs []store.ProfileRecord, err error) {
	err = s.read(sp, func(x *space) error { rs = x.listProfiles(entity); return nil })
	return rs, err
}

// ListProfileRecords implements store.Reader.
func (t *tx) ListProfileRecords(ctx context.Context, sp store.Space, entity string) (rs []store.ProfileRecord, err error) {
	err = t.read(sp, func(x *space) error { rs = x.listProfiles(entity); return nil })
	return rs, err
}

// PutProfileRecord implements store.Writer.
func (t *tx) PutProfileRecord(ctx context.Context, sp store.Space, r store.ProfileRecord) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	r = copyProfile(r)
	if err := normTimes("profile record time", &r.StatedAt, &r.CreatedAt); err != nil {
		return err
	}
	view := t.view(sp)
	for _, id := range r.TurnIDs {
		if _, ok := view.turn(id); !ok {
			return fmt.Errorf("memstore: profile record %q cites turn %q: %w", r.ID, id, store.ErrNotFound)
		}
	}
	x, v := t.write(sp)
	x.profiles[r.ID] = r
	x.stamp(profileKey(r.ID), v)
	return nil
}

// DeleteProfileRecord implements store.Writer.
func (t *tx) DeleteProfileRecord(ctx context.Context, sp store.Space, id string) error {
	if err := t.check(sp); err != nil {
		return err
	}
	if v := t.view(sp); v == nil || v.profiles[id].ID == "" {
		return fmt.Errorf("memstore: deleting profile record %q: %w", id, store.ErrNotFound)
	}
	x, v := t.write(sp)
	delete(x.profiles, id)
	delete(x.written, profileKey(id))
	x.tombs[tombKey(store.TombstoneProfile, id)] = v
	return nil
}
