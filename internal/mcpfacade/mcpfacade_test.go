package mcpfacade_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/demohost"
	"github.com/tooldex/tooldex/internal/mcpfacade"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startTooldex starts a tooldex server on 127.0.0.1:0 with the demo tools
// served by an in-process tool host, and returns a client for it.
func startTooldex(t *testing.T, cfg service.Config) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	svc := service.New(cfg)
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	regCtx, stopReg := context.WithCancel(context.Background())
	regDone := make(chan struct{})
	go func() { _ = svc.Run(regCtx); close(regDone) }()
	serveDone := make(chan struct{})
	go func() { _ = gs.Serve(lis); close(serveDone) }()

	h := toolhost.New(toolhost.Config{Addr: lis.Addr().String(), HostID: "demo"})
	if err := demohost.Register(h, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	hostCtx, stopHost := context.WithCancel(context.Background())
	hostDone := make(chan struct{})
	go func() { _ = h.Run(hostCtx); close(hostDone) }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		stopHost()
		<-hostDone
		svc.CloseHosts()
		gs.GracefulStop()
		<-serveDone
		stopReg()
		<-regDone
	})
	readyCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.WaitReady(readyCtx); err != nil {
		t.Fatal(err)
	}
	return tooldexv1.NewDiscoveryServiceClient(conn)
}

// connectInMemory runs server over in-memory transports and returns a
// connected client session.
func connectInMemory(t *testing.T, server *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		b.WriteString(tc.Text)
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s %v: %v", name, args, err)
	}
	return res, text(t, res)
}

// exercise runs the scenario every transport must pass.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "ToolSearch") || !strings.Contains(got, "ExecuteTool") {
		t.Errorf("instructions %q lack the guidance", got)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "ExecuteTool,ToolSearch" {
		t.Errorf("tools %v, want ExecuteTool and ToolSearch", names)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "ToolSearch" && !strings.Contains(tool.Description, "select:") {
			t.Errorf("ToolSearch description does not teach select:")
		}
	}

	res, got := call(t, cs, "ToolSearch", map[string]any{"query": "time zone"})
	if res.IsError || !strings.Contains(got, "time_now") {
		t.Errorf("ToolSearch time zone: error %v, text %q", res.IsError, got)
	}
	res, got = call(t, cs, "ToolSearch", map[string]any{"query": "select:time_now"})
	if res.IsError || !strings.Contains(got, "time_now") || !strings.Contains(got, "zone") {
		t.Errorf("ToolSearch select:time_now: error %v, text %q (want the schema)", res.IsError, got)
	}
	res, got = call(t, cs, "ToolSearch", map[string]any{"query": "discover:what time is it in another city", "max_results": 3})
	if res.IsError || !strings.Contains(got, "time_now") || !strings.Contains(got, "zone") {
		t.Errorf("ToolSearch discover: error %v, text %q (want time_now with its schema)", res.IsError, got)
	}
	res, got = call(t, cs, "ToolSearch", map[string]any{})
	if !res.IsError || !strings.Contains(got, "query") {
		t.Errorf("ToolSearch without query: error %v, text %q", res.IsError, got)
	}

	res, got = call(t, cs, "ExecuteTool", map[string]any{"tool_name": "time_now", "params": map[string]any{"zone": "Asia/Tokyo"}})
	if res.IsError || !strings.Contains(got, "+09:00") {
		t.Errorf("ExecuteTool time_now Asia/Tokyo: error %v, text %q", res.IsError, got)
	}
	if res.StructuredContent != nil {
		t.Logf("structured content: %v", res.StructuredContent)
	}
	res, got = call(t, cs, "ExecuteTool", map[string]any{"tool_name": "time_now", "params": map[string]any{"zone": 5}})
	if !res.IsError || !strings.Contains(got, "zone") {
		t.Errorf("ExecuteTool invalid params: error %v, text %q (want the violation)", res.IsError, got)
	}
	res, got = call(t, cs, "ExecuteTool", map[string]any{"tool_name": "no_such_tool", "params": map[string]any{}})
	if !res.IsError || !strings.Contains(strings.ToLower(got), "search") {
		t.Errorf("ExecuteTool unknown tool: error %v, text %q (want a hint to search)", res.IsError, got)
	}
	res, got = call(t, cs, "ExecuteTool", map[string]any{"params": map[string]any{}})
	if !res.IsError || !strings.Contains(got, "tool_name") {
		t.Errorf("ExecuteTool without tool_name: error %v, text %q", res.IsError, got)
	}
	res, got = call(t, cs, "ExecuteTool", map[string]any{"tool_name": "time_now", "params": "Asia/Tokyo"})
	if !res.IsError || !strings.Contains(got, "params") {
		t.Errorf("ExecuteTool with string params: error %v, text %q", res.IsError, got)
	}
	// No params at all: the schema (the manifest's) requires them.
	res, got = call(t, cs, "ExecuteTool", map[string]any{"tool_name": "time_now"})
	if !res.IsError || !strings.Contains(got, `"params" is required: pass {}`) {
		t.Errorf("ExecuteTool time_now without params: error %v, text %q, want params required", res.IsError, got)
	}
}

