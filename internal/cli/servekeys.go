package cli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/dbkeys"
)

// keyTable opens the API key table in the PostgreSQL database named by
// --db, on a small pool of its own (closed when the command ends).
func (a *app) keyTable(ctx context.Context) (*dbkeys.Table, error) {
	if !isPostgres(a.db) {
		return nil, fmt.Errorf("--keys-db keeps API keys in a PostgreSQL database: give --db postgres://... (with a SQLite file, use --keys-file)")
	}
	pool, err := a.sidePool(ctx)
	if err != nil {
		return nil, err
	}
	return dbkeys.Open(ctx, pool)
}

// sidePool opens a small pool of its own (closed when the command ends) on
// the PostgreSQL database named by --db, for the server's tables kept
// beside the memory (API keys, async jobs).
func (a *app) sidePool(ctx context.Context) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(a.db)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, func() error { pool.Close(); return nil })
	return pool, nil
}

// dbKeys loads the keys kept in the database for `serve --keys-db`.
func (a *app) dbKeys(ctx context.Context, cfg serveOptions) (*server.Keys, server.KeySource, error) {
	if cfg.noAuth || cfg.keysFile != "" {
		return nil, nil, errors.New("give one of --keys-db, --keys-file and --no-auth")
	}
	tab, err := a.keyTable(ctx)
	if err != nil {
		return nil, nil, err
	}
	keys, err := tab.LoadKeys(ctx)
	if err != nil {
		return nil, nil, err
	}
	if keys.Len() == 0 {
		return nil, nil, errors.New("the database holds no API keys; add one with `higmem serve keygen --keys-db --db ...`")
	}
	return keys, tab, nil
}

// newKeysCommand is `higmem serve keys`.
func newKeysCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "keys",
		Short:   "List the API keys kept in the PostgreSQL database (--db): names, users, creation times",
		Example: `  higmem serve keys --db postgres://higmem@db/higmem`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tab, err := a.keyTable(cmd.Context())
			if err != nil {
				return err
			}
			es, err := tab.List(cmd.Context())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(cmd.OutOrStdout(), es)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tUSERS\tCREATED")
			for _, e := range es {
				fmt.Fprintf(w, "%s\t%v\t%s\n", e.Name, e.Users, e.CreatedAt.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
}

// newRevokeCommand is `higmem serve revoke`.
func newRevokeCommand(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke an API key kept in the PostgreSQL database (--db); servers stop accepting it within their key refresh",
		Long: `Revoke removes an API key from the PostgreSQL database (--db). It cannot be undone:
it asks for confirmation on a terminal, and otherwise needs --yes.`,
		Example: `  higmem serve revoke --yes laptop --db postgres://higmem@db/higmem`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tab, err := a.keyTable(cmd.Context())
			if err != nil {
				return err
			}
			if err := a.confirm(yes, fmt.Sprintf("revoke API key %q", args[0])); err != nil {
				return err
			}
			found, err := tab.Revoke(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("no key named %q in the database", args[0])
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "higmem: revoked key %q; servers drop it at their next key refresh (serve --keys-refresh, default %s)\n", args[0], server.DefaultKeyRefresh)
			return nil
		},
	}
	addYesFlag(cmd, &yes)
	return cmd
}
