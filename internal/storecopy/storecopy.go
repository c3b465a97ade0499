// Package storecopy copies every record of one store.Store into another,
// all or nothing, and checks the copy by record counts and a checksum of
// the content computed the same way on both sides. higmem migrate is built
// on it (SQLite to PostgreSQL and back, or any store to any store).
package storecopy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"

	"github.com/higmem/higmem/store"
)

// ErrNotEmpty is returned by Copy when the destination already holds a
// space.
var ErrNotEmpty = errors.New("storecopy: the destination store is not empty")

// ErrMismatch is returned by Copy when the copy does not have the source's
// counts or checksum; nothing was written.
var ErrMismatch = errors.New("storecopy: the copy differs from the source")

// Summary describes the content of a store: record counts and the SHA-256
// of a canonical encoding of every record.
type Summary struct {
	Spaces      int    `json:"spaces"`
	Turns       int    `json:"turns"`
	Annotations int    `json:"annotations"`
	Events      int    `json:"events"`
	Links       int    `json:"links"`
	Vectors     int    `json:"vectors"`
	Changes     int    `json:"changes"`
	Profiles    int    `json:"profiles"`
	SHA256      string `json:"sha256"`
}

// String renders the counts and the checksum on one line.
func (s Summary) String() string {
	return fmt.Sprintf("%d spaces, %d turns, %d annotations, %d events, %d links, %d vectors, %d changes, %d profile records, sha256 %s",
		s.Spaces, s.Turns, s.Annotations, s.Events, s.Links, s.Vectors, s.Changes, s.Profiles, s.SHA256)
}

// space is everything stored in one space.
type space struct {
	sp          store.Space
	turns       []store.Turn
	annotations []store.Annotation
	events      []store.Event
	links       []store.Link
	vectors     [][]store.Vector // one list per (kind, embedder), in sorted order
	history     []store.Change
	profiles    []store.ProfileRecord
}

// vectorKinds are the kinds of vector a store holds.
var vectorKinds = []store.VectorKind{store.VectorEvent, store.VectorPassage, store.VectorTurn, store.VectorWindow}

// readSpace reads every record of sp through r.
func readSpace(ctx context.Context, r store.Reader, sp store.Space) (*space, error) {
	x := &space{sp: sp}
	var err error
	if x.turns, err = r.ListTurns(ctx, sp, store.TurnQuery{}); err != nil {
		return nil, err
	}
	if x.annotations, err = r.ListAnnotations(ctx, sp, nil); err != nil {
		return nil, err
	}
	if x.events, err = r.ListEvents(ctx, sp); err != nil {
		return nil, err
	}
	if x.links, err = r.ListLinks(ctx, sp, nil); err != nil {
		return nil, err
	}
	el, ok := r.(store.EmbedderLister)
	if !ok {
		return nil, fmt.Errorf("storecopy: a %T cannot list the embedders of its vectors (store.EmbedderLister)", r)
	}
	for _, k := range vectorKinds {
		ems, err := el.Embedders(ctx, sp, k)
		if err != nil {
			return nil, err
		}
		for _, em := range ems {
			vs, err := r.ListVectors(ctx, sp, k, em)
			if err != nil {
				return nil, err
			}
			x.vectors = append(x.vectors, vs)
		}
	}
	if x.history, err = r.History(ctx, sp, "", ""); err != nil {
		return nil, err
	}
	if x.profiles, err = r.ListProfileRecords(ctx, sp, ""); err != nil {
		return nil, err
	}
	return x, nil
}

// Digest reads every space of r and summarises it. Spaces that hold no
// turn and no event are not listed by store.Reader.Spaces, and so neither
// counted nor copied.
func Digest(ctx context.Context, r store.Reader) (Summary, error) {
	sps, err := r.Spaces(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("storecopy: listing spaces: %w", err)
	}
	d := newDigester()
	for _, sp := range sps {
		x, err := readSpace(ctx, r, sp)
		if err != nil {
			return Summary{}, fmt.Errorf("storecopy: reading %s: %w", sp, err)
		}
		d.add(x)
	}
	return d.sum(), nil
}

