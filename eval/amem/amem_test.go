package amem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/amem"
	"github.com/higmem/higmem/eval/amem/amemfake"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmtest"
)

var convo = []amem.Input{
	{ID: "D1:1", Speaker: "Ann", Text: "I adopted a puppy named Rex last week.", Time: "1:56 pm on 8 May, 2023"},
	{ID: "D1:2", Speaker: "Ben", Text: "A puppy! What breed is Rex?", Time: "1:56 pm on 8 May, 2023"},
	{ID: "D1:3", Speaker: "Ann", Text: "Rex is a beagle puppy and loves long walks.", Time: "1:56 pm on 8 May, 2023"},
	{ID: "D2:1", Speaker: "Ben", Text: "I started painting landscapes in watercolor.", Time: "9:15 am on 1 June, 2023"},
	{ID: "D2:2", Speaker: "Ann", Text: "Watercolor landscapes sound lovely, send me a painting.", Time: "9:15 am on 1 June, 2023"},
}

func build(t *testing.T, opts amem.Options) *amem.Memory {
	t.Helper()
	m, err := amem.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range convo {
		calls, err := m.Add(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 2 || calls[0].Operation != amem.PromptNote || calls[1].Operation != amem.PromptEvolve {
			t.Fatalf("add %s: calls %+v, want note then evolve", in.ID, calls)
		}
	}
	return m
}

func TestAddAndAsk(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts amem.Options
	}{
		{"bm25", amem.Options{}},
		{"dense", amem.Options{Embedder: hashing.New(64)}},
		{"content-document", amem.Options{ContentDocument: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Model = amemfake.Wrap(nil)
			m := build(t, tc.opts)
			notes := m.Notes()
			if len(notes) != len(convo) {
				t.Fatalf("%d notes, want %d", len(notes), len(convo))
			}
			if notes[0].Content != "Speaker Annsays : I adopted a puppy named Rex last week." {
				t.Errorf("content %q lacks the reference's form", notes[0].Content)
			}
			if len(notes[0].Keywords) == 0 || notes[0].Context == "" {
				t.Errorf("note 0 not analysed: %+v", notes[0])
			}
			// Only backward links to existing notes.
			for i, n := range notes {
				for _, l := range n.Links {
					if l < 0 || l >= i {
						t.Errorf("note %d links to %d", i, l)
					}
				}
			}
			ans, err := m.Ask(context.Background(), "Who loves long walks?")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(ans.IDs(), "D1:3") {
				t.Errorf("evidence %v misses D1:3", ans.IDs())
			}
			if !strings.Contains(ans.Text, "beagle") {
				t.Errorf("answer %q, want the beagle turn", ans.Text)
			}
			ops := []string{}
			for _, c := range ans.Calls {
				ops = append(ops, string(c.Role)+"/"+c.Operation)
			}
			if want := []string{"memory/amem_query", "answer/amem_answer"}; !slices.Equal(ops, want) {
				t.Errorf("question calls %v, want %v", ops, want)
			}
		})
	}
}

// linker is a fake that links every new note to all its neighbours and
// tags neighbour i with "n<index>".
type linker struct {
	mu      sync.Mutex
	prompts map[string][]string
}

var idxRE = regexp.MustCompile(`(?m)^memory index:(\d+)\t`)

func (f *linker) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	user := req.Messages[len(req.Messages)-1].Content
	f.mu.Lock()
	if f.prompts == nil {
		f.prompts = map[string][]string{}
	}
	f.prompts[req.SchemaName] = append(f.prompts[req.SchemaName], user)
	f.mu.Unlock()
	var r any
	switch req.SchemaName {
	case amem.PromptNote:
		_, said, _ := strings.Cut(user, "says : ")
		said, _, _ = strings.Cut(said, "\n")
		r = map[string]any{"keywords": []string{"k"}, "context": said, "tags": []string{"t"}}
	case amem.PromptEvolve:
		var idx []int
		var ctxs []string
		var tags [][]string
		for _, m := range idxRE.FindAllStringSubmatch(user, -1) {
			var i int
			fmt.Sscan(m[1], &i)
			idx = append(idx, i)
			ctxs = append(ctxs, fmt.Sprintf("updated %d", i))
			tags = append(tags, []string{fmt.Sprintf("n%d", i)})
		}
		r = map[string]any{"should_evolve": len(idx) > 0, "actions": []string{"strengthen", "update_neighbor"},
			"suggested_connections": append(idx, 99), "tags_to_update": []string{"new"},
			"new_context_neighborhood": ctxs, "new_tags_neighborhood": tags}
	case amem.PromptQuery:
		_, q, _ := strings.Cut(user, "Question: ")
		q, _, _ = strings.Cut(q, "\n")
		r = map[string]any{"keywords": q}
	case amem.PromptAnswer:
		r = map[string]any{"answer": "a beagle"}
	default:
		return llm.Response{}, llm.ErrRequest
	}
	b, _ := json.Marshal(r)
	return llm.Response{Content: string(b), Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 2}}, nil
}

