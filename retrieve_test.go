package higmem_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// TestChronologicalEvidence uses the reference's failure case: sorting raw
// strings puts "10:37 am on 27 June, 2023" before "1:56 pm on 8 May, 2023".
func TestChronologicalEvidence(t *testing.T) {
	ctx := t.Context()
	m := open(t, higmem.Options{})
	_, err := m.Add(ctx, sp, []higmem.TurnInput{
		{ID: "D2:1", SessionID: "2", Speaker: "Mel", Text: "My pottery bowl cracked in the kiln.", Time: "10:37 am on 27 June, 2023"},
		{ID: "D1:1", SessionID: "1", Speaker: "Mel", Text: "I signed up for a pottery class today.", Time: "1:56 pm on 8 May, 2023"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "pottery class bowl", higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.IDs(); !slices.Equal(got, []string{"D1:1", "D2:1"}) {
		t.Fatalf("evidence order %v, want [D1:1 D2:1]", got)
	}
	if !strings.HasPrefix(res.Context, "[D1:1] 8 May 2023 | Mel:") {
		t.Fatalf("context does not start with the May turn and its date:\n%s", res.Context)
	}
}

func TestAsOf(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m := open(t, higmem.Options{})
	higmem.SetClock(m, func() time.Time { return now })
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "1", Speaker: "A", Text: "I love my red bicycle"}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(48 * time.Hour)
	if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "2", Speaker: "A", Text: "I sold my red bicycle"}}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Retrieve(ctx, sp, "red bicycle", higmem.RetrieveOptions{AsOf: now.Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.IDs(); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("as-of evidence %v, want [1]", got)
	}
}

// TestLoCoMoSessionBothModes ingests the first session of LoCoMo sample 0
// with the scripted model in default and paper mode and checks the
// memberships, annotations and a question's trace. It needs the dev data
// beside the repository and skips without it.
func TestLoCoMoSessionBothModes(t *testing.T) {
	samples, err := locomo.Load("../shared/data/locomo_dev.json")
	if err != nil {
		t.Skipf("LoCoMo dev data not available: %v", err)
	}
	s := samples[0]
	var turns []higmem.TurnInput
	for _, tr := range s.Sessions[0].Turns {
		in := higmem.TurnInput{ID: tr.DiaID, SessionID: "1", Speaker: tr.Speaker, Text: tr.Text, Time: s.Sessions[0].DateTime}
		if tr.Caption != "" {
			in.Attachments = []higmem.Attachment{{Kind: "image", Caption: tr.Caption}}
		}
		turns = append(turns, in)
	}
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			model := llmtest.NewScripted()
			m := open(t, higmem.Options{Mode: mode, MemoryModel: model, Embedder: hashing.New(0)})
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Added) != len(turns) {
				t.Fatalf("added %d of %d", len(res.Added), len(turns))
			}
			calls := model.Calls()
			switch mode {
			case higmem.ModePaper:
				if calls["turn_note"] != len(turns) || calls["affiliate"] != len(turns) || calls["event_update"]+calls["event_check"] < len(turns) {
					t.Errorf("paper mode calls %v for %d turns: want one note, one affiliation and at least one update per turn", calls, len(turns))
				}
			case higmem.ModeDefault:
				if calls["build_batch"] == 0 || calls["turn_note"] != 0 || 2*model.Total() > len(turns) {
					t.Errorf("default mode calls %v for %d turns: want batched calls, at most one per two turns", calls, len(turns))
				}
			}
			anns, _ := m.Annotations(ctx, sp, nil)
			if len(anns) != len(turns) {
				t.Fatalf("%d annotations", len(anns))
			}
			evs, _ := m.Events(ctx, sp)
			n := 0
			for _, e := range evs {
				n += len(e.Turns)
			}
			if n < len(turns) {
				t.Fatalf("%d memberships for %d turns", n, len(turns))
			}
			if turns[0].Time == "" || anns[0].Context == "" {
				t.Fatal("first turn lost its time or context")
			}
			ans, err := m.Ask(ctx, sp, s.QA[0].Question, higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stages := []string{"search", "events", "predicted", "filtered", "union", "final"}
			if mode == higmem.ModeDefault { // one selection call over the shown turns (issue 17)
				stages = []string{"search", "events", "shown", "selected", "final"}
			}
			for _, name := range stages {
				if ans.Trace.Stage(name) == nil && name != "final" {
					// An empty stage is recorded with nil ids; check presence.
					found := false
					for _, st := range ans.Trace.Stages {
						found = found || st.Name == name
					}
					if !found {
						t.Errorf("trace lacks stage %q: %+v", name, ans.Trace.Stages)
					}
				}
			}
			t.Logf("%s: %d turns, %d events, build calls %v, question calls %d", mode, len(turns), len(evs), calls, len(ans.Trace.Calls))
		})
	}
}

