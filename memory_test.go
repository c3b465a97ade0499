package higmem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/examples"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/memstore"
)

var sp = higmem.Space{UserID: "u1", AgentID: "a1"}

// example loads the shipped example conversation.
func example(t *testing.T) ([]higmem.TurnInput, []struct {
	Question string
	Evidence []string
}) {
	t.Helper()
	var f struct {
		Turns     []higmem.TurnInput
		Questions []struct {
			Question string
			Evidence []string
		}
	}
	if err := json.Unmarshal(examples.Conversation, &f); err != nil {
		t.Fatal(err)
	}
	return f.Turns, f.Questions
}

func open(t *testing.T, o higmem.Options) *higmem.Memory {
	t.Helper()
	m, err := higmem.Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	higmem.SetClock(m, func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) })
	t.Cleanup(func() { m.Close() })
	return m
}

func modes() []struct {
	mode  higmem.Mode
	model func() llm.Model
} {
	return []struct {
		mode  higmem.Mode
		model func() llm.Model
	}{
		{higmem.ModeOffline, func() llm.Model { return nil }},
		{higmem.ModeDefault, func() llm.Model { return llmtest.NewScripted() }},
		{higmem.ModePaper, func() llm.Model { return llmtest.NewScripted() }},
	}
}

// TestPipelineEveryMode builds the example conversation in every mode and
// checks the memory it makes and the traces of its questions.
func TestPipelineEveryMode(t *testing.T) {
	turns, questions := example(t)
	for _, mc := range modes() {
		t.Run(string(mc.mode), func(t *testing.T) {
			ctx := t.Context()
			m := open(t, higmem.Options{Mode: mc.mode, MemoryModel: mc.model(), Embedder: hashing.New(0)})
			if m.Mode() != mc.mode {
				t.Fatalf("Mode() = %s", m.Mode())
			}
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Added) != len(turns) || len(res.Warnings) != 0 {
				t.Fatalf("added %d of %d, warnings %v", len(res.Added), len(turns), res.Warnings)
			}
			if mc.mode == higmem.ModeOffline && len(res.Calls) != 0 {
				t.Fatalf("offline mode made %d LLM calls", len(res.Calls))
			}
			if mc.mode != higmem.ModeOffline && len(res.Calls) == 0 {
				t.Fatalf("%s mode made no LLM calls", mc.mode)
			}

			// Every turn is annotated and belongs to at least one event;
			// event ids are stable e1..eN; spans cover member times.
			anns, err := m.Annotations(ctx, sp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(anns) != len(turns) {
				t.Fatalf("%d annotations for %d turns", len(anns), len(turns))
			}
			for _, a := range anns {
				if len(a.Keywords) == 0 || a.Context == "" || a.Producer == "" {
					t.Errorf("annotation of %s is incomplete: %+v", a.TurnID, a)
				}
			}
			evs, err := m.Events(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			member := map[string]bool{}
			for i, ev := range evs {
				if want := "e" + itoa(i+1); ev.Event.ID != want {
					t.Errorf("event %d has id %s, want %s", i, ev.Event.ID, want)
				}
				if ev.Event.Title == "" || ev.Event.Summary == "" || len(ev.Turns) == 0 {
					t.Errorf("event %s incomplete: %+v", ev.Event.ID, ev.Event)
				}
				for _, tr := range ev.Turns {
					member[tr.ID] = true
					if tr.OccurredAt.Before(ev.Event.Start) || tr.OccurredAt.After(ev.Event.End) {
						t.Errorf("turn %s (%s) outside span of %s", tr.ID, tr.OccurredAt, ev.Event.ID)
					}
				}
			}
			for _, tr := range turns {
				if !member[tr.ID] {
					t.Errorf("turn %s is in no event", tr.ID)
				}
			}
			if len(evs) < 2 || len(evs) >= len(turns) {
				t.Errorf("%d events for %d turns: want grouping", len(evs), len(turns))
			}

			wantStages := map[higmem.Mode][]string{
				higmem.ModeOffline: {"search", "final"},
				higmem.ModeDefault: {"search", "events", "shown", "selected", "final"},
				higmem.ModePaper:   {"search", "events", "predicted", "union", "filtered", "final"},
			}[mc.mode]
			wantRounds := map[higmem.Mode]int{higmem.ModeOffline: 0, higmem.ModeDefault: 2, higmem.ModePaper: 4}[mc.mode]
			found, total := 0, 0
			for _, q := range questions {
				ans, err := m.Ask(ctx, sp, q.Question, higmem.RetrieveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, s := range ans.Trace.Stages {
					// Every mode records "profile" when a question asks
					// about a profile attribute (profile_test.go tests it).
					if s.Name != "profile" {
						names = append(names, s.Name)
					}
				}
				if !slices.Equal(names, wantStages) {
					t.Errorf("%q: stages %v, want %v", q.Question, names, wantStages)
				}
				if ans.Trace.Rounds != wantRounds {
					t.Errorf("%q: %d rounds, want %d", q.Question, ans.Trace.Rounds, wantRounds)
				}
				if !slices.Equal(ans.Trace.Stage("final"), ans.IDs()) {
					t.Errorf("final stage %v differs from evidence %v", ans.Trace.Stage("final"), ans.IDs())
				}
				if mc.mode == higmem.ModeOffline {
					if ans.Text != "" || ans.Note == "" {
						t.Errorf("offline answer %q note %q: want no answer and a note", ans.Text, ans.Note)
					}
				} else {
					if ans.Text == "" {
						t.Errorf("%q: empty answer", q.Question)
					}
					last := ans.Trace.Calls[len(ans.Trace.Calls)-1]
					if last.Role != llm.RoleAnswer || last.Round != wantRounds {
						t.Errorf("last call %+v: want the answer in round %d", last, wantRounds)
					}
				}
				for i := 1; i < len(ans.Evidence); i++ {
					if ans.Evidence[i].Turn.OccurredAt.Before(ans.Evidence[i-1].Turn.OccurredAt) {
						t.Errorf("evidence not chronological: %v", ans.IDs())
					}
				}
				for _, e := range q.Evidence {
					total++
					if slices.Contains(ans.IDs(), e) {
						found++
					}
				}
			}
			// The pipeline must find most gold evidence of the example,
			// whatever the mode (the scripted model selects by word
			// overlap, the offline scorer by BM25 + hashing vectors).
			if found*10 < total*6 {
				t.Errorf("recall %d/%d below 60%%", found, total)
			}
			t.Logf("%s: %d events, evidence recall %d/%d", mc.mode, len(evs), found, total)
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestAddValidationStoresNothing(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	m := open(t, higmem.Options{Store: st})
	good := higmem.TurnInput{ID: "a", Speaker: "Ann", Text: "I moved to Lisbon in 2020.", Time: "2023-05-08T10:00:00Z"}
	cases := []struct {
		name string
		in   []higmem.TurnInput
		want error
	}{
		{"empty text", []higmem.TurnInput{good, {ID: "b", Speaker: "Ann", Text: "  "}}, higmem.ErrInvalidInput},
		{"same id twice, different text", []higmem.TurnInput{good, {ID: "a", Speaker: "Ann", Text: "other"}}, higmem.ErrConflict},
		{"id with newline", []higmem.TurnInput{{ID: "x\ny", Speaker: "Ann", Text: "hi"}}, higmem.ErrInvalidInput},
		{"id too long", []higmem.TurnInput{{ID: strings.Repeat("x", 300), Speaker: "Ann", Text: "hi"}}, higmem.ErrInvalidInput},
	}
	for _, c := range cases {
		if _, err := m.Add(ctx, sp, c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if ts, _ := st.ListTurns(ctx, sp, store.TurnQuery{}); len(ts) != 0 {
			t.Fatalf("%s: %d turns stored after a rejected Add", c.name, len(ts))
		}
	}
	if _, err := m.Add(ctx, higmem.Space{}, []higmem.TurnInput{good}); !errors.Is(err, higmem.ErrInvalidInput) {
		t.Errorf("empty space: err = %v", err)
	}

	// Identical re-add is a no-op; a different turn under a stored id is a
	// conflict.
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{good}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Add(ctx, sp, []higmem.TurnInput{good})
	if err != nil || len(res.Added) != 0 || !slices.Equal(res.Skipped, []string{"a"}) {
		t.Fatalf("re-add: %+v, %v", res, err)
	}
	changed := good
	changed.Text = "I moved to Porto."
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{changed}); !errors.Is(err, higmem.ErrConflict) {
		t.Fatalf("conflicting re-add: err = %v", err)
	}
	if ts, _ := st.ListTurns(ctx, sp, store.TurnQuery{}); len(ts) != 1 {
		t.Fatalf("%d turns stored, want 1", len(ts))
	}

	// An unparsable time is kept raw with a warning, never fatal.
	res, err = m.Add(ctx, sp, []higmem.TurnInput{{ID: "c", Speaker: "Ann", Text: "hello", Time: "the day after the party"}})
	if err != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not understood") {
		t.Fatalf("unparsable time: %+v, %v", res, err)
	}
	got, err := m.Get(ctx, sp, "c")
	if err != nil || !got.OccurredAt.IsZero() || got.OccurredRaw != "the day after the party" {
		t.Fatalf("turn c = %+v, %v", got, err)
	}
	// Generated ids follow Seq.
	res, err = m.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Bo", Text: "no id here"}})
	if err != nil || !slices.Equal(res.Added, []string{"t3"}) {
		t.Fatalf("generated id: %+v, %v", res, err)
	}
}

// failing fails every call after the first n with ErrRequest: the server
// refuses the requests (a bad model name, a bad key), which no fallback
// answers. (An endpoint that is down or times out is the fallback's case:
// TestBuildTimeoutFallsBackOffline.)
type failing struct {
	inner llm.Model
	n     int64
	calls atomic.Int64
}

func (f *failing) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	if f.calls.Add(1) > f.n {
		return llm.Response{}, llm.ErrRequest
	}
	return f.inner.Complete(ctx, r)
}

// TestEndpointFailureLeavesNoHalfBatch checks that a batch whose LLM calls
// fail with an error no fallback answers is not stored at all, earlier
// batches stay, and rerunning the same Add with a working model completes
// the memory.
func TestEndpointFailureLeavesNoHalfBatch(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	st := memstore.New()
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			space := higmem.Space{UserID: string(mode)}
			// Count the calls session 1 (10 turns, one batch) needs, and
			// let the endpoint fail right after them.
			probe := llmtest.NewScripted()
			pm := open(t, higmem.Options{Mode: mode, MemoryModel: probe, BatchSize: 10})
			if _, err := pm.Add(ctx, space, turns[:10]); err != nil {
				t.Fatal(err)
			}
			m := open(t, higmem.Options{Store: st, Mode: mode, MemoryModel: &failing{inner: llmtest.NewScripted(), n: int64(probe.Total())}, BatchSize: 10})
			_, err := m.Add(ctx, space, turns)
			if !errors.Is(err, llm.ErrRequest) {
				t.Fatalf("err = %v, want ErrRequest", err)
			}
			stored, _ := st.ListTurns(ctx, space, store.TurnQuery{})
			evs, _ := st.ListEvents(ctx, space)
			if len(stored) == 0 || len(stored) == len(turns) {
				t.Fatalf("%d turns stored: want some but not all", len(stored))
			}
			// Every stored turn is complete: annotated and in an event.
			anns, _ := st.ListAnnotations(ctx, space, nil)
			if len(anns) != len(stored) {
				t.Fatalf("%d annotations for %d stored turns", len(anns), len(stored))
			}
			inEvent := map[string]bool{}
			for _, e := range evs {
				for _, id := range e.TurnIDs {
					inEvent[id] = true
				}
			}
			for _, tr := range stored {
				if !inEvent[tr.ID] {
					t.Errorf("stored turn %s belongs to no event", tr.ID)
				}
			}
			// Resume with a working model.
			m2 := open(t, higmem.Options{Store: st, Mode: mode, MemoryModel: llmtest.NewScripted(), BatchSize: 10})
			res, err := m2.Add(ctx, space, turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Skipped) != len(stored) || len(res.Added) != len(turns)-len(stored) {
				t.Fatalf("resume added %d skipped %d", len(res.Added), len(res.Skipped))
			}
		})
	}
}

// TestJunkModelFallsBack checks that a model that never returns JSON
// degrades to documented fallbacks instead of failing or half-writing.
func TestJunkModelFallsBack(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			m := open(t, higmem.Options{Mode: mode, MemoryModel: llmtest.Junk{}})
			res, err := m.Add(ctx, sp, turns[:10])
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Added) != 10 || len(res.Warnings) == 0 {
				t.Fatalf("added %d, warnings %d: want all added with warnings", len(res.Added), len(res.Warnings))
			}
			for _, c := range res.Calls {
				if c.Error == "" {
					t.Errorf("call %+v: junk reply not flagged", c)
				}
			}
			evs, _ := m.Events(ctx, sp)
			n := 0
			for _, e := range evs {
				n += len(e.Turns)
				if e.Event.Summary == "" {
					t.Errorf("event %s has no summary after fallback", e.Event.ID)
				}
			}
			if n < 10 {
				t.Errorf("only %d memberships for 10 turns", n)
			}
			ans, err := m.Ask(ctx, sp, "What did Priya make in pottery class?", higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// A plain-text reply is accepted as the answer (the answer
			// schema has one string field); the failed retrieval calls are
			// noted in the trace.
			if ans.Text != "I'm sorry, but I can't help with that request." || len(ans.Trace.Notes) == 0 {
				t.Errorf("answer %q notes %v: want the prose as answer and trace notes", ans.Text, ans.Trace.Notes)
			}
		})
	}
}

