package mcpbridge

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// convertTool returns the tooldex tool for the MCP tool t of server (its
// configured name), named name.
func convertTool(server, name string, t *mcp.Tool) (*tooldexv1.Tool, error) {
	out := &tooldexv1.Tool{
		Name:        name,
		Description: t.Description,
		Source:      &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_MCP, Id: server},
	}
	if t.InputSchema != nil {
		s, err := toStruct(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		out.InputSchema = s
	}
	out.Annotations = convertAnnotations(t)
	return out, nil
}

// convertAnnotations maps MCP's hints to tooldex's, with MCP's defaults for
// absent ones (destructive and open-world unless said otherwise; a
// read-only tool is never destructive).
func convertAnnotations(t *mcp.Tool) *tooldexv1.ToolAnnotations {
	a := &tooldexv1.ToolAnnotations{Title: t.Title, Destructive: true, OpenWorld: true}
	if ma := t.Annotations; ma != nil {
		if a.Title == "" {
			a.Title = ma.Title
		}
		a.ReadOnly = ma.ReadOnlyHint
		a.Idempotent = ma.IdempotentHint
		if ma.DestructiveHint != nil {
			a.Destructive = *ma.DestructiveHint
		}
		if ma.OpenWorldHint != nil {
			a.OpenWorld = *ma.OpenWorldHint
		}
	}
	if a.ReadOnly {
		a.Destructive = false
	}
	return a
}

// toStruct converts a JSON object (any value encoding/json marshals to an
// object) to a Struct.
func toStruct(v any) (*structpb.Struct, error) {
	var m map[string]any
	switch x := v.(type) {
	case map[string]any:
		m = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
	}
	s, err := structpb.NewStruct(m)
	if err == nil {
		return s, nil
	}
	// Values structpb does not take directly: go through JSON.
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	m = nil
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return structpb.NewStruct(m)
}

// convertResult maps an MCP tools/call result to a toolhost result.
func convertResult(r *mcp.CallToolResult) (*toolhost.Result, error) {
	out := &toolhost.Result{IsError: r.IsError}
	for _, c := range r.Content {
		if pc := convertContent(c); pc != nil {
			out.Content = append(out.Content, pc)
		}
	}
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("structured content: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err == nil && m != nil {
			out.Structured = m
		} else {
			// Not an object: keep it as a JSON block so nothing is lost.
			var v any
			if json.Unmarshal(b, &v) == nil {
				if val, err := structpb.NewValue(v); err == nil {
					out.Content = append(out.Content, &tooldexv1.Content{Kind: &tooldexv1.Content_Json{Json: val}})
				}
			}
		}
	}
	return out, nil
}

// convertContent maps one MCP content block. Kinds tooldex has no block
// for (audio, resource links) become text or JSON describing them.
func convertContent(c mcp.Content) *tooldexv1.Content {
	switch x := c.(type) {
	case *mcp.TextContent:
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: x.Text}}
	case *mcp.ImageContent:
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Image{Image: &tooldexv1.Blob{Data: x.Data, MimeType: x.MIMEType}}}
	case *mcp.AudioContent:
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Resource{Resource: &tooldexv1.Resource{MimeType: x.MIMEType, Blob: x.Data}}}
	case *mcp.EmbeddedResource:
		if x.Resource == nil {
			return nil
		}
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Resource{Resource: &tooldexv1.Resource{
			Uri: x.Resource.URI, MimeType: x.Resource.MIMEType, Text: x.Resource.Text, Blob: x.Resource.Blob,
		}}}
	case *mcp.ResourceLink:
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Resource{Resource: &tooldexv1.Resource{
			Uri: x.URI, MimeType: x.MIMEType, Text: x.Description,
		}}}
	case nil:
		return nil
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: fmt.Sprintf("%v", c)}}
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: string(b)}}
		}
		val, err := structpb.NewValue(v)
		if err != nil {
			return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: string(b)}}
		}
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Json{Json: val}}
	}
}
