package higmem

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
	"github.com/higmem/higmem/store/postgres"
	"github.com/higmem/higmem/store/sqlite"
)

// refWindowText is the window of turns[i] written out plainly: the turns
// before it in its session, nearest first, while they hold fewer than 30
// words and are fewer than 4, then the turn; one "speaker: content" line
// each, oldest first.
func refWindowText(turns []store.Turn, i int) string {
	lines := []string{turns[i].Speaker + ": " + content(turns[i])}
	words := 0
	for j := i - 1; j >= 0 && i-j <= 4 && words < 30 && turns[j].SessionID == turns[i].SessionID && turns[j+1].SessionID == turns[i].SessionID; j-- {
		lines = append([]string{turns[j].Speaker + ": " + content(turns[j])}, lines...)
		words += len(strings.Fields(content(turns[j])))
	}
	return strings.Join(lines, "\n")
}

// windowInputs are three sessions of short and long messages, bursts
// included.
func windowInputs() []TurnInput {
	texts := []string{
		"Hi!", "Hey, how was the trip to Lisbon with your sister last week?", "Great.", "We ate so much.",
		"The pastries near the old tram line were the best thing I had all year, honestly, and we went back twice.",
		"Ha", "nice", "Did you see the castle?", "Yes, on the last day, the view over the river was amazing and the weather held.",
		"ok", "Next time I want to take the train down to the coast and stay for a few days at least.",
		"Sounds good", "Let me know when", "Will do!",
	}
	var in []TurnInput
	for i, text := range texts {
		in = append(in, TurnInput{ID: fmt.Sprintf("t%02d", i), SessionID: fmt.Sprint("s", i/5), Speaker: []string{"Ana", "Ben"}[i%3%2], Text: text})
	}
	return in
}

// storedWindows returns the window vectors stored for sp by emb's memory.
func storedWindows(t *testing.T, s store.Store, sp Space, m *Memory) map[string][]float32 {
	t.Helper()
	vs, err := s.ListVectors(context.Background(), sp, store.VectorWindow, windowEmbedder(m.opts.Embedder))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, v := range vs {
		out[v.ID] = v.Values
	}
	return out
}

// checkWindows checks that every turn of sp has, in the store and in the
// loaded state, the window vector of its window among the turns there now.
func checkWindows(t *testing.T, s store.Store, sp Space, m *Memory) {
	t.Helper()
	ctx := context.Background()
	// The state first: loading embeds and stores missing windows.
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := s.ListTurns(ctx, sp, store.TurnQuery{})
	if err != nil {
		t.Fatal(err)
	}
	stored := storedWindows(t, s, sp, m)
	if len(stored) != len(turns) {
		t.Errorf("%d window vectors stored for %d turns", len(stored), len(turns))
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.winVec.Rows() != len(turns) {
		t.Fatalf("%d window rows loaded for %d turns", st.winVec.Rows(), len(turns))
	}
	for i := range turns {
		text := refWindowText(turns, i)
		want, err := m.embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(stored[turns[i].ID], want[0]) {
			t.Errorf("turn %s: the stored window vector is not that of %q", turns[i].ID, text)
		}
		if !slices.Equal(st.winVec.Row(i), want[0]) {
			t.Errorf("turn %s: the loaded window vector is not that of %q", turns[i].ID, text)
		}
	}
}

// windowStores are the stores the window tests run on: memstore, SQLite
// and PostgreSQL (skipped without a test server).
var windowStores = map[string]func(t *testing.T) store.Store{
	"memstore": func(*testing.T) store.Store { return memstore.New() },
	"sqlite": func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
	"postgres": func(t *testing.T) store.Store {
		dsn, schema := pgtest.Schema(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
}

// windowMemory opens a store with mk and an offline memory on it with the
// hashing embedder and the given batch size, closed when t ends.
func windowMemory(t *testing.T, mk func(t *testing.T) store.Store, batch int) (store.Store, *Memory) {
	t.Helper()
	s := mk(t)
	t.Cleanup(func() { s.Close() })
	m, err := Open(t.Context(), Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(64), BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return s, m
}

// TestWindowVectors adds turns in batches that cut sessions and bursts at
// different places and checks every window vector against the plain
// definition, in the store and in the working set; a fresh memory loads
// them; window vectors of another definition are made again and stored.
func TestWindowVectors(t *testing.T) {
	ctx := context.Background()
	for name, mk := range windowStores {
		t.Run(name, func(t *testing.T) {
			s, m := windowMemory(t, mk, 3)
			sp := Space{UserID: "win"}
			in := windowInputs()
			// One turn, then two, then the rest: windows reach back into
			// earlier batches.
			for _, part := range [][]TurnInput{in[:1], in[1:3], in[3:]} {
				if _, err := m.Add(ctx, sp, part); err != nil {
					t.Fatal(err)
				}
			}
			checkWindows(t, s, sp, m)
			fresh, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(64)})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			checkWindows(t, s, sp, fresh)

			// Window vectors made under another definition (another
			// embedder id) are not read: a fresh memory embeds and stores
			// them again.
			var old []store.Vector
			for id, v := range storedWindows(t, s, sp, m) {
				old = append(old, store.Vector{Kind: store.VectorWindow, ID: id, Embedder: "hashing-64+window-old", Values: v})
			}
			if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutVectors(ctx, sp, old) }); err != nil {
				t.Fatal(err)
			}
			if n := len(storedWindows(t, s, sp, m)); n != 0 {
				t.Fatalf("%d window vectors of the current definition left", n)
			}
			again, err := Open(ctx, Options{Mode: ModeOffline, Store: s, Embedder: hashing.New(64)})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			checkWindows(t, s, sp, again)
		})
	}
}

