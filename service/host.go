package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/lograte"
	"github.com/tooldex/tooldex/registry"
)

// helloTimeout bounds the wait for a host's first frame.
const helloTimeout = 10 * time.Second

// hostDeadlineSlack is how much later than the caller's deadline a host's
// deadline falls; see frameOf.
const hostDeadlineSlack = 250 * time.Millisecond

// Bounds on what a host sends.
const (
	// MaxHelloTools bounds the tools of a hello or of one ToolsUpdate, as
	// MaxBatch bounds a RegisterTools request.
	MaxHelloTools = catalog.MaxBatch
	// MaxHostTools bounds the tools one host session serves.
	MaxHostTools = catalog.MaxBatch
	// hostFrameRate and hostFrameBurst bound the frames a host session
	// sends per second: past them the server reads its stream more slowly
	// (flow control slows the host), it drops nothing.
	hostFrameRate  = 20000
	hostFrameBurst = 40000
)

// HostServer implements tooldex.v1.HostService over a Server's catalog
// and registry.
type HostServer struct {
	tooldexv1.UnimplementedHostServiceServer
	s *Server
	// logs limits repeated warnings per host session: a host sending
	// 100,000 bogus results wrote 21.6 MB of log.
	logs *lograte.Logs
}

var _ tooldexv1.HostServiceServer = (*HostServer)(nil)

// Hosts returns the HostService of s.
func (s *Server) Hosts() *HostServer { return &HostServer{s: s, logs: lograte.NewLogs(s.log, 0, 0)} }

// Connect runs one host session. Frames are read by one goroutine and sent
// by another (grpc-go allows one of each); the handler returns when the
// stream ends, the host goes silent, or the server closes host streams.
func (h *HostServer) Connect(stream tooldexv1.HostService_ConnectServer) error {
	s := h.s
	ctx := stream.Context()
	hello, err := recvHello(ctx, stream)
	if err != nil {
		return err
	}
	// The host serves in its principal's tenant, under a host id bound to
	// that principal.
	p := principalOf(ctx)
	sess := s.reg.Attach(registry.HostInfo{HostID: hello.GetHostId(), Version: hello.GetVersion(), Slots: int(hello.GetMaxConcurrentCalls()),
		Tenant: p.Tenant, Principal: p.Name})
	if err := s.cat.BindHost(p, hello.GetHostId(), sess.ID()); err != nil {
		sess.Detach()
		return s.toStatus(err)
	}
	log := s.log.With(zap.String("host", hello.GetHostId()), zap.String("session", sess.ID()), zap.String("tenant", p.Tenant), zap.String("principal", p.Name))
	results := s.hostUpsert(p, sess, hello.GetTools())
	defer func() {
		sess.Detach()
		removed := s.cat.Leave(p.Tenant, hello.GetHostId(), sess.ID())
		log.Info("host disconnected", zap.Int("tools_removed", removed))
	}()
	ack := &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_HelloAck{HelloAck: &tooldexv1.HelloAck{
		SessionId:         sess.ID(),
		HeartbeatInterval: durationpb.New(s.reg.HeartbeatInterval()),
		Results:           results,
	}}}
	if err := stream.Send(ack); err != nil {
		return err
	}
	log.Info("host connected", zap.String("version", hello.GetVersion()), zap.Int("tools", len(hello.GetTools())), zap.Int32("slots", hello.GetMaxConcurrentCalls()))

	replies := make(chan *tooldexv1.ConnectResponse, 1)
	sendErr := make(chan error, 1)
	sendCtx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	go func() { sendErr <- sendLoop(sendCtx, stream, sess, replies) }()
	recvErr := make(chan error, 1)
	go func() { recvErr <- h.recvLoop(ctx, p, stream, sess, replies, log) }()

	select {
	case err := <-recvErr:
		if errors.Is(err, io.EOF) || status.Code(err) == codes.Canceled {
			return nil
		}
		return err
	case err := <-sendErr:
		return err
	case <-sess.Done():
		return s.toStatus(errSessionClosed)
	case <-s.hostsCtx.Done():
		return s.toStatus(errShuttingDown)
	}
}

