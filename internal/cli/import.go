package cli

import (
	"bufio"
	"bytes"
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

// importFunc imports the file at path (- for stdin). A leading UTF-8 byte
// order mark is skipped; a file with nothing but white space is an error,
// not an import of nothing.
func importFunc(cmd *cobra.Command, a *app, path string) error {
	var r io.Reader = cmd.InOrStdin()
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r, name = f, path
	}
	br := bufio.NewReader(r)
	empty, err := skipBOMAndSpace(br)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	if empty {
		return fmt.Errorf("import %s: the file is empty: nothing to import (want a higmem export: JSON lines written by higmem export)", name)
	}
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	res, err := m.Import(cmd.Context(), a.scope(), br)
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

// utf8BOM is the byte order mark some editors (Notepad, Excel exports)
// put at the start of a UTF-8 file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOMAndSpace discards a leading UTF-8 byte order mark and the white
// space after it, and reports whether nothing else follows.
func skipBOMAndSpace(br *bufio.Reader) (empty bool, err error) {
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	for {
		b, err := br.Peek(1)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.Discard(1)
		default:
			return false, nil
		}
	}
}
