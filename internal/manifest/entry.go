package manifest

import (
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// Names of the two entry tools.
const (
	ToolSearchName  = "ToolSearch"
	ExecuteToolName = "ExecuteTool"
)

const toolSearchDescription = `Searches the deferred tools: tools that exist but are not loaded, so you cannot see their parameters or call them directly. Their names are listed in <available-deferred-tools>. Search before you tell the user that a capability is missing.

Query forms:
- "select:Name1,Name2" loads tools by exact name, with their full parameter schemas. Use it when you know the names, for example from <available-deferred-tools>.
- "discover:<task>" ranks tools for a task described in plain words and returns their schemas, e.g. "discover:take a screenshot of a web page".
- Keywords, e.g. "slack send message". Put + before a word that must match: "+slack send".
- "mcp__<server>" lists every tool of one MCP server, e.g. "mcp__github".

Results come best first with a one-line description and their parameters. Then call a tool you found with ExecuteTool: {"tool_name": "<name>", "params": {...}}, where params matches the tool's schema (use select:<name> to get the full schema). If nothing fits, try other words or discover:.`

const executeToolDescription = `Calls a deferred tool by name. Find the tool and its parameter schema with ToolSearch first (select:<name> returns the full schema), then pass the exact tool name and a params object that matches that schema; use {} when the tool takes no parameters. Tools already in your tool list are called directly, not through ExecuteTool. If the call is refused because of invalid params, the error names each bad field: fix those and call again.`

// EntryTools returns the definitions of the two entry tools every manifest
// carries, ToolSearch then ExecuteTool. Each call returns fresh values.
func EntryTools() []*tooldexv1.Tool {
	return []*tooldexv1.Tool{
		{
			Name:        ToolSearchName,
			Description: toolSearchDescription,
			SearchHint:  "find search load deferred tools",
			InputSchema: mustStruct(map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{
						"type":        "string",
						"description": `What to look for: "select:Name1,Name2", "discover:<task>", "mcp__<server>", or keywords where +word is required.`,
					},
					"max_results": map[string]any{
						"type":        "integer",
						"description": "Most results to return; 5 when omitted. select: returns every named tool regardless.",
						"minimum":     1,
						"maximum":     100,
					},
				},
				"required": []any{"query"},
			}),
			Annotations: &tooldexv1.ToolAnnotations{ReadOnly: true, Idempotent: true},
		},
		{
			Name:        ExecuteToolName,
			Description: executeToolDescription,
			SearchHint:  "execute run invoke call a deferred tool by name with parameters",
			InputSchema: mustStruct(map[string]any{
				"type": "object",
				"properties": map[string]any{
					"tool_name": map[string]any{
						"type":        "string",
						"description": "Exact name of the tool to call, as ToolSearch or <available-deferred-tools> gives it.",
					},
					"params": map[string]any{
						"type":        "object",
						"description": "The tool's parameters: a JSON object matching its input schema.",
					},
				},
				"required": []any{"tool_name", "params"},
			}),
		},
	}
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(fmt.Sprintf("manifest: entry tool schema: %v", err))
	}
	return s
}
