package higmem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

// recording wraps a model and keeps the user message of every request, by
// prompt kind. A kind in tooLong is refused as over the model's context
// when its prompt shows more than tooLongTurns turn lines.
type recording struct {
	inner        llm.Model
	tooLong      string
	tooLongTurns int

	mu      sync.Mutex
	prompts map[string][]string
}

func (r *recording) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	user := req.Messages[len(req.Messages)-1].Content
	r.mu.Lock()
	if r.prompts == nil {
		r.prompts = map[string][]string{}
	}
	r.prompts[req.SchemaName] = append(r.prompts[req.SchemaName], user)
	r.mu.Unlock()
	if req.SchemaName == r.tooLong && strings.Count(user, "\n[") > r.tooLongTurns {
		return llm.Response{}, fmt.Errorf("fake: maximum context length exceeded: %w", llm.ErrContextLength)
	}
	return r.inner.Complete(ctx, req)
}

func (r *recording) of(kind string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.prompts[kind])
}

// longSummaries makes the scripted model's event summaries two sentences
// long, so that an event's title (its summary's first sentence) and its
// summary differ.
type longSummaries struct{ inner llm.Model }

func (l longSummaries) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := l.inner.Complete(ctx, req)
	if err == nil && req.SchemaName == prompt.EventUpdate {
		var r map[string]any
		if err := json.Unmarshal([]byte(resp.Content), &r); err != nil {
			return resp, err
		}
		r["summary"] = r["summary"].(string) + " They went on about it for a while, with more news to share next time."
		b, _ := json.Marshal(r)
		resp.Content = string(b)
	}
	return resp, err
}

// Paper-mode affiliation shows each candidate event, and the last updated
// one, by its current summary, as the reference's metadata mode shows its
// rewritten "title" (docs/PAPER.md), not by a title frozen at the
// summary's first sentence.
func TestPaperAffiliationSeesSummary(t *testing.T) {
	ctx := t.Context()
	turns, _ := example(t)
	rec := &recording{inner: longSummaries{llmtest.NewScripted()}}
	m := open(t, higmem.Options{Mode: higmem.ModePaper, MemoryModel: rec, Embedder: hashing.New(0)})
	if _, err := m.Add(ctx, sp, turns[:1]); err != nil {
		t.Fatal(err)
	}
	evs, err := m.Events(ctx, sp)
	if err != nil {
		t.Fatal(err)
	}
	e := evs[0].Event
	if !strings.HasPrefix(e.Summary, strings.TrimSuffix(e.Title, "…")) || len(e.Summary) <= len(e.Title) {
		t.Fatalf("event %+v: want a title that is the start of a longer summary", e)
	}
	if _, err := m.Add(ctx, sp, turns[1:2]); err != nil {
		t.Fatal(err)
	}
	aff := rec.of(prompt.Affiliate)
	if len(aff) != 2 {
		t.Fatalf("%d affiliation prompts", len(aff))
	}
	line := "(event " + e.ID + ") " + e.Summary + "\n"
	if strings.Count(aff[1], line) != 2 { // the last updated event and a candidate
		t.Errorf("affiliation prompt does not show %q as the last event and a candidate:\n%s", line, aff[1])
	}
	if strings.Contains(aff[1], e.Title+" ::") {
		t.Errorf("affiliation prompt shows the title:\n%s", aff[1])
	}
}

