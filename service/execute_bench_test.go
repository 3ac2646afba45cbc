package service

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// pipeHost is a tool host on an in-process HostService stream: what the
// server sends arrives on out, what the host sends is read from in.
type pipeHost struct {
	ctx context.Context
	in  chan *tooldexv1.ConnectRequest
	out chan *tooldexv1.ConnectResponse
}

func (p *pipeHost) Context() context.Context     { return p.ctx }
func (p *pipeHost) SetHeader(metadata.MD) error  { return nil }
func (p *pipeHost) SendHeader(metadata.MD) error { return nil }
func (p *pipeHost) SetTrailer(metadata.MD)       {}
func (p *pipeHost) SendMsg(any) error            { return nil }
func (p *pipeHost) RecvMsg(any) error            { return nil }

func (p *pipeHost) Send(m *tooldexv1.ConnectResponse) error {
	select {
	case p.out <- m:
		return nil
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}

func (p *pipeHost) Recv() (*tooldexv1.ConnectRequest, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.ctx.Done():
		return nil, io.EOF
	}
}

// connectHost connects an in-process host, authenticated as p (nil: no
// principal), to s with hello, answers its calls with answer until the
// test ends, and returns the hello's ack; nil, and the stream's error, when
// the server refused the hello.
func connectHost(tb testing.TB, s *Server, p *auth.Principal, hello *tooldexv1.HostHello, answer func(*tooldexv1.ExecuteCall) *tooldexv1.CallResult) (*tooldexv1.HelloAck, error) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sctx := ctx
	if p != nil {
		sctx = auth.NewContext(ctx, p)
	}
	ph := &pipeHost{ctx: sctx, in: make(chan *tooldexv1.ConnectRequest, 64), out: make(chan *tooldexv1.ConnectResponse, 64)}
	done := make(chan error, 1)
	go func() { done <- s.Hosts().Connect(ph) }()
	stopped := false
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
		}
		return <-done
	}
	ph.in <- &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: hello}}
	var first *tooldexv1.ConnectResponse
	select {
	case first = <-ph.out:
	case err := <-done:
		cancel()
		return nil, err
	}
	tb.Cleanup(func() { _ = stop() })
	go func() {
		for {
			select {
			case m := <-ph.out:
				if c := m.GetExecute(); c != nil {
					r := answer(c)
					r.CallId = c.GetCallId()
					ph.in <- &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: r}}
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return first.GetHelloAck(), nil
}

// echo answers a call with its text parameter.
func echo(c *tooldexv1.ExecuteCall) *tooldexv1.CallResult {
	return &tooldexv1.CallResult{Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: c.GetParams().GetFields()["text"].GetStringValue()}}}}
}

// startEchoHost connects an in-process host serving echo (one required
// string parameter) to s.
func startEchoHost(b *testing.B, s *Server) {
	ack, err := connectHost(b, s, nil, &tooldexv1.HostHello{
		HostId: "bench", MaxConcurrentCalls: 64,
		Tools: []*tooldexv1.Tool{{
			Name: "echo", Description: "Echoes its text.",
			InputSchema: mustStruct(b, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		}},
	}, echo)
	if err != nil || len(ack.GetResults()) != 1 || ack.GetResults()[0].GetRejected() != "" {
		b.Fatalf("hello ack: %v, %v", ack, err)
	}
}

// BenchmarkExecuteHandler measures an Execute call in-process on the demo
// catalog: the lookup, schema validation, routing to a host and its
// answer, the host being an in-process stream that answers at once.
// serial is one caller; parallel is GOMAXPROCS callers.
func BenchmarkExecuteHandler(b *testing.B) {
	s := demoServer(b)
	startEchoHost(b, s)
	params := &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("hi")}}
	call := func(b *testing.B) {
		resp, err := s.Execute(context.Background(), &tooldexv1.ExecuteRequest{ToolName: "echo", Params: params})
		if err != nil || resp.GetContent()[0].GetText() != "hi" {
			b.Fatalf("Execute: %v, %v", resp, err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}
