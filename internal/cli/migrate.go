package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/internal/storecopy"
	"github.com/higmem/higmem/store"
)

// migrateOptions are the flags of `higmem migrate`.
type migrateOptions struct {
	from, to string
}

func newMigrateCommand(a *app) *cobra.Command {
	var o migrateOptions
	cmd := &cobra.Command{
		Use:   "migrate --from DB --to DB",
		Short: "Copy a whole database into an empty one: SQLite to PostgreSQL, back, or any store to any store",
		Long: `migrate copies every space of --from (turns, annotations, events, links, vectors,
history) into --to, which must be empty: a SQLite file (created when missing) or
a postgres:// URL. It is all or nothing: the copy is written in one transaction,
read back inside it, and committed only when its record counts and the SHA-256 of
its content equal the source's (the same checksum is computed on both sides).
The source is read inside its own write transaction, so writers wait until the
copy is done; nothing is written to it. The LLM response cache is not copied.`,
		Example: `  higmem migrate --from ~/.local/share/higmem/higmem.db --to postgres://higmem@db:5432/higmem
  higmem migrate --from postgres://higmem@db:5432/higmem --to backup.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return migrateFunc(cmd, a, o)
		},
	}
	cmd.Flags().StringVar(&o.from, "from", "", "database to copy: a SQLite file or a postgres:// URL")
	cmd.Flags().StringVar(&o.to, "to", "", "empty database to copy into: a SQLite file (created) or a postgres:// URL")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// migrateFunc copies the database o.from into the empty database o.to.
func migrateFunc(cmd *cobra.Command, a *app, o migrateOptions) error {
	ctx, from, to := cmd.Context(), o.from, o.to
	if from == to {
		return errors.New("migrate: --from and --to name the same database")
	}
	if !isPostgres(from) {
		if _, err := os.Stat(from); err != nil {
			return fmt.Errorf("migrate: --from: %w", err)
		}
	}
	src, err := openDatabase(ctx, from, false)
	if err != nil {
		return fmt.Errorf("migrate: opening %s: %w", displayDB(from), err)
	}
	a.closers = append(a.closers, src.Store.Close)
	dst, err := openDatabase(ctx, to, true)
	if err != nil {
		return fmt.Errorf("migrate: opening %s: %w", displayDB(to), err)
	}
	a.closers = append(a.closers, dst.Store.Close)
	sum, err := storecopy.Copy(ctx, dst.Store, src.Store, storecopy.Options{
		Progress: func(sp store.Space, i, n int) {
			if !a.quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "higmem: copying space %d/%d: %s\n", i+1, n, sp)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("migrate: %w (nothing was written to %s)", err, displayDB(to))
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"from": displayDB(from), "to": displayDB(to), "copied": sum})
	}
	fmt.Fprintf(cmd.OutOrStdout(), "copied %s\n  from %s\n  to   %s\n  verified: counts and checksum equal on both sides\n", sum, displayDB(from), displayDB(to))
	return nil
}