// Options tunes Copy.
type Options struct {
	// Progress, when set, is called before each space is copied with its
	// position and the number of spaces.
	Progress func(sp store.Space, i, n int)
	// VectorBatch is the number of vectors stored per PutVectors call
	// (default 1000).
	VectorBatch int
}

// Copy copies every space of src into dst, which must be empty, in one
// transaction of each store: src is read inside src.Update (which holds
// its write lock, so that no writer changes it meanwhile, and writes
// nothing), dst is written inside dst.Update. Before dst's transaction
// commits, the copy is read back through it and summarised; unless its
// summary equals src's, nothing is committed and the error wraps
// ErrMismatch. It returns the summary both sides share.
func Copy(ctx context.Context, dst, src store.Store, opts Options) (Summary, error) {
	if opts.VectorBatch <= 0 {
		opts.VectorBatch = 1000
	}
	var sum Summary
	errDone := errors.New("done") // rolls the read-only source transaction back
	err := src.Update(ctx, func(stx store.Tx) error {
		sps, err := stx.Spaces(ctx)
		if err != nil {
			return fmt.Errorf("storecopy: listing the source's spaces: %w", err)
		}
		err = dst.Update(ctx, func(dtx store.Tx) error {
			have, err := dtx.Spaces(ctx)
			if err != nil {
				return fmt.Errorf("storecopy: listing the destination's spaces: %w", err)
			}
			if len(have) > 0 {
				return fmt.Errorf("%w: it holds %d spaces (first %s)", ErrNotEmpty, len(have), have[0])
			}
			want := newDigester()
			for i, sp := range sps {
				if opts.Progress != nil {
					opts.Progress(sp, i, len(sps))
				}
				x, err := readSpace(ctx, stx, sp)
				if err != nil {
					return fmt.Errorf("storecopy: reading %s: %w", sp, err)
				}
				want.add(x)
				if err := write(ctx, dtx, x, opts.VectorBatch); err != nil {
					return fmt.Errorf("storecopy: writing %s: %w", sp, err)
				}
			}
			sum = want.sum()
			got, err := Digest(ctx, dtx)
			if err != nil {
				return err
			}
			if got != sum {
				return fmt.Errorf("%w:\n  source: %s\n  copy:   %s", ErrMismatch, sum, got)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return errDone
	})
	if !errors.Is(err, errDone) {
		return Summary{}, err
	}
	return sum, nil
}

// write stores the records of x through tx.
func write(ctx context.Context, tx store.Tx, x *space, batch int) error {
	for _, t := range x.turns {
		t.Space = x.sp
		if _, err := tx.PutTurn(ctx, t); err != nil {
			return err
		}
	}
	for _, a := range x.annotations {
		if err := tx.PutAnnotation(ctx, x.sp, a); err != nil {
			return err
		}
	}
	for _, e := range x.events {
		e.Space = x.sp
		if err := tx.PutEvent(ctx, e); err != nil {
			return err
		}
	}
	for _, l := range x.links {
		if err := tx.PutLink(ctx, x.sp, l); err != nil {
			return err
		}
	}
	turnPos, eventPos := positions(x)
	for _, vs := range x.vectors {
		vs = inRecordOrder(vs, turnPos, eventPos)
		for len(vs) > 0 {
			n := min(batch, len(vs))
			if err := tx.PutVectors(ctx, x.sp, vs[:n]); err != nil {
				return err
			}
			vs = vs[n:]
		}
	}
	for _, c := range x.history {
		if err := tx.AppendHistory(ctx, x.sp, c); err != nil {
			return err
		}
	}
	for _, p := range x.profiles {
		if err := tx.PutProfileRecord(ctx, x.sp, p); err != nil {
			return err
		}
	}
	return nil
}

// digester hashes records in a canonical form: one JSON line per record,
// tagged with its kind, in the order the Reader returns them (which the
// store contract fixes), vectors as their little-endian bits. Strings are
// compared as every store can hold them: bytes that are not UTF-8 and NUL
// characters count as U+FFFD (PostgreSQL text holds neither).
type digester struct {
	h   hash.Hash
	s   Summary
	buf bytes.Buffer
}

func newDigester() *digester { return &digester{h: sha256.New()} }

// record hashes one record.
func (d *digester) record(tag string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Records read from a store always marshal; hash the error so
		// that a failure cannot look like a match.
		b = []byte(fmt.Sprintf("%q", err.Error()))
	}
	d.buf.Reset()
	d.buf.WriteString(tag)
	d.buf.WriteByte(' ')
	writeNoNUL(&d.buf, b)
	d.buf.WriteByte('\n')
	d.h.Write(d.buf.Bytes())
}

func (d *digester) add(x *space) {
	d.s.Spaces++
	d.record("space", x.sp)
	for _, t := range x.turns {
		d.record("turn", t)
	}
	for _, a := range x.annotations {
		d.record("annotation", a)
	}
	for _, e := range x.events {
		if len(e.TurnIDs) == 0 {
			e.TurnIDs = nil // nil and empty are the same list
		}
		d.record("event", e)
	}
	for _, l := range x.links {
		d.record("link", l)
	}
	for _, vs := range x.vectors {
		for _, v := range vs {
			d.record("vector", struct {
				Kind     store.VectorKind
				ID       string
				Embedder string
				Dim      int
			}{v.Kind, v.ID, v.Embedder, len(v.Values)})
			var b [4]byte
			for _, f := range v.Values {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(f))
				d.h.Write(b[:])
			}
		}
		d.s.Vectors += len(vs)
	}
	for _, c := range x.history {
		d.record("change", c)
	}
	for _, p := range x.profiles {
		d.record("profile", p)
	}
	d.s.Turns += len(x.turns)
	d.s.Annotations += len(x.annotations)
	d.s.Events += len(x.events)
	d.s.Links += len(x.links)
	d.s.Changes += len(x.history)
	d.s.Profiles += len(x.profiles)
}

func (d *digester) sum() Summary {
	s := d.s
	s.SHA256 = hex.EncodeToString(d.h.Sum(nil))
	return s
}

// writeNoNUL writes JSON b with each \u0000 escape (a NUL character in a
// string) written as U+FFFD, and each \ufffd escape (what encoding/json
// writes for a byte that is not UTF-8) as U+FFFD itself, as the character
// is written when a store holds it.
func writeNoNUL(w *bytes.Buffer, b []byte) {
	for i := 0; i < len(b); {
		if b[i] != '\\' || i+1 >= len(b) {
			w.WriteByte(b[i])
			i++
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) && (string(b[i+2:i+6]) == "0000" || string(b[i+2:i+6]) == "fffd") {
			w.WriteString("\uFFFD")
			i += 6
			continue
		}
		w.Write(b[i : i+2]) // an escape pair: never the start of \u0000
		i += 2
	}
}

// positions returns the position of each of x's turns and events by id.
func positions(x *space) (turns, events map[string]int) {
	turns = make(map[string]int, len(x.turns))
	for i, t := range x.turns {
		turns[t.ID] = i
	}
	events = make(map[string]int, len(x.events))
	for i, e := range x.events {
		events[e.ID] = i
	}
	return turns, events
}

// inRecordOrder returns vs (one kind) in the order of the records they
// belong to: turn and window vectors as the turns (turnPos), event vectors
// as the events (eventPos), vectors of no such record last, in their own
// order. The stores keep rows in the order they are written, so the copy
// holds its vectors as a space built by adding turns does, and a load
// reads them already in place (the engine puts each row at its record's
// position). The lists come in id order, which sequence ids make
// different (t10 before t9).
func inRecordOrder(vs []store.Vector, turnPos, eventPos map[string]int) []store.Vector {
	if len(vs) == 0 {
		return vs
	}
	pos := turnPos
	if vs[0].Kind == store.VectorEvent {
		pos = eventPos
	}
	at := func(v store.Vector) int {
		if p, ok := pos[v.ID]; ok {
			return p
		}
		return math.MaxInt
	}
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b store.Vector) int { return cmp.Compare(at(a), at(b)) })
	return out
}
