package store

import (
	"cmp"
	"slices"
)

// Changes is what was written to a space after a version (see
// Reader.Changes and "The journal"): applied to a cache of the space as it
// stood at Since, it gives the space as it stands at Version.
//
// A record appears at most once, as it stands at Version; a turn, event or
// profile record deleted and stored again since Since appears both among
// the deleted ids and among the records (apply deletes first). Deleting a
// turn also deletes its annotation, its vector, the links that touch it
// and the profile records that cite it, and deleting an event its vector;
// those leave no entry of their own.
type Changes struct {
	// Since is the version asked from.
	Since int64 `json:"since"`
	// Version is the space's version as the snapshot saw it (0 when the
	// space does not exist). Inside a transaction that has locked or
	// written the space, it is the version the transaction will commit,
	// and the transaction's own writes are among the changes.
	Version int64 `json:"version"`
	// Reset says that the journal does not reach back to Since: the
	// space was deleted (or deleted and written anew) after it, Since is
	// below the space's journal floor, or a write was not journalled.
	// Every other field is then empty, and a cache must read the space
	// afresh.
	Reset bool `json:"reset,omitempty"`
	// Turns are the turns stored after Since, ordered by Seq (then ID).
	Turns []Turn `json:"turns,omitempty"`
	// Annotations are the annotations stored or replaced after Since,
	// ordered by their turns' Seq.
	Annotations []Annotation `json:"annotations,omitempty"`
	// Events are the events stored or replaced after Since, ordered like
	// ListEvents (by CreatedAt, then ID).
	Events []Event `json:"events,omitempty"`
	// Links are the links stored or replaced after Since, ordered like
	// ListLinks.
	Links []Link `json:"links,omitempty"`
	// Vectors are the vectors of the embedder asked for that were stored
	// or replaced after Since, and those of the turns and events among
	// the changes whenever they were stored (a record rewritten without
	// its vector keeps its old one), ordered by Kind, then ID.
	Vectors []Vector `json:"vectors,omitempty"`
	// ProfileRecords are the profile records stored or replaced after
	// Since, ordered like ListProfileRecords (by Entity, then ID).
	ProfileRecords []ProfileRecord `json:"profile_records,omitempty"`
	// DeletedTurns, DeletedEvents and DeletedProfileRecords are the ids
	// of the turns, events and profile records deleted after Since,
	// sorted. An id may also be among the records, when it was stored
	// again afterwards. (The profile records a turn's delete removed, as
	// those citing it, are not listed: they go with the turn.)
	DeletedTurns          []string `json:"deleted_turns,omitempty"`
	DeletedEvents         []string `json:"deleted_events,omitempty"`
	DeletedProfileRecords []string `json:"deleted_profile_records,omitempty"`
}

// Empty reports whether c holds no change (and no Reset).
func (c Changes) Empty() bool {
	return !c.Reset && len(c.Turns)+len(c.Annotations)+len(c.Events)+len(c.Links)+len(c.Vectors)+len(c.ProfileRecords)+
		len(c.DeletedTurns)+len(c.DeletedEvents)+len(c.DeletedProfileRecords) == 0
}

// UniqueVectors sorts vs by Kind, then ID, and keeps one vector of each,
// for a backend whose query of Changes.Vectors may list one twice.
func UniqueVectors(vs []Vector) []Vector {
	by := func(a, b Vector) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID)) }
	slices.SortFunc(vs, by)
	return slices.CompactFunc(vs, func(a, b Vector) bool { return by(a, b) == 0 })
}

// Tombstone kinds, as backends record them.
const (
	TombstoneTurn    = "turn"
	TombstoneEvent   = "event"
	TombstoneProfile = "profile"
)

// AddDeleted files the tombstone of a turn, event or profile record (kind
// TombstoneTurn, TombstoneEvent or TombstoneProfile; others are skipped)
// among c's deleted ids, for a backend reading its tombstones; call
// SortDeleted when done.
func (c *Changes) AddDeleted(kind, id string) {
	switch kind {
	case TombstoneTurn:
		c.DeletedTurns = append(c.DeletedTurns, id)
	case TombstoneEvent:
		c.DeletedEvents = append(c.DeletedEvents, id)
	case TombstoneProfile:
		c.DeletedProfileRecords = append(c.DeletedProfileRecords, id)
	}
}

// SortDeleted sorts c's deleted ids, as Changes lists them.
func (c *Changes) SortDeleted() {
	slices.Sort(c.DeletedTurns)
	slices.Sort(c.DeletedEvents)
	slices.Sort(c.DeletedProfileRecords)
}