// TestDeleteReembedsWindows deletes turns and checks that the windows that
// held them are embedded again without them: no window vector keeps a
// deleted turn's text (TestDeleteForgets checks the texts).
func TestDeleteReembedsWindows(t *testing.T) {
	ctx := context.Background()
	for name, mk := range windowStores {
		t.Run(name, func(t *testing.T) {
			s, m := windowMemory(t, mk, 4)
			sp := Space{UserID: "win"}
			if _, err := m.Add(ctx, sp, windowInputs()); err != nil {
				t.Fatal(err)
			}
			before := storedWindows(t, s, sp, m)
			// A short turn (several windows hold it), a long one, the
			// first of a session and the last of the space.
			for _, id := range []string{"t06", "t04", "t10", "t13"} {
				if err := m.Delete(ctx, sp, id); err != nil {
					t.Fatal(err)
				}
				checkWindows(t, s, sp, m)
			}
			after := storedWindows(t, s, sp, m)
			changed := 0
			for id, v := range after {
				if !slices.Equal(v, before[id]) {
					changed++
				}
			}
			if changed == 0 {
				t.Error("no window vector changed: the test proves nothing")
			}
		})
	}
}

// TestWindowHiddenTurns checks that a question that may not see a turn
// (a filter) does not read it through the windows that hold it: those
// turns get their own cosine, the others their window's.
func TestWindowHiddenTurns(t *testing.T) {
	ctx := context.Background()
	m, err := Open(ctx, Options{Mode: ModeOffline, Embedder: hashing.New(64)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp := Space{UserID: "win"}
	if _, err := m.Add(ctx, sp, windowInputs()); err != nil {
		t.Fatal(err)
	}
	st, err := m.state(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	q := questionFor(ctx, t, m, st, "How was the trip to Lisbon?")
	st.mu.RLock()
	defer st.mu.RUnlock()
	hidden := st.pos["t06"]
	q.keepTurn = func(i int) bool { return i != hidden }
	f := q.offlineFeaturesW(1)
	held := 0
	for i := range st.turns {
		own := float64(vec.Dot(q.qv, st.turnVec.Row(i)))
		win := float64(vec.Dot(q.qv, st.winVec.Row(i)))
		holds := int(st.info.winStart[i]) <= hidden && hidden <= i
		want := win
		if holds {
			want = own
			held++
		}
		if f.Dense[i] != want {
			t.Errorf("turn %s (window holds the hidden turn: %v): dense %v, want %v", st.turns[i].ID, holds, f.Dense[i], want)
		}
	}
	if held < 2 {
		t.Errorf("%d windows hold the hidden turn: the test proves little", held)
	}
}
