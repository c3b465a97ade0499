package cli

import (
	"github.com/spf13/cobra"
)

func newEvalCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate memory systems on benchmarks (LoCoMo)",
	}
	cmd.AddCommand(newEvalLoCoMoCommand(a), newEvalReportCommand(a))
	return cmd
}
