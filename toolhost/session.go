package toolhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/limit"
)

var (
	errStreamEnded  = errors.New("toolhost: the connection to the server ended")
	errDrainTimeout = errors.New("toolhost: the host is shutting down and the drain timeout passed")
)

// session is one Connect stream. The Run goroutine owns it and runs its
// loop; it starts a sender and a receiver goroutine (the only ones to touch
// the stream) and a goroutine per call, and stops them all before it
// returns, calls aside, which runner.calls tracks.
type session struct {
	r      *runner
	log    *zap.Logger
	stream grpc.BidiStreamingClient[tooldexv1.ConnectRequest, tooldexv1.ConnectResponse]
	cancel context.CancelFunc // cancels the stream

	out *outbox

	frames     chan *tooldexv1.ConnectResponse // receiver to loop
	recvErr    chan error                      // the receiver's end, once
	senderDone chan error                      // the sender's end, once
	done       chan struct{}                   // closed to stop sender and receiver
	io         sync.WaitGroup                  // sender and receiver

	acked     chan struct{} // closed on the HelloAck
	heartbeat time.Duration // set before acked is closed

	draining  chan struct{} // closed: take no more calls
	drainOnce sync.Once

	callsCtx    context.Context // parent of every call's context
	cancelCalls context.CancelCauseFunc
	mu          sync.Mutex
	calls       map[string]context.CancelCauseFunc // by call id
	wg          sync.WaitGroup                     // this session's calls
}

// session runs one Connect stream until it ends (returning why) or ctx is
// done (draining, then returning nil). acked says whether the server
// acknowledged the hello.
func (r *runner) session(ctx context.Context) (acked bool, err error) {
	h := r.h
	// The stream outlives ctx while the host drains.
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stream, err := r.client.Connect(streamCtx)
	if err != nil {
		return false, fmt.Errorf("toolhost: opening the Connect stream: %w", err)
	}
	callsCtx, cancelCalls := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelCalls(errStreamEnded)
	s := &session{
		r:           r,
		log:         h.log,
		stream:      stream,
		cancel:      cancel,
		out:         newOutbox(),
		frames:      make(chan *tooldexv1.ConnectResponse),
		recvErr:     make(chan error, 1),
		senderDone:  make(chan error, 1),
		done:        make(chan struct{}),
		acked:       make(chan struct{}),
		draining:    make(chan struct{}),
		callsCtx:    callsCtx,
		cancelCalls: cancelCalls,
		calls:       make(map[string]context.CancelCauseFunc),
	}
	hello := h.attach(s)
	defer s.teardown()
	s.io.Add(2)
	go func() {
		defer s.io.Done()
		s.senderDone <- s.sendLoop(hello)
	}()
	go func() {
		defer s.io.Done()
		s.recvLoop()
	}()
	h.log.Debug("connecting", zap.String("addr", h.cfg.Addr), zap.Int("tools", len(hello.GetTools())))

	for {
		select {
		case msg := <-s.frames:
			s.handle(msg)
		case err := <-s.recvErr:
			if errors.Is(err, io.EOF) {
				return s.isAcked(), errors.New("toolhost: the server ended the stream")
			}
			return s.isAcked(), fmt.Errorf("toolhost: receiving: %w", err)
		case err := <-s.senderDone:
			return s.isAcked(), fmt.Errorf("toolhost: sending: %w", err)
		case <-ctx.Done():
			s.shutdown()
			return s.isAcked(), nil
		}
	}
}

// teardown stops the session: it detaches it from the host, ends the
// stream, cancels the calls still running (their results can no longer be
// delivered) and waits for the sender and receiver.
func (s *session) teardown() {
	s.r.h.detach(s)
	s.cancel()
	s.cancelCalls(errStreamEnded)
	s.out.close()
	close(s.done)
	s.io.Wait()
}

// shutdown drains the session for a stopping host: no new calls, the
// calls taken finish (or are cancelled after the drain timeout), their
// results are sent, and the stream is half-closed; it returns when the
// server has ended the stream or after closeWait.
func (s *session) shutdown() {
	s.startDraining()
	if !s.isAcked() {
		return
	}
	cfg := s.r.h.cfg
	s.log.Info("draining", zap.Duration("timeout", cfg.DrainTimeout))
	allDone := make(chan struct{})
	go func() { // ends once every call has; the loop below waits for it
		s.wg.Wait()
		close(allDone)
	}()
	drainTimer := time.NewTimer(cfg.DrainTimeout)
	defer drainTimer.Stop()
wait:
	for {
		select {
		case msg := <-s.frames:
			s.handle(msg)
		case <-allDone:
			break wait
		case <-drainTimer.C:
			s.log.Warn("drain timeout passed; cancelling the calls still running")
			s.cancelCalls(errDrainTimeout)
		case err := <-s.recvErr:
			s.log.Info("the stream ended while draining", zap.Error(err))
			s.cancelCalls(errStreamEnded)
			<-allDone
			return
		case err := <-s.senderDone:
			s.log.Info("sending failed while draining", zap.Error(err))
			s.cancelCalls(errStreamEnded)
			<-allDone
			return
		}
	}
	// Every result is queued: flush, half-close, and give the server a
	// moment to end the stream so that the last frames are not cut off.
	s.out.close()
	closeTimer := time.NewTimer(closeWait)
	defer closeTimer.Stop()
	for {
		select {
		case <-s.frames:
		case err := <-s.senderDone:
			if err != nil {
				return
			}
		case <-s.recvErr:
			return
		case <-closeTimer.C:
			s.log.Warn("the server did not end the stream after the host closed it")
			return
		}
	}
}

