package service

import (
	"context"
	"io"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

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

// startEchoHost connects an in-process host serving echo (one required
// string parameter) to s and answers its calls until the benchmark ends.
func startEchoHost(b *testing.B, s *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipeHost{ctx: ctx, in: make(chan *tooldexv1.ConnectRequest, 64), out: make(chan *tooldexv1.ConnectResponse, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Hosts().Connect(p)
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	p.in <- &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: "bench", MaxConcurrentCalls: 64,
		Tools: []*tooldexv1.Tool{{
			Name: "echo", Description: "Echoes its text.",
			InputSchema: mustStruct(b, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		}},
	}}}
	ack := (<-p.out).GetHelloAck()
	if len(ack.GetResults()) != 1 || ack.GetResults()[0].GetRejected() != "" {
		b.Fatalf("hello ack: %v", ack)
	}
	go func() {
		for {
			select {
			case m := <-p.out:
				if c := m.GetExecute(); c != nil {
					p.in <- &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: &tooldexv1.CallResult{
						CallId:  c.GetCallId(),
						Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: c.GetParams().GetFields()["text"].GetStringValue()}}},
					}}}
				}
			case <-ctx.Done():
				return
			}
		}
	}()
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
