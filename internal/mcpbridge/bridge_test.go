package mcpbridge

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type echoOut struct {
	Echo   string `json:"echo"`
	Length int    `json:"length"`
}

// newTestServer returns an MCP server with tools echo (typed, structured
// output, read-only) and weird.name/x (illegal name, image + resource
// content, an error when asked).
func newTestServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v1"}, nil)
	f := false
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "echo",
		Description: "Echo the text back",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f, Title: "Echo"},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}},
			echoOut{Echo: in.Text, Length: len(in.Text)}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "weird.name/x",
		Description: "A tool whose name is not provider-legal",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"fail":{"type":"boolean"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Fail bool }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if args.Fail {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "asked to fail"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x", MIMEType: "text/plain", Text: "resource text"}},
		}}, nil
	})
	return srv
}

// memServer connects bridge sessions to srv over in-memory transports and
// remembers the server side of each, so a test can end it (a crash).
type memServer struct {
	srv      *mcp.Server
	mu       sync.Mutex
	sessions []*mcp.ServerSession
	connects int
}

func (m *memServer) transport(string, ServerConfig) (mcp.Transport, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.srv.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.connects++
	m.mu.Unlock()
	return ct, nil
}

func (m *memServer) crash() {
	m.mu.Lock()
	ss := m.sessions[len(m.sessions)-1]
	m.mu.Unlock()
	ss.Close()
}

func (m *memServer) connectCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.connects
}

func TestBridgeInMemory(t *testing.T) {
	addr, c := startTooldex(t)
	ms := &memServer{srv: newTestServer()}
	cfg := &Config{Servers: map[string]ServerConfig{"my.server": {Command: "unused"}}}
	b, err := New(cfg, Options{
		Addr: addr, NewTransport: ms.transport, Logger: zaptest.NewLogger(t),
		MinRestart: 10 * time.Millisecond, MaxRestart: 50 * time.Millisecond,
		HostMinBackoff: 10 * time.Millisecond, HostMaxBackoff: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	const p = "mcp__my_server__"
	waitNames(t, c, p, []string{p + "echo", p + "weird_name_x"})

	// The tool as registered: description, schema, annotations, source.
	resp, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{NamePrefix: p + "echo"})
	if err != nil {
		t.Fatal(err)
	}
	echo := resp.GetTools()[0]
	if got, want := echo.GetDescription(), "Echo the text back"; got != want {
		t.Errorf("description = %q, want %q", got, want)
	}
	if got := echo.GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()["text"]; got == nil {
		t.Errorf("input schema %v has no text property", echo.GetInputSchema())
	}
	a := echo.GetAnnotations()
	if !a.GetReadOnly() || !a.GetIdempotent() || a.GetDestructive() || a.GetOpenWorld() || a.GetTitle() != "Echo" {
		t.Errorf("annotations = %v, want read-only, idempotent, closed-world, title Echo", a)
	}
	// The server records host tools as ORIGIN_HOST; the bridge offers
	// them as ORIGIN_MCP with the server's name.
	b.server("my.server").mu.Lock()
	src := b.server("my.server").tools[p+"echo"].GetSource()
	b.server("my.server").mu.Unlock()
	if got, want := src.GetOrigin(), tooldexv1.Origin_ORIGIN_MCP; got != want {
		t.Errorf("source origin = %v, want %v", got, want)
	}
	if got, want := src.GetId(), "my.server"; got != want {
		t.Errorf("source id = %q, want %q", got, want)
	}
	if got := searchNames(t, c, "echo the text"); len(got) == 0 || got[0] != p+"echo" {
		t.Errorf("Search(echo the text) = %v, want %s first", got, p+"echo")
	}

	// Execute: text + structured content.
	params, _ := structpb.NewStruct(map[string]any{"text": "hi"})
	ex, err := c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: p + "echo", Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(ex.GetContent()), "echo: hi"; got != want || ex.GetIsError() {
		t.Errorf("echo: text %q, is_error %v; want %q, false", got, ex.GetIsError(), want)
	}
	if got := ex.GetStructuredContent().AsMap(); got["echo"] != "hi" || got["length"] != 2.0 {
		t.Errorf("echo structured = %v, want echo hi, length 2", got)
	}
	// The sanitized name calls the original tool: image and resource.
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: p + "weird_name_x", ParamsJson: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := ex.GetContent(); len(got) != 2 || string(got[0].GetImage().GetData()) != "\x01\x02\x03" ||
		got[0].GetImage().GetMimeType() != "image/png" || got[1].GetResource().GetText() != "resource text" ||
		got[1].GetResource().GetUri() != "file:///x" {
		t.Errorf("weird tool content = %v, want an image and a resource", got)
	}
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: p + "weird_name_x", ParamsJson: `{"fail": true}`})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.GetIsError() || texts(ex.GetContent()) != "asked to fail" {
		t.Errorf("failing call = %v, want is_error with 'asked to fail'", ex)
	}

	// list_changed: add then remove tools.
	ms.srv.AddTool(&mcp.Tool{Name: "added", Description: "Added later", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added ok"}}}, nil
		})
	waitNames(t, c, p, []string{p + "added", p + "echo", p + "weird_name_x"})
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: p + "added"})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()); got != "added ok" {
		t.Errorf("added tool: %q, want %q", got, "added ok")
	}
	ms.srv.RemoveTools("weird.name/x")
	waitNames(t, c, p, []string{p + "added", p + "echo"})
	if got, want := b.Tools("my.server"), []string{p + "added", p + "echo"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Tools = %v, want %v", got, want)
	}

	// A crash removes the tools; the restart brings them back.
	before := ms.connectCount()
	ms.crash()
	deadline := time.Now().Add(10 * time.Second)
	sawDown := false
	for time.Now().Before(deadline) && ms.connectCount() == before {
		if len(listNames(t, c, p)) == 0 {
			sawDown = true
		}
		time.Sleep(time.Millisecond)
	}
	if ms.connectCount() == before {
		t.Fatalf("the bridge did not reconnect after the crash")
	}
	waitNames(t, c, p, []string{p + "added", p + "echo"})
	_ = sawDown // the restart may be faster than a ListTools round trip
	ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: p + "echo", ParamsJson: `{"text":"again"}`})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(ex.GetContent()), "echo: again"; got != want {
		t.Errorf("after restart: %q, want %q", got, want)
	}
}

