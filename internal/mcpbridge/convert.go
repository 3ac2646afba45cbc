package mcpbridge

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/mcpconv"
	"github.com/tooldex/tooldex/toolhost"
)

// convertTool returns the tooldex tool for the MCP tool t of server (its
// configured name), named name.
func convertTool(server, name string, t *mcp.Tool) (*tooldexv1.Tool, error) {
	out, err := mcpconv.FromTool(t)
	if err != nil {
		return nil, err
	}
	out.Name = name
	out.Source = &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_MCP, Id: server}
	return out, nil
}

// convertResult maps an MCP tools/call result to a toolhost result.
func convertResult(r *mcp.CallToolResult) (*toolhost.Result, error) {
	res, err := mcpconv.FromResult(r)
	if err != nil {
		return nil, err
	}
	out := &toolhost.Result{Content: res.Content, IsError: res.IsError}
	if res.Structured != nil {
		out.Structured = res.Structured.AsMap()
	}
	return out, nil
}
