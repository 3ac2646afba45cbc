package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"

	"github.com/tooldex/tooldex/internal/mcpfacade"
	"github.com/tooldex/tooldex/service"
)

func ptrTo[T any](v T) *T { return &v }

// newFaithfulServer is an MCP server whose one tool has every tool field
// and returns every content type, annotated, with _meta and structured
// content, reporting progress when asked.
func newFaithfulServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "faithful", Version: "v1"}, nil)
	anns := &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.25, LastModified: "2025-01-12T15:00:58Z"}
	meta := mcp.Meta{"example.com/trace": map[string]any{"id": "abc", "n": 3.0}}
	icon := mcp.Icon{Source: "https://example.com/icon.png", MIMEType: "image/png", Sizes: []string{"48x48", "96x96"}, Theme: "dark"}
	srv.AddTool(&mcp.Tool{
		Name:         "all_content",
		Title:        "All content",
		Description:  "Returns one block of every MCP content type.",
		InputSchema:  map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}}, "required": []any{"count"}},
		Icons:        []mcp.Icon{icon},
		Meta:         mcp.Meta{"ui/resourceUri": "ui://faithful/all"},
		Annotations:  &mcp.ToolAnnotations{Title: "All!", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptrTo(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
		}
		return &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "for the user only", Annotations: anns, Meta: meta},
				&mcp.TextContent{Text: "for the model", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 1}},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G', 0, 255}, MIMEType: "image/png", Annotations: anns},
				&mcp.AudioContent{Data: []byte("RIFF\x00\x01WAVE"), MIMEType: "audio/wav", Meta: meta},
				&mcp.ResourceLink{URI: "file:///data/report.csv", Name: "report.csv", Title: "Report", Description: "the monthly report",
					MIMEType: "text/csv", Size: ptrTo[int64](4096), Icons: []mcp.Icon{icon}, Annotations: anns, Meta: meta},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.md", MIMEType: "text/markdown", Text: "# Notes", Meta: meta}, Annotations: anns},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///blob.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 254, 255}}},
			},
			StructuredContent: map[string]any{"count": 7.0, "items": []any{"a", map[string]any{"b": true}}},
		}, nil
	})
	return srv
}

// wireJSON is v's MCP wire JSON, decoded (values compared, not key order).
func wireJSON(t *testing.T, v any) any {
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

// TestRoundTripThroughTooldex: an MCP client of the façade (pass-through
// core tools) sees the bridged tool and its result exactly as a client of
// the MCP server itself does: every tool field, every content type with
// its annotations and _meta, structuredContent and isError, and the
// progress notifications (MCP server → bridge → tooldex → façade → MCP
// client). Only the name differs (mcp__faithful__all_content), and the
// annotation hints come explicit, MCP's defaults resolved.
func TestRoundTripThroughTooldex(t *testing.T) {
	upstream := newFaithfulServer()
	addr, c := startTooldexConfig(t, service.Config{Policy: service.Policy{Core: []string{"mcp__faithful__*"}}})
	ms := &memServer{srv: upstream}
	b, err := New(&Config{Servers: map[string]ServerConfig{"faithful": {Command: "unused"}}}, Options{
		Addr: addr, NewTransport: ms.transport, Logger: zaptest.NewLogger(t),
		MinRestart: 10 * time.Millisecond, MaxRestart: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	const name = "mcp__faithful__all_content"
	waitNames(t, c, "mcp__faithful__", []string{name})

	facade := mcpfacade.New(c, mcpfacade.Options{PassThrough: true})
	var mu sync.Mutex
	progress := map[string][]mcp.ProgressNotificationParams{}
	clientOpts := func(who string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			p := *req.Params
			p.ProgressToken = nil // each side's own
			progress[who] = append(progress[who], p)
		}}
	}
	via := connect(t, facade, clientOpts("via"))
	direct := connect(t, upstream, clientOpts("direct"))

	tools := func(cs *mcp.ClientSession, want string) *mcp.Tool {
		for tl, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tl.Name == want {
				return tl
			}
		}
		t.Fatalf("no tool %s", want)
		return nil
	}
	gotTool, wantTool := tools(via, name), tools(direct, "all_content")
	wantTool.Name = name
	wantTool.Annotations.DestructiveHint = ptrTo(false) // read-only: never destructive
	if diff := cmp.Diff(wireJSON(t, wantTool), wireJSON(t, gotTool)); diff != "" {
		t.Errorf("tools/list entry (-server +through tooldex):\n%s", diff)
	}

	call := func(cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
		p := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"n": 1}}
		p.SetProgressToken("tok")
		res, err := cs.CallTool(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		res.Meta = nil // the serving implementation's own
		return res
	}
	gotRes, wantRes := call(via, name), call(direct, "all_content")
	if diff := cmp.Diff(wireJSON(t, wantRes), wireJSON(t, gotRes)); diff != "" {
		t.Errorf("tools/call result (-server +through tooldex):\n%s", diff)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n, m := len(progress["via"]), len(progress["direct"])
		mu.Unlock()
		if n >= 3 && m >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress["direct"]) != 3 {
		t.Errorf("direct progress = %v, want 3 notifications", progress["direct"])
	}
	if diff := cmp.Diff(progress["direct"], progress["via"]); diff != "" {
		t.Errorf("progress notifications (-server +through tooldex):\n%s", diff)
	}
}

// connect connects a client to srv over in-memory transports.
func connect(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}
