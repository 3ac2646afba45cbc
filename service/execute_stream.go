package service

import (
	"fmt"
	"runtime/debug"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// progressQueue is how many progress reports may wait for a slow
// ExecuteStream reader before newer ones are dropped.
const progressQueue = 64

// ExecuteStream is Execute with progress: the same checks, audit record
// and metrics (executeAudited), the host's progress reports as they come,
// then the result. The call runs on its own goroutine so that a slow
// reader never holds up the host's session, which delivers the reports:
// they wait in a bounded queue, and what does not fit is dropped (progress
// is best effort; the result never is). Reports come before the result, in
// the order the host sent them.
func (s *Server) ExecuteStream(req *tooldexv1.ExecuteStreamRequest, stream grpc.ServerStreamingServer[tooldexv1.ExecuteStreamResponse]) error {
	ctx := stream.Context()
	reports := make(chan *tooldexv1.CallProgress, progressQueue)
	type answer struct {
		resp *tooldexv1.ExecuteResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in ExecuteStream", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
				a = answer{err: s.toStatus(fmt.Errorf("internal error"))}
			}
			done <- a
		}()
		a.resp, a.err = s.executeAudited(ctx, req.GetRequest(), func(p *tooldexv1.CallProgress) {
			select {
			case reports <- p:
			default:
			}
		})
	}()
	send := func(p *tooldexv1.CallProgress) error {
		return stream.Send(&tooldexv1.ExecuteStreamResponse{Event: &tooldexv1.ExecuteStreamResponse_Progress{Progress: &tooldexv1.ExecuteProgress{
			Progress: p.GetProgress(), Total: p.GetTotal(), Message: p.GetMessage(),
		}}})
	}
	broken := false // a Send failed: the caller is gone, its ctx ends the call
	for {
		select {
		case p := <-reports:
			if !broken && send(p) != nil {
				broken = true
			}
		case a := <-done:
			if a.err != nil {
				return a.err
			}
			// Reports the host sent before its result are queued already.
			for len(reports) > 0 && !broken {
				broken = send(<-reports) != nil
			}
			return stream.Send(&tooldexv1.ExecuteStreamResponse{Event: &tooldexv1.ExecuteStreamResponse_Result{Result: a.resp}})
		}
	}
}

// progressOf adapts an Execute progress callback to registry.Call's; nil
// stays nil (the host is told no one wants progress).
func progressOf(fn func(*tooldexv1.CallProgress)) func(any) {
	if fn == nil {
		return nil
	}
	return func(p any) {
		if cp, ok := p.(*tooldexv1.CallProgress); ok {
			fn(cp)
		}
	}
}
