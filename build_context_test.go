package higmem_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// A build_batch prompt the server refuses as too long for its context
// (llama.cpp's 400 "maximum context length", llm.ErrContextLength) is
// asked again with the candidate events compacted, then the batch is built
// in halves, down to one turn, which offline construction places when even
// it does not fit: Add never fails for a prompt's size, every turn lands in
// an event, and the notes say what happened.
func TestBuildPromptOverContext(t *testing.T) {
	turns, _ := example(t)
	for _, tc := range []struct {
		name    string
		nctx    int
		want    []string // notes that must appear
		byModel bool     // some event is the model's
	}{
		{"halves", 1400, []string{"asked again with 3 of", "built in two halves"}, true},
		{"not even one turn", 200, []string{"even alone; placed by offline segmentation"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			srv := llmtest.NewLlamaCpp(t, llmtest.NewScripted().Handler())
			srv.NCtx = tc.nctx
			client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "scripted", MaxConcurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			m := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: client, Embedder: hashing.New(0)})
			res, err := m.Add(ctx, sp, turns)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Added) != len(turns) {
				t.Fatalf("added %d of %d", len(res.Added), len(turns))
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(res.Warnings, func(n string) bool { return strings.Contains(n, w) }) {
					t.Errorf("no warning says %q: %q", w, res.Warnings)
				}
			}
			member, _, _, _ := checkStored(t, m, res)
			for _, tr := range turns {
				if !member[tr.ID] {
					t.Errorf("turn %s is in no event", tr.ID)
				}
			}
			evs, err := m.Events(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			model := 0
			for _, ev := range evs {
				if ev.Event.Producer == "llm:default:p3" {
					model++
				}
			}
			if tc.byModel != (model > 0) {
				t.Errorf("%d of %d events written by the model", model, len(evs))
			}
			t.Logf("%d requests, %d events (%d by the model), warnings %q", len(srv.Requests()), len(evs), model, res.Warnings)
		})
	}
}