func TestInMemory(t *testing.T) {
	client := startTooldex(t, service.Config{})
	cs := connectInMemory(t, mcpfacade.New(client, mcpfacade.Options{Caller: "test"}), nil)
	exercise(t, cs)
}

func TestStreamableHTTP(t *testing.T) {
	client := startTooldex(t, service.Config{})
	server := mcpfacade.New(client, mcpfacade.Options{})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	hs := httptest.NewServer(handler)
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exercise(t, cs)
}

const askPolicy = `{"default":"allow","rules":[{"tool":"calculate","action":"ask"}]}`

func TestApprovalWithoutElicitation(t *testing.T) {
	perms, err := permission.Parse([]byte(askPolicy))
	if err != nil {
		t.Fatal(err)
	}
	client := startTooldex(t, service.Config{Permissions: perms})
	cs := connectInMemory(t, mcpfacade.New(client, mcpfacade.Options{Caller: "test"}), nil)
	res, got := call(t, cs, "ExecuteTool", map[string]any{"tool_name": "calculate", "params": map[string]any{"expression": "2+2"}})
	if !res.IsError || !strings.Contains(got, "approv") || !strings.Contains(got, "calculate") {
		t.Fatalf("ask rule: error %v, text %q (want an approval error)", res.IsError, got)
	}
	// The token never reaches the model.
	direct, err := client.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: "calculate", Caller: "test",
		Params: mustStruct(t, map[string]any{"expression": "2+2"})})
	if err != nil {
		t.Fatal(err)
	}
	if tok := direct.GetApprovalRequired().GetApprovalToken(); tok == "" || strings.Contains(got, tok) || strings.Contains(strings.ToLower(got), "token") {
		t.Errorf("approval text %q leaks the token or mentions it", got)
	}
}

func TestApprovalByElicitation(t *testing.T) {
	perms, err := permission.Parse([]byte(askPolicy))
	if err != nil {
		t.Fatal(err)
	}
	client := startTooldex(t, service.Config{Permissions: perms})
	server := mcpfacade.New(client, mcpfacade.Options{Caller: "test"})
	for _, action := range []string{"accept", "decline"} {
		t.Run(action, func(t *testing.T) {
			var asked string
			cs := connectInMemory(t, server, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = req.Params.Message
					return &mcp.ElicitResult{Action: action}, nil
				},
			})
			res, got := call(t, cs, "ExecuteTool", map[string]any{"tool_name": "calculate", "params": map[string]any{"expression": "2*(3+4)^2"}})
			if !strings.Contains(asked, "calculate") {
				t.Errorf("user was asked %q", asked)
			}
			switch action {
			case "accept":
				if res.IsError || !strings.Contains(got, "98") {
					t.Errorf("approved call: error %v, text %q", res.IsError, got)
				}
			default:
				if !res.IsError || !strings.Contains(got, "did not approve") {
					t.Errorf("declined call: error %v, text %q", res.IsError, got)
				}
			}
		})
	}
}

