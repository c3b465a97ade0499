// Package amemfake provides a deterministic fake model for A-Mem's prompts,
// so that the A-Mem baseline runs in tests and in scripted harness runs
// without a network.
package amemfake

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/higmem/higmem/eval/amem"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
)

// Scripted answers A-Mem's prompts (recognised by Request.SchemaName) from
// the prompt's own content, by word overlap, and forwards every other
// request to Inner. It is safe for concurrent use when Inner is.
type Scripted struct {
	// Inner answers every prompt that is not A-Mem's (nil: such requests
	// fail with llm.ErrRequest).
	Inner llm.Model
	// Model is reported in responses (default "scripted").
	Model string
}

// Wrap returns a Scripted forwarding other prompts to inner.
func Wrap(inner llm.Model) *Scripted { return &Scripted{Inner: inner} }

// ModelName returns the name reported in responses.
func (s *Scripted) ModelName() string {
	if s.Model == "" {
		return "scripted"
	}
	return s.Model
}

// Complete answers req.
func (s *Scripted) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	var user string
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		if m.Role == "user" {
			user = m.Content
		}
	}
	var reply any
	switch req.SchemaName {
	case amem.PromptNote:
		reply = note(user)
	case amem.PromptEvolve:
		reply = evolve(user)
	case amem.PromptQuery:
		reply = map[string]any{"keywords": strings.Join(keywords(field(user, "Question: "), 8), ", ")}
	case amem.PromptAnswer:
		reply = answer(user)
	default:
		if s.Inner == nil {
			return llm.Response{}, llm.ErrRequest
		}
		return s.Inner.Complete(ctx, req)
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return llm.Response{}, err
	}
	return llm.Response{
		Content: string(b),
		Model:   s.ModelName(),
		Usage:   llm.Usage{PromptTokens: (n + 3) / 4, CompletionTokens: (len(b) + 3) / 4},
	}, nil
}

// field returns the rest of the first line starting with prefix.
func field(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimPrefix(l, prefix)
		}
	}
	return ""
}

// said returns the text of a note content ("Speaker Xsays : text").
func said(content string) string {
	if _, t, ok := strings.Cut(content, "says : "); ok {
		return t
	}
	return content
}

func note(user string) map[string]any {
	c := field(user, "Content: ")
	kw := keywords(said(c), 5)
	return map[string]any{
		"keywords": kw,
		"context":  "Talk about " + strings.Join(kw, ", ") + ".",
		"tags":     []string{"conversation"},
	}
}

var neighbourRE = regexp.MustCompile(`^memory index:(\d+)\t.*\tmemory context: (.*)\tmemory keywords: .*\tmemory tags: (.*)$`)

// evolve links the new note to its nearest neighbour when they share a
// word, keeps every neighbour's context and adds the tag "related" to
// the linked one.
func evolve(user string) map[string]any {
	content := field(user, "content: ")
	var idx []int
	var ctxs []string
	var tags [][]string
	var lines []string
	for _, l := range strings.Split(user, "\n") {
		m := neighbourRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		idx = append(idx, i)
		ctxs = append(ctxs, m[2])
		tags = append(tags, splitList(m[3]))
		lines = append(lines, l)
	}
	r := map[string]any{
		"should_evolve": false, "actions": []string{}, "suggested_connections": []int{},
		"tags_to_update": []string{}, "new_context_neighborhood": []string{}, "new_tags_neighborhood": [][]string{},
	}
	if len(idx) == 0 || overlap(said(content), lines[0]) == 0 {
		return r
	}
	tags[0] = append(tags[0], "related")
	r["should_evolve"] = true
	r["actions"] = []string{"strengthen", "update_neighbor"}
	r["suggested_connections"] = []int{idx[0]}
	r["tags_to_update"] = append(keywords(said(content), 2), "conversation")
	r["new_context_neighborhood"] = ctxs
	r["new_tags_neighborhood"] = tags
	return r
}

func splitList(s string) []string {
	out := []string{}
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

var entryRE = regexp.MustCompile(`memory content: (.*?)memory context: `)

// answer returns the memory sharing the most words with the question.
func answer(user string) map[string]any {
	q := field(user, "Question: ")
	best, bestN := "", 0
	for _, l := range strings.Split(user, "\n") {
		if !strings.HasPrefix(l, "talk start time:") {
			continue
		}
		m := entryRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		text := said(m[1])
		if n := overlap(q, text); n > bestN {
			best, bestN = text, n
		}
	}
	if best == "" {
		return map[string]any{"answer": "Not mentioned in the conversation"}
	}
	if len(best) > 80 {
		best = best[:80]
	}
	return map[string]any{"answer": best}
}

func keywords(s string, n int) []string { return llmfake.Keywords(s, n) }

func overlap(a, b string) int { return llmfake.Overlap(a, b) }
