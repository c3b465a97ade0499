package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// historyOptions are the flags of `higmem history`.
type historyOptions struct {
	kind string
}

func newHistoryCommand(a *app) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history [ID]",
		Short: "Show the recorded changes of events and annotations",
		Long: `History lists the recorded changes of derived records (events, annotations, links,
turn deletions), oldest first; with an ID only that record's. With --json it prints
the REST response {"changes": [...]}.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return historyFunc(cmd, a, o, id)
		},
	}
	cmd.Flags().StringVar(&o.kind, "kind", "", "only this kind: event, annotation, turn, link, profile")
	return cmd
}

// historyFunc prints the history of the space.
func historyFunc(cmd *cobra.Command, a *app, o historyOptions, id string) error {
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.HistoryList, error) {
		return m.History(ctx, api.HistoryRequest{Scope: sc, Kind: o.kind, ID: id})
	},
		func(w io.Writer, l *api.HistoryList) {
			for _, h := range l.Changes {
				fmt.Fprintf(w, "%5d %s %-10s %-8s %-10s by %s\n", h.Seq, h.At.Format(time.RFC3339), safe(h.Kind), safe(h.ID), safe(h.Action), safe(h.Actor))
			}
		})
}
