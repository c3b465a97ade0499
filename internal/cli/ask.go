package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// askOptions are the flags of `higmem ask`.
type askOptions struct {
	retrieve retrieveOptions
	trace    bool
}

func newAskCommand(a *app) *cobra.Command {
	var o askOptions
	cmd := &cobra.Command{
		Use:         "ask QUESTION",
		Short:       "Answer a question from memory (evidence only when no LLM is configured)",
		Args:        cobra.ExactArgs(1),
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			return askFunc(cmd, a, o, args[0])
		},
	}
	addRetrieveFlags(cmd, &o.retrieve)
	cmd.Flags().BoolVar(&o.trace, "trace", false, "print every retrieval stage and LLM call")
	return cmd
}

// askFunc prints the answer to a question with its evidence.
func askFunc(cmd *cobra.Command, a *app, o askOptions, question string) error {
	r := o.retrieve
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.AskResponse, error) {
		return m.Ask(ctx, api.AskRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: question,
			KTurn: r.kTurn, KEvent: r.kEvent, AsOf: r.asOf, EvidenceTokens: r.evidenceTokens, MaxEvidence: r.maxEvidence})
	},
		func(w io.Writer, ans *api.AskResponse) { printAnswer(w, ans, o.trace) })
}

func printAnswer(w io.Writer, ans *api.AskResponse, trace bool) {
	if ans.Answer != "" {
		fmt.Fprintf(w, "Answer: %s\n\n", safeLines(ans.Answer))
	} else if ans.Note != "" {
		fmt.Fprintf(w, "(%s)\n\n", safe(ans.Note))
	}
	printEvidence(w, ans.Evidence)
	if trace {
		printTrace(w, &ans.Trace)
	} else {
		fmt.Fprintf(w, "\n%d evidence turns, mode %s, %d LLM calls in %d rounds, %s\n",
			len(ans.Evidence), ans.Trace.Mode, len(ans.Trace.Calls), ans.Trace.Rounds, ans.Trace.Elapsed.Round(time.Microsecond))
	}
}
