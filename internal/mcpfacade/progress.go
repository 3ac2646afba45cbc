package mcpfacade

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// exec runs ereq: with ExecuteStream when the MCP client asked for
// progress (its request has a progressToken), forwarding each progress
// report as notifications/progress with that token; with Execute
// otherwise.
func (f *facade) exec(ctx context.Context, req *mcp.CallToolRequest, ereq *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	var token any
	if req != nil && req.Params != nil && req.Session != nil {
		token = req.Params.GetProgressToken()
	}
	if token == nil {
		return f.client.Execute(ctx, ereq)
	}
	stream, err := f.client.ExecuteStream(ctx, &tooldexv1.ExecuteStreamRequest{Request: ereq})
	if err != nil {
		return nil, err
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return nil, err // io.EOF before a result is not possible from a tooldex server
		}
		switch ev := m.GetEvent().(type) {
		case *tooldexv1.ExecuteStreamResponse_Result:
			return ev.Result, nil
		case *tooldexv1.ExecuteStreamResponse_Progress:
			p := ev.Progress
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: p.GetProgress(), Total: p.GetTotal(), Message: p.GetMessage(),
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				f.log.Debug("mcpfacade: progress notification not sent", "error", err)
			}
		default:
			return nil, fmt.Errorf("ExecuteStream: unexpected message %T", ev)
		}
	}
}
