package mcpbridge

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// npmServer returns the entry point of an npm MCP server installed in
// testdata/mcp (scripts/test runs npm ci there). The test skips when it is
// missing, unless CI is set.
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(path)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		msg := "npm MCP servers not installed (run npm ci --no-audit --no-fund in testdata/mcp)"
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: %v %v", msg, statErr, nodeErr)
		}
		t.Skip(msg)
	}
	return path
}

// TestRealNPMServers bridges the real server-filesystem and server-memory
// into a real tooldex server.
func TestRealNPMServers(t *testing.T) {
	fsJS := npmServer(t, "server-filesystem")
	memJS := npmServer(t, "server-memory")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the bridge test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, c := startTooldex(t)
	b := startBridge(t, addr, `{"mcpServers": {
		"filesystem": {"command": "node", "args": [`+quote(fsJS)+`, `+quote(root)+`]},
		"memory": {"command": "node", "args": [`+quote(memJS)+`], "env": {"MEMORY_FILE_PATH": `+quote(filepath.Join(dir, "memory.jsonl"))+`}}
	}}`)

	waitHas(t, c, "mcp__filesystem__", "mcp__filesystem__read_text_file", "mcp__filesystem__list_directory")
	waitHas(t, c, "mcp__memory__", "mcp__memory__create_entities", "mcp__memory__open_nodes")
	if got := searchNames(t, c, "read text file"); !slices.Contains(got, "mcp__filesystem__read_text_file") {
		t.Errorf("Search(read text file) = %v, want mcp__filesystem__read_text_file among them", got)
	}
	if got := searchNames(t, c, "mcp__memory"); !slices.Contains(got, "mcp__memory__create_entities") {
		t.Errorf("Search(mcp__memory) = %v, want mcp__memory__create_entities among them", got)
	}

	ex, err := c.Execute(t.Context(), &tooldexv1.ExecuteRequest{
		ToolName: "mcp__filesystem__read_text_file", ParamsJson: `{"path": ` + quote(filepath.Join(root, "hello.txt")) + `}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()); ex.GetIsError() || !strings.Contains(got, "hello from the bridge test") {
		t.Errorf("read_text_file: is_error %v, text %q", ex.GetIsError(), got)
	}

	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: "mcp__memory__create_entities",
		ParamsJson: `{"entities": [{"name": "tooldex", "entityType": "project", "observations": ["bridges MCP servers"]}]}`})
	if err != nil {
		t.Fatal(err)
	}
	if ex.GetIsError() {
		t.Fatalf("create_entities: %v", texts(ex.GetContent()))
	}
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: "mcp__memory__open_nodes", ParamsJson: `{"names": ["tooldex"]}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()) + ex.GetStructuredContent().String(); ex.GetIsError() || !strings.Contains(got, "bridges MCP servers") {
		t.Errorf("open_nodes: is_error %v, got %q", ex.GetIsError(), got)
	}

	// Kill the filesystem server: its tools leave, the restart brings them back.
	proc := b.Process("filesystem")
	if proc == nil {
		t.Fatal("no filesystem process")
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(listNames(t, c, "mcp__filesystem__")) > 0 || b.Process("filesystem") == proc {
		if time.Now().After(deadline) {
			t.Fatalf("filesystem tools still served after its process was killed: %v", listNames(t, c, "mcp__filesystem__"))
		}
		if p := b.Process("filesystem"); p != nil && p != proc {
			break // already restarted; the removal happened in between
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitHas(t, c, "mcp__filesystem__", "mcp__filesystem__read_text_file")
	if p := b.Process("filesystem"); p == nil || p.Pid == proc.Pid {
		t.Errorf("filesystem process after restart = %v, want a new one", p)
	}
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{
		ToolName: "mcp__filesystem__read_text_file", ParamsJson: `{"path": ` + quote(filepath.Join(root, "hello.txt")) + `}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()); !strings.Contains(got, "hello from the bridge test") {
		t.Errorf("read_text_file after restart: %q", got)
	}
	if got := listNames(t, c, "mcp__memory__"); len(got) == 0 {
		t.Errorf("memory tools gone after the filesystem server restarted")
	}
}

// waitHas waits until the tools starting with prefix include every name.
func waitHas(t *testing.T, c tooldexv1.DiscoveryServiceClient, prefix string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := listNames(t, c, prefix)
		ok := true
		for _, n := range names {
			ok = ok && slices.Contains(got, n)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %s*: got %v, want %v among them", prefix, got, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
