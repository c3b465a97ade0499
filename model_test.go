package higmem_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/llm/llmtest"
	"github.com/higmem/higmem/llm/openai"
)

// turnLines counts the turn lines "[id] …" of a prompt's user message;
// with after set, only those below the first header starting with it.
func turnLines(user, after string) int {
	n, in := 0, after == ""
	for _, l := range strings.Split(user, "\n") {
		switch {
		case after != "" && strings.HasPrefix(l, after):
			in = true
		case in && strings.HasPrefix(l, "["):
			n++
		case after != "" && strings.HasSuffix(strings.TrimSpace(l), ":") && !strings.HasPrefix(l, "["):
			in = in && strings.HasPrefix(l, after)
		}
	}
	return n
}

// schemaName is the json_schema name of a request: its prompt kind.
func schemaName(r llmtest.ChatRequest) string {
	var rf struct {
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	_ = json.Unmarshal(r.ResponseFormat, &rf)
	return rf.JSONSchema.Name
}

// TestEveryRequestCarriesItsBudget builds memory and answers questions
// through the real OpenAI-compatible client against a server that records
// each request: every request carries the completion budget of its
// operation (prompt.MaxTokens, sized by the turns it covers), never the
// client's default.
func TestEveryRequestCarriesItsBudget(t *testing.T) {
	turns, questions := example(t)
	for _, mode := range []higmem.Mode{higmem.ModeDefault, higmem.ModePaper} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := t.Context()
			srv := llmtest.NewServer(t, llmtest.NewScripted().Handler())
			client, err := openai.New(openai.Options{BaseURL: srv.BaseURL(), Model: "scripted"})
			if err != nil {
				t.Fatal(err)
			}
			m := open(t, higmem.Options{Mode: mode, MemoryModel: client, Embedder: hashing.New(0)})
			if _, err := m.Add(ctx, sp, turns); err != nil {
				t.Fatal(err)
			}
			for _, q := range questions[:3] {
				if _, err := m.Ask(ctx, sp, q.Question, higmem.RetrieveOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			kinds := map[string]int{}
			for _, r := range srv.Requests() {
				kind := schemaName(r)
				n := 1
				switch kind {
				case prompt.BuildBatch:
					n = turnLines(r.LastUser(), "New turn")
				case prompt.Predict, prompt.Filter, prompt.Select:
					n = turnLines(r.LastUser(), "")
				}
				want := prompt.MaxTokens(kind, n)
				if want == 0 || r.MaxTokens != want {
					t.Errorf("%s request (%d turns) sent max_tokens %d, want %d", kind, n, r.MaxTokens, want)
				}
				kinds[kind]++
			}
			// Default mode has three operations (build_batch, select,
			// answer), paper mode six.
			if len(kinds) < 3 || mode == higmem.ModePaper && len(kinds) < 6 {
				t.Errorf("only %v were sent: the test saw too few operations", kinds)
			}
		})
	}
}
