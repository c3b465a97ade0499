package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/examples"
	"github.com/higmem/higmem/server"
)

// demoOptions are the flags of `higmem demo`.
type demoOptions struct {
	fetch bool
}

func newDemoCommand(a *app) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a memory from the example conversation and answer its questions",
		Long: `Demo fetches the embedding model when it can (e5-small-v2, the default embedder
of a new database; else it runs on BM25 and says so),
ingests the example conversation shipped in examples/ into a fresh database,
and answers its questions with evidence and trace. It runs offline unless an
LLM endpoint is configured (see README).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return demoFunc(cmd, a, o)
		},
	}
	cmd.Flags().BoolVar(&o.fetch, "fetch", true, "with --embedder auto, fetch the embedding model first when it is missing")
	return cmd
}

// demoFunc ingests the example conversation and asks its questions.
func demoFunc(cmd *cobra.Command, a *app, o demoOptions) error {
	ctx := cmd.Context()
	w := cmd.OutOrStdout()
	if !cmd.Flags().Changed("db") {
		dir, err := os.MkdirTemp("", "higmem-demo-")
		if err != nil {
			return err
		}
		a.closers = append(a.closers, func() error { return os.RemoveAll(dir) })
		a.db = filepath.Join(dir, "demo.db")
	}
	// With --embedder auto, the model it wants is fetched when missing:
	// e5-small-v2 for the demo's fresh database.
	a.fetchModels = o.fetch
	convs, err := parseConversations(examples.Conversation, "examples/conversation.json")
	if err != nil {
		return fmt.Errorf("example conversation: %w", err)
	}
	conv := convs[0]
	mem, err := a.open(ctx)
	if err != nil {
		return err
	}
	m := server.NewLocal(mem, 0)
	sc := a.scope()
	fmt.Fprintf(w, "higmem demo: %s\nmode %s, embedder %s, database %s\n\n", conv.Title, mem.Mode(), a.embedderName(mem), a.db)
	sum, err := a.ingestTurns(ctx, m, sc, "example", conv.Turns)
	if err != nil {
		return err
	}
	stats, err := m.Stats(ctx, sc)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Ingested %d turns into %d events (%d LLM calls) in %.1fs.\n", sum.TurnsAdded, stats.Events, sum.LLMCalls, sum.Seconds)
	found, total := 0, 0
	for i, q := range conv.Questions {
		ans, err := m.Ask(ctx, api.AskRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: q.Question})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n── Q%d. %s\n", i+1, q.Question)
		if ans.Answer != "" {
			fmt.Fprintf(w, "Answer: %s\n", safeLines(ans.Answer))
		}
		fmt.Fprintf(w, "Expected: %s\n", q.Answer)
		printEvidence(w, ans.Evidence)
		ids := ans.IDs()
		var hit []string
		for _, e := range q.Evidence {
			total++
			if slices.Contains(ids, e) {
				found++
				hit = append(hit, e)
			}
		}
		fmt.Fprintf(w, "Gold evidence %s: %d of %d found; stages: %s; %d LLM calls\n",
			strings.Join(q.Evidence, ","), len(hit), len(q.Evidence), stageSummary(&ans.Trace), len(ans.Trace.Calls))
	}
	fmt.Fprintf(w, "\nEvidence recall over %d questions: %d/%d gold turns found.\n", len(conv.Questions), found, total)
	if mem.Mode() == higmem.ModeOffline {
		fmt.Fprintln(w, "No LLM endpoint is configured, so answers are evidence only; set HIGMEM_LLM_BASE_URL (see README) for written answers.")
	}
	return nil
}

func stageSummary(t *api.Trace) string {
	var parts []string
	for _, s := range t.Stages {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, len(s.IDs)))
	}
	return strings.Join(parts, " → ")
}
