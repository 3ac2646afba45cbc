// Package mcpconv converts between MCP's types (the official Go SDK's) and
// tooldex's: tools, content blocks and tool results, both ways, in one
// place so that the bridge (MCP server → tooldex) and the façade (tooldex →
// MCP client) mirror each other. What an MCP server sends comes out of the
// façade as it went in, where the protocol allows:
//
//   - every content type (text, image, audio, resource_link, embedded
//     resource), its annotations (audience, priority, lastModified) and its
//     _meta; a tool's inputSchema, outputSchema, title, icons, _meta and
//     annotations; structuredContent and isError.
//   - Not kept: a tool's annotation hints come back explicit, MCP's
//     defaults resolved (an absent destructiveHint is true); a priority of
//     0 and an embedded text resource's empty text are dropped by the SDK
//     itself (omitempty); numbers in _meta, schemas and structured content
//     are float64 (google.protobuf.Struct); structuredContent that is not
//     an object travels as a JSON block, which an MCP client reads as text.
//     Content types of sampling messages (tool_use, tool_result) are not
//     tool-result content: they travel as JSON blocks.
package mcpconv

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// FromTool returns the tooldex tool for MCP tool t: description, schemas,
// title, icons, _meta and annotations. The caller sets name and source.
func FromTool(t *mcp.Tool) (*tooldexv1.Tool, error) {
	out := &tooldexv1.Tool{Description: t.Description, Title: t.Title, Icons: fromIcons(t.Icons)}
	var err error
	if t.InputSchema != nil {
		if out.InputSchema, err = Struct(t.InputSchema); err != nil {
			return nil, fmt.Errorf("inputSchema: %w", err)
		}
	}
	if t.OutputSchema != nil {
		if out.OutputSchema, err = Struct(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("outputSchema: %w", err)
		}
	}
	if out.Meta, err = meta(t.Meta); err != nil {
		return nil, fmt.Errorf("_meta: %w", err)
	}
	out.Annotations = fromToolAnnotations(t.Annotations)
	return out, nil
}

// ToTool returns the MCP tool for tooldex tool t, named t's name. A tool
// without an input schema gets {"type": "object"}, which MCP requires.
func ToTool(t *tooldexv1.Tool) *mcp.Tool {
	out := &mcp.Tool{
		Name:        t.GetName(),
		Description: t.GetDescription(),
		Title:       t.GetTitle(),
		Icons:       toIcons(t.GetIcons()),
		InputSchema: map[string]any{"type": "object"},
	}
	if s := t.GetInputSchema(); s != nil {
		out.InputSchema = s.AsMap()
	}
	if s := t.GetOutputSchema(); s != nil {
		out.OutputSchema = s.AsMap()
	}
	if m := t.GetMeta(); m != nil {
		out.Meta = m.AsMap()
	}
	if a := t.GetAnnotations(); a != nil {
		destructive, openWorld := a.GetDestructive(), a.GetOpenWorld()
		out.Annotations = &mcp.ToolAnnotations{
			Title:           a.GetTitle(),
			ReadOnlyHint:    a.GetReadOnly(),
			IdempotentHint:  a.GetIdempotent(),
			DestructiveHint: &destructive,
			OpenWorldHint:   &openWorld,
		}
	}
	return out
}

