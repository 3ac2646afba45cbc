package e2e

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// TestExecuteStreamProgress runs a tool that reports progress through the
// real server: ExecuteStream gets every report, in order, then the result;
// the host is told the caller wants progress only on ExecuteStream; errors
// are the stream's status, as Execute's.
func TestExecuteStreamProgress(t *testing.T) {
	srv := launch(t)
	c := srv.conn(t)
	h := newHost(srv.addr, "progress-host", 2)
	mustHandle(t, h, mustTool("countdown", "Counts to three, reporting progress.", `{"type":"object"}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			for i := 1; i <= 3; i++ {
				call.Progress(float64(i), 3, fmt.Sprintf("step %d", i))
			}
			return toolhost.Text(fmt.Sprintf("want_progress=%v", call.WantProgress)), nil
		})
	runHost(t, h)

	stream, err := c.ExecuteStream(execCtx(t), &tooldexv1.ExecuteStreamRequest{Request: &tooldexv1.ExecuteRequest{ToolName: "countdown"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var result *tooldexv1.ExecuteResponse
	for {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv after %v: %v", got, err)
		}
		if p := m.GetProgress(); p != nil {
			got = append(got, fmt.Sprintf("%v/%v %s", p.GetProgress(), p.GetTotal(), p.GetMessage()))
			continue
		}
		result = m.GetResult()
		break
	}
	want := []string{"1/3 step 1", "2/3 step 2", "3/3 step 3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("progress = %q, want %q", got, want)
	}
	if text := textOf(result); text != "want_progress=true" {
		t.Errorf("result = %q, want want_progress=true", text)
	}
	if _, err := stream.Recv(); err == nil {
		t.Errorf("a message after the result")
	}

	resp, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: "countdown"})
	if err != nil {
		t.Fatal(err)
	}
	if text := textOf(resp); text != "want_progress=false" {
		t.Errorf("unary Execute result = %q, want want_progress=false", text)
	}

	stream, err = c.ExecuteStream(execCtx(t), &tooldexv1.ExecuteStreamRequest{Request: &tooldexv1.ExecuteRequest{ToolName: "no_such_tool"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.NotFound {
		t.Errorf("ExecuteStream of an unknown tool: %v, want NotFound", err)
	}
}
