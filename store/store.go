// Package store defines how higmem persists memory: the record types (turns,
// annotations, events, links, vectors, history, profile records) and the
// Store interface every backend implements.
//
// Implementations live in subpackages: store/sqlite (the default, an embedded
// pure-Go SQLite file), store/memstore (in memory, for tests and ephemeral
// use) and store/postgres. Every implementation must pass the conformance
// suite in store/storetest.
//
// # Spaces
//
// Every record belongs to a Space, a (user, agent) pair. No method ever reads
// or writes across spaces: a record of another space behaves exactly as if it
// did not exist.
//
// # Transactions
//
// Writes happen inside Update, which runs a function with a Tx and commits
// when it returns nil; on an error or a panic nothing is written. All writes
// caused by one added turn (or one batch of turns) go through one Update, so
// memory is never left half-built. Reads outside a transaction see only
// committed data.
//
// # The contract
//
// Store (Reader, Update, Close) and Tx (Reader and Writer) hold what the
// module calls, nothing more. A capability that only some backends can
// offer is an optional interface (VectorsIntoReader, VectorSetsIntoReader, TimeRefsReader,
// SpaceTimeRefsReader, EmbedderLister, Watcher), found
// by a type assertion. Extending the contract means adding the method to Reader,
// Writer or Tx (or a new optional interface), implementing it in every
// backend, and adding its checks to store/storetest.
//
// # Versions and the write lock
//
// Every space carries a version: a number that every committed Update
// writing the space sets anew, drawn from one counter of the store, so it
// only grows, even across a DeleteSpace and the re-creation of the space
// (a space never written, or removed by DeleteSpace, has version 0).
// SpaceVersion reads it with one cheap query; a cache of a space is
// current exactly when the version it was built at equals the store's.
//
// Tx.Lock takes a space's write lock for the rest of the transaction and
// reports its Head: the version the transaction found, the version it
// will commit, and the highest Seq stored. Until the transaction ends no
// other writer, in this process or another sharing the database, commits
// to the space, so what the transaction reads of the space stays true and
// the Seq it hands out (Head.LastSeq+1, +2, ...) is unique. Writes without
// Lock are allowed and still bump the version at commit; Lock is how a
// writer learns whether the state it built from is still current.
//
// # The journal
//
// A store keeps, for every space, enough to answer Reader.Changes: what
// was written after a given version, so that a cache of the space catches
// up by reading what changed instead of the whole space. Each stored
// record (turn, annotation, event, link, vector, profile record)
// remembers the version that last wrote it, and each deleted turn, event
// or profile record leaves a tombstone (its kind, id and the version that
// deleted it; never its content). The annotation, vector, links and the
// profile records citing a deleted turn, and the vector of a deleted
// event, go with it and leave no tombstone of their own.
//
// Tombstones are bounded per space: when a space holds more than the
// backend's bound, the oldest are dropped and the space's journal floor
// rises past them. Changes since a version below the floor, or from
// before a DeleteSpace (or a write the journal did not record, such as
// one by a build of higmem without it), report Reset: the caller reads
// the space afresh.
//
// # Immutability
//
// Turns are what was said and are never rewritten: PutTurn with an existing
// id and identical content is a no-op, and with different content it fails
// with ErrConflict. Derived records (annotations, events, links, vectors,
// profile records) can be replaced; each change to them is recorded with
// AppendHistory by the engine.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Sentinel errors returned (wrapped) by every Store implementation.
var (
	// ErrNotFound means the record does not exist in the given space.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict means a turn with the same id but different content is
	// already stored. Turns are immutable.
	ErrConflict = errors.New("store: conflicting turn with the same id")
	// ErrInvalid means a record failed validation (empty id, empty user).
	ErrInvalid = errors.New("store: invalid record")
	// ErrClosed means the store was used after Close.
	ErrClosed = errors.New("store: closed")
	// ErrPurgeBlocked means Purge could not finish because other readers
	// of the store's files (other processes) held what it must rewrite; a
	// later Purge finishes it.
	ErrPurgeBlocked = errors.New("store: purge blocked by readers")
)

// Space scopes every record: one end user talking to one agent. UserID is
// required; AgentID may be empty.
type Space struct {
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id,omitempty"`
}