// TestCrashRemovesTools checks that a server down for a while has no
// tools in tooldex, and comes back.
func TestCrashRemovesTools(t *testing.T) {
	addr, c := startTooldex(t)
	ms := &memServer{srv: newTestServer()}
	var mu sync.Mutex
	down := false
	failing := func(name string, sc ServerConfig) (mcp.Transport, error) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			return nil, context.DeadlineExceeded // cannot start
		}
		return ms.transport(name, sc)
	}
	b, err := New(&Config{Servers: map[string]ServerConfig{"t": {Command: "unused"}}}, Options{
		Addr: addr, NewTransport: failing,
		MinRestart: 10 * time.Millisecond, MaxRestart: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	waitNames(t, c, "mcp__t__", []string{"mcp__t__echo", "mcp__t__weird_name_x"})
	mu.Lock()
	down = true
	mu.Unlock()
	ms.crash()
	waitNames(t, c, "mcp__t__", nil)
	if got := searchNames(t, c, "echo the text"); len(got) != 0 {
		t.Errorf("Search while down = %v, want nothing", got)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	waitNames(t, c, "mcp__t__", []string{"mcp__t__echo", "mcp__t__weird_name_x"})
}

func TestServerNameCollision(t *testing.T) {
	b, err := New(&Config{Servers: map[string]ServerConfig{
		"a.b": {Command: "x"}, "a_b": {Command: "x"}, "c": {Command: "x", Disabled: true}, "d": {Command: "x"},
	}}, Options{Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range b.servers {
		got = append(got, s.name)
	}
	if want := []string{"a.b", "d"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("servers = %v, want %v", got, want)
	}
}
