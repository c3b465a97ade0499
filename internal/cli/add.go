package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/api"
)

// addOptions are the flags of `higmem add`.
type addOptions struct {
	id, speaker, session, time string
}

func newAddCommand(a *app) *cobra.Command {
	var o addOptions
	cmd := &cobra.Command{
		Use:   "add TEXT",
		Short: "Add one turn to memory",
		Example: `  higmem add --speaker Caroline --time "2023-05-08 13:56" "I went to a support group yesterday."
  echo "text from stdin" | higmem add --speaker me -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return addFunc(cmd, a, o, args[0])
		},
	}
	cmd.Flags().StringVar(&o.id, "id", "", "turn id (default: generated)")
	cmd.Flags().StringVar(&o.speaker, "speaker", "user", "who said it")
	cmd.Flags().StringVar(&o.session, "session", "", "session id")
	cmd.Flags().StringVar(&o.time, "time", "", "when it was said (RFC 3339, \"2023-05-08 13:56\", \"1:56 pm on 8 May, 2023\", Unix seconds...; default now)")
	return cmd
}

// addFunc adds one turn (text "-" reads it from stdin).
func addFunc(cmd *cobra.Command, a *app, o addOptions, text string) error {
	if text == "-" {
		b, err := io.ReadAll(cmd.InOrStdin())
		if err != nil {
			return fmt.Errorf("reading the turn from stdin: %w", err)
		}
		text = string(b)
	}
	if o.time == "" {
		o.time = time.Now().UTC().Format(time.RFC3339)
	}
	turn := &api.TurnInput{ID: o.id, SessionID: o.session, Speaker: o.speaker, Text: text, Time: o.time}
	return answer(cmd, a, func(ctx context.Context, m memoryAPI, sc api.Scope) (*api.AddResponse, error) {
		return m.Add(ctx, api.AddRequest{UserID: sc.UserID, AgentID: sc.AgentID, Turn: turn})
	}, printAddResult)
}
