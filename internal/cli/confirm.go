package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// errNotConfirmed is returned by a destructive command that was not
// confirmed: neither --yes nor a "y" typed at the terminal.
var errNotConfirmed = errors.New("not confirmed: nothing was changed")

// addYesFlag adds --yes (-y) to a destructive command.
func addYesFlag(cmd *cobra.Command, yes *bool) {
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "do it without asking (required when stdin is not a terminal)")
}

// confirm asks before a destructive action described by what ("delete every
// turn of space alice/"). With yes it goes ahead; when stdin is a terminal
// it asks there (on stderr) and goes ahead on "y" or "yes"; otherwise it
// refuses, since a script that wipes data must say so with --yes.
func (a *app) confirm(yes bool, what string) error {
	if yes {
		return nil
	}
	if !a.interactive() {
		return fmt.Errorf("%s: give --yes to confirm (stdin is not a terminal to ask on)", what)
	}
	fmt.Fprintf(a.stderr, "higmem: %s? This cannot be undone. [y/N] ", what)
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(a.stderr)
		return fmt.Errorf("%s: %w", what, errNotConfirmed)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%s: %w", what, errNotConfirmed)
}

// interactive reports whether stdin is a terminal a person can answer on
// (a.isTerminal in tests).
func (a *app) interactive() bool {
	if a.isTerminal != nil {
		return a.isTerminal()
	}
	f, ok := a.stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
