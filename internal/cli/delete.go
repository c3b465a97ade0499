package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// deleteOptions are the flags of `higmem delete`.
type deleteOptions struct {
	all bool
	yes bool
}

func newDeleteCommand(a *app) *cobra.Command {
	var o deleteOptions
	cmd := &cobra.Command{
		Use:   "delete [TURN-ID...]",
		Short: "Delete turns (and their annotations, vectors, links), or --all of the space",
		Long: `Delete removes the named turns, or with --all everything stored for the space. It
cannot be undone: it asks for confirmation on a terminal, and otherwise needs --yes.
With --json it prints one REST DeleteResult per deletion ({"deleted": "turn", "id": ...}).`,
		Example: `  higmem delete --yes S1:4
  higmem delete --all --yes --user alice`,
		Annotations: noCreate,
		RunE: func(cmd *cobra.Command, args []string) error {
			return deleteFunc(cmd, a, o, args)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "delete everything in the space")
	addYesFlag(cmd, &o.yes)
	return cmd
}

// deleteFunc deletes the turns ids, or the whole space.
func deleteFunc(cmd *cobra.Command, a *app, o deleteOptions, ids []string) error {
	if o.all == (len(ids) > 0) {
		return errors.New("name turn ids, or give --all to delete the whole space")
	}
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	what := fmt.Sprintf("delete every turn, event and record of space %s", describeScope(a.scope()))
	if !o.all {
		what = fmt.Sprintf("delete %d turn(s) (%s) from space %s", len(ids), safe(strings.Join(ids, ", ")), describeScope(a.scope()))
	}
	if err := a.confirm(o.yes, what); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if o.all {
		d, err := m.DeleteSpace(cmd.Context(), a.scope())
		if err != nil {
			return err
		}
		if a.jsonOut {
			return writeJSON(w, d)
		}
		fmt.Fprintf(w, "deleted space %s\n", describeScope(a.scope()))
		return nil
	}
	for _, id := range ids {
		d, err := m.DeleteTurn(cmd.Context(), a.scope(), id)
		if err != nil {
			return err
		}
		if a.jsonOut {
			if err := writeJSON(w, d); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, "deleted %s\n", safe(id))
	}
	return nil
}
