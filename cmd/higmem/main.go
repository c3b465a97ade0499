// Command higmem is the command-line face of the higmem memory engine:
// ingest conversations, ask questions, serve the REST/MCP API, evaluate on
// LoCoMo and benchmark. Run `higmem --help`.
package main

import (
	"os"

	"github.com/higmem/higmem/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
