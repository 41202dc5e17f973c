package subcommands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/registry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"
)

func mcpCommand() subcommand {
	return fixed{&cli.Command{
		Name:  "mcp",
		Usage: "serve the tools to an MCP client over stdin and stdout (JSON-RPC lines) until stdin ends",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return fault.InvalidArgument("mcp takes no arguments: its requests come on standard input.").
					WithHint("give the roots as --root DIR: agentfs mcp --root DIR")
			}
			tl, err := tools(c)
			if err != nil {
				return err
			}
			return serveMCP(c.Context, tl, streamsOf(c), c.Bool("readonly"))
		},
	}}
}

// serveMCP serves one MCP session on s's stdin and stdout. Each tool is
// registered with the schemas of agentfs tools --format mcp, not ones the
// SDK would derive, and answers with the result agentfs prints:
// structuredContent is the result, content its JSON text; an error is an
// isError result whose text is the error object, with its stable code.
func serveMCP(ctx context.Context, tl *core.Tools, s Streams, readOnly bool) error {
	server := mcp.NewServer(&mcp.Implementation{Name: "agentfs", Version: buildVersion().Version},
		// No logging capability: agentfs logs nothing.
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	// One call at a time, as in a batch: a call's interrupt gate is the
	// Tools' own.
	var one sync.Mutex
	for _, t := range registry.Listed(readOnly) {
		info := t.Info()
		server.AddTool(&mcp.Tool{
			Name:         registry.ToolName(info.Name),
			Description:  info.Description,
			InputSchema:  info.InputSchema,
			OutputSchema: info.OutputSchema,
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    info.Annotations.ReadOnlyHint,
				DestructiveHint: &info.Annotations.DestructiveHint,
				IdempotentHint:  info.Annotations.IdempotentHint,
				OpenWorldHint:   new(false),
			},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.Params.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			one.Lock()
			defer one.Unlock()
			res, err := runStoppable(ctx, tl, func() (any, error) { return t.Call(ctx, tl, args) })
			return callResult(res, err)
		})
	}
	err := server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(s.Stdin), Writer: nopCloser{s.Stdout}})
	if errors.Is(err, io.EOF) {
		// The client closed stdin: the session is over.
		return nil
	}
	if err != nil && ctx.Err() != nil {
		return fault.Interrupted(ctx)
	}
	return err
}

// callResult is a tool's answer as an MCP result.
func callResult(res any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		text, merr := compactJSON(map[string]any{"error": fault.AsError(err).Bounded()})
		if merr != nil {
			return nil, merr
		}
		// No structuredContent: it would have to follow the output schema.
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
	}
	text, err := compactJSON(res)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(text),
	}, nil
}

// compactJSON is v as the CLI writes it: one line, < > & unescaped.
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// nopCloser leaves the process's stdout open when the session ends.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