func (s *session) isAcked() bool {
	select {
	case <-s.acked:
		return true
	default:
		return false
	}
}

func (s *session) startDraining() {
	s.drainOnce.Do(func() { close(s.draining) })
}

func (s *session) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

// sendLoop is the only goroutine that sends on the stream. It sends the
// hello, waits for the HelloAck, then sends what is queued and a heartbeat
// whenever it has sent nothing for the heartbeat interval. It returns nil
// when stopped, or after flushing and half-closing a closed queue.
func (s *session) sendLoop(hello *tooldexv1.HostHello) error {
	if err := s.stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: hello}}); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	select {
	case <-s.acked:
	case <-s.done:
		return nil
	}
	interval := s.heartbeat
	t := time.NewTimer(interval)
	defer t.Stop()
	heartbeat := &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Heartbeat{Heartbeat: &tooldexv1.Heartbeat{}}}
	for {
		items, closed := s.out.take()
		for _, m := range items {
			if err := s.stream.Send(m); err != nil {
				return err
			}
		}
		if len(items) > 0 {
			t.Reset(interval)
		}
		if closed {
			if err := s.stream.CloseSend(); err != nil {
				return fmt.Errorf("closing: %w", err)
			}
			return nil
		}
		select {
		case <-s.out.wake:
		case <-t.C:
			if err := s.stream.Send(heartbeat); err != nil {
				return fmt.Errorf("heartbeat: %w", err)
			}
			t.Reset(interval)
		case <-s.done:
			return nil
		}
	}
}

// recvLoop is the only goroutine that receives from the stream. It hands
// frames to the session loop and reports how the stream ended.
func (s *session) recvLoop() {
	for {
		msg, err := s.stream.Recv()
		if err != nil {
			s.recvErr <- err
			return
		}
		select {
		case s.frames <- msg:
		case <-s.done:
			return
		}
	}
}

// handle acts on one frame from the server.
func (s *session) handle(msg *tooldexv1.ConnectResponse) {
	switch f := msg.GetFrame().(type) {
	case *tooldexv1.ConnectResponse_HelloAck:
		s.onAck(f.HelloAck)
	case *tooldexv1.ConnectResponse_Execute:
		s.execute(f.Execute)
	case *tooldexv1.ConnectResponse_Cancel:
		s.mu.Lock()
		cancel := s.calls[f.Cancel.GetCallId()]
		s.mu.Unlock()
		if cancel == nil {
			s.log.Debug("cancel for a call not running", zap.String("call_id", f.Cancel.GetCallId()))
			return
		}
		reason := f.Cancel.GetReason()
		if reason == "" {
			reason = "no reason given"
		}
		cancel(fmt.Errorf("toolhost: call cancelled by the server: %s", reason))
	case *tooldexv1.ConnectResponse_Drain:
		s.log.Info("the server is draining; taking no more calls", zap.Duration("grace", f.Drain.GetGrace().AsDuration()))
		s.startDraining()
	case *tooldexv1.ConnectResponse_ToolsAck:
		logRejected(s.log, "ToolsUpdate", f.ToolsAck.GetResults())
	default:
		s.log.Warn("unknown frame from the server", zap.String("frame", fmt.Sprintf("%T", f)))
	}
}

func (s *session) onAck(ack *tooldexv1.HelloAck) {
	if s.isAcked() {
		s.log.Warn("second HelloAck ignored")
		return
	}
	interval := defaultHeartbeat
	if ack.GetHeartbeatInterval() != nil {
		if d := ack.GetHeartbeatInterval().AsDuration(); d > 0 {
			interval = max(d, minHeartbeat)
		}
	}
	s.heartbeat = interval
	close(s.acked)
	s.log.Info("connected", zap.String("session_id", ack.GetSessionId()), zap.Duration("heartbeat", interval))
	logRejected(s.log, "HostHello", ack.GetResults())
	s.r.h.markReady(s)
}

func logRejected(log *zap.Logger, what string, results []*tooldexv1.HostToolResult) {
	for _, r := range results {
		if r.GetRejected() != "" {
			log.Warn("the server rejected a tool", zap.String("in", what),
				zap.String("tool", r.GetName()), zap.String("reason", r.GetRejected()))
		}
	}
}

