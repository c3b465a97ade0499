package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
)

// keygenOptions are the flags of `higmem serve keygen`.
type keygenOptions struct {
	name, keysFile string
	keysDB         bool
	users          []string
}

func newKeygenCommand(a *app) *cobra.Command {
	var o keygenOptions
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Print a new random API key and its keys-file entry (only the hash is stored)",
		Example: `  higmem serve keygen --name laptop --users alice,bob
  higmem serve keygen --keys-file keys.json --name ci --users '*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return keygenFunc(cmd, a, o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "name of the key, shown in logs (default key-<time>)")
	cmd.Flags().StringSliceVar(&o.users, "users", []string{server.AllUsers}, "user ids the key may use (* for all)")
	cmd.Flags().StringVar(&o.keysFile, "keys-file", "", "also add the entry to this keys file (created if missing)")
	cmd.Flags().BoolVar(&o.keysDB, "keys-db", false, "also add the entry to the PostgreSQL database named by --db (see serve --keys-db)")
	return cmd
}

// keygenFunc makes a key, prints it with its entry and optionally appends
// the entry to a keys file or the database's key table.
func keygenFunc(cmd *cobra.Command, a *app, o keygenOptions) error {
	name, users, keysFile := o.name, o.users, o.keysFile
	if name == "" {
		name = "key-" + time.Now().UTC().Format("20060102-150405")
	}
	secret, k, err := server.NewKey(name, users)
	if err != nil {
		return err
	}
	if o.keysDB {
		tab, err := a.keyTable(cmd.Context())
		if err != nil {
			return err
		}
		if err := tab.Add(cmd.Context(), k); err != nil {
			return err
		}
	}
	if keysFile != "" {
		if err := appendKey(keysFile, k); err != nil {
			return err
		}
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"key": secret, "entry": k})
	}
	line, _ := json.Marshal(k)
	fmt.Fprintln(cmd.OutOrStdout(), secret)
	fmt.Fprintln(cmd.OutOrStdout(), string(line))
	switch {
	case o.keysDB:
		fmt.Fprintf(cmd.ErrOrStderr(), "higmem: added key %q to the database; the key above is shown only once\n", name)
	case keysFile != "":
		fmt.Fprintf(cmd.ErrOrStderr(), "higmem: added key %q to %s; the key above is shown only once\n", name, keysFile)
	default:
		fmt.Fprintln(cmd.ErrOrStderr(), `higmem: line 1 is the key (shown only once; send it as "Authorization: Bearer <key>"); add line 2 to the "keys" array of your keys file`)
	}
	return nil
}

// appendKey adds k to a keys file, creating it, and writes it atomically
// with owner-only permissions.
func appendKey(path string, k server.Key) error {
	var f server.KeysFile
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if _, err := server.ParseKeys(b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
	}
	f.Keys = append(f.Keys, k)
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if _, err := server.ParseKeys(out); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
