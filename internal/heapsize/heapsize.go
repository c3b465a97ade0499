// Package heapsize estimates the Go heap the store's records take, from
// their lengths and capacities, for the engine's cache bound (see
// docs/CONCURRENCY.md; TestStateSizeEstimate checks the sum against the
// measured heap).
package heapsize

import "github.com/higmem/higmem/store"

// Per-item costs of records besides their strings, from the sizes of the
// types (store.Turn is 200 bytes, store.Event 320, store.Link 104,
// store.TimeRef 88) and of Go's maps (about 48 bytes an entry with their
// slack).
const (
	TurnStruct   = 200
	EventStruct  = 320
	linkBytes    = 104
	timeRefBytes = 88
	// profileRecordBytes is a profile record with its statement (store.
	// ProfileRecord, profile.Statement).
	profileRecordBytes = 160 + 96
	MapEntry           = 48
)

// Alloc is the heap a string or slice of n bytes takes: Go rounds
// allocations up to its size classes (8 and 16 bytes apart for small
// ones, at most an eighth more for larger ones).
func Alloc(n int) int64 {
	switch {
	case n == 0:
		return 0
	case n <= 16:
		return int64(n+7) &^ 7
	case n <= 256:
		return int64(n+15) &^ 15
	default:
		return int64(n + n/16 + 15)
	}
}

// Strings is the heap of a slice of strings.
func Strings(ss []string) int64 {
	n := Alloc(16 * cap(ss))
	for _, s := range ss {
		n += Alloc(len(s))
	}
	return n
}

// Turn is what a turn's contents take on the heap (its strings,
// attachments and metadata), beyond its slot in the state's slices.
func Turn(t *store.Turn) int64 {
	n := Alloc(len(t.ID)) + Alloc(len(t.SessionID)) + Alloc(len(t.Speaker)) +
		Alloc(len(t.Text)) + Alloc(len(t.OccurredRaw))
	if len(t.Attachments) > 0 {
		n += Alloc(48 * cap(t.Attachments))
		for _, a := range t.Attachments {
			n += Alloc(len(a.Kind)) + Alloc(len(a.URL)) + Alloc(len(a.Caption))
		}
	}
	for k, v := range t.Metadata {
		n += MapEntry + Alloc(len(k)) + Alloc(len(v))
	}
	return n
}

// Event is what an event's contents take on the heap (strings,
// facts, lists), with its membership (an entry of the engine's eventsOf and evTurns per member), beyond its slot in the state's slices.
func Event(e *store.Event) int64 {
	n := Alloc(len(e.ID)) + Alloc(len(e.Title)) + Alloc(len(e.Summary)) + Alloc(len(e.Producer))
	n += Alloc(48 * cap(e.Facts))
	for _, f := range e.Facts {
		n += Alloc(len(f.Time)) + Alloc(len(f.Text)) + Alloc(len(f.TurnID))
	}
	n += Strings(e.Entities) + Strings(e.Keywords) + Strings(e.Tags) + Strings(e.TurnIDs)
	n += int64(len(e.TurnIDs)) * (16 + 4)
	return n
}

// Link is what a link takes: a copy under each of its ends, and its
// strings.
func Link(l *store.Link) int64 {
	return 2*linkBytes + Alloc(len(l.Source)) + Alloc(len(l.Target)) + Alloc(len(l.Relation))
}

// TimeRefs is what the time expressions of one annotation take.
func TimeRefs(refs []store.TimeRef) int64 {
	n := Alloc(timeRefBytes * cap(refs))
	for _, r := range refs {
		n += Alloc(len(r.Text)) + Alloc(len(r.Granularity))
	}
	return n
}

// ProfileRecord is what a profile record takes with its statement.
func ProfileRecord(r *store.ProfileRecord) int64 {
	return profileRecordBytes + Alloc(len(r.ID)) + Alloc(len(r.Entity)) + Alloc(len(r.Attribute)) +
		Alloc(len(r.Value)) + Alloc(len(r.Producer)) + Strings(r.TurnIDs)
}
