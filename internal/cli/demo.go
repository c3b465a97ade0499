package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/examples"
)

func (a *app) demoCommand() *cobra.Command {
	var fetch bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a memory from the example conversation and answer its questions",
		Long: `Demo fetches the embedding model when it can (else runs on BM25 and says so),
ingests the example conversation shipped in examples/ into a fresh database,
and answers its questions with evidence and trace. It runs offline unless an
LLM endpoint is configured (see README).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !cmd.Flags().Changed("db") {
				dir, err := os.MkdirTemp("", "higmem-demo-")
				if err != nil {
					return err
				}
				a.closers = append(a.closers, func() error { return os.RemoveAll(dir) })
				a.db = filepath.Join(dir, "demo.db")
			}
			if fetch && a.embedder == "auto" {
				if err := a.fetchModel(ctx, true); err != nil {
					a.warnOnce("embed", "could not fetch the embedding model (%v); running on BM25 only", err)
					a.embedder = "none"
				}
			}
			var f struct {
				Title     string             `json:"title"`
				Turns     []higmem.TurnInput `json:"turns"`
				Questions []question         `json:"questions"`
			}
			if err := json.Unmarshal(examples.Conversation, &f); err != nil {
				return fmt.Errorf("example conversation: %w", err)
			}
			m, err := a.open(ctx)
			if err != nil {
				return err
			}
			sp := a.space()
			fmt.Fprintf(a.stdout, "higmem demo: %s\nmode %s, embedder %s, database %s\n\n", f.Title, m.Mode(), a.embedderName(m), displayDB(a.db))
			sum, err := a.ingestTurns(ctx, m, sp, "example", f.Turns)
			if err != nil {
				return err
			}
			stats, err := m.Stats(ctx, sp)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Ingested %d turns into %d events (%d LLM calls) in %s.\n",
				sum.added, stats.Events, sum.calls, sum.elapsed.Round(1e6))
			found, total := 0, 0
			for i, q := range f.Questions {
				ans, err := m.Ask(ctx, sp, q.Question, higmem.RetrieveOptions{})
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "\n── Q%d. %s\n", i+1, q.Question)
				if ans.Text != "" {
					fmt.Fprintf(a.stdout, "Answer: %s\n", ans.Text)
				}
				fmt.Fprintf(a.stdout, "Expected: %s\n", q.Answer)
				printEvidence(a.stdout, ans.Evidence)
				ids := ans.IDs()
				var hit []string
				for _, e := range q.Evidence {
					total++
					if slices.Contains(ids, e) {
						found++
						hit = append(hit, e)
					}
				}
				fmt.Fprintf(a.stdout, "Gold evidence %s: %d of %d found; stages: %s; %d LLM calls\n",
					strings.Join(q.Evidence, ","), len(hit), len(q.Evidence), stageSummary(&ans.Trace), len(ans.Trace.Calls))
			}
			fmt.Fprintf(a.stdout, "\nEvidence recall over %d questions: %d/%d gold turns found.\n", len(f.Questions), found, total)
			if m.Mode() == higmem.ModeOffline {
				fmt.Fprintln(a.stdout, "No LLM endpoint is configured, so answers are evidence only; set HIGMEM_LLM_BASE_URL (see README) for written answers.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fetch, "fetch", true, "fetch the embedding model first when it is missing")
	return cmd
}

func stageSummary(t *higmem.Trace) string {
	var parts []string
	for _, s := range t.Stages {
		parts = append(parts, fmt.Sprintf("%s %d", s.Name, len(s.IDs)))
	}
	return strings.Join(parts, " → ")
}
