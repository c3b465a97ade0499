package higmem_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/spacecheck"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

// TestImportKeepsEveryTurnInAnEvent: importing an export into another,
// non-empty space, and re-importing an old export of a space that has
// grown since, leave every stored turn in an event.
func TestImportKeepsEveryTurnInAnEvent(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	m, err := higmem.Open(ctx, higmem.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	add := func(sp higmem.Space, prefix string, from, to int) {
		t.Helper()
		var in []higmem.TurnInput
		for i := from; i < to; i++ {
			in = append(in, higmem.TurnInput{ID: fmt.Sprintf("%s%d", prefix, i), SessionID: fmt.Sprintf("s%d", i/10), Speaker: "Ann",
				Text: fmt.Sprintf("%s note %d: I planted %d tomatoes and walked the dog by the river.", prefix, i, i)})
		}
		if _, err := m.Add(ctx, sp, in); err != nil {
			t.Fatal(err)
		}
	}
	export := func(sp higmem.Space) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := m.Export(ctx, sp, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	check := func(sp higmem.Space, turns int) {
		t.Helper()
		for _, err := range spacecheck.Check(ctx, st, store.Space(sp), spacecheck.Want{Turns: turns, InEvent: true}) {
			t.Errorf("%s: %v", sp, err)
		}
	}
	a, b := higmem.Space{UserID: "a"}, higmem.Space{UserID: "b"}
	add(a, "a", 0, 30)
	add(b, "b", 0, 30)
	before, err := m.Events(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Import(ctx, b, bytes.NewReader(export(a))); err != nil {
		t.Fatal(err)
	}
	check(b, 60)
	after, err := m.Events(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) {
		t.Errorf("import from another space: %d events before, %d after; its events must be added, not replace b's", len(before), len(after))
	}

	old := export(a)
	add(a, "a", 30, 32)
	if _, err := m.Import(ctx, a, bytes.NewReader(old)); err != nil {
		t.Fatal(err)
	}
	check(a, 32)
}

// TestImportReplacingAnEventEmbedsItAgain: a restore that replaces an
// event's text leaves no vector of the old text: the event is embedded
// again, as in a space the same export was imported into from empty.
func TestImportReplacingAnEventEmbedsItAgain(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	emb := hashing.New(0)
	m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sp, empty := higmem.Space{UserID: "ann"}, higmem.Space{UserID: "ann2"}
	var in []higmem.TurnInput
	for i := range 6 {
		in = append(in, higmem.TurnInput{ID: fmt.Sprintf("t%d", i), Speaker: "Ann", Text: fmt.Sprintf("Note %d: I planted tomatoes by the river.", i)})
	}
	if _, err := m.Add(ctx, sp, in); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Export(ctx, sp, &buf); err != nil {
		t.Fatal(err)
	}
	// The export with every event's summary rewritten.
	var edited bytes.Buffer
	for line := range bytes.Lines(buf.Bytes()) {
		var l map[string]any
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		if e, ok := l["event"].(map[string]any); ok {
			e["summary"] = "The garden by the river flooded in March and every seedling drowned."
			e["keywords"] = []string{"flood", "garden"}
		}
		b, _ := json.Marshal(l)
		edited.Write(append(b, '\n'))
	}
	for _, s := range []higmem.Space{sp, empty} {
		if _, err := m.Import(ctx, s, bytes.NewReader(edited.Bytes())); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Events(ctx, s); err != nil { // loads the space: missing vectors are made
			t.Fatal(err)
		}
	}
	restored, err := st.ListVectors(ctx, sp, store.VectorEvent, emb.ID())
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := st.ListVectors(ctx, empty, store.VectorEvent, emb.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(restored) == 0 || len(restored) != len(fresh) {
		t.Fatalf("%d event vectors after the restore, %d after an import into an empty space", len(restored), len(fresh))
	}
	for i := range restored {
		if restored[i].ID != fresh[i].ID || !slices.Equal(restored[i].Values, fresh[i].Values) {
			t.Errorf("event %s: its vector is not that of its imported text", restored[i].ID)
		}
	}
}
