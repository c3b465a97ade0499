package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exportOptions are the flags of `higmem export`.
type exportOptions struct {
	output string
}

func newExportCommand(a *app) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:         "export",
		Short:       "Write the space as JSON lines (turns, annotations, events, links)",
		Args:        cobra.NoArgs,
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exportFunc(cmd, a, o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "-", "file to write (- for stdout)")
	return cmd
}

// exportFunc writes the export to the output file or stdout. A failed
// export removes the partial file.
func exportFunc(cmd *cobra.Command, a *app, o exportOptions) error {
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	if o.output == "" || o.output == "-" {
		return m.Export(cmd.Context(), a.scope(), cmd.OutOrStdout())
	}
	f, err := os.Create(o.output)
	if err != nil {
		return err
	}
	err = m.Export(cmd.Context(), a.scope(), f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(o.output)
		return fmt.Errorf("export to %s: %w", o.output, err)
	}
	return nil
}
