package mcpbridge

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooldex/tooldex/internal/mcpfacade"
)

// TestMCPClientThroughFacadeToNPMServer runs the whole chain: an MCP SDK
// client -> the facade (ToolSearch, ExecuteTool) -> a real tooldex server ->
// the bridge -> the real npm server-filesystem over stdio, with the client
// connected over in-memory transports and over streamable HTTP.
func TestMCPClientThroughFacadeToNPMServer(t *testing.T) {
	fsJS := npmServer(t, "server-filesystem")
	root := t.TempDir()
	hello := filepath.Join(root, "hello.txt")
	if err := os.WriteFile(hello, []byte("hello from npm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// server-filesystem resolves symlinks (macOS /var -> /private/var).
	if r, err := filepath.EvalSymlinks(hello); err == nil {
		hello = r
	}
	addr, c := startTooldex(t)
	startBridge(t, addr, `{"mcpServers": {
		"filesystem": {"command": "node", "args": [`+quote(fsJS)+`, `+quote(root)+`]}
	}}`)
	waitHas(t, c, "mcp__filesystem__", "mcp__filesystem__read_text_file")

	server := mcpfacade.New(c, mcpfacade.Options{Caller: "chain-test"})

	t.Run("InMemory", func(t *testing.T) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := server.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "chain-test", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			cs.Close()
			ss.Wait()
		}()
		chainExercise(t, cs, hello)
	})

	t.Run("StreamableHTTP", func(t *testing.T) {
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
		defer hs.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "chain-test", Version: "v0"}, nil).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		chainExercise(t, cs, hello)
	})
}

var readTextFileName = regexp.MustCompile(`mcp__filesystem__read_text_file\b`)

// chainExercise finds read_text_file with ToolSearch and reads hello with
// ExecuteTool.
func chainExercise(t *testing.T, cs *mcp.ClientSession, hello string) {
	t.Helper()
	res, got := chainCall(t, cs, "ToolSearch", map[string]any{"query": "read text file"})
	name := readTextFileName.FindString(got)
	if res.IsError || name == "" {
		t.Fatalf("ToolSearch(read text file): error %v, text %q; want mcp__filesystem__read_text_file", res.IsError, got)
	}
	res, got = chainCall(t, cs, "ExecuteTool", map[string]any{"tool_name": name, "params": map[string]any{"path": hello}})
	if res.IsError || !strings.Contains(got, "hello from npm") {
		t.Errorf("ExecuteTool %s: error %v, text %q; want %q", name, res.IsError, got, "hello from npm")
	}
	// A missing file is a tool error the model sees, not a protocol error.
	res, got = chainCall(t, cs, "ExecuteTool", map[string]any{"tool_name": name,
		"params": map[string]any{"path": filepath.Join(filepath.Dir(hello), "missing.txt")}})
	if !res.IsError {
		t.Errorf("ExecuteTool %s on a missing file: not an error, text %q", name, got)
	}
}

func chainCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s %v: %v", name, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				parts = append(parts, c.Resource.Text)
			}
		}
	}
	return res, strings.Join(parts, "\n")
}
