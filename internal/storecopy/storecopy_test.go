package storecopy_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/storecopy"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openPostgres(t *testing.T) *postgres.Store {
	t.Helper()
	dsn, schema := pgtest.Schema(t)
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var at = time.Date(2024, 4, 6, 10, 30, 0, 123456789, time.UTC)

// fill writes every kind of record into two spaces, with text no
// PostgreSQL column holds as is (invalid UTF-8, NUL).
func fill(t *testing.T, s store.Store) {
	t.Helper()
	err := s.Update(t.Context(), func(tx store.Tx) error {
		for si, sp := range []store.Space{{UserID: "alice", AgentID: "bot"}, {UserID: "bob"}} {
			for i := range 5 {
				id := fmt.Sprintf("D%d:%d", si, i)
				tr := store.Turn{Space: sp, ID: id, SessionID: "S1", Seq: int64(i + 1), Speaker: "Alice",
					Text: fmt.Sprintf("turn %d caf\xe9 with a NUL \x00 here", i), OccurredAt: at.Add(time.Duration(i) * time.Minute),
					OccurredRaw: "6 April 2024", RecordedAt: at, Metadata: map[string]string{"k": "v\x00"},
					Attachments: []store.Attachment{{Kind: "image", Caption: "a \xff cat"}}}
				if _, err := tx.PutTurn(t.Context(), tr); err != nil {
					return err
				}
				if err := tx.PutAnnotation(t.Context(), sp, store.Annotation{TurnID: id, Keywords: []string{"cat", "x\x00"},
					Context: "ctx", Producer: "offline", UpdatedAt: at,
					TimeRefs: []store.TimeRef{{Text: "today", Start: at, End: at.Add(time.Hour)}}}); err != nil {
					return err
				}
				if err := tx.PutVectors(t.Context(), sp, []store.Vector{
					{Kind: store.VectorTurn, ID: id, Embedder: "e1", Values: []float32{float32(i), -1, 0.5}},
					{Kind: store.VectorEvent, ID: "E" + id, Embedder: "e2", Values: []float32{1, 2}},
				}); err != nil {
					return err
				}
			}
			if err := tx.PutEvent(t.Context(), store.Event{Space: sp, ID: "e1", Title: "Cat", TurnIDs: []string{"D0:0"},
				Facts: []store.Fact{{Text: "has a cat", TurnID: "D0:0"}}, Version: 2, CreatedAt: at, Start: at}); err != nil {
				return err
			}
			if err := tx.PutEvent(t.Context(), store.Event{Space: sp, ID: "e2", Title: "Empty"}); err != nil {
				return err
			}
			if err := tx.PutProfileRecord(t.Context(), sp, store.ProfileRecord{ID: "p1", Entity: "Alice", Attribute: "pet",
				Value: "Caf\xe9 (cat) \x00", TurnIDs: []string{fmt.Sprintf("D%d:1", si), fmt.Sprintf("D%d:0", si)},
				StatedAt: at, Producer: "llm:default:p2", CreatedAt: at}); err != nil {
				return err
			}
			if err := tx.PutLink(t.Context(), sp, store.Link{Source: "D0:1", Target: "D0:0", Relation: "answer_to", Confidence: 0.5, CreatedAt: at}); err != nil {
				return err
			}
			for _, a := range []string{"create", "update"} {
				if err := tx.AppendHistory(t.Context(), sp, store.Change{Kind: "event", ID: "e1", Action: a, Actor: "offline",
					After: json.RawMessage(`{"title": "Cat"}`), At: at}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCopyBetweenBackends(t *testing.T) {
	type opener func(t *testing.T) store.Store
	lite := func(t *testing.T) store.Store { return openSQLite(t) }
	pg := func(t *testing.T) store.Store { return openPostgres(t) }
	cases := []struct {
		name          string
		from, via, to opener
		needsPostgres bool
	}{
		{"sqlite-sqlite-sqlite", lite, lite, lite, false},
		{"sqlite-postgres-sqlite", lite, pg, lite, true},
		{"postgres-sqlite-postgres", pg, lite, pg, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsPostgres {
				pgtest.DSN(t)
			}
			a, b, c := tc.from(t), tc.via(t), tc.to(t)
			fill(t, a)
			want, err := storecopy.Digest(t.Context(), a)
			if err != nil {
				t.Fatal(err)
			}
			if want.Spaces != 2 || want.Turns != 10 || want.Annotations != 10 || want.Events != 4 || want.Links != 2 ||
				want.Vectors != 20 || want.Changes != 4 || want.Profiles != 2 {
				t.Fatalf("source summary %s", want)
			}
			for _, step := range []struct{ dst, src store.Store }{{b, a}, {c, b}} {
				got, err := storecopy.Copy(t.Context(), step.dst, step.src, storecopy.Options{VectorBatch: 3})
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("copy summary %s, want %s", got, want)
				}
				if after, err := storecopy.Digest(t.Context(), step.dst); err != nil || after != want {
					t.Fatalf("committed copy: %s, %v; want %s", after, err, want)
				}
			}
			// Record by record, the last store holds what the first does
			// (bar the text every store holds alike, compared above).
			for _, sp := range []store.Space{{UserID: "alice", AgentID: "bot"}, {UserID: "bob"}} {
				for _, kind := range []store.VectorKind{store.VectorTurn, store.VectorEvent} {
					for _, em := range []string{"e1", "e2"} {
						va, _ := a.ListVectors(t.Context(), sp, kind, em)
						vc, err := c.ListVectors(t.Context(), sp, kind, em)
						if err != nil || !cmp.Equal(va, vc, cmpopts.EquateEmpty()) {
							t.Errorf("%s %s/%s vectors differ: %v\n%s", sp, kind, em, err, cmp.Diff(va, vc))
						}
					}
				}
				ea, _ := a.ListEvents(t.Context(), sp)
				ec, err := c.ListEvents(t.Context(), sp)
				if err != nil || !cmp.Equal(ea, ec, cmpopts.EquateEmpty()) {
					t.Errorf("%s events differ: %v\n%s", sp, err, cmp.Diff(ea, ec, cmpopts.EquateEmpty()))
				}
				ha, _ := a.History(t.Context(), sp, "", "")
				hc, err := c.History(t.Context(), sp, "", "")
				if err != nil || !cmp.Equal(ha, hc) {
					t.Errorf("%s history differs: %v\n%s", sp, err, cmp.Diff(ha, hc))
				}
			}
		})
	}
}

func TestCopyRefusesNonEmpty(t *testing.T) {
	a, b := openSQLite(t), openSQLite(t)
	fill(t, a)
	fill(t, b)
	before, err := storecopy.Digest(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storecopy.Copy(t.Context(), b, a, storecopy.Options{})
	if !errors.Is(err, storecopy.ErrNotEmpty) {
		t.Fatalf("Copy into a non-empty store = %v, want ErrNotEmpty", err)
	}
	if after, _ := storecopy.Digest(t.Context(), b); after != before {
		t.Errorf("refused copy changed the destination: %s, was %s", after, before)
	}
}

// lossy is a store whose writes lose something: a link's confidence.
type lossy struct{ store.Store }

func (l lossy) Update(ctx context.Context, fn func(store.Tx) error) error {
	return l.Store.Update(ctx, func(tx store.Tx) error { return fn(lossyTx{tx}) })
}

type lossyTx struct{ store.Tx }

func (t lossyTx) PutLink(ctx context.Context, sp store.Space, l store.Link) error {
	l.Confidence = 0.25
	return t.Tx.PutLink(ctx, sp, l)
}

// Embedders passes the capability through the wrapper.
func (t lossyTx) Embedders(ctx context.Context, sp store.Space, kind store.VectorKind) ([]string, error) {
	return t.Tx.(interface {
		Embedders(context.Context, store.Space, store.VectorKind) ([]string, error)
	}).Embedders(ctx, sp, kind)
}

func TestCopyDetectsMismatch(t *testing.T) {
	a, b := openSQLite(t), openSQLite(t)
	fill(t, a)
	_, err := storecopy.Copy(t.Context(), lossy{b}, a, storecopy.Options{})
	if !errors.Is(err, storecopy.ErrMismatch) {
		t.Fatalf("Copy through a lossy store = %v, want ErrMismatch", err)
	}
	if sps, err := b.Spaces(t.Context()); err != nil || len(sps) != 0 {
		t.Errorf("mismatched copy was committed: %v, %v", sps, err)
	}
}

// The checksum sees every field: changing one record changes it.
func TestDigestSeesChanges(t *testing.T) {
	a := openSQLite(t)
	fill(t, a)
	before, err := storecopy.Digest(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	sp := store.Space{UserID: "bob"}
	err = a.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutVectors(t.Context(), sp, []store.Vector{{Kind: store.VectorTurn, ID: "D1:2", Embedder: "e1", Values: []float32{2, -1, 0.50000006}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := storecopy.Digest(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	if after.SHA256 == before.SHA256 {
		t.Error("changing one bit of one vector left the checksum alone")
	}
	if after.Vectors != before.Vectors {
		t.Errorf("vector count changed by a replacement: %d, was %d", after.Vectors, before.Vectors)
	}
}

// TestCopyWritesVectorsInRecordOrder: the copy's vectors table holds each
// kind's rows in the order of their turns (events), as a space built by
// adding turns does, not in the id order the source lists them in
// ("t10" before "t9"), so that a load of the copy moves no row.
func TestCopyWritesVectorsInRecordOrder(t *testing.T) {
	src := openSQLite(t)
	sp := store.Space{UserID: "alice"}
	ids := []string{"t8", "t9", "t10", "t11"}
	err := src.Update(t.Context(), func(tx store.Tx) error {
		for i, id := range ids {
			if _, err := tx.PutTurn(t.Context(), store.Turn{Space: sp, ID: id, SessionID: "S1", Seq: int64(i + 1), Speaker: "Alice",
				Text: "turn " + id, OccurredAt: at, RecordedAt: at}); err != nil {
				return err
			}
		}
		for _, id := range []string{"e10", "e9"} {
			if err := tx.PutEvent(t.Context(), store.Event{Space: sp, ID: id, Title: id, TurnIDs: []string{"t8"}, CreatedAt: at}); err != nil {
				return err
			}
		}
		// Written in id order, as the copy reads them.
		for _, id := range []string{"t10", "t11", "t8", "t9"} {
			if err := tx.PutVectors(t.Context(), sp, []store.Vector{
				{Kind: store.VectorWindow, ID: id, Embedder: "e", Values: []float32{1, 2}},
				{Kind: store.VectorTurn, ID: id, Embedder: "e", Values: []float32{1, 2}},
			}); err != nil {
				return err
			}
		}
		return tx.PutVectors(t.Context(), sp, []store.Vector{
			{Kind: store.VectorEvent, ID: "e10", Embedder: "e", Values: []float32{3, 4}},
			{Kind: store.VectorEvent, ID: "e9", Embedder: "e", Values: []float32{3, 4}},
			{Kind: store.VectorEvent, ID: "e-gone", Embedder: "e", Values: []float32{3, 4}},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	dst, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storecopy.Copy(t.Context(), dst, src, storecopy.Options{VectorBatch: 3}); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	events, _ := src.ListEvents(t.Context(), sp)
	var evIDs []string
	for _, e := range events {
		evIDs = append(evIDs, e.ID)
	}
	for kind, want := range map[store.VectorKind][]string{
		store.VectorTurn:   ids,
		store.VectorWindow: ids,
		store.VectorEvent:  append(evIDs, "e-gone"),
	} {
		rows, err := db.QueryContext(t.Context(), `SELECT id FROM vectors WHERE kind = ? ORDER BY rowid`, string(kind))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s vectors in the copy's table order %q, want %q", kind, got, want)
		}
	}
}
