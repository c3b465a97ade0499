package cli

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/higmem/higmem/server"
)

func newMCPCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve memory to an MCP host over stdio (tools add_memory, search_memory, ask_memory, list_events, delete_memory)",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout, for agent hosts such as
Claude Desktop or Cursor that start higmem as a subprocess. Tools default to the
space named by --user/--agent (or HIGMEM_USER/HIGMEM_AGENT); their user_id and
agent_id arguments override it. Logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpFunc(cmd, a)
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpFunc runs the MCP server on the command's stdin and stdout until the
// host closes stdin or the context ends, then waits for writes in flight.
func mcpFunc(cmd *cobra.Command, a *app) error {
	ctx := cmd.Context()
	mem, err := a.open(ctx)
	if err != nil {
		return err
	}
	s := server.New(mem, server.Options{NoAuth: true, DefaultSpace: a.space(), Logger: a.log})
	err = s.MCP().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}})
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if derr := s.Shutdown(sctx); derr != nil {
		return derr
	}
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
