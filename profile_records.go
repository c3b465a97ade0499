package higmem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/redact"
	"github.com/higmem/higmem/store"
)

// Profile records: what a model stated about a person, stored with the
// batch that stated it and merged with the rules' reading on every read
// (profile.go). Delete forgets them with the turns they cite (planForget).

// profileRecordID returns the id of a record: a digest of what it states,
// so that the same statement made again replaces its record. A summary has
// one record per entity, replaced by every update.
func profileRecordID(r store.ProfileRecord) string {
	if r.Attribute == store.ProfileSummary {
		return "summary:" + profile.Key(r.Entity)
	}
	h := sha256.New()
	for _, s := range []string{profile.Key(r.Entity), r.Attribute, strings.ToLower(strings.TrimSpace(r.Value)), strconv.FormatBool(r.Ended)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, id := range r.TurnIDs {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return "p" + hex.EncodeToString(h.Sum(nil))[:16]
}

// newProfileRecord returns the record of a statement made by producer at
// now about the turns ids (which must be among turns, the batch and the
// space): its id, and its StatedAt from the latest evidence turn.
func newProfileRecord(entity, label, value string, ended bool, ids []string, turnAt func(id string) (store.Turn, bool), producer string, now time.Time) store.ProfileRecord {
	r := store.ProfileRecord{Entity: entity, Attribute: label, Value: value, Ended: ended, TurnIDs: ids, Producer: producer, CreatedAt: now}
	for _, id := range ids {
		if t, ok := turnAt(id); ok && t.OccurredAt.After(r.StatedAt) {
			r.StatedAt = t.OccurredAt
		}
	}
	r.ID = profileRecordID(r)
	return r
}

// writeProfileRecords stores profile records with their history; the
// records of old (the space's before) are replaced ("update").
func writeProfileRecords(ctx context.Context, tx store.Tx, sp store.Space, recs []store.ProfileRecord, old *profileRecords, now time.Time) error {
	for _, r := range recs {
		if err := tx.PutProfileRecord(ctx, sp, r); err != nil {
			return err
		}
		action := "create"
		if slices.ContainsFunc(old.list(), func(o store.ProfileRecord) bool { return o.ID == r.ID }) {
			action = "update"
		}
		if err := appendChange(ctx, tx, sp, "profile", r.ID, action, r.Producer, nil, r, now); err != nil {
			return err
		}
	}
	return nil
}

// profileForget is what deleting a turn changes of the profile records:
// the store removes the records citing the turn (store.Writer.DeleteTurn);
// of those, the ones with other evidence whose text does not hold the
// turn's trace are stored again without it (rebuilt), and records that do
// not cite the turn but hold its trace are removed (dropped).
type profileForget struct {
	gone    []string // removed with the turn
	rebuilt []store.ProfileRecord
	dropped []string
}

// planProfileForget plans the profile records' part of deleting the turn
// whose trace is tr.
func planProfileForget(recs []store.ProfileRecord, tr *redact.Trace) profileForget {
	var p profileForget
	for _, r := range recs {
		holds := tr.In(r.Entity, r.Attribute, r.Value)
		if !slices.Contains(r.TurnIDs, tr.ID) {
			if holds {
				p.dropped = append(p.dropped, r.ID)
			}
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(r.TurnIDs), func(id string) bool { return id == tr.ID })
		if len(rest) == 0 || holds || r.Attribute == store.ProfileSummary {
			// A summary cites the turn in its text: it goes, and the
			// next profile update of the person writes another.
			p.gone = append(p.gone, r.ID)
			continue
		}
		r.TurnIDs = rest
		p.rebuilt = append(p.rebuilt, r)
	}
	return p
}

// apply writes the plan after the turn's delete.
func (p profileForget) apply(ctx context.Context, tx store.Tx, sp store.Space, now time.Time) error {
	for _, id := range p.gone {
		if err := appendChange(ctx, tx, sp, "profile", id, "delete", "user", nil, nil, now); err != nil {
			return err
		}
	}
	for _, r := range p.rebuilt {
		if err := tx.PutProfileRecord(ctx, sp, r); err != nil {
			return err
		}
		if err := appendChange(ctx, tx, sp, "profile", r.ID, "update", "user", nil, r, now); err != nil {
			return err
		}
	}
	for _, id := range p.dropped {
		if err := tx.DeleteProfileRecord(ctx, sp, id); err != nil {
			return err
		}
		if err := appendChange(ctx, tx, sp, "profile", id, "delete", "user", nil, nil, now); err != nil {
			return err
		}
	}
	return nil
}
