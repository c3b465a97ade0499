package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
)

func newMCPCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve memory to an MCP host over stdio (tools " + strings.Join(server.Tools, ", ") + ")",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout (one JSON-RPC message per
line), for agent hosts such as Claude Desktop or Cursor that start higmem as a
subprocess. Its tools:
  ` + strings.Join(server.Tools, ", ") + `
They default to the space named by --user/--agent (or HIGMEM_USER/HIGMEM_AGENT);
their user_id and agent_id arguments override it. A malformed line is answered
with a JSON-RPC error (-32700 parse error, -32600 invalid request) and the next
one is read. Requests are answered one at a time, in the order they were read
(an add_memory piped before a search_memory is stored before the search runs).
When stdin closes, the requests already read are answered before the command
exits. Logs go to stderr.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | higmem mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpFunc(cmd, a)
		},
	}
}

// mcpFunc runs the MCP server on the command's stdin and stdout until the
// host closes stdin (and every request read is answered) or the context
// ends, then waits for writes in flight.
func mcpFunc(cmd *cobra.Command, a *app) error {
	mem, err := a.open(cmd.Context())
	if err != nil {
		return err
	}
	s := server.New(mem, server.Options{NoAuth: true, DefaultSpace: a.space(), Logger: a.log})
	return s.ServeStdio(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout())
}