// Paper mode makes one prediction call per candidate event, however many
// turns it holds, as the reference does; PredictChunk > 0 splits a larger
// event into calls of that many turns; a prediction prompt the model
// refuses as too long for its context is asked again in halves (noted)
// instead of failing the question.
func TestPaperPredictionCalls(t *testing.T) {
	turns, questions := example(t)
	// Twice the conversation, so that its one event outgrows what the
	// old default chunk (40 turns) showed in one call.
	for _, tr := range slices.Clone(turns) {
		tr.ID = "again-" + tr.ID
		tr.Time = strings.Replace(tr.Time, "2024", "2025", 1)
		turns = append(turns, tr)
	}
	q := questions[0].Question
	build := func(t *testing.T, rec *recording, chunk int) *higmem.Memory {
		t.Helper()
		rec.inner = &oneEvent{inner: llmtest.NewScripted()}
		m := open(t, higmem.Options{Mode: higmem.ModePaper, MemoryModel: rec, PredictChunk: chunk})
		if _, err := m.Add(t.Context(), sp, turns); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Run("one call per event", func(t *testing.T) {
		rec := &recording{}
		m := build(t, rec, 0)
		evs, _ := m.Events(t.Context(), sp)
		res, err := m.Retrieve(t.Context(), sp, q, higmem.RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		preds := rec.of(prompt.Predict)
		if len(preds) != len(res.Trace.Stage("events")) {
			t.Errorf("%d prediction calls for %d candidate events", len(preds), len(res.Trace.Stage("events")))
		}
		biggest := 0
		for _, ev := range evs {
			biggest = max(biggest, len(ev.Turns))
		}
		most := 0
		for _, p := range preds {
			most = max(most, strings.Count(p, "\n["))
		}
		if biggest <= 40 || most != biggest {
			t.Errorf("largest event %d turns, largest prediction prompt %d turns: want every member in one call", biggest, most)
		}
	})
	t.Run("PredictChunk", func(t *testing.T) {
		rec := &recording{}
		m := build(t, rec, 8)
		res, err := m.Retrieve(t.Context(), sp, q, higmem.RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		preds := rec.of(prompt.Predict)
		if len(preds) <= len(res.Trace.Stage("events")) {
			t.Errorf("%d prediction calls for %d events with PredictChunk 8", len(preds), len(res.Trace.Stage("events")))
		}
		for _, p := range preds {
			if n := strings.Count(p, "\n["); n > 8 {
				t.Errorf("a prediction prompt shows %d turns", n)
			}
		}
	})
	t.Run("over the context", func(t *testing.T) {
		rec := &recording{tooLong: prompt.Predict, tooLongTurns: 10}
		m := build(t, rec, 0)
		res, err := m.Retrieve(t.Context(), sp, q, higmem.RetrieveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res.Trace.Notes, func(n string) bool { return strings.Contains(n, "asked again in two halves") }) {
			t.Errorf("notes %q do not say the prediction was split", res.Trace.Notes)
		}
		if len(res.Trace.Stage("predicted")) == 0 {
			t.Errorf("nothing predicted after the split")
		}
		for _, c := range res.Trace.Calls {
			if c.Operation == prompt.Predict && c.Error != "" && !strings.Contains(c.Error, "context") {
				t.Errorf("prediction call failed: %s", c.Error)
			}
		}
	})
}

// Options.PaperLinks: in paper mode with it set, the annotation call sees
// the recent turns and its links are stored, and retrieval adds linked
// turns before the filter; without it (the paper setting) the annotation
// sees only its turn, no link is stored, and the union is the searched
// and predicted turns alone.
func TestPaperLinks(t *testing.T) {
	turns, questions := example(t)
	for _, links := range []bool{false, true} {
		t.Run(fmt.Sprint(links), func(t *testing.T) {
			ctx := t.Context()
			rec := &recording{inner: llmtest.NewScripted()}
			m := open(t, higmem.Options{Mode: higmem.ModePaper, MemoryModel: rec, Embedder: hashing.New(0), PaperLinks: links})
			if _, err := m.Add(ctx, sp, turns); err != nil {
				t.Fatal(err)
			}
			st, err := m.Stats(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			windowShown := slices.ContainsFunc(rec.of(prompt.TurnNote), func(p string) bool { return strings.Contains(p, "Earlier turns") })
			if links != (st.Links > 0) || links != windowShown {
				t.Errorf("PaperLinks %v: %d links stored, window shown %v", links, st.Links, windowShown)
			}
			res, err := m.Retrieve(ctx, sp, questions[0].Question, higmem.RetrieveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			base := append(res.Trace.Stage("search"), res.Trace.Stage("predicted")...)
			extra := 0
			for _, id := range res.Trace.Stage("union") {
				if !slices.Contains(base, id) {
					extra++
				}
			}
			if links != (extra > 0) {
				t.Errorf("PaperLinks %v: %d linked turns added to the union", links, extra)
			}
		})
	}
}

// Options.PaperLinks is a paper-mode option: default mode makes and
// follows no links even when it is set.
func TestDefaultModeMakesNoLinks(t *testing.T) {
	turns, _ := example(t)
	m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: llmtest.NewScripted(), PaperLinks: true})
	if _, err := m.Add(t.Context(), sp, turns); err != nil {
		t.Fatal(err)
	}
	if st, err := m.Stats(t.Context(), sp); err != nil || st.Links != 0 {
		t.Errorf("default mode stored %d links (%v)", st.Links, err)
	}
}
