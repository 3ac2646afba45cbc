package mcpfacade_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/manifest"
	"github.com/tooldex/tooldex/internal/mcpfacade"
)

// callRecorder records the requests the façade makes.
type callRecorder struct {
	tooldexv1.DiscoveryServiceClient
	mu       sync.Mutex
	searches []*tooldexv1.SearchRequest
	executes []*tooldexv1.ExecuteRequest
}

func (c *callRecorder) Search(_ context.Context, req *tooldexv1.SearchRequest, _ ...grpc.CallOption) (*tooldexv1.SearchResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.searches = append(c.searches, req)
	return &tooldexv1.SearchResponse{Text: "ok"}, nil
}

func (c *callRecorder) Execute(_ context.Context, req *tooldexv1.ExecuteRequest, _ ...grpc.CallOption) (*tooldexv1.ExecuteResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.executes = append(c.executes, req)
	return &tooldexv1.ExecuteResponse{Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "ran"}}}}, nil
}

// TestEntryToolInputs sends the entry tools inputs their schemas allow
// and forbid: the allowed reach tooldex, the forbidden are refused with a
// message naming the field and what it must be, never a Go decoding
// message, and reach nothing.
func TestEntryToolInputs(t *testing.T) {
	tests := []struct {
		tool, args string
		want       string // in the refusal; "" means accepted
	}{
		{"ToolSearch", `{"query": "slack send"}`, ""},
		{"ToolSearch", `{"query": "slack", "max_results": 3}`, ""},
		{"ToolSearch", `{"query": "slack", "max_results": "3"}`, `"max_results" must be an integer from 1 to 100, not a string ("3")`},
		{"ToolSearch", `{"query": "slack", "max_results": 2.5}`, `"max_results" must be an integer from 1 to 100, not a number (2.5)`},
		{"ToolSearch", `{"query": "slack", "max_results": 0}`, `"max_results" must be an integer from 1 to 100, not 0`},
		{"ToolSearch", `{"query": "slack", "max_results": 101}`, `not 101`},
		{"ToolSearch", `{"query": ["slack"]}`, `"query" must be a string, not an array (["slack"])`},
		{"ToolSearch", `{"query": "  "}`, `"query" is required`},
		{"ToolSearch", `{}`, `"query" is required`},
		{"ExecuteTool", `{"tool_name": "t", "params": {"a": 1}}`, ""},
		{"ExecuteTool", `{"tool_name": "t", "params": {}}`, ""},
		{"ExecuteTool", `{"tool_name": "t", "params": "{\"a\": 1}"}`, `"params" must be a JSON object, not a string ("{\"a\": 1}"): pass the object itself, not its JSON text in a string`},
		{"ExecuteTool", `{"tool_name": "t", "params": [1, 2]}`, `"params" must be a JSON object, not an array ([1,2])`},
		{"ExecuteTool", `{"tool_name": "t", "params": null}`, `"params" must be a JSON object, not null`},
		{"ExecuteTool", `{"tool_name": "t"}`, `"params" is required: pass {} when the tool takes no parameters`},
		{"ExecuteTool", `{"tool_name": 7, "params": {}}`, `"tool_name" must be a string, not a number (7)`},
		{"ExecuteTool", `{"params": {}}`, `"tool_name" is required`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			c := &callRecorder{}
			cs := connectInMemory(t, mcpfacade.New(c, mcpfacade.Options{}), nil)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			got := text(t, res)
			reached := len(c.searches) + len(c.executes)
			if tt.want == "" {
				if res.IsError || reached != 1 {
					t.Errorf("refused (%q) or not sent (%d requests), want accepted", got, reached)
				}
				return
			}
			if !res.IsError || !strings.Contains(got, tt.want) || reached != 0 {
				t.Errorf("result error %v, %d requests, text %q; want refused with %q", res.IsError, reached, got, tt.want)
			}
			for _, goMsg := range []string{"unmarshal", "Go value", "interface {}"} {
				if strings.Contains(got, goMsg) {
					t.Errorf("refusal %q has a Go decoding message", got)
				}
			}
		})
	}
}

