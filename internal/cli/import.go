package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func newImportCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Read an export into the space (all or nothing; vectors are recomputed)",
		Long: `Import reads a file written by export (- for stdin) into the space named by --user and
--agent, which may differ from the exported one. Everything is validated first and
written in one transaction: a bad line rejects the whole import, naming the line.
Vectors are not exported: the first command that searches the space afterwards
computes them, and says so.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importFunc(cmd, a, args[0])
		},
	}
}

// importFunc imports the file at path.
func importFunc(cmd *cobra.Command, a *app, path string) error {
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	var r io.Reader = cmd.InOrStdin()
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	res, err := m.Import(cmd.Context(), a.scope(), r)
	if err != nil {
		if path != "-" {
			return fmt.Errorf("import %s: %w", path, err)
		}
		return err
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "imported %d turns (%d already stored), %d annotations, %d events, %d links, %d profile records\n",
		res.Turns, res.Skipped, res.Annotations, res.Events, res.Links, res.Profiles)
	return nil
}