// execute takes an ExecuteCall: it starts a goroutine that waits for a
// slot, runs the handler and queues the result.
func (s *session) execute(ex *tooldexv1.ExecuteCall) {
	id, tool := ex.GetCallId(), ex.GetToolName()
	log := s.log.With(zap.String("call_id", id), zap.String("tool", tool))
	if s.isDraining() {
		log.Info("call not taken: the host is draining")
		return
	}
	if id == "" {
		log.Warn("ExecuteCall without a call id ignored")
		return
	}
	fn := s.r.h.handler(tool)
	if fn == nil {
		log.Warn("call of a tool this host does not serve")
		s.result(errorResult(id, "tool %q is not served by this host", tool))
		return
	}
	params, err := callParams(ex)
	paramsJSON := ex.GetParamsJson()
	if err != nil {
		log.Warn("bad params_json; using params", zap.Error(err))
		paramsJSON = ""
	}
	ctx, cancel := context.WithCancelCause(s.callsCtx)
	stopDeadline := context.CancelFunc(func() {})
	if ex.GetDeadline() != nil {
		ctx, stopDeadline = context.WithDeadline(ctx, ex.GetDeadline().AsTime())
	}
	s.mu.Lock()
	if _, dup := s.calls[id]; dup {
		s.mu.Unlock()
		cancel(nil)
		stopDeadline()
		log.Warn("ExecuteCall with the id of a running call ignored")
		return
	}
	s.calls[id] = cancel
	s.mu.Unlock()

	call := &Call{
		ID:           id,
		Tool:         tool,
		Caller:       ex.GetCaller(),
		Params:       params,
		ParamsJSON:   paramsJSON,
		Attempt:      int(ex.GetAttempt()),
		WantProgress: ex.GetWantProgress(),
		progress: func(progress, total float64, message string) {
			s.out.push(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Progress{Progress: &tooldexv1.CallProgress{
				CallId: id, Progress: progress, Total: total, Message: message,
			}}}, maxQueuedProgress)
		},
	}
	s.wg.Add(1)
	s.r.calls.Add(1)
	go func() {
		defer s.r.calls.Done()
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.calls, id)
			s.mu.Unlock()
			stopDeadline()
			cancel(nil)
		}()
		s.run(ctx, log, call, fn)
	}()
}

// run waits for a slot, runs the call and queues its result.
func (s *session) run(ctx context.Context, log *zap.Logger, call *Call, fn Handler) {
	select {
	case s.r.slots <- struct{}{}:
	case <-ctx.Done():
		log.Info("call cancelled before it started", zap.Error(context.Cause(ctx)))
		s.result(errorResult(call.ID, "the call was cancelled before it started: %v", context.Cause(ctx)))
		return
	}
	defer func() { <-s.r.slots }()
	start := time.Now()
	res, err := invoke(ctx, log, call, fn)
	out := callResult(call.ID, res, err)
	log.Debug("call done", zap.Duration("took", time.Since(start)), zap.Bool("is_error", out.GetIsError()),
		zap.Bool("refused", out.GetRefused() != ""))
	s.result(out)
}

// invoke runs fn, turning a panic into an error.
func invoke(ctx context.Context, log *zap.Logger, call *Call, fn Handler) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("tool handler panicked", zap.Any("panic", p), zap.StackSkip("stack", 1))
			res, err = nil, fmt.Errorf("tool %q failed: the handler panicked: %v", call.Tool, p)
		}
	}()
	return fn(ctx, call)
}

func (s *session) result(r *tooldexv1.CallResult) {
	msg := &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: r}}
	if err := limit.CheckMessage("result", msg); err != nil {
		// Sent, it would cut the stream and fail every call on it: this
		// call fails alone.
		s.log.Warn("result too large for the server: sent as a tool error", zap.String("call_id", r.GetCallId()), zap.Error(err))
		msg = &tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: errorResult(r.GetCallId(), "the tool's result is too large: %v", err)}}
	}
	if !s.out.push(msg, 0) {
		s.log.Debug("result dropped: the stream has ended", zap.String("call_id", r.GetCallId()))
	}
}

// outbox is an unbounded queue of frames for the sender.
type outbox struct {
	mu     sync.Mutex
	items  []*tooldexv1.ConnectRequest
	closed bool
	wake   chan struct{} // a token when items were added
}

func newOutbox() *outbox {
	return &outbox{wake: make(chan struct{}, 1)}
}

// push queues m unless the outbox is closed or, with limit > 0, already
// holds limit frames. It reports whether m was queued.
func (o *outbox) push(m *tooldexv1.ConnectRequest, limit int) bool {
	o.mu.Lock()
	if o.closed || (limit > 0 && len(o.items) >= limit) {
		o.mu.Unlock()
		return false
	}
	o.items = append(o.items, m)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the queued frames and whether the outbox is closed (then
// nothing more will be queued).
func (o *outbox) take() ([]*tooldexv1.ConnectRequest, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	items := o.items
	o.items = nil
	return items, o.closed
}

// close stops the outbox taking frames and wakes the sender.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}