func recvHello(ctx context.Context, stream tooldexv1.HostService_ConnectServer) (*tooldexv1.HostHello, error) {
	type recv struct {
		m   *tooldexv1.ConnectRequest
		err error
	}
	ch := make(chan recv, 1)
	go func() {
		m, err := stream.Recv()
		ch <- recv{m, err}
	}()
	timer := time.NewTimer(helloTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		hello := r.m.GetHello()
		if hello == nil {
			return nil, badRequest("the first frame must be a hello", []Violation{{Field: "hello", Description: "missing"}})
		}
		if hello.GetHostId() == "" {
			return nil, badRequest("hello.host_id is empty", []Violation{{Field: "hello.host_id", Description: "is empty"}})
		}
		if hello.GetMaxConcurrentCalls() < 0 {
			return nil, badRequest("hello.max_concurrent_calls is negative", []Violation{{Field: "hello.max_concurrent_calls", Description: "is negative"}})
		}
		if n := len(hello.GetTools()); n > MaxHelloTools {
			d := fmt.Sprintf("has %d tools, at most %d per hello; send the rest in ToolsUpdate frames", n, MaxHelloTools)
			return nil, badRequest("hello.tools: "+d, []Violation{{Field: "hello.tools", Description: d}})
		}
		return hello, nil
	case <-timer.C:
		return nil, statusOf(zap.NewNop(), errNoHello)
	case <-ctx.Done():
		return nil, statusOf(zap.NewNop(), ctx.Err())
	}
}

// sendLoop is the session's only sender: calls and cancellations from the
// registry, and replies from the receive loop.
func sendLoop(ctx context.Context, stream tooldexv1.HostService_ConnectServer, sess *registry.Session, replies <-chan *tooldexv1.ConnectResponse) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-replies:
			if err := stream.Send(r); err != nil {
				return err
			}
		case f, ok := <-sess.Outbound():
			if !ok {
				return nil
			}
			msg := frameOf(f)
			if f.Kind == registry.FrameExecute {
				// A frame larger than the host can receive would cut its
				// stream and fail every call on it: only this call fails.
				if err := limit.CheckMessage("params", msg); err != nil {
					sess.Undeliverable(f.CallID, err)
					continue
				}
			}
			if err := stream.Send(msg); err != nil {
				return err
			}
			if f.Kind == registry.FrameExecute {
				sess.Delivered(f.CallID)
			}
		}
	}
}

func frameOf(f registry.Frame) *tooldexv1.ConnectResponse {
	switch f.Kind {
	case registry.FrameCancel:
		return &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Cancel{Cancel: &tooldexv1.CancelCall{CallId: f.CallID, Reason: f.Reason}}}
	case registry.FrameDrain:
		return &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Drain{Drain: &tooldexv1.Drain{Grace: durationpb.New(f.Grace)}}}
	}
	p, _ := f.Params.(*callParams)
	call := &tooldexv1.ExecuteCall{CallId: f.CallID, ToolName: f.Tool, Attempt: int32(f.Attempt), Caller: f.Caller, WantProgress: f.WantProgress}
	if p != nil {
		call.Params, call.ParamsJson = p.structured, p.json
	}
	if !f.Deadline.IsZero() {
		// The host's own deadline trails the caller's a little: at the
		// caller's deadline the server answers DEADLINE_EXCEEDED and cancels
		// the call on the host, so a host that reaches its deadline first
		// cannot turn the timeout into an ordinary tool error.
		call.Deadline = timestamppb.New(f.Deadline.Add(hostDeadlineSlack))
	}
	return &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Execute{Execute: call}}
}