// TestEvidenceCarriesResolvedDates checks that relative time expressions
// reach the answer model resolved against the turn's date.
func TestEvidenceCarriesResolvedDates(t *testing.T) {
	ctx := t.Context()
	for _, mc := range modes() {
		t.Run(string(mc.mode), func(t *testing.T) {
			m := open(t, higmem.Options{Mode: mc.mode, MemoryModel: mc.model()})
			_, err := m.Add(ctx, sp, []higmem.TurnInput{
				{ID: "D1:3", Speaker: "Caroline", Text: "I went to a LGBTQ support group yesterday and it was so powerful.", Time: "1:56 pm on 8 May, 2023"},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := m.Retrieve(ctx, sp, "When did Caroline go to the LGBTQ support group?", higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Evidence) != 1 || !slices.Contains(res.Evidence[0].Times, "yesterday = 7 May 2023") {
				t.Fatalf("evidence %+v: want the resolved date", res.Evidence)
			}
			if !strings.Contains(res.Context, "(yesterday = 7 May 2023)") || !res.Trace.Query.Temporal {
				t.Fatalf("context %q temporal %v", res.Context, res.Trace.Query.Temporal)
			}
			// The NoTemporal ablation drops the route.
			o := m.Options()
			o.Ablations.NoTemporal, o.Store = true, nil
			m2 := open(t, o)
			if _, err := m2.Add(ctx, sp, []higmem.TurnInput{{ID: "D1:3", Speaker: "Caroline", Text: "I went to a LGBTQ support group yesterday.", Time: "1:56 pm on 8 May, 2023"}}); err != nil {
				t.Fatal(err)
			}
			res, err = m2.Retrieve(ctx, sp, "When did Caroline go to the LGBTQ support group?", higmem.RetrieveOptions{})
			if err != nil || res.Trace.Query.Temporal || len(res.Evidence) != 1 || len(res.Evidence[0].Times) != 0 {
				t.Fatalf("NoTemporal: %+v %v", res, err)
			}
		})
	}
}

// oneEvent wraps the scripted model so that construction puts every turn
// into a single event (default mode's build_batch, paper mode's
// affiliate), and records the largest select or predict prompt.
type oneEvent struct {
	inner    llm.Model
	maxShown atomic.Int64
	chunks   atomic.Int64
}

func (o *oneEvent) Complete(ctx context.Context, r llm.Request) (llm.Response, error) {
	resp, err := o.inner.Complete(ctx, r)
	if err != nil {
		return resp, err
	}
	user := r.Messages[len(r.Messages)-1].Content
	switch r.SchemaName {
	case "build_batch":
		var rep map[string]any
		if err := json.Unmarshal([]byte(resp.Content), &rep); err != nil {
			return resp, err
		}
		target := "new:1"
		if i := strings.Index(user, "(event "); i >= 0 {
			target = strings.SplitN(user[i+len("(event "):], ")", 2)[0]
		}
		for _, t := range rep["turns"].([]any) {
			t.(map[string]any)["events"] = []string{target}
		}
		// One record for it, summing up the fake's records.
		var sum []string
		for _, r := range rep["events"].([]any) {
			sum = append(sum, r.(map[string]any)["summary"].(string))
		}
		rep["events"] = []map[string]string{{"id": target, "title": "everything", "summary": strings.Join(sum, " ")}}
		b, _ := json.Marshal(rep)
		resp.Content = string(b)
	case "affiliate":
		// The last updated event, once there is one.
		if _, after, ok := strings.Cut(user, "Most recently updated event:\n(event "); ok {
			id, _, _ := strings.Cut(after, ")")
			resp.Content = `{"affiliations":["` + id + `"]}`
		}
	case "select":
		// The turn lines under the event's "Its turns:".
		_, after, _ := strings.Cut(user, "Its turns:\n")
		block, _, _ := strings.Cut(after, "\n\n")
		n := int64(strings.Count("\n"+block, "\n["))
		o.chunks.Add(1)
		o.maxShown.Store(max(o.maxShown.Load(), n))
	case "predict":
		n := int64(strings.Count(user, "\n[")) // turn lines
		o.chunks.Add(1)
		for {
			cur := o.maxShown.Load()
			if n <= cur || o.maxShown.CompareAndSwap(cur, n) {
				break
			}
		}
	}
	return resp, nil
}

// TestPredictionPromptsAreBounded checks that a large event is shown to
// default mode's select call as its most similar members only, so that
// the prompt stays bounded however large events grow.
func TestPredictionPromptsAreBounded(t *testing.T) {
	ctx := t.Context()
	turns, questions := example(t)
	model := &oneEvent{inner: llmtest.NewScripted()}
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: model})
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	evs, _ := m.Events(ctx, sp)
	if len(evs) != 1 || len(evs[0].Turns) != len(turns) {
		t.Fatalf("%d events: want one holding all %d turns", len(evs), len(turns))
	}
	ans, err := m.Ask(ctx, sp, questions[1].Question, higmem.RetrieveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if model.chunks.Load() != 1 || model.maxShown.Load() == 0 || model.maxShown.Load() > 10 {
		t.Fatalf("default mode: %d select calls showing up to %d turns of the event; want 1 call showing 1 to 10", model.chunks.Load(), model.maxShown.Load())
	}
	if !slices.Contains(ans.Trace.Stage("shown"), "S2:1") {
		t.Errorf("the most similar members were not shown: shown %v", ans.Trace.Stage("shown"))
	}
}

// TestRetrieveFilter checks that RetrieveOptions.Filter restricts every
// stage, so the best matching turns of the allowed ones come back.
func TestRetrieveFilter(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	for _, mc := range modes() {
		t.Run(string(mc.mode), func(t *testing.T) {
			m := open(t, higmem.Options{Mode: mc.mode, MemoryModel: mc.model(), Embedder: hashing.New(0)})
			if _, err := m.Add(ctx, sp, turns); err != nil {
				t.Fatal(err)
			}
			only3 := func(tr higmem.Turn) bool { return tr.SessionID == "3" }
			res, err := m.Retrieve(ctx, sp, "Biscuit the greyhound", higmem.RetrieveOptions{Filter: only3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Evidence) == 0 {
				t.Fatal("no evidence from session 3")
			}
			for _, st := range res.Trace.Stages {
				if st.Name == "events" {
					continue
				}
				for _, id := range st.IDs {
					if !strings.HasPrefix(id, "S3:") {
						t.Errorf("stage %s holds %s from another session", st.Name, id)
					}
				}
			}
		})
	}
}

// TestPaperKeepsSearchHitsFirst is a regression test: in paper mode a kept
// turn that search also found must outrank one only an event proposed, and
// the evidence has no token budget unless one is asked for.
func TestPaperKeepsSearchHitsFirst(t *testing.T) {
	ctx := t.Context()
	turns, questions := example(t)
	m := open(t, higmem.Options{Mode: higmem.ModePaper, MemoryModel: llmtest.NewScripted(), Embedder: hashing.New(0)})
	if m.Options().EvidenceTokens < 1<<20 {
		t.Fatalf("paper mode evidence budget %d: want none", m.Options().EvidenceTokens)
	}
	if _, err := m.Add(ctx, sp, turns); err != nil {
		t.Fatal(err)
	}
	for _, q := range questions {
		full, err := m.Retrieve(ctx, sp, q.Question, higmem.RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(full.Evidence), len(full.Trace.Stage("filtered")); got != want {
			t.Errorf("%q: %d evidence turns, filter kept %d: want all", q.Question, got, want)
		}
		searched := full.Trace.Stage("search")
		keptSearched := false
		for _, id := range full.Trace.Stage("filtered") {
			keptSearched = keptSearched || slices.Contains(searched, id)
		}
		if !keptSearched {
			continue
		}
		one, err := m.Retrieve(ctx, sp, q.Question, higmem.RetrieveOptions{MaxEvidence: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Evidence) != 1 || !slices.Contains(one.Evidence[0].Sources, "search") {
			t.Errorf("%q: top evidence %+v is not a kept search hit", q.Question, one.Evidence)
		}
	}
}

// queryEmbedder is a hashing embedder that embeds questions through
// EmbedQuery with a prompt of its own, recording what each method saw.
type queryEmbedder struct {
	*hashing.Embedder
	docs, queries atomic.Int32
}

func (e *queryEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.docs.Add(int32(len(texts)))
	return e.Embedder.Embed(ctx, texts)
}

func (e *queryEmbedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	e.queries.Add(int32(len(texts)))
	q := make([]string, len(texts))
	for i, s := range texts {
		q[i] = "query " + s
	}
	return e.Embedder.Embed(ctx, q)
}

// TestQuestionsUseEmbedQuery checks that an embed.QueryEmbedder embeds the
// questions, in every mode's retrieval, and Embed everything stored.
func TestQuestionsUseEmbedQuery(t *testing.T) {
	for _, mode := range []higmem.Mode{higmem.ModeOffline, higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			e := &queryEmbedder{Embedder: hashing.New(0)}
			opts := higmem.Options{Mode: mode, Embedder: e}
			if mode != higmem.ModeOffline {
				opts.MemoryModel = llmtest.NewScripted()
			}
			m := open(t, opts)
			if _, err := m.Add(ctx, sp, []higmem.TurnInput{{ID: "1", Speaker: "A", Text: "I love my red bicycle"}}); err != nil {
				t.Fatal(err)
			}
			stored := e.docs.Load()
			if stored == 0 || e.queries.Load() != 0 {
				t.Fatalf("after Add: %d texts through Embed, %d through EmbedQuery; want some and none", stored, e.queries.Load())
			}
			if _, err := m.Retrieve(ctx, sp, "what bicycle?", higmem.RetrieveOptions{}); err != nil {
				t.Fatal(err)
			}
			if e.queries.Load() != 1 || e.docs.Load() != stored {
				t.Errorf("after Retrieve: %d through EmbedQuery, %d more through Embed; want 1 and 0", e.queries.Load(), e.docs.Load()-stored)
			}
		})
	}
}