func TestSpacesAreIsolated(t *testing.T) {
	ctx := t.Context()
	m := open(t, higmem.Options{})
	other := higmem.Space{UserID: "u2", AgentID: "a1"}
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "x", Speaker: "A", Text: "my secret is the blue lighthouse"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, other, []higmem.TurnInput{{ID: "x", Speaker: "B", Text: "nothing to see here"}}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, other, "blue lighthouse secret", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Evidence {
		if strings.Contains(e.Turn.Text, "lighthouse") {
			t.Fatalf("space %s sees %q from another space", other, e.Turn.Text)
		}
	}
	got, _ := m.Get(ctx, other, "x")
	if got.Speaker != "B" {
		t.Fatalf("Get in other space = %+v", got)
	}
}

func TestDeleteHistoryAndExportImport(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	m := open(t, higmem.Options{Embedder: hashing.New(64)})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Export(ctx, sp, &buf); err != nil {
		t.Fatal(err)
	}

	// Delete a turn: it disappears from its event, with history.
	evBefore, _ := m.Events(ctx, sp)
	if err := m.Delete(ctx, sp, "S2:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, sp, "S2:1"); !errors.Is(err, higmem.ErrNotFound) {
		t.Fatalf("Get deleted turn: %v", err)
	}
	if err := m.Delete(ctx, sp, "S2:1"); !errors.Is(err, higmem.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	evAfter, _ := m.Events(ctx, sp)
	for _, ev := range evAfter {
		if slices.Contains(ev.Event.TurnIDs, "S2:1") {
			t.Fatalf("event %s still lists the deleted turn", ev.Event.ID)
		}
	}
	var owner string
	for _, ev := range evBefore {
		if slices.Contains(ev.Event.TurnIDs, "S2:1") {
			owner = ev.Event.ID
		}
	}
	hist, err := m.History(ctx, sp, "event", owner)
	if err != nil || len(hist) < 2 {
		t.Fatalf("history of %s: %v, %v", owner, hist, err)
	}
	if last := hist[len(hist)-1]; last.Actor != "user" || (last.Action != "update" && last.Action != "delete") {
		t.Fatalf("last change of %s = %+v", owner, last)
	}

	// Import the export into a fresh memory with another embedder: all
	// records come back and search works (vectors recomputed).
	m2 := open(t, higmem.Options{Embedder: hashing.New(32)})
	dst := higmem.Space{UserID: "restored"}
	ir, err := m2.Import(ctx, dst, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if ir.Turns != len(turns) || ir.Events != len(evBefore) || ir.Annotations != len(turns) {
		t.Fatalf("import = %+v", ir)
	}
	evs, _ := m2.Events(ctx, dst)
	if len(evs) != len(evBefore) {
		t.Fatalf("%d events after import, want %d", len(evs), len(evBefore))
	}
	res, err := m2.Retrieve(ctx, dst, "greyhound Biscuit adopted", higmem.RetrieveOptions{})
	if err != nil || !slices.Contains(res.IDs(), "S2:1") {
		t.Fatalf("retrieve after import: %v %v", res.IDs(), err)
	}
	// Re-import is idempotent for turns.
	ir, err = m2.Import(ctx, dst, bytes.NewReader(buf.Bytes()))
	if err != nil || ir.Skipped != len(turns) || ir.Turns != 0 {
		t.Fatalf("re-import = %+v, %v", ir, err)
	}
	// A corrupt line rejects the whole import.
	bad := append(bytes.Clone(buf.Bytes()), []byte("{\"kind\":\"turn\",\"turn\":{\"id\":\"\"}}\n")...)
	if _, err := m2.Import(ctx, higmem.Space{UserID: "bad"}, bytes.NewReader(bad)); !errors.Is(err, higmem.ErrInvalidInput) {
		t.Fatalf("bad import: %v", err)
	}
	if st, _ := m2.Stats(ctx, higmem.Space{UserID: "bad"}); st.Turns != 0 {
		t.Fatalf("bad import stored %d turns", st.Turns)
	}
}

func TestEmbedderChangeReembeds(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	st := memstore.New()
	m := open(t, higmem.Options{Store: st, Embedder: hashing.New(64)})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	old, _ := st.ListVectors(ctx, sp, store.VectorTurn, "hashing:64")
	if len(old) != len(turns) {
		t.Fatalf("%d vectors for %d turns", len(old), len(turns))
	}
	m2 := open(t, higmem.Options{Store: st, Embedder: hashing.New(128)})
	if _, err := m2.Retrieve(ctx, sp, "pottery", higmem.RetrieveOptions{}); err != nil {
		t.Fatal(err)
	}
	nv, _ := st.ListVectors(ctx, sp, store.VectorTurn, "hashing:128")
	if len(nv) != len(turns) || len(nv[0].Values) != 128 {
		t.Fatalf("after reopen: %d vectors of the new embedder", len(nv))
	}
	if ov, _ := st.ListVectors(ctx, sp, store.VectorTurn, "hashing:64"); len(ov) != 0 {
		t.Fatalf("%d vectors of the old embedder remain mixed in", len(ov))
	}
}

func TestClosedAndBadInput(t *testing.T) {
	ctx := t.Context()
	if _, err := higmem.Open(ctx, higmem.Options{Mode: "fast"}); !errors.Is(err, higmem.ErrInvalidInput) {
		t.Fatalf("unknown mode: %v", err)
	}
	if _, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModePaper}); !errors.Is(err, higmem.ErrNoLLM) {
		t.Fatalf("paper without model: %v", err)
	}
	m := open(t, higmem.Options{})
	if _, err := m.Retrieve(ctx, sp, "   ", higmem.RetrieveOptions{}); !errors.Is(err, higmem.ErrInvalidInput) {
		t.Fatalf("empty question: %v", err)
	}
	m.Close()
	if _, err := m.Add(ctx, sp, nil); !errors.Is(err, higmem.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// TestAblations checks that NoEvents builds no event layer (one call per
// turn in paper mode) and NoFilter makes no filter calls.
func TestAblations(t *testing.T) {
	ctx := t.Context()
	turns, questions := example(t)
	for _, mc := range modes() {
		t.Run(string(mc.mode), func(t *testing.T) {
			model := mc.model()
			m := open(t, higmem.Options{Mode: mc.mode, MemoryModel: model, Ablations: higmem.Ablations{NoEvents: true, NoFilter: true}})
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			if evs, _ := m.Events(ctx, sp); len(evs) != 0 {
				t.Fatalf("NoEvents built %d events", len(evs))
			}
			if anns, _ := m.Annotations(ctx, sp, nil); len(anns) != len(turns) {
				t.Fatalf("%d annotations for %d turns", len(anns), len(turns))
			}
			if mc.mode == higmem.ModePaper && len(res.Calls) != len(turns) {
				t.Fatalf("paper NoEvents: %d calls for %d turns, want one per turn", len(res.Calls), len(turns))
			}
			ans, err := m.Ask(ctx, sp, questions[1].Question, higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range ans.Trace.Calls {
				if c.Operation == "filter" || c.Operation == "predict" {
					t.Errorf("ablated retrieval made a %s call", c.Operation)
				}
			}
			if len(ans.Trace.Stage("events")) != 0 || len(ans.Evidence) == 0 {
				t.Errorf("events stage %v, %d evidence", ans.Trace.Stage("events"), len(ans.Evidence))
			}
		})
	}
}

// gated blocks prediction, filter and select calls until release is closed.
type gated struct {
	inner   llm.Model
	started chan struct{}
	once    sync.Once
	release chan struct{}
}

func (g *gated) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	if r.SchemaName == "predict" || r.SchemaName == "filter" || r.SchemaName == "select" {
		g.once.Do(func() { close(g.started) })
		select {
		case <-g.release:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	return g.inner.Complete(ctx, r)
}

// TestWritersDoNotWaitForRetrievalModels checks that a retrieval waiting on
// its model calls does not hold the space locked: an Add completes while
// the retrieval's calls are still pending.
func TestWritersDoNotWaitForRetrievalModels(t *testing.T) {
	ctx := t.Context()
	turns, questions := example(t)
	g := &gated{inner: llmtest.NewScripted(), started: make(chan struct{}), release: make(chan struct{})}
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: g})
	if _, err := m.Add(ctx, sp, turns[:20]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Retrieve(ctx, sp, questions[0].Question, higmem.RetrieveOptions{})
		done <- err
	}()
	<-g.started
	added := make(chan error, 1)
	go func() {
		_, err := m.Add(ctx, sp, turns[20:])
		added <- err
	}()
	select {
	case err := <-added:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Add blocked behind a retrieval waiting for its model")
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
