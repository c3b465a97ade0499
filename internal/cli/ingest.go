package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/higmem/higmem"
)

func (a *app) ingestCommand() *cobra.Command {
	var samples []string
	var maxTurns int
	cmd := &cobra.Command{
		Use:   "ingest FILE",
		Short: "Add a whole conversation file (LoCoMo JSON, simple JSON, or JSON lines)",
		Long: `Ingest reads a conversation file and builds memory from it.

Formats:
  LoCoMo      an array of samples (or one sample) as in LoCoMo-10; pick samples with --sample
  simple      {"turns": [{"id": "1", "session": "s1", "speaker": "Ann", "text": "...", "time": "..."}]}
  array       [{"speaker": "Ann", "text": "...", "time": "...", "session": "s1"}, ...]
  JSON lines  one turn object per line

Only "speaker" and "text" are required. Re-ingesting a file is safe: turns
already stored are skipped, so an interrupted ingest can simply be rerun.
A LoCoMo file with several selected samples goes to one space per sample
(user id = sample id) unless --user is given.`,
		Example: `  higmem ingest ../shared/data/locomo_dev.json --sample 0
  higmem ingest examples/conversation.json --user demo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			var err error
			if args[0] == "-" {
				data, err = io.ReadAll(a.stdin)
			} else {
				data, err = os.ReadFile(args[0])
			}
			if err != nil {
				return err
			}
			convs, err := parseConversations(data, args[0])
			if err != nil {
				return err
			}
			if convs, err = selectSamples(convs, samples); err != nil {
				return err
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			perSample := len(convs) > 1 && !cmd.Flags().Changed("user")
			for _, c := range convs {
				sp := a.space()
				if perSample {
					sp.UserID = c.Name
				}
				turns := c.Turns
				if maxTurns > 0 && len(turns) > maxTurns {
					turns = turns[:maxTurns]
				}
				sum, err := a.ingestTurns(cmd.Context(), m, sp, c.Name, turns)
				if sum != nil && !a.jsonOut {
					fmt.Fprintf(a.stdout, "%s → space %s: %d turns added, %d already stored, %d events touched, %d LLM calls, %s\n",
						c.Name, sp, sum.added, sum.skipped, len(sum.events), sum.calls, sum.elapsed.Round(time.Millisecond))
					for _, w := range sum.warnings {
						fmt.Fprintln(a.stdout, "warning:", w)
					}
				}
				if err != nil {
					return err
				}
				if a.jsonOut {
					if err := writeJSON(a.stdout, sum.json(c.Name, sp)); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&samples, "sample", nil, "LoCoMo samples to ingest, by index (0) or id (conv-26); repeatable")
	cmd.Flags().IntVar(&maxTurns, "max-turns", 0, "ingest only the first N turns of each conversation")
	return cmd
}

// ingestSummary totals the results of the Add calls of one conversation.
type ingestSummary struct {
	added, skipped, calls int
	events                map[string]bool
	warnings              []string
	elapsed               time.Duration
}

func (s *ingestSummary) json(name string, sp higmem.Space) map[string]any {
	evs := make([]string, 0, len(s.events))
	for e := range s.events {
		evs = append(evs, e)
	}
	return map[string]any{"conversation": name, "space": sp, "added": s.added, "skipped": s.skipped,
		"events": len(evs), "llm_calls": s.calls, "warnings": s.warnings, "seconds": s.elapsed.Seconds()}
}

// ingestTurns adds turns session by session, with a progress bar.
func (a *app) ingestTurns(ctx context.Context, m memoryAPI, sp higmem.Space, name string, turns []higmem.TurnInput) (*ingestSummary, error) {
	start := time.Now()
	sum := &ingestSummary{events: map[string]bool{}}
	bar := a.progress(len(turns), "ingest "+name)
	defer bar.Close()
	for len(turns) > 0 {
		n := 1
		for n < len(turns) && turns[n].SessionID == turns[0].SessionID && n < 200 {
			n++
		}
		res, err := m.Add(ctx, sp, turns[:n])
		if res != nil {
			sum.added += len(res.Added)
			sum.skipped += len(res.Skipped)
			sum.calls += len(res.Calls)
			sum.warnings = append(sum.warnings, res.Warnings...)
			for _, e := range res.Events {
				sum.events[e] = true
			}
		}
		if err != nil {
			sum.elapsed = time.Since(start)
			return sum, fmt.Errorf("%s: %w (rerun the same command to continue: stored turns are skipped)", name, err)
		}
		_ = bar.Add(n)
		turns = turns[n:]
	}
	sum.elapsed = time.Since(start)
	return sum, nil
}

// progress returns a progress bar on stderr, hidden when stderr is not a
// terminal or --quiet is set.
func (a *app) progress(n int, desc string) *progressbar.ProgressBar {
	visible := !a.quiet
	if f, ok := a.stderr.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		visible = false
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetVisibility(visible),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}
