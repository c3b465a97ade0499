package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// retrieveOptions are the retrieval flags of `higmem search` and `higmem
// ask`.
type retrieveOptions struct {
	kTurn, kEvent, maxEvidence, evidenceTokens int
	asOf                                       time.Time
}

func addRetrieveFlags(cmd *cobra.Command, o *retrieveOptions) {
	cmd.Flags().IntVar(&o.kTurn, "k-turn", 0, "turns from search (default 10)")
	cmd.Flags().IntVar(&o.kEvent, "k-event", 0, "candidate events (default 10)")
	cmd.Flags().IntVar(&o.maxEvidence, "max-evidence", 0, "cap on evidence turns (0: token budget only)")
	cmd.Flags().IntVar(&o.evidenceTokens, "evidence-tokens", 0, "token budget of the evidence (default 2000)")
	cmd.Flags().Func("as-of", "search memory as it stood at this time (RFC 3339, or a date: 2024-05-01)", func(s string) error {
		t, err := parseAsOf(s)
		o.asOf = t
		return err
	})
}

// parseAsOf reads an RFC 3339 time or a date (midnight UTC at its end is
// not implied: 2024-05-01 means 2024-05-01T00:00:00Z).
func parseAsOf(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 such as 2024-05-01T15:04:05Z, or a date such as 2024-05-01", s)
}

// searchOptions are the flags of `higmem search`.
type searchOptions struct {
	retrieve retrieveOptions
	session  string
}

func newSearchCommand(a *app) *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:         "search QUERY",
		Short:       "Show the evidence memory selects for a query, with the trace",
		Args:        cobra.ExactArgs(1),
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			return searchFunc(cmd, a, o, args[0])
		},
	}
	addRetrieveFlags(cmd, &o.retrieve)
	cmd.Flags().StringVar(&o.session, "session", "", "keep only evidence from this session")
	return cmd
}

// searchFunc prints the evidence for a query and the trace.
func searchFunc(cmd *cobra.Command, a *app, o searchOptions, query string) error {
	r := o.retrieve
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.SearchResponse, error) {
		return m.Search(ctx, api.SearchRequest{UserID: sc.UserID, AgentID: sc.AgentID, Question: query, SessionID: o.session,
			KTurn: r.kTurn, KEvent: r.kEvent, AsOf: r.asOf, EvidenceTokens: r.evidenceTokens, MaxEvidence: r.maxEvidence})
	},
		func(w io.Writer, res *api.SearchResponse) {
			printEvidence(w, res.Evidence)
			printTrace(w, &res.Trace)
		})
}
