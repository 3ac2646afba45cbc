package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoFrontend answers the requests a server sends its client that only
// the frontend's user or model could answer (sampling/createMessage,
// elicitation/create): tooldex's protocol carries calls from the frontend
// to hosts, and nothing back but progress and the result.
var ErrNoFrontend = errors.New("tooldex mcpbridge: this request cannot reach the user or the model: tooldex does not forward server-to-client requests; the capability is declared (bridge config) only so that the server offers its tools")

// clientOptions are the MCP client options of one session with the
// server: list_changed goes to changed; progress notifications go to the
// call whose token they carry (unless the transport does it: readProgress
// set); the sampling and elicitation capabilities are declared when
// configured, their requests answered ErrNoFrontend.
func (s *server) clientOptions(changed chan<- struct{}, readProgress bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}
	if !readProgress {
		o.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.dispatchProgress(req.Params)
		}
	}
	if s.b.opts.Sampling || s.sc.Sampling {
		o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			s.log.Warn("sampling/createMessage from the MCP server refused: no frontend to forward it to")
			return nil, ErrNoFrontend
		}
	}
	if s.b.opts.Elicitation || s.sc.Elicitation {
		// Form and URL modes both: the server decides which to use. Setting
		// Capabilities replaces the default, so roots are said again.
		o.Capabilities = &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		}
		o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s.log.Warn("elicitation/create from the MCP server refused: no frontend to forward it to")
			return nil, ErrNoFrontend
		}
	}
	return o
}

// dispatchProgress hands a progress notification to the call whose token
// it carries; others are dropped.
func (s *server) dispatchProgress(p *mcp.ProgressNotificationParams) {
	token, _ := p.ProgressToken.(string)
	s.mu.Lock()
	call := s.progress[token]
	s.mu.Unlock()
	if call != nil {
		call.Progress(p.Progress, p.Total, p.Message)
	}
}

// progressTransport makes connections that dispatch the server's progress
// notifications as they are read. The SDK hands notifications to its
// handler on another goroutine, after the reader has moved on: a call's
// last reports could reach the handler after its result (and be dropped,
// the call being over). Read in the reader's order, every report the
// server sent before its result comes before it. Not for streamable HTTP,
// whose connection the SDK tells of session changes through a method a
// wrapper cannot forward.
type progressTransport struct {
	mcp.Transport
	dispatch func(*mcp.ProgressNotificationParams)
}

func (t progressTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: c, dispatch: t.dispatch}, nil
}

type progressConn struct {
	mcp.Connection
	dispatch func(*mcp.ProgressNotificationParams)
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/progress" {
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(req.Params, &p) == nil {
			c.dispatch(&p)
		}
	}
	return m, err
}
