package mcpbridge

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// TestEverythingServer bridges the real npm server-everything (stdio mode)
// into a real tooldex server: search, echo, a long-running tool within and
// past the caller's deadline, and the tools it registers only after
// initialization (announced with notifications/tools/list_changed).
func TestEverythingServer(t *testing.T) {
	js := npmServer(t, "server-everything")
	addr, c := startTooldex(t)
	startBridge(t, addr, `{"mcpServers": {
		"everything": {"command": "node", "args": [`+quote(js)+`, "stdio"]}
	}}`)

	const p = "mcp__everything__"
	echo, long := p+"echo", p+"trigger-long-running-operation"
	waitHas(t, c, p, echo, long, p+"get-sum")
	t.Logf("tools: %v", listNames(t, c, p))

	t.Run("Search", func(t *testing.T) {
		if got := searchNames(t, c, "echo message"); !slices.Contains(got, echo) {
			t.Errorf("Search(echo message) = %v, want %s among them", got, echo)
		}
		if got := searchNames(t, c, "long running operation"); !slices.Contains(got, long) {
			t.Errorf("Search(long running operation) = %v, want %s among them", got, long)
		}
		if got := searchNames(t, c, "mcp__everything"); !slices.Contains(got, echo) || !slices.Contains(got, long) {
			t.Errorf("Search(mcp__everything) = %v, want %s and %s among them", got, echo, long)
		}
	})

	t.Run("Echo", func(t *testing.T) {
		everythingEcho(t, c, "hello everything")
	})

	t.Run("LongRunningWithinDeadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		start := time.Now()
		ex, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: long, ParamsJson: `{"duration": 0.3, "steps": 3}`})
		if err != nil {
			t.Fatalf("Execute %s: %v", long, err)
		}
		got := texts(ex.GetContent())
		if ex.GetIsError() || !strings.Contains(got, "Long running operation completed") {
			t.Errorf("Execute %s: is_error %v, text %q", long, ex.GetIsError(), got)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("Execute %s took %v, want at least the operation's 300ms", long, d)
		}
	})

	t.Run("LongRunningPastDeadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		ex, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: long, ParamsJson: `{"duration": 10, "steps": 2}`})
		elapsed := time.Since(start)
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("Execute %s past the deadline: err %v (code %v), result %v; want DEADLINE_EXCEEDED", long, err, status.Code(err), ex)
		}
		if elapsed > 3*time.Second {
			t.Errorf("Execute %s returned after %v, want promptly after the 500ms deadline", long, elapsed)
		}
		// The bridge keeps serving after the abandoned call.
		everythingEcho(t, c, "still here")
		// And another long call can still complete.
		ex, err = c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: long, ParamsJson: `{"duration": 0.1, "steps": 1}`})
		if err != nil || ex.GetIsError() {
			t.Errorf("Execute %s after a deadline: err %v, result %v", long, err, ex)
		}
	})

	// server-everything registers get-roots-list (the Go SDK client
	// advertises roots), simulate-research-query and the sampling and
	// elicitation tools (when the client advertises those capabilities)
	// in its oninitialized handler, each registration sending
	// notifications/tools/list_changed. This version has no tool that adds
	// or removes tools on demand, so only "appears" can be checked.
	t.Run("ToolsRegisteredAfterInitialize", func(t *testing.T) {
		late := p + "simulate-research-query"
		waitHas(t, c, p, late)
		if got := searchNames(t, c, "research query"); !slices.Contains(got, late) {
			t.Errorf("Search(research query) = %v, want %s among them", got, late)
		}
	})
}

func everythingEcho(t *testing.T, c tooldexv1.DiscoveryServiceClient, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ex, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "mcp__everything__echo", ParamsJson: `{"message": ` + quote(msg) + `}`})
	if err != nil {
		t.Fatalf("Execute echo: %v", err)
	}
	if got := texts(ex.GetContent()); ex.GetIsError() || !strings.Contains(got, "Echo: "+msg) {
		t.Errorf("Execute echo: is_error %v, text %q, want %q", ex.GetIsError(), got, "Echo: "+msg)
	}
}

// TestEverythingCapabilitiesRootsProgress bridges server-everything with
// sampling and elicitation declared and a root configured: the tools it
// keeps for such clients appear, get-roots-list lists the configured root,
// a sampling request is refused with the bridge's explanation (the
// frontend cannot be reached), and ExecuteStream gets the server's
// progress notifications: the bridge passed a progressToken upstream.
func TestEverythingCapabilitiesRootsProgress(t *testing.T) {
	js := npmServer(t, "server-everything")
	addr, c := startTooldex(t)
	startBridge(t, addr, `{"mcpServers": {
		"everything": {"command": "node", "args": [`+quote(js)+`, "stdio"], "sampling": true, "elicitation": true}
	}, "roots": [{"uri": "file:///tmp/tooldex-root", "name": "the root"}]}`)

	const p = "mcp__everything__"
	waitHas(t, c, p, p+"get-roots-list", p+"trigger-sampling-request", p+"trigger-elicitation-request", p+"trigger-url-elicitation", p+"simulate-research-query")

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ex, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: p + "get-roots-list", ParamsJson: `{}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()); !strings.Contains(got, "file:///tmp/tooldex-root") || !strings.Contains(got, "the root") {
		t.Errorf("get-roots-list = %q, want the configured root", got)
	}

	ex, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: p + "trigger-sampling-request", ParamsJson: `{"prompt": "hi"}`})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ex.GetContent()); !ex.GetIsError() || !strings.Contains(got, "does not forward server-to-client requests") {
		t.Errorf("trigger-sampling-request: is_error %v, text %q; want the bridge's refusal", ex.GetIsError(), got)
	}

	stream, err := c.ExecuteStream(ctx, &tooldexv1.ExecuteStreamRequest{Request: &tooldexv1.ExecuteRequest{
		ToolName: p + "trigger-long-running-operation", ParamsJson: `{"duration": 0.3, "steps": 3}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var progress []float64
	for {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("ExecuteStream after %v: %v", progress, err)
		}
		if pr := m.GetProgress(); pr != nil {
			if pr.GetTotal() != 3 {
				t.Errorf("progress total = %v, want 3", pr.GetTotal())
			}
			progress = append(progress, pr.GetProgress())
			continue
		}
		if got := texts(m.GetResult().GetContent()); !strings.Contains(got, "Long running operation completed") {
			t.Errorf("result = %q", got)
		}
		break
	}
	if !slices.Equal(progress, []float64{1, 2, 3}) {
		t.Errorf("progress = %v, want [1 2 3]", progress)
	}
}