func (h *HostServer) recvLoop(ctx context.Context, p *auth.Principal, stream tooldexv1.HostService_ConnectServer, sess *registry.Session, replies chan<- *tooldexv1.ConnectResponse, log *zap.Logger) (err error) {
	// A panic here (a ToolsUpdate's tool) would end the process: it ends
	// the session instead.
	defer func() {
		if r := recover(); r != nil {
			log.Error("panic in a host session", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			err = panicStatus()
		}
	}()
	frames := rate.NewLimiter(hostFrameRate, hostFrameBurst)
	key := sess.ID()
	for {
		if err := frames.Wait(ctx); err != nil {
			return err
		}
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		sess.Touch()
		switch f := m.GetFrame().(type) {
		case *tooldexv1.ConnectRequest_Result:
			if err := sess.Complete(f.Result.GetCallId(), f.Result); err != nil {
				// Late results (after a timeout or cancel) and unknown ids
				// are dropped; the session goes on.
				h.logs.Warn(key, "result dropped", zap.String("host", sess.HostID()), zap.String("session", key),
					zap.String("call", f.Result.GetCallId()), zap.Error(err))
			}
		case *tooldexv1.ConnectRequest_Tools:
			var results []*tooldexv1.HostToolResult
			if why := h.toolsRefused(sess, f.Tools); why != "" {
				for _, t := range f.Tools.GetUpsert() {
					results = append(results, &tooldexv1.HostToolResult{Name: t.GetName(), Rejected: why})
				}
				h.logs.Warn(key, "tools update refused", zap.String("host", sess.HostID()), zap.String("session", key), zap.String("why", why))
			} else {
				results = h.s.hostUpsert(p, sess, f.Tools.GetUpsert())
				if rm := f.Tools.GetRemove(); len(rm) > 0 {
					sess.RemoveTools(rm...)
					h.s.cat.Release(p.Tenant, sess.ID(), rm)
				}
			}
			select {
			case replies <- &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_ToolsAck{ToolsAck: &tooldexv1.ToolsAck{Results: results}}}:
			case <-ctx.Done():
				return ctx.Err()
			}
		case *tooldexv1.ConnectRequest_Progress:
			if err := sess.Progress(f.Progress.GetCallId(), f.Progress); err != nil {
				log.Debug("progress dropped", zap.String("call", f.Progress.GetCallId()), zap.Error(err))
			}
		case *tooldexv1.ConnectRequest_Heartbeat:
		case *tooldexv1.ConnectRequest_Hello:
			h.logs.Warn(key, "second hello ignored", zap.String("host", sess.HostID()), zap.String("session", key))
		default:
			h.logs.Warn(key, "unknown frame ignored", zap.String("host", sess.HostID()), zap.String("session", key))
		}
	}
}

// toolsRefused says why a ToolsUpdate is refused whole: more tools than a
// hello may carry, or more than a host may serve.
func (h *HostServer) toolsRefused(sess *registry.Session, u *tooldexv1.ToolsUpdate) string {
	n := len(u.GetUpsert())
	if n > MaxHelloTools {
		return fmt.Sprintf("invalid: the update has %d tools, at most %d", n, MaxHelloTools)
	}
	if served := sess.ToolCount(); served+n-len(u.GetRemove()) > MaxHostTools {
		return fmt.Sprintf("invalid: the host would serve more than %d tools (it serves %d)", MaxHostTools, served)
	}
	return ""
}

// hostUpsert registers the tools a host session of principal p offers, in
// p's tenant (see catalog.Catalog.Serve for what is refused). Entries are
// made, and their schemas compiled, before the catalog's lock is taken.
func (s *Server) hostUpsert(p *auth.Principal, sess *registry.Session, tools []*tooldexv1.Tool) []*tooldexv1.HostToolResult {
	entries := make([]*catalog.Entry, len(tools))
	invalid := make([]string, len(tools))
	for i, t := range tools {
		ve := &catalog.ValidationError{}
		entries[i] = catalog.NewEntry(ve, fmt.Sprintf("tools[%d]", i), t, p.Tenant, tooldexv1.Origin_ORIGIN_HOST, sess.HostID(), s.policy.loading(t))
		if err := ve.Err(); err != nil {
			invalid[i] = "invalid: " + err.Error()
		}
	}
	served, names := s.cat.Serve(p, sess.ID(), entries)
	results := make([]*tooldexv1.HostToolResult, len(tools))
	for i, t := range tools {
		results[i] = &tooldexv1.HostToolResult{Name: t.GetName(), Outcome: served[i].Outcome, Rejected: served[i].Rejected}
		if invalid[i] != "" {
			results[i].Rejected = invalid[i]
		}
	}
	sess.AddTools(names...)
	return results
}
