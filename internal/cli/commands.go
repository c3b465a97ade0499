package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem"
)

func (a *app) addCommand() *cobra.Command {
	var in higmem.TurnInput
	cmd := &cobra.Command{
		Use:   "add TEXT",
		Short: "Add one turn to memory",
		Example: `  higmem add --speaker Caroline --time "2023-05-08 13:56" "I went to a support group yesterday."
  echo "text from stdin" | higmem add --speaker me -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Text = args[0]
			if in.Text == "-" {
				b, err := io.ReadAll(a.stdin)
				if err != nil {
					return err
				}
				in.Text = string(b)
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.Add(cmd.Context(), a.space(), []higmem.TurnInput{in})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, res)
			}
			printAddResult(a.stdout, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&in.ID, "id", "", "turn id (default: generated)")
	cmd.Flags().StringVar(&in.Speaker, "speaker", "user", "who said it")
	cmd.Flags().StringVar(&in.SessionID, "session", "", "session id")
	cmd.Flags().StringVar(&in.Time, "time", "", "when it was said (RFC 3339, \"2023-05-08 13:56\", \"1:56 pm on 8 May, 2023\", Unix seconds...; default now)")
	cmd.PreRun = func(*cobra.Command, []string) {
		if in.Time == "" {
			in.Time = time.Now().UTC().Format(time.RFC3339)
		}
	}
	return cmd
}

func printAddResult(w io.Writer, res *higmem.AddResult) {
	fmt.Fprintf(w, "added %d turn(s)", len(res.Added))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, ", %d already stored", len(res.Skipped))
	}
	if len(res.Events) > 0 {
		fmt.Fprintf(w, "; events touched: %s", strings.Join(res.Events, ", "))
	}
	fmt.Fprintln(w)
	for _, warn := range res.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
}

func (a *app) askCommand() *cobra.Command {
	var ro higmem.RetrieveOptions
	var trace bool
	cmd := &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Answer a question from memory (evidence only when no LLM is configured)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			ans, err := m.Ask(cmd.Context(), a.space(), args[0], ro)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, ans)
			}
			printAnswer(a.stdout, ans, trace)
			return nil
		},
	}
	retrieveFlags(cmd, &ro)
	cmd.Flags().BoolVar(&trace, "trace", false, "print every retrieval stage and LLM call")
	return cmd
}

func (a *app) searchCommand() *cobra.Command {
	var ro higmem.RetrieveOptions
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Show the evidence memory selects for a query, with the trace",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.Retrieve(cmd.Context(), a.space(), args[0], ro)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, res)
			}
			printEvidence(a.stdout, res.Evidence)
			printTrace(a.stdout, &res.Trace)
			return nil
		},
	}
	retrieveFlags(cmd, &ro)
	return cmd
}

func retrieveFlags(cmd *cobra.Command, ro *higmem.RetrieveOptions) {
	cmd.Flags().IntVar(&ro.KTurn, "k-turn", 0, "turns from search (default 10)")
	cmd.Flags().IntVar(&ro.KEvent, "k-event", 0, "candidate events (default 10)")
	cmd.Flags().IntVar(&ro.MaxEvidence, "max-evidence", 0, "cap on evidence turns (0: token budget only)")
	cmd.Flags().IntVar(&ro.EvidenceTokens, "evidence-tokens", 0, "token budget of the evidence (default 2000)")
	cmd.Flags().Func("as-of", "search memory as it stood at this time (RFC 3339)", func(s string) error {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return fmt.Errorf("want RFC 3339, e.g. 2024-05-01T00:00:00Z: %w", err)
		}
		ro.AsOf = t
		return nil
	})
}

func printAnswer(w io.Writer, ans *higmem.Answer, trace bool) {
	if ans.Text != "" {
		fmt.Fprintf(w, "Answer: %s\n\n", ans.Text)
	} else if ans.Note != "" {
		fmt.Fprintf(w, "(%s)\n\n", ans.Note)
	}
	printEvidence(w, ans.Evidence)
	if trace {
		printTrace(w, &ans.Trace)
	} else {
		fmt.Fprintf(w, "\n%d evidence turns, mode %s, %d LLM calls in %d rounds, %s\n",
			len(ans.Evidence), ans.Trace.Mode, len(ans.Trace.Calls), ans.Trace.Rounds, ans.Trace.Elapsed.Round(time.Microsecond))
	}
}

func printEvidence(w io.Writer, ev []higmem.Evidence) {
	if len(ev) == 0 {
		fmt.Fprintln(w, "Evidence: none found")
		return
	}
	fmt.Fprintln(w, "Evidence (chronological):")
	for _, e := range ev {
		date := e.Date
		if date == "" {
			date = "unknown date"
		}
		text := e.Turn.Text
		for _, at := range e.Turn.Attachments {
			if at.Caption != "" {
				text = "[Image: " + at.Caption + "] " + text
			}
		}
		times := ""
		if len(e.Times) > 0 {
			times = " (" + strings.Join(e.Times, "; ") + ")"
		}
		fmt.Fprintf(w, "  [%s] %s | %s: %s%s  ← %s\n", e.Turn.ID, date, e.Turn.Speaker, text, times, strings.Join(e.Sources, "+"))
	}
}

func printTrace(w io.Writer, t *higmem.Trace) {
	fmt.Fprintf(w, "\nTrace (mode %s, query by %s: %q, temporal %v):\n", t.Mode, t.Query.By, t.Query.Keywords, t.Query.Temporal)
	for _, s := range t.Stages {
		fmt.Fprintf(w, "  %-10s %3d  %s\n", s.Name, len(s.IDs), strings.Join(s.IDs, " "))
	}
	if len(t.Calls) > 0 {
		fmt.Fprintf(w, "  LLM calls (%d, %d sequential rounds):\n", len(t.Calls), t.Rounds)
		for _, c := range t.Calls {
			errNote := ""
			if c.Error != "" {
				errNote = "  error: " + c.Error
			}
			fmt.Fprintf(w, "    round %d %-7s %-13s %5d+%-4d tokens %8s%s\n", c.Round, c.Role, c.Operation,
				c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Latency.Round(time.Microsecond), errNote)
		}
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  note:", n)
	}
	fmt.Fprintf(w, "  elapsed %s\n", t.Elapsed.Round(time.Microsecond))
}

func (a *app) eventsCommand() *cobra.Command {
	var turns bool
	cmd := &cobra.Command{
		Use:   "events [EVENT-ID]",
		Short: "List the events of the space with their turns",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			var evs []higmem.EventView
			if len(args) == 1 {
				ev, err := m.Event(cmd.Context(), a.space(), args[0])
				if err != nil {
					return err
				}
				evs = []higmem.EventView{ev}
				turns = true
			} else if evs, err = m.Events(cmd.Context(), a.space()); err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, evs)
			}
			if len(evs) == 0 {
				fmt.Fprintf(a.stdout, "no events in space %s (ingest a conversation first)\n", a.space())
			}
			for _, ev := range evs {
				e := ev.Event
				span := ""
				if !e.Start.IsZero() {
					span = " " + e.Start.Format("2006-01-02")
					if e.End.Format("2006-01-02") != e.Start.Format("2006-01-02") {
						span += ".." + e.End.Format("2006-01-02")
					}
				}
				fmt.Fprintf(a.stdout, "%s%s (%d turns) %s\n", e.ID, span, len(e.TurnIDs), e.Title)
				if e.Summary != "" && e.Summary != e.Title {
					fmt.Fprintf(a.stdout, "    %s\n", e.Summary)
				}
				if len(e.Keywords) > 0 {
					fmt.Fprintf(a.stdout, "    keywords: %s\n", strings.Join(e.Keywords, ", "))
				}
				if turns {
					for _, t := range ev.Turns {
						fmt.Fprintf(a.stdout, "    [%s] %s: %s\n", t.ID, t.Speaker, t.Text)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&turns, "turns", false, "print each event's turns")
	return cmd
}

func (a *app) exportCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the space as JSON lines (turns, annotations, events, links)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			w := a.stdout
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return m.Export(cmd.Context(), a.space(), w)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "-", "file to write")
	return cmd
}

func (a *app) importCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Read an export into the space (all or nothing; vectors are recomputed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			r := a.stdin
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			res, err := m.Import(cmd.Context(), a.space(), r)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, res)
			}
			fmt.Fprintf(a.stdout, "imported %d turns (%d already stored), %d annotations, %d events, %d links\n",
				res.Turns, res.Skipped, res.Annotations, res.Events, res.Links)
			return nil
		},
	}
}

func (a *app) deleteCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "delete [TURN-ID...]",
		Short: "Delete turns (and their annotations, vectors, links), or --all of the space",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return fmt.Errorf("name turn ids, or give --all to delete the whole space")
			}
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			if all {
				if err := m.DeleteSpace(cmd.Context(), a.space()); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "deleted space %s\n", a.space())
				return nil
			}
			for _, id := range args {
				if err := m.Delete(cmd.Context(), a.space(), id); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "deleted %s\n", id)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "delete everything in the space")
	return cmd
}

func (a *app) historyCommand() *cobra.Command {
	var kind string
	cmd := &cobra.Command{
		Use:   "history [ID]",
		Short: "Show the recorded changes of events and annotations",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.memory(cmd.Context())
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			hs, err := m.History(cmd.Context(), a.space(), kind, id)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, hs)
			}
			for _, h := range hs {
				fmt.Fprintf(a.stdout, "%5d %s %-10s %-8s %-10s by %s\n", h.Seq, h.At.Format(time.RFC3339), h.Kind, h.ID, h.Action, h.Actor)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: event, annotation, turn, link")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
