package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/server"
)

// ingestOptions are the flags of `higmem ingest`.
type ingestOptions struct {
	samples  []string
	maxTurns int
}

func newIngestCommand(a *app) *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest FILE",
		Short: "Add a whole conversation file (LoCoMo JSON, simple JSON, or JSON lines)",
		Long: `Ingest reads a conversation file (- for stdin) and builds memory from it.

Formats, told apart by the shape of the JSON:
  LoCoMo      the public LoCoMo release (github.com/snap-research/locomo, data/locomo10.json):
              an array of samples, or one sample; pick samples with --sample
  simple      {"turns": [{"id": "1", "session_id": "s1", "speaker": "Ann", "text": "...", "time": "..."}]}
  array       [{"speaker": "Ann", "text": "...", "time": "...", "session_id": "s1"}, ...]
  JSON lines  one turn object per line (a single line too)

Only "speaker" and "text" are required; the other turn fields are those of the REST
API (id, session_id, time, occurred_at, attachments, metadata). "session" is accepted
as the old spelling of "session_id". Re-ingesting a file is safe: turns already stored
are skipped, so an interrupted ingest can simply be rerun. A LoCoMo file with several
selected samples goes to one space per sample (user id = sample id) unless --user is
given. With --json, one summary object per conversation:
{"conversation","user_id","agent_id","turns_added","turns_skipped","events_touched",
"llm_calls","warnings","seconds"}.`,
		Example: `  higmem ingest locomo10.json --sample 0
  higmem ingest examples/conversation.json --user demo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ingestFunc(cmd, a, o, args[0])
		},
	}
	cmd.Flags().StringSliceVar(&o.samples, "sample", nil, "LoCoMo samples to ingest, by index (0) or id (conv-26); repeatable")
	cmd.Flags().IntVar(&o.maxTurns, "max-turns", 0, "ingest only the first N turns of each conversation")
	return cmd
}

// ingestFunc reads the file at path and adds its conversations.
func ingestFunc(cmd *cobra.Command, a *app, o ingestOptions, path string) error {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return err
	}
	convs, err := parseConversations(data, path)
	if err != nil {
		return err
	}
	if convs, err = selectSamples(convs, o.samples); err != nil {
		return err
	}
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	perSample := len(convs) > 1 && !cmd.Flags().Changed("user")
	for _, c := range convs {
		sc := a.scope()
		if perSample {
			sc.UserID = c.Name
		}
		turns := c.Turns
		if o.maxTurns > 0 && len(turns) > o.maxTurns {
			turns = turns[:o.maxTurns]
		}
		sum, err := a.ingestTurns(cmd.Context(), m, sc, c.Name, turns)
		if sum != nil && !a.jsonOut {
			fmt.Fprintf(w, "%s → space %s: %d turns added, %d already stored, %d events touched, %d LLM calls, %s\n",
				safe(c.Name), describeScope(sc), sum.TurnsAdded, sum.TurnsSkipped, len(sum.EventsTouched), sum.LLMCalls,
				time.Duration(sum.Seconds*float64(time.Second)).Round(time.Millisecond))
			for _, warn := range sum.Warnings {
				fmt.Fprintln(w, "warning:", safe(warn))
			}
		}
		if err != nil {
			return err
		}
		if a.jsonOut {
			if err := writeJSON(w, sum); err != nil {
				return err
			}
		}
	}
	return nil
}

// ingestSummary totals the results of the Add calls of one conversation;
// it is the --json output of ingest.
type ingestSummary struct {
	Conversation  string   `json:"conversation"`
	UserID        string   `json:"user_id"`
	AgentID       string   `json:"agent_id,omitempty"`
	TurnsAdded    int      `json:"turns_added"`
	TurnsSkipped  int      `json:"turns_skipped"`
	EventsTouched []string `json:"events_touched"`
	LLMCalls      int      `json:"llm_calls"`
	Warnings      []string `json:"warnings,omitempty"`
	Seconds       float64  `json:"seconds"`
}

// ingestTurns adds turns session by session, with a progress bar.
func (a *app) ingestTurns(ctx context.Context, m memoryAPI, sc api.Scope, name string, turns []api.TurnInput) (*ingestSummary, error) {
	start := time.Now()
	sum := &ingestSummary{Conversation: name, UserID: sc.UserID, AgentID: sc.AgentID, EventsTouched: []string{}}
	bar := a.progress(len(turns), "ingest "+safe(name))
	defer bar.Close()
	done := func() { sum.Seconds = time.Since(start).Seconds() }
	for len(turns) > 0 {
		n := 1
		for n < len(turns) && turns[n].SessionID == turns[0].SessionID && n < 200 {
			n++
		}
		res, err := m.Add(ctx, api.AddRequest{UserID: sc.UserID, AgentID: sc.AgentID, Turns: turns[:n]})
		if res != nil {
			sum.TurnsAdded += len(res.Added)
			sum.TurnsSkipped += len(res.Skipped)
			sum.LLMCalls += len(res.Calls)
			sum.Warnings = append(sum.Warnings, res.Warnings...)
			for _, e := range res.Events {
				if !slices.Contains(sum.EventsTouched, e) {
					sum.EventsTouched = append(sum.EventsTouched, e)
				}
			}
		}
		if err != nil {
			done()
			return sum, fmt.Errorf("%s: %w (%s)", name, err, rerunHint(err))
		}
		_ = bar.Add(n)
		turns = turns[n:]
	}
	slices.Sort(sum.EventsTouched)
	done()
	return sum, nil
}

// rerunHint says what to do after an ingest stopped on err: a refused input
// (a 4xx, such as a turn over the size limit) fails again until the file
// is fixed; anything else (an LLM endpoint down) may pass when rerun.
func rerunHint(err error) string {
	status, _ := server.ErrorCode(err)
	var se *api.StatusError
	if errors.As(err, &se) {
		status = se.StatusCode
	}
	if se == nil && errors.Is(err, higmem.ErrTooLarge) && strings.Contains(err.Error(), "bytes per turn") {
		return "cut or split that turn in the file, or raise the cap with --max-turn-kib N (in KiB, -1 for no limit), and rerun: the turns stored so far are skipped"
	}
	if status >= 400 && status < 500 {
		return "fix the file and rerun: the turns stored so far are skipped"
	}
	return "rerun the same command to continue: stored turns are skipped"
}