// Validate reports whether the space can hold records.
func (s Space) Validate() error {
	if s.UserID == "" {
		return fmt.Errorf("%w: space needs a user id", ErrInvalid)
	}
	return nil
}

// String renders the space as "user/agent" for logs and errors.
func (s Space) String() string { return s.UserID + "/" + s.AgentID }

// Attachment is something shared with a turn, such as an image. Only its
// caption is used for retrieval.
type Attachment struct {
	Kind    string `json:"kind"` // "image", "file", ...
	URL     string `json:"url,omitempty"`
	Caption string `json:"caption,omitempty"`
}

// Turn is one raw utterance, stored as said and never rewritten.
type Turn struct {
	Space Space `json:"-"`
	// ID is the caller's id (such as LoCoMo's "D3:7") or one generated by
	// the engine. Unique within the space.
	ID string `json:"id"`
	// SessionID groups turns of one conversation session; may be empty.
	SessionID string `json:"session_id,omitempty"`
	// Seq orders turns within the space; assigned by the engine.
	Seq int64 `json:"seq"`
	// Speaker is who said it.
	Speaker string `json:"speaker"`
	// Text is what was said.
	Text string `json:"text"`
	// Attachments shared with the turn.
	Attachments []Attachment `json:"attachments,omitempty"`
	// OccurredAt is when the turn was said (zero when unknown).
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	// OccurredRaw is the caller's original time string, kept verbatim even
	// when it could not be parsed.
	OccurredRaw string `json:"occurred_raw,omitempty"`
	// RecordedAt is when the turn was stored.
	RecordedAt time.Time `json:"recorded_at,omitzero"`
	// Metadata holds caller-defined string fields.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// TimeRef is a time expression found in a turn's text, resolved against the
// turn's OccurredAt ("last week" → an interval).
type TimeRef struct {
	Text        string    `json:"text"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"` // exclusive
	Granularity string    `json:"granularity,omitempty"`
	Fuzzy       bool      `json:"fuzzy,omitempty"`
}

// Annotation is derived information about a turn, kept apart from the turn
// so that a bad model never rewrites what was said.
type Annotation struct {
	TurnID   string    `json:"turn_id"`
	Keywords []string  `json:"keywords,omitempty"`
	Tags     []string  `json:"tags,omitempty"`
	Entities []string  `json:"entities,omitempty"`
	Context  string    `json:"context,omitempty"`
	TimeRefs []TimeRef `json:"time_refs,omitempty"`
	// Producer names what made the annotation: a model and prompt version,
	// or "offline".
	Producer  string    `json:"producer,omitempty"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Fact is one dated statement in an event's fact sheet, with the turn that
// supports it.
type Fact struct {
	Time   string `json:"time,omitempty"`
	Text   string `json:"fact"`
	TurnID string `json:"turn_id,omitempty"`
}

// Event groups turns about one happening or topic.
type Event struct {
	Space    Space    `json:"-"`
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Summary  string   `json:"summary,omitempty"`
	Facts    []Fact   `json:"facts,omitempty"`
	Entities []string `json:"entities,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	// TurnIDs lists member turns in the order they joined.
	TurnIDs []string `json:"turn_ids"`
	// Start and End span the members' OccurredAt (zero when unknown).
	Start     time.Time `json:"start,omitzero"`
	End       time.Time `json:"end,omitzero"`
	Producer  string    `json:"producer,omitempty"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Link relates two turns (A-Mem style), e.g. "answer_to" or "continues".
type Link struct {
	Source     string    `json:"source"`
	Target     string    `json:"target"`
	Relation   string    `json:"relation"`
	Confidence float64   `json:"confidence,omitempty"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	// InvalidatedAt is set when the link no longer holds (zero while valid).
	InvalidatedAt time.Time `json:"invalidated_at,omitzero"`
}

// VectorKind says what a vector embeds.
type VectorKind string

// Vector kinds.
const (
	VectorTurn  VectorKind = "turn"
	VectorEvent VectorKind = "event"
	// VectorWindow embeds a turn with the turns just before it in its
	// session (its window, see the root package's window.go); it has the
	// turn's id and is deleted with the turn.
	VectorWindow VectorKind = "window"
	// VectorPassage holds the vectors of a long turn's passages (see the
	// root package's passages.go): one record per turn, with the turn's
	// id, whose Values are the passages' vectors one after the other (a
	// multiple of the embedder's dimension; the passages themselves are
	// worked out again from the turn's text). It is deleted with the turn.
	VectorPassage VectorKind = "passage"
)

// MadeBy reports whether a vector stored under embedder id stored was
// made by embedder or by an embedder derived from it: an id of embedder,
// "+" and a variant (window vectors are stored under such an id, so that
// a change of what a window holds makes them again).
func MadeBy(stored, embedder string) bool {
	return embedder != "" && (stored == embedder || strings.HasPrefix(stored, embedder+"+"))
}

// TurnVectorKinds are the kinds of vector keyed by a turn's id: DeleteTurn
// removes the turn's vector of each.
var TurnVectorKinds = []VectorKind{VectorTurn, VectorWindow, VectorPassage}

// Vector is the embedding of one turn or event, tagged with the embedder
// that produced it. A store keeps one vector per (kind, id): putting a
// vector from another embedder replaces it.
type Vector struct {
	Kind     VectorKind `json:"kind"`
	ID       string     `json:"id"`
	Embedder string     `json:"embedder"`
	Values   []float32  `json:"values"`
}

// Change is one entry of the history of derived records.
type Change struct {
	// Seq is assigned by the store, increasing within the space.
	Seq    int64  `json:"seq"`
	Kind   string `json:"kind"`   // "event", "annotation", "link", "turn", "profile"
	ID     string `json:"id"`     // id of the changed record
	Action string `json:"action"` // "create", "update", "delete"
	// Actor names who made the change: a producer string or "user".
	Actor  string          `json:"actor,omitempty"`
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	At     time.Time       `json:"at"`
}

// TurnQuery selects turns. The zero value selects all turns of the space.
// Results are ordered by Seq ascending.
type TurnQuery struct {
	// IDs restricts the result to these ids (missing ids are skipped).
	IDs []string
	// SessionID restricts the result to one session.
	SessionID string
	// RecordedBefore, when non-zero, keeps only turns recorded at or before
	// this time (replaying memory as it stood).
	RecordedBefore time.Time
	// AfterSeq keeps only turns with Seq > AfterSeq.
	AfterSeq int64
	// Limit caps the number of turns (0 = no limit).
	Limit int
}

// Stats summarises a space.
type Stats struct {
	Turns   int   `json:"turns"`
	Events  int   `json:"events"`
	Links   int   `json:"links"`
	LastSeq int64 `json:"last_seq"`
}

// Validate reports whether a turn can be stored: it needs an id.
func (t Turn) Validate() error {
	if t.ID == "" {
		return fmt.Errorf("%w: turn needs an id", ErrInvalid)
	}
	return nil
}

// Validate reports whether an annotation can be stored: it needs a turn id.
func (a Annotation) Validate() error {
	if a.TurnID == "" {
		return fmt.Errorf("%w: annotation needs a turn id", ErrInvalid)
	}
	return nil
}

// Validate reports whether an event can be stored: it needs an id.
func (e Event) Validate() error {
	if e.ID == "" {
		return fmt.Errorf("%w: event needs an id", ErrInvalid)
	}
	return nil
}

// Validate reports whether a link can be stored: it needs both ends and a
// confidence that is a number.
func (l Link) Validate() error {
	if l.Source == "" || l.Target == "" {
		return fmt.Errorf("%w: link needs a source and a target", ErrInvalid)
	}
	if math.IsNaN(l.Confidence) {
		return fmt.Errorf("%w: link confidence is NaN", ErrInvalid)
	}
	return nil
}

// Validate reports whether a vector can be stored: it needs a kind and an
// id.
func (v Vector) Validate() error {
	if v.Kind == "" || v.ID == "" {
		return fmt.Errorf("%w: vector needs a kind and an id (got %q, %q)", ErrInvalid, v.Kind, v.ID)
	}
	return nil
}

// Head is what Tx.Lock reports about a locked space.
type Head struct {
	// Version is the space's version when the transaction locked it (0
	// for a space never written or removed by DeleteSpace).
	Version int64 `json:"version"`
	// Next is the version the space has once the transaction commits;
	// it is larger than every version the store has handed out before.
	Next int64 `json:"next"`
	// LastSeq is the largest Seq stored in the space (0 when empty), as
	// the transaction sees it.
	LastSeq int64 `json:"last_seq"`
}

// Reader is the read side of a store, outside a transaction (Store) or
// inside one (Tx). All methods but Spaces take the space to read.
type Reader interface {
	// GetTurn returns one turn or ErrNotFound.
	GetTurn(ctx context.Context, space Space, id string) (Turn, error)
	// ListTurns returns the turns matching q, ordered by Seq.
	ListTurns(ctx context.Context, space Space, q TurnQuery) ([]Turn, error)
	// ListAnnotations returns the annotations of the given turns (all
	// annotations of the space when ids is nil). Turns without one are
	// skipped. Order is by the turns' Seq.
	ListAnnotations(ctx context.Context, space Space, ids []string) ([]Annotation, error)
	// ListEvents returns all events of the space ordered by CreatedAt, then ID.
	ListEvents(ctx context.Context, space Space) ([]Event, error)
	// ListLinks returns the links whose source or target is one of ids
	// (every link of the space when ids is nil), ordered by
	// (Source, Target, Relation).
	ListLinks(ctx context.Context, space Space, ids []string) ([]Link, error)
	// ListVectors returns the vectors of one kind made by one embedder,
	// ordered by ID. Vectors from other embedders are not returned.
	ListVectors(ctx context.Context, space Space, kind VectorKind, embedder string) ([]Vector, error)
	// History returns changes ordered by Seq. An empty kind or id matches
	// any.
	History(ctx context.Context, space Space, kind, id string) ([]Change, error)
	// Spaces lists the spaces that hold at least one turn or event, ordered
	// by (UserID, AgentID).
	Spaces(ctx context.Context) ([]Space, error)
	// Stats summarises one space.
	Stats(ctx context.Context, space Space) (Stats, error)
	// ListProfileRecords returns the profile records of one entity (every
	// record of the space when entity is empty), ordered by (Entity, ID).
	// Entities are compared exactly.
	ListProfileRecords(ctx context.Context, space Space, entity string) ([]ProfileRecord, error)
	// Changes returns what was written to space after version since (a
	// version SpaceVersion, Tx.Lock or an earlier Changes reported, or 0),
	// read in one snapshot: see "The journal" and the type Changes.
	// Vectors are those made by embedder and by the embedders derived from
	// it (see MadeBy), with the embedder each was made by; none when
	// embedder is empty.
	Changes(ctx context.Context, space Space, since int64, embedder string) (Changes, error)
}

// Writer is the write side of a store, only available inside Update.
type Writer interface {
	// PutTurn stores a new turn. It returns created=false and no error when
	// an identical turn (same id, speaker, text, session, occurred_raw,
	// attachments) is already stored, and ErrConflict when the stored turn
	// differs. RecordedAt and Seq of the stored turn are kept on a no-op.
	PutTurn(ctx context.Context, t Turn) (created bool, err error)
	// PutAnnotation stores or replaces the annotation of a stored turn
	// (ErrNotFound when the turn does not exist).
	PutAnnotation(ctx context.Context, space Space, a Annotation) error
	// PutEvent stores or replaces an event.
	PutEvent(ctx context.Context, e Event) error
	// DeleteEvent removes an event and its vector (ErrNotFound when absent).
	DeleteEvent(ctx context.Context, space Space, id string) error
	// PutLink stores or replaces the link keyed by (Source, Target,
	// Relation).
	PutLink(ctx context.Context, space Space, l Link) error
	// PutVectors stores or replaces vectors keyed by (Kind, ID).
	PutVectors(ctx context.Context, space Space, vs []Vector) error
	// AppendHistory records a change; the store assigns Seq (and At when
	// zero).
	AppendHistory(ctx context.Context, space Space, c Change) error
	// DeleteTurn removes a turn with its annotation, vectors (one of each
	// of TurnVectorKinds) and links, and every profile record that cites it
	// (ErrNotFound when absent). Event membership is the engine's business.
	DeleteTurn(ctx context.Context, space Space, id string) error
	// PutProfileRecord stores or replaces the profile record with r.ID
	// (ErrNotFound when a turn it cites is not stored in the space).
	PutProfileRecord(ctx context.Context, space Space, r ProfileRecord) error
	// DeleteProfileRecord removes a profile record (ErrNotFound when
	// absent).
	DeleteProfileRecord(ctx context.Context, space Space, id string) error
	// DeleteSpace removes every record of the space, history included.
	DeleteSpace(ctx context.Context, space Space) error
	// Lock takes the write lock of space for the rest of the transaction
	// and returns its Head (see "Versions and the write lock"). The space
	// gets its new version now, so a transaction that locks a space bumps
	// its version even if it writes nothing else. Calling Lock again in
	// the same transaction returns the same Version and Next, and the
	// LastSeq the transaction sees at that point.
	Lock(ctx context.Context, space Space) (Head, error)
	// RedactHistory replaces each Before and After that is not empty, of
	// the space's history entries with the given seqs, by note (nil clears
	// them), keeping their
	// Seq, Kind, ID, Action, Actor and At: that a change happened stays on
	// record, what it held goes. The engine calls it when a turn is
	// deleted. Seqs that do not exist are skipped.
	RedactHistory(ctx context.Context, space Space, seqs []int64, note json.RawMessage) error
}

// Tx is a read-write transaction. It must only be used inside the function
// passed to Update, from one goroutine. Its reads see its own writes, and
// no other writer's until it ends: the engine's import checks conflicts
// through it, and higmem migrate reads a whole store through it.
type Tx interface {
	Reader
	Writer
}

// Store is a memory backend. Implementations must be safe for concurrent
// use; Update calls may be serialised (one writer at a time).
type Store interface {
	Reader
	// SpaceVersion returns the version of space as last committed (0 for
	// a space never written or removed by DeleteSpace): one indexed read,
	// what a cache checks before serving from what it holds.
	SpaceVersion(ctx context.Context, space Space) (int64, error)
	// Update runs fn in a read-write transaction, committing when fn
	// returns nil and rolling back on an error or a panic (the panic is
	// re-raised after the rollback).
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Close releases the store. Further calls fail with ErrClosed.
	Close() error
}

// Purger is an optional capability of a Store: making deleted records
// unrecoverable from the store's files, beyond what a committed delete
// already hides from every reader. store/sqlite implements it (deleted
// content is zeroed as it is freed, and Purge checkpoints and truncates the
// write-ahead log, which still holds the old pages). The engine calls Purge
// after every delete when the store has it.
type Purger interface {
	// Purge makes the content of committed deletes unrecoverable from
	// the store's files. It fails with ErrPurgeBlocked when other readers
	// keep it from finishing for a while.
	Purge(ctx context.Context) error
}

// VectorsIntoReader is an optional capability of a Store: decoding stored
// vectors straight into a caller's row-major matrix, which saves a copy of
// every vector when a space loads. The engine uses it, when the store has
// it, for turn, window and event vectors (found by a type assertion, as
// database/sql finds the optional interfaces of a driver); without it the
// engine reads ListVectors. storetest checks it on every store that
// implements it.
type VectorsIntoReader interface {
	// VectorsInto decodes the vectors of one kind made by embedder into
	// dst, rows of dim float32s: the vector with id goes to row row(id).
	// Vectors whose row is negative or beyond dst, or of another
	// dimension, are skipped. It returns how many rows it wrote. A dim
	// that is not positive fails with ErrInvalid.
	VectorsInto(ctx context.Context, space Space, kind VectorKind, embedder string, dim int, dst []float32, row func(id string) int) (int, error)
}

// VectorSet names the vectors of one kind made by one embedder, and the
// row-major matrix VectorSetsInto decodes them into: the vector with id goes
// to row Row(id) of Dst, rows of Dim float32s. Vectors whose row is
// negative or beyond Dst, or of another dimension, are skipped, as
// VectorsInto skips them.
type VectorSet struct {
	// Kind and Embedder select the vectors.
	Kind     VectorKind
	Embedder string
	// Dim is the dimension of the vectors, and of Dst's rows.
	Dim int
	// Dst receives the vectors.
	Dst []float32
	// Row gives the row of the vector with id; negative skips it.
	Row func(id string) int
	// N is set by VectorSetsInto: how many rows it wrote.
	N int
}

// VectorSetsIntoReader is an optional capability of a Store: decoding the
// vectors of several kinds (or embedders) of a space straight into the
// caller's matrices, in one pass over what the store holds when that is
// cheaper than one VectorsInto per set. The engine uses it, when the store
// has it, to read the turn, window and event vectors of a space as it
// loads. storetest checks it on every store that implements it.
type VectorSetsIntoReader interface {
	// VectorSetsInto does what VectorsInto does for every set, setting
	// each set's N. The Row functions are called once per stored vector of
	// their set and dimension, in an order the store chooses, possibly
	// from several goroutines at once (each call with another id). Two
	// sets with the same kind and embedder, or a dim that is not
	// positive, fail with ErrInvalid.
	VectorSetsInto(ctx context.Context, space Space, sets []VectorSet) error
}

// TimeRefsReader is an optional capability of a Store: reading the time
// expressions of some turns' annotations alone, without the rest of the
// annotations and in no particular order, which spares a store the join
// with the turns, the sort and the decoding of every other column. The
// engine uses it, when the store has it, for the times it shows with the
// evidence of every question when a large space has not read its
// annotations; without it the engine reads ListAnnotations. storetest
// checks it on every store that implements it.
type TimeRefsReader interface {
	// ListTimeRefs returns, at index i, the TimeRefs of the annotation
	// of turn ids[i] (as ListAnnotations returns them): nil when the turn
	// has no annotation, or an annotation without time expressions.
	ListTimeRefs(ctx context.Context, space Space, ids []string) ([][]TimeRef, error)
}

// SpaceTimeRefsReader is an optional capability of a Store: reading the
// time expressions of every annotation of a space alone, without the rest
// of the annotations and in no particular order. The engine uses it, when
// the store has it, to hold the time expressions of a large space's turns
// from its load on (reading every annotation would cost the load far
// more), so that no question reads them from the store. storetest checks
// it on every store that implements it.
type SpaceTimeRefsReader interface {
	// EachTimeRefs calls fn, from the calling goroutine, once for every
	// turn of space whose annotation has time expressions, with the
	// turn's id and those (as ListAnnotations returns them; fn may keep
	// them), in no particular order. A turn whose annotation has none
	// may be left out or given an empty refs.
	EachTimeRefs(ctx context.Context, space Space, fn func(id string, refs []TimeRef)) error
}

// TimeRefsPlacer helps a TimeRefsReader fill its result: it returns a
// function that puts a turn's time expressions at every index of its id
// in ids (an id may repeat), by a scan of ids when they are few, else
// through a map.
func TimeRefsPlacer(ids []string, out [][]TimeRef) func(id string, refs []TimeRef) {
	if len(ids) <= 32 {
		return func(id string, refs []TimeRef) {
			for i, x := range ids {
				if x == id {
					out[i] = refs
				}
			}
		}
	}
	at := make(map[string][]int, len(ids))
	for i, x := range ids {
		at[x] = append(at[x], i)
	}
	return func(id string, refs []TimeRef) {
		for _, i := range at[id] {
			out[i] = refs
		}
	}
}

// EmbedderLister is an optional capability of a Store and of its Tx: naming
// the embedders whose vectors of one kind a space holds, which with
// ListVectors enumerates every stored vector. higmem migrate
// (internal/storecopy) needs it, through the transaction, to copy a store.
// A store that implements it implements it on its Tx too; storetest checks
// both on every store that does.
type EmbedderLister interface {
	// Embedders lists the embedders that made vectors of kind in space,
	// each once, sorted.
	Embedders(ctx context.Context, space Space, kind VectorKind) ([]string, error)
}

// Watcher is an optional capability of a Store: telling, as soon as they
// commit, of the writes of every process sharing the database (store/postgres
// has it, through LISTEN/NOTIFY). The engine uses it to bring cached spaces up
// to date before they are next read. Notifications are a hint: one may be
// missed (while Watch is not running, or when the connection breaks), so a
// cache must still compare SpaceVersion before it serves a read.
type Watcher interface {
	// Watch calls changed, on one goroutine, with each space that an
	// Update committed by any process (this one included) wrote, until ctx
	// ends (it then returns ctx's error) or its connection fails (it
	// returns that error; call it again to go on watching).
	Watch(ctx context.Context, changed func(Space)) error
}
