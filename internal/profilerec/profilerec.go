// Package profilerec holds the profile records a model stated about people:
// their ids (a digest of what they state), the immutable set of a space's
// records as the statements internal/profile merges, and what deleting a
// turn does to them. It reads the store's records, never the engine.
package profilerec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/heapsize"
	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/redact"
	"github.com/higmem/higmem/store"
)

// Set is the set of a space's stored profile records, as the
// statements internal/profile merges. It is never changed once made: a
// change makes a new one, so that its address identifies its content.
type Set struct {
	recs  []store.ProfileRecord
	stmts []profile.Statement
	bytes int64 // what they take on the heap (Bytes)
}

// New returns the set holding rs (nil when empty), ordered
// as the store lists them, by (Entity, ID), so that the profiles merged
// from them do not depend on how the set was made.
func New(rs []store.ProfileRecord) *Set {
	if len(rs) == 0 {
		return nil
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b store.ProfileRecord) int {
		return cmp.Or(strings.Compare(a.Entity, b.Entity), strings.Compare(a.ID, b.ID))
	})
	p := &Set{recs: rs, stmts: make([]profile.Statement, len(rs))}
	for i, r := range rs {
		p.bytes += heapsize.ProfileRecord(&r)
		p.stmts[i] = profile.Statement{Entity: r.Entity, Attribute: r.Attribute, Value: r.Value, Ended: r.Ended,
			Turns: r.TurnIDs, Producer: r.Producer}
	}
	return p
}

// List returns the records (nil for a nil set).
func (p *Set) List() []store.ProfileRecord {
	if p == nil {
		return nil
	}
	return p.recs
}

// Statements returns the statements (nil for a nil set).
func (p *Set) Statements() []profile.Statement {
	if p == nil {
		return nil
	}
	return p.stmts
}

// With returns the set with put added (replacing records of the same id)
// and the records of ids dropped removed.
func (p *Set) With(put []store.ProfileRecord, drop []string) *Set {
	if len(put) == 0 && len(drop) == 0 {
		return p
	}
	gone := map[string]bool{}
	for _, id := range drop {
		gone[id] = true
	}
	last := map[string]int{} // the last put of each id wins, as in the store
	for i, r := range put {
		gone[r.ID] = true
		last[r.ID] = i
	}
	var out []store.ProfileRecord
	for _, r := range p.List() {
		if !gone[r.ID] {
			out = append(out, r)
		}
	}
	for i, r := range put {
		if last[r.ID] == i {
			out = append(out, r)
		}
	}
	return New(out)
}

// Bytes is what the records take on the heap (0 for a nil set).
func (p *Set) Bytes() int64 {
	if p == nil {
		return 0
	}
	return p.bytes
}

// ID returns the id of a record: a digest of what it states,
// so that the same statement made again replaces its record. A summary has
// one record per entity, replaced by every update.
func ID(r store.ProfileRecord) string {
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

// Record returns the record of a statement made by producer at
// now about the turns ids (which must be among turns, the batch and the
// space): its id, and its StatedAt from the latest evidence turn.
func Record(entity, label, value string, ended bool, ids []string, turnAt func(id string) (store.Turn, bool), producer string, now time.Time) store.ProfileRecord {
	r := store.ProfileRecord{Entity: entity, Attribute: label, Value: value, Ended: ended, TurnIDs: ids, Producer: producer, CreatedAt: now}
	for _, id := range ids {
		if t, ok := turnAt(id); ok && t.OccurredAt.After(r.StatedAt) {
			r.StatedAt = t.OccurredAt
		}
	}
	r.ID = ID(r)
	return r
}

// Forget is what deleting a turn changes of the profile records:
// the store removes the records citing the turn (store.Writer.DeleteTurn);
// of those, the ones with other evidence whose text does not hold the
// turn's trace are stored again without it (rebuilt), and records that do
// not cite the turn but hold its trace are removed (dropped).
type Forget struct {
	Gone    []string // removed with the turn
	Rebuilt []store.ProfileRecord
	Dropped []string
}

// PlanForget plans the profile records' part of deleting the turn
// whose trace is tr.
func PlanForget(recs []store.ProfileRecord, tr *redact.Trace) Forget {
	var p Forget
	for _, r := range recs {
		holds := tr.In(r.Entity, r.Attribute, r.Value)
		if !slices.Contains(r.TurnIDs, tr.ID) {
			if holds {
				p.Dropped = append(p.Dropped, r.ID)
			}
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(r.TurnIDs), func(id string) bool { return id == tr.ID })
		if len(rest) == 0 || holds || r.Attribute == store.ProfileSummary {
			// A summary cites the turn in its text: it goes, and the
			// next profile update of the person writes another.
			p.Gone = append(p.Gone, r.ID)
			continue
		}
		r.TurnIDs = rest
		p.Rebuilt = append(p.Rebuilt, r)
	}
	return p
}