func TestPassThrough(t *testing.T) {
	client := startTooldex(t, service.Config{Policy: service.Policy{Core: []string{"time_now"}}})
	cs := connectInMemory(t, mcpfacade.New(client, mcpfacade.Options{PassThrough: true}), nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "ExecuteTool,ToolSearch,time_now" {
		t.Fatalf("tools %v, want ExecuteTool, ToolSearch and time_now", names)
	}
	res, got := call(t, cs, "time_now", map[string]any{"zone": "Asia/Tokyo"})
	if res.IsError || !strings.Contains(got, "+09:00") {
		t.Errorf("time_now: error %v, text %q", res.IsError, got)
	}
}

// fakeClient answers every RPC with err.
type fakeClient struct {
	tooldexv1.DiscoveryServiceClient
	err  error
	resp *tooldexv1.ExecuteResponse
}

func (f fakeClient) Execute(context.Context, *tooldexv1.ExecuteRequest, ...grpc.CallOption) (*tooldexv1.ExecuteResponse, error) {
	return f.resp, f.err
}

func (f fakeClient) Search(context.Context, *tooldexv1.SearchRequest, ...grpc.CallOption) (*tooldexv1.SearchResponse, error) {
	return nil, f.err
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		err      error
		protocol bool
		want     string
	}{
		{status.Error(codes.Internal, "boom"), true, "boom"},
		{status.Error(codes.PermissionDenied, "permission denied: a rule denies x"), false, "a rule denies x"},
		{status.Error(codes.Unavailable, "no live host serves x"), false, "no live host"},
		{status.Error(codes.ResourceExhausted, "all hosts busy"), false, "busy"},
		{status.Error(codes.DeadlineExceeded, "deadline"), false, "deadline"},
		{status.Error(codes.NotFound, `"x" is not registered`), false, "ToolSearch"},
	}
	for _, tt := range tests {
		cs := connectInMemory(t, mcpfacade.New(fakeClient{err: tt.err}, mcpfacade.Options{}), nil)
		for _, tool := range []string{"ExecuteTool", "ToolSearch"} {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"tool_name": "x", "query": "x", "params": map[string]any{}}})
			if tt.protocol {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s %v: err %v, want a protocol error", tool, tt.err, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %v: protocol error %v, want a tool error", tool, tt.err, err)
				continue
			}
			if got := text(t, res); !res.IsError || !strings.Contains(got, tt.want) {
				t.Errorf("%s %v: error %v, text %q, want %q", tool, tt.err, res.IsError, got, tt.want)
			}
		}
	}
}

func TestContentMapping(t *testing.T) {
	resp := &tooldexv1.ExecuteResponse{
		ToolName: "x",
		IsError:  true,
		Content: []*tooldexv1.Content{
			{Kind: &tooldexv1.Content_Text{Text: "hello"}},
			{Kind: &tooldexv1.Content_Image{Image: &tooldexv1.Blob{Data: []byte{0x89, 'P', 'N', 'G'}, MimeType: "image/png"}}},
			{Kind: &tooldexv1.Content_Resource{Resource: &tooldexv1.Resource{Uri: "file:///a.txt", MimeType: "text/plain", Text: "body"}}},
		},
		StructuredContent: mustStruct(t, map[string]any{"n": 1}),
	}
	cs := connectInMemory(t, mcpfacade.New(fakeClient{resp: resp}, mcpfacade.Options{}), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ExecuteTool", Arguments: map[string]any{"tool_name": "x", "params": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) != 3 {
		t.Fatalf("result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello" {
		t.Errorf("content[0] %#v", res.Content[0])
	}
	if ic, ok := res.Content[1].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || string(ic.Data) != "\x89PNG" {
		t.Errorf("content[1] %#v", res.Content[1])
	}
	if er, ok := res.Content[2].(*mcp.EmbeddedResource); !ok || er.Resource.URI != "file:///a.txt" || er.Resource.Text != "body" {
		t.Errorf("content[2] %#v", res.Content[2])
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["n"] != float64(1) {
		t.Errorf("structured content %#v", res.StructuredContent)
	}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
