package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// eventsOptions are the flags of `higmem events`.
type eventsOptions struct {
	turns bool
}

func newEventsCommand(a *app) *cobra.Command {
	var o eventsOptions
	cmd := &cobra.Command{
		Use:   "events [EVENT-ID]",
		Short: "List the events of the space with their turns",
		Long: `Events lists every event of the space, or with an EVENT-ID that event with its turns.
With --json it prints the REST response: {"events": [...]} for the list, the event
view {"event": ..., "turns": [...]} for one event.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return eventsFunc(cmd, a, o, id)
		},
	}
	cmd.Flags().BoolVar(&o.turns, "turns", false, "print each event's turns")
	return cmd
}

// eventsFunc prints the events of the space, or the one named by id.
func eventsFunc(cmd *cobra.Command, a *app, o eventsOptions, id string) error {
	if id != "" {
		return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.EventView, error) {
			return m.Event(ctx, sc, id)
		},
			func(w io.Writer, ev *api.EventView) { printEvent(w, *ev, true) })
	}
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.EventList, error) { return m.Events(ctx, sc) },
		func(w io.Writer, l *api.EventList) {
			if len(l.Events) == 0 {
				fmt.Fprintf(w, "no events in space %s (ingest a conversation first)\n", describeScope(a.scope()))
			}
			for _, ev := range l.Events {
				printEvent(w, ev, o.turns)
			}
		})
}

func printEvent(w io.Writer, ev api.EventView, turns bool) {
	e := ev.Event
	span := ""
	if !e.Start.IsZero() {
		span = " " + e.Start.Format("2006-01-02")
		if e.End.Format("2006-01-02") != e.Start.Format("2006-01-02") {
			span += ".." + e.End.Format("2006-01-02")
		}
	}
	fmt.Fprintf(w, "%s%s (%d turns) %s\n", safe(e.ID), span, len(e.TurnIDs), safe(e.Title))
	if e.Summary != "" && e.Summary != e.Title {
		fmt.Fprintf(w, "    %s\n", safe(e.Summary))
	}
	if len(e.Keywords) > 0 {
		fmt.Fprintf(w, "    keywords: %s\n", safeJoin(e.Keywords, ", "))
	}
	if turns {
		for _, t := range ev.Turns {
			fmt.Fprintf(w, "    [%s] %s: %s\n", safe(t.ID), safe(t.Speaker), safe(t.Text))
		}
	}
}
