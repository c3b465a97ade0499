package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/eval/locomo/harness"
)

// evalReportOptions are the flags of `higmem eval report`.
type evalReportOptions struct {
	out string
}

func newEvalReportCommand(a *app) *cobra.Command {
	var o evalReportOptions
	cmd := &cobra.Command{
		Use:   "report RUN...",
		Short: "Report one run, or several side by side",
		Long: `Report reads run directories made by ` + "`higmem eval locomo`" + ` and prints their report as
Markdown (systems labelled "system @ run" when several runs are given). With --out it
writes report.md, results.json and the SVG charts there instead.`,
		Example: `  higmem eval report eval-runs/k5 eval-runs/k10 eval-runs/k20 --out eval-runs/compare`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return evalReportFunc(cmd, a, o, args)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "write report.md, results.json and charts into this directory")
	return cmd
}

// evalReportFunc prints, or writes, the report of runs.
func evalReportFunc(cmd *cobra.Command, a *app, o evalReportOptions, args []string) error {
	rep, err := harness.Compare(args...)
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := harness.WriteReport(o.out, rep); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(o.out, harness.ReportFile))
		return nil
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), rep)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), harness.Markdown(rep))
	return err
}