// fromToolAnnotations maps MCP's hints, with MCP's defaults for absent ones
// (destructive and open-world unless said otherwise; a read-only tool is
// never destructive).
func fromToolAnnotations(ma *mcp.ToolAnnotations) *tooldexv1.ToolAnnotations {
	a := &tooldexv1.ToolAnnotations{Destructive: true, OpenWorld: true}
	if ma != nil {
		a.Title = ma.Title
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

func fromIcons(icons []mcp.Icon) []*tooldexv1.Icon {
	var out []*tooldexv1.Icon
	for _, ic := range icons {
		out = append(out, &tooldexv1.Icon{Src: ic.Source, MimeType: ic.MIMEType, Sizes: ic.Sizes, Theme: string(ic.Theme)})
	}
	return out
}

func toIcons(icons []*tooldexv1.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, ic := range icons {
		out = append(out, mcp.Icon{Source: ic.GetSrc(), MIMEType: ic.GetMimeType(), Sizes: ic.GetSizes(), Theme: mcp.IconTheme(ic.GetTheme())})
	}
	return out
}

// Struct converts a JSON object (any value encoding/json marshals to an
// object) to a Struct.
func Struct(v any) (*structpb.Struct, error) {
	if m, ok := v.(map[string]any); ok {
		if s, err := structpb.NewStruct(m); err == nil {
			return s, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return s, nil
}

// meta converts an MCP _meta; nil when it is empty.
func meta(m mcp.Meta) (*structpb.Struct, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return Struct(map[string]any(m))
}

// metaMap is meta's inverse.
func metaMap(s *structpb.Struct) mcp.Meta {
	if len(s.GetFields()) == 0 {
		return nil
	}
	return s.AsMap()
}

// Result is a tool result in tooldex's terms.
type Result struct {
	Content []*tooldexv1.Content
	// Structured is structuredContent when it is a JSON object (a non-object
	// value is appended to Content as a JSON block).
	Structured *structpb.Struct
	IsError    bool
}

// FromResult maps an MCP tools/call result.
func FromResult(r *mcp.CallToolResult) (*Result, error) {
	out := &Result{IsError: r.IsError}
	for _, c := range r.Content {
		if pc := FromContent(c); pc != nil {
			out.Content = append(out.Content, pc)
		}
	}
	if r.StructuredContent == nil {
		return out, nil
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("structuredContent: %w", err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err == nil {
		out.Structured = s
		return out, nil
	}
	// Not an object: keep it as a JSON block so nothing is lost.
	v := &structpb.Value{}
	if err := protojson.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("structuredContent: %w", err)
	}
	out.Content = append(out.Content, &tooldexv1.Content{Kind: &tooldexv1.Content_Json{Json: v}})
	return out, nil
}

// ToResult maps a tool result to MCP's.
func ToResult(content []*tooldexv1.Content, structured *structpb.Struct, isError bool) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(content)), IsError: isError}
	for _, c := range content {
		if mc := ToContent(c); mc != nil {
			res.Content = append(res.Content, mc)
		}
	}
	if structured != nil {
		res.StructuredContent = structured.AsMap()
	}
	return res
}

// FromContent maps one MCP content block; nil for nil. Kinds that are not
// tool-result content become JSON blocks of their wire form.
func FromContent(c mcp.Content) *tooldexv1.Content {
	var (
		out  = &tooldexv1.Content{}
		m    mcp.Meta
		anns *mcp.Annotations
	)
	switch x := c.(type) {
	case nil:
		return nil
	case *mcp.TextContent:
		out.Kind, m, anns = &tooldexv1.Content_Text{Text: x.Text}, x.Meta, x.Annotations
	case *mcp.ImageContent:
		out.Kind, m, anns = &tooldexv1.Content_Image{Image: &tooldexv1.Blob{Data: x.Data, MimeType: x.MIMEType}}, x.Meta, x.Annotations
	case *mcp.AudioContent:
		out.Kind, m, anns = &tooldexv1.Content_Audio{Audio: &tooldexv1.Blob{Data: x.Data, MimeType: x.MIMEType}}, x.Meta, x.Annotations
	case *mcp.ResourceLink:
		out.Kind = &tooldexv1.Content_ResourceLink{ResourceLink: &tooldexv1.ResourceLink{
			Uri: x.URI, Name: x.Name, Title: x.Title, Description: x.Description, MimeType: x.MIMEType,
			Size: x.Size, Icons: fromIcons(x.Icons),
		}}
		m, anns = x.Meta, x.Annotations
	case *mcp.EmbeddedResource:
		rc := x.Resource
		if rc == nil {
			return jsonBlock(c) // invalid (MCP requires the resource): kept as sent
		}
		r := &tooldexv1.Resource{Uri: rc.URI, MimeType: rc.MIMEType, Text: rc.Text, Blob: rc.Blob}
		r.Meta, _ = meta(rc.Meta)
		out.Kind, m, anns = &tooldexv1.Content_Resource{Resource: r}, x.Meta, x.Annotations
	default:
		return jsonBlock(c)
	}
	out.Annotations = fromAnnotations(anns)
	if s, err := meta(m); err == nil {
		out.Meta = s
	}
	return out
}

// jsonBlock is c's wire form as a JSON block (text when it is not JSON).
func jsonBlock(c mcp.Content) *tooldexv1.Content {
	b, err := json.Marshal(c)
	if err != nil {
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: fmt.Sprintf("%v", c)}}
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal(b, v); err != nil {
		return &tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: string(b)}}
	}
	return &tooldexv1.Content{Kind: &tooldexv1.Content_Json{Json: v}}
}

// ToContent maps one tooldex content block to MCP's; nil when it has no
// kind. A JSON block becomes text: its compact JSON.
func ToContent(c *tooldexv1.Content) mcp.Content {
	m, anns := metaMap(c.GetMeta()), toAnnotations(c.GetAnnotations())
	switch k := c.GetKind().(type) {
	case *tooldexv1.Content_Text:
		return &mcp.TextContent{Text: k.Text, Meta: m, Annotations: anns}
	case *tooldexv1.Content_Json:
		b, err := json.Marshal(k.Json.AsInterface())
		if err != nil {
			b = []byte(k.Json.String())
		}
		return &mcp.TextContent{Text: string(b), Meta: m, Annotations: anns}
	case *tooldexv1.Content_JsonText:
		return &mcp.TextContent{Text: k.JsonText, Meta: m, Annotations: anns}
	case *tooldexv1.Content_Image:
		return &mcp.ImageContent{Data: k.Image.GetData(), MIMEType: k.Image.GetMimeType(), Meta: m, Annotations: anns}
	case *tooldexv1.Content_Audio:
		return &mcp.AudioContent{Data: k.Audio.GetData(), MIMEType: k.Audio.GetMimeType(), Meta: m, Annotations: anns}
	case *tooldexv1.Content_ResourceLink:
		l := k.ResourceLink
		return &mcp.ResourceLink{
			URI: l.GetUri(), Name: l.GetName(), Title: l.GetTitle(), Description: l.GetDescription(),
			MIMEType: l.GetMimeType(), Size: l.Size, Icons: toIcons(l.GetIcons()), Meta: m, Annotations: anns,
		}
	case *tooldexv1.Content_Resource:
		r := k.Resource
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: r.GetUri(), MIMEType: r.GetMimeType(), Text: r.GetText(), Blob: r.GetBlob(), Meta: metaMap(r.GetMeta()),
		}, Meta: m, Annotations: anns}
	}
	return nil
}

func fromAnnotations(a *mcp.Annotations) *tooldexv1.ContentAnnotations {
	if a == nil {
		return nil
	}
	out := &tooldexv1.ContentAnnotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, string(r))
	}
	if a.Priority != 0 {
		p := a.Priority
		out.Priority = &p
	}
	return out
}

func toAnnotations(a *tooldexv1.ContentAnnotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{LastModified: a.GetLastModified(), Priority: a.GetPriority()}
	for _, r := range a.GetAudience() {
		out.Audience = append(out.Audience, mcp.Role(r))
	}
	return out
}