// TestExecuteToolSendsParamsAsJSON: params travel as JSON text, so 64-bit
// integers reach the host exactly.
func TestExecuteToolSendsParamsAsJSON(t *testing.T) {
	c := &callRecorder{}
	cs := connectInMemory(t, mcpfacade.New(c, mcpfacade.Options{}), nil)
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ExecuteTool",
		Arguments: json.RawMessage(`{"tool_name": " t ", "params": {"id": 9007199254740993}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.executes) != 1 || c.executes[0].GetToolName() != "t" || c.executes[0].GetParamsJson() != `{"id":9007199254740993}` {
		t.Errorf("Execute requests = %v, want tool t with params_json {\"id\":9007199254740993}", c.executes)
	}
}

// TestEntryToolSchemasAreTheManifests: the façade's entry tools have the
// very schemas and descriptions every provider manifest has.
func TestEntryToolSchemasAreTheManifests(t *testing.T) {
	cs := connectInMemory(t, mcpfacade.New(&callRecorder{}, mcpfacade.Options{}), nil)
	listed := map[string]*mcp.Tool{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tl.Name] = tl
	}
	for _, want := range manifest.EntryTools() {
		got := listed[want.GetName()]
		if got == nil {
			t.Fatalf("no %s among %v", want.GetName(), listed)
		}
		if diff := cmp.Diff(want.GetInputSchema().AsMap(), got.InputSchema); diff != "" {
			t.Errorf("%s input schema differs from the manifest's (-manifest +façade):\n%s", want.GetName(), diff)
		}
		if got.Description != want.GetDescription() {
			t.Errorf("%s description differs from the manifest's", want.GetName())
		}
	}
}

// progressClient answers ExecuteStream with progress reports, then a
// result.
type progressClient struct {
	tooldexv1.DiscoveryServiceClient
	reports []*tooldexv1.ExecuteProgress
	unary   int
}

func (c *progressClient) Execute(context.Context, *tooldexv1.ExecuteRequest, ...grpc.CallOption) (*tooldexv1.ExecuteResponse, error) {
	c.unary++
	return &tooldexv1.ExecuteResponse{Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "unary"}}}}, nil
}

func (c *progressClient) ExecuteStream(_ context.Context, req *tooldexv1.ExecuteStreamRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[tooldexv1.ExecuteStreamResponse], error) {
	msgs := make([]*tooldexv1.ExecuteStreamResponse, 0, len(c.reports)+1)
	for _, p := range c.reports {
		msgs = append(msgs, &tooldexv1.ExecuteStreamResponse{Event: &tooldexv1.ExecuteStreamResponse_Progress{Progress: p}})
	}
	msgs = append(msgs, &tooldexv1.ExecuteStreamResponse{Event: &tooldexv1.ExecuteStreamResponse_Result{Result: &tooldexv1.ExecuteResponse{
		Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "streamed " + req.GetRequest().GetToolName()}}},
	}}})
	return &fakeStream{msgs: msgs}, nil
}

type fakeStream struct {
	grpc.ClientStream
	msgs []*tooldexv1.ExecuteStreamResponse
}

func (s *fakeStream) Recv() (*tooldexv1.ExecuteStreamResponse, error) {
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}

func (s *fakeStream) Header() (metadata.MD, error) { return nil, nil }

// TestProgressForwarded: a call with a progressToken goes through
// ExecuteStream and its client gets each report as notifications/progress
// with its token, before the result; a call without one uses Execute.
func TestProgressForwarded(t *testing.T) {
	c := &progressClient{reports: []*tooldexv1.ExecuteProgress{{Progress: 1, Total: 2, Message: "half"}, {Progress: 2, Total: 2}}}
	var mu sync.Mutex
	var got []mcp.ProgressNotificationParams
	cs := connectInMemory(t, mcpfacade.New(c, mcpfacade.Options{}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, *req.Params)
		},
	})
	params := &mcp.CallToolParams{Name: "ExecuteTool", Arguments: map[string]any{"tool_name": "slow", "params": map[string]any{}}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if txt := text(t, res); txt != "streamed slow" {
		t.Errorf("result %q, want streamed slow", txt)
	}
	want := []mcp.ProgressNotificationParams{
		{ProgressToken: "tok-1", Progress: 1, Total: 2, Message: "half"},
		{ProgressToken: "tok-1", Progress: 2, Total: 2},
	}
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= len(want) })
	mu.Lock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}
	mu.Unlock()

	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ExecuteTool", Arguments: map[string]any{"tool_name": "slow", "params": map[string]any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := text(t, res); txt != "unary" || c.unary != 1 {
		t.Errorf("without a token: result %q, %d unary calls; want Execute", txt, c.unary)
	}
}

// waitUntil polls cond for up to 10s (the client handles notifications on
// its own goroutine, after the result may have arrived).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