func TestEvolutionEffects(t *testing.T) {
	f := &linker{}
	m := build(t, amem.Options{Model: f, Neighbours: 2, Embedder: hashing.New(64)})
	notes := m.Notes()
	// The first note had no neighbours: the call is made anyway.
	if got := f.prompts[amem.PromptEvolve][0]; !strings.Contains(got, "(none)") {
		t.Errorf("first evolution prompt shows neighbours:\n%s", got)
	}
	for i, n := range notes {
		if i == 0 {
			if len(n.Links) != 0 {
				t.Errorf("note 0 links %v", n.Links)
			}
			continue
		}
		// At most 2 neighbours, out-of-range 99 dropped, tags replaced.
		if len(n.Links) == 0 || len(n.Links) > 2 || slices.Contains(n.Links, 99) {
			t.Errorf("note %d links %v", i, n.Links)
		}
		if i < len(notes)-1 && !slices.Equal(n.Tags, []string{fmt.Sprintf("n%d", i)}) && !slices.Equal(n.Tags, []string{"new"}) {
			t.Errorf("note %d tags %v", i, n.Tags)
		}
	}
	// The last note was never anyone's neighbour: it keeps "new".
	if last := notes[len(notes)-1]; !slices.Equal(last.Tags, []string{"new"}) {
		t.Errorf("last note tags %v, want [new]", last.Tags)
	}
	// Neighbours were updated: some note has an evolved context.
	if !slices.ContainsFunc(notes, func(n amem.Note) bool { return strings.HasPrefix(n.Context, "updated ") }) {
		t.Error("no neighbour context was evolved")
	}
	// Keywords never evolve.
	for _, n := range notes {
		if !slices.Equal(n.Keywords, []string{"k"}) {
			t.Errorf("keywords evolved: %v", n.Keywords)
		}
	}
}

func TestConsolidation(t *testing.T) {
	m := build(t, amem.Options{Model: &linker{}, EvolveThreshold: 2, Embedder: hashing.New(64)})
	// Notes 2..5 evolve (note 1 has no neighbours): 4 evolving notes, so
	// two rebuilds.
	if got := m.Rebuilds(); got != 2 {
		t.Errorf("%d rebuilds, want 2", got)
	}
	m2 := build(t, amem.Options{Model: &linker{}, Embedder: hashing.New(64)})
	if got := m2.Rebuilds(); got != 0 {
		t.Errorf("%d rebuilds below the threshold", got)
	}
}

// TestNeighbourCounter checks the global j of the paper's code against the
// per-hit reset: with every note linked to all earlier ones, a global
// counter adds k neighbours in total and then one per hit.
func TestNeighbourCounter(t *testing.T) {
	ctx := context.Background()
	count := func(reset bool) (hits, links int) {
		m, err := amem.New(amem.Options{Model: &linker{}, Neighbours: 10, RetrieveK: 2, ResetJ: reset})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"one", "two", "three", "four", "five", "six"} {
			if _, err := m.Add(ctx, amem.Input{ID: w, Speaker: "A", Text: "puppy story " + w}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := m.Retrieve(ctx, "six six five")
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Hits; !slices.Equal(got, []int{5, 4}) {
			t.Fatalf("hits %v, want [5 4]", got)
		}
		for _, e := range res.Entries {
			if e.Link {
				links++
			} else {
				hits++
			}
		}
		return hits, links
	}
	// Global j, k=2: the first hit appends neighbours until j reaches 2
	// (3 appended: the check follows the append), the second hit one more.
	if h, l := count(false); h != 2 || l != 4 {
		t.Errorf("global j: %d hits, %d links; want 2 hits, 4 links", h, l)
	}
	// Reset j: each hit appends up to 3.
	if h, l := count(true); h != 2 || l != 6 {
		t.Errorf("reset j: %d hits, %d links; want 2 hits, 6 links", h, l)
	}
}

func TestJunkModelFallsBack(t *testing.T) {
	m, err := amem.New(amem.Options{Model: llmtest.Junk{}})
	if err != nil {
		t.Fatal(err)
	}
	calls, err := m.Add(context.Background(), convo[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].Error == "" || calls[1].Error == "" {
		t.Errorf("calls %+v: want two failed calls recorded", calls)
	}
	n := m.Notes()[0]
	if n.Context != "General" || len(n.Keywords) != 0 || len(n.Links) != 0 {
		t.Errorf("fallback note %+v", n)
	}
	ans, err := m.Ask(context.Background(), "What did Ann adopt?")
	if err != nil {
		t.Fatal(err)
	}
	// The query and answer schemas have one string key, so prose is
	// taken as the reply (llm.CompleteJSON); the calls are still made.
	if len(ans.Calls) != 2 {
		t.Errorf("%d question calls, want 2", len(ans.Calls))
	}
}

type failing struct{}

func (failing) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, llm.ErrUnavailable
}

func TestEndpointFailureAborts(t *testing.T) {
	m, err := amem.New(amem.Options{Model: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(context.Background(), convo[0]); !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	if len(m.Notes()) != 0 {
		t.Error("a failed add stored a note")
	}
	if _, err := amem.New(amem.Options{}); !errors.Is(err, amem.ErrNoModel) {
		t.Errorf("New without model: %v", err)
	}
}

func TestTemporalInstructionByAnalysis(t *testing.T) {
	f := &linker{}
	m := build(t, amem.Options{Model: f, Embedder: hashing.New(64)})
	for _, q := range []string{"When did Ann adopt Rex?", "What breed is Rex?"} {
		ans, err := m.Ask(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		prompts := f.prompts[amem.PromptAnswer]
		hasDate := strings.Contains(prompts[len(prompts)-1], "DATE of the conversation")
		if hasDate != ans.Temporal || hasDate != strings.HasPrefix(q, "When") {
			t.Errorf("%q: date instruction %v, temporal %v", q, hasDate, ans.Temporal)
		}
	}
}
