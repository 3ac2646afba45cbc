package mcpconv

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/testing/protocmp"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func ptr[T any](v T) *T { return &v }

// wire is c as MCP's wire JSON, decoded to compare values, not bytes' order.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// contents are one MCP block of every kind, with annotations and _meta.
func contents() map[string]mcp.Content {
	anns := &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.7, LastModified: "2025-01-12T15:00:58Z"}
	meta := mcp.Meta{"vendor.example/k": map[string]any{"n": 1.5, "list": []any{"a", true}}}
	return map[string]mcp.Content{
		"text":            &mcp.TextContent{Text: "hello", Annotations: anns, Meta: meta},
		"empty text":      &mcp.TextContent{Text: ""},
		"image":           &mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png", Annotations: anns},
		"audio":           &mcp.AudioContent{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Meta: meta},
		"resource link":   &mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", Title: "A", Description: "the a file", MIMEType: "text/plain", Size: ptr[int64](1234), Icons: []mcp.Icon{{Source: "https://e/i.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"}}, Annotations: anns, Meta: meta},
		"link, no size":   &mcp.ResourceLink{URI: "https://e/x", Name: "x"},
		"link, size 0":    &mcp.ResourceLink{URI: "https://e/x", Name: "x", Size: ptr[int64](0)},
		"text resource":   &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.md", MIMEType: "text/markdown", Text: "# B", Meta: meta}, Annotations: anns},
		"blob resource":   &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}},
		"user only":       &mcp.TextContent{Text: "for the user", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}},
		"assistant, prio": &mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 1}},
	}
}

// TestContentRoundTrip: every MCP content block comes back from
// FromContent then ToContent with the same wire JSON.
func TestContentRoundTrip(t *testing.T) {
	for name, c := range contents() {
		t.Run(name, func(t *testing.T) {
			got := ToContent(FromContent(c))
			if diff := cmp.Diff(wire(t, c), wire(t, got)); diff != "" {
				t.Errorf("wire JSON changed (-sent +received):\n%s", diff)
			}
		})
	}
}

func TestFromContent(t *testing.T) {
	tests := []struct {
		name string
		in   mcp.Content
		want *tooldexv1.Content
	}{
		{"audio is audio", &mcp.AudioContent{Data: []byte{1}, MIMEType: "audio/wav"},
			&tooldexv1.Content{Kind: &tooldexv1.Content_Audio{Audio: &tooldexv1.Blob{Data: []byte{1}, MimeType: "audio/wav"}}}},
		{"a resource link keeps its name", &mcp.ResourceLink{URI: "file:///a", Name: "a", Description: "d"},
			&tooldexv1.Content{Kind: &tooldexv1.Content_ResourceLink{ResourceLink: &tooldexv1.ResourceLink{Uri: "file:///a", Name: "a", Description: "d"}}}},
		{"annotations", &mcp.TextContent{Text: "t", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2025-01-01T00:00:00Z"}},
			&tooldexv1.Content{Kind: &tooldexv1.Content_Text{Text: "t"}, Annotations: &tooldexv1.ContentAnnotations{Audience: []string{"user"}, Priority: ptr(0.5), LastModified: "2025-01-01T00:00:00Z"}}},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromContent(tt.in)
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("FromContent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSamplingContentIsJSON: content kinds that are not tool-result
// content travel as a JSON block of their wire form.
func TestSamplingContentIsJSON(t *testing.T) {
	c := FromContent(&mcp.ToolUseContent{ID: "u1", Name: "n", Input: map[string]any{"a": 1.0}})
	got := ToContent(c).(*mcp.TextContent).Text
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil || v["type"] != "tool_use" || v["id"] != "u1" {
		t.Errorf("tool_use block came back as %q", got)
	}
}

// TestToolRoundTrip: an MCP tool's fields come back as they were; hints
// come back explicit, with MCP's defaults.
func TestToolRoundTrip(t *testing.T) {
	in := &mcp.Tool{
		Name:         "weather",
		Title:        "Weather",
		Description:  "Gets the weather.",
		InputSchema:  map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"temp": map[string]any{"type": "number"}}},
		Icons:        []mcp.Icon{{Source: "data:image/png;base64,AAAA", MIMEType: "image/png", Sizes: []string{"any"}, Theme: "light"}},
		Meta:         mcp.Meta{"ui/resourceUri": "ui://weather"},
		Annotations:  &mcp.ToolAnnotations{Title: "Weather!", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}
	tl, err := FromTool(in)
	if err != nil {
		t.Fatal(err)
	}
	tl.Name = in.Name
	got := ToTool(tl)
	want := *in
	want.Annotations = &mcp.ToolAnnotations{Title: "Weather!", ReadOnlyHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	if diff := cmp.Diff(wire(t, &want), wire(t, got)); diff != "" {
		t.Errorf("tool wire JSON (-sent +received):\n%s", diff)
	}

	bare, err := FromTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}})
	if err != nil {
		t.Fatal(err)
	}
	a := ToTool(bare).Annotations
	if a == nil || a.ReadOnlyHint || a.IdempotentHint || !*a.DestructiveHint || !*a.OpenWorldHint {
		t.Errorf("no annotations: got %+v, want MCP's defaults (destructive, open world)", a)
	}
}

func TestResultRoundTrip(t *testing.T) {
	in := &mcp.CallToolResult{
		Content:           []mcp.Content{contents()["text"], contents()["audio"], contents()["resource link"]},
		StructuredContent: map[string]any{"temp": 21.5, "tags": []any{"a"}},
		IsError:           true,
	}
	r, err := FromResult(in)
	if err != nil {
		t.Fatal(err)
	}
	got := ToResult(r.Content, r.Structured, r.IsError)
	if diff := cmp.Diff(wire(t, in), wire(t, got)); diff != "" {
		t.Errorf("result wire JSON (-sent +received):\n%s", diff)
	}

	// structuredContent that is not an object is kept as a JSON block.
	r, err = FromResult(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: []any{1.0, "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Structured != nil || len(r.Content) != 1 || r.Content[0].GetJson().GetListValue() == nil {
		t.Errorf("array structuredContent: %v", r)
	}
}
