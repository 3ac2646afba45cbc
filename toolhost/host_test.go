package toolhost_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/toolhost"
)

// wait bounds every wait of the tests.
const wait = 5 * time.Second

// fakeServer is a minimal HostService: it accepts a hello, acks it with a
// 50ms heartbeat interval and hands the session to the test, which sends
// frames and reads what the host sends.
type fakeServer struct {
	tooldexv1.UnimplementedHostServiceServer
	sessions chan *fakeSession
	reject   string // a tool name the ack rejects
	wg       sync.WaitGroup
}

// fakeSession is one Connect stream as the test sees it.
type fakeSession struct {
	hello      *tooldexv1.HostHello
	frames     chan *tooldexv1.ConnectRequest // after the hello; closed when the host's side ends
	hostClosed chan struct{}                  // closed when Recv fails (io.EOF: the host half-closed)
	send       chan *tooldexv1.ConnectResponse
	end        chan error // the server ends the stream with this error (nil: OK)
}

func (f *fakeServer) Connect(stream grpc.BidiStreamingServer[tooldexv1.ConnectRequest, tooldexv1.ConnectResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "the first frame must be a hello")
	}
	var results []*tooldexv1.HostToolResult
	for _, t := range hello.GetTools() {
		r := &tooldexv1.HostToolResult{Name: t.GetName(), Outcome: tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED}
		if t.GetName() == f.reject {
			r = &tooldexv1.HostToolResult{Name: t.GetName(), Rejected: "owned by another registrant"}
		}
		results = append(results, r)
	}
	if err := stream.Send(&tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_HelloAck{HelloAck: &tooldexv1.HelloAck{
		SessionId:         "s1",
		HeartbeatInterval: durationpb.New(50 * time.Millisecond),
		Results:           results,
	}}}); err != nil {
		return err
	}
	s := &fakeSession{
		hello:      hello,
		frames:     make(chan *tooldexv1.ConnectRequest, 4096),
		hostClosed: make(chan struct{}),
		send:       make(chan *tooldexv1.ConnectResponse),
		end:        make(chan error, 1),
	}
	ctx := stream.Context()
	f.wg.Add(1)
	go func() { // ends when the stream does
		defer f.wg.Done()
		defer close(s.frames)
		defer close(s.hostClosed)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case s.frames <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	f.sessions <- s // buffered
	for {
		select {
		case m := <-s.send:
			if err := stream.Send(m); err != nil {
				return err
			}
		case err := <-s.end:
			return err
		case <-s.hostClosed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// next returns the next session the server accepted.
func (f *fakeServer) next(t *testing.T) *fakeSession {
	t.Helper()
	select {
	case s := <-f.sessions:
		return s
	case <-time.After(wait):
		t.Fatal("no session: the host did not connect")
		return nil
	}
}

// frame returns the next frame from the host that is not a heartbeat.
func (s *fakeSession) frame(t *testing.T) *tooldexv1.ConnectRequest {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case m, ok := <-s.frames:
			if !ok {
				t.Fatal("the stream ended while waiting for a frame")
			}
			if m.GetHeartbeat() == nil {
				return m
			}
		case <-timeout:
			t.Fatal("no frame from the host")
		}
	}
}

// result returns the next CallResult, skipping heartbeats and progress.
func (s *fakeSession) result(t *testing.T) *tooldexv1.CallResult {
	t.Helper()
	for {
		m := s.frame(t)
		if r := m.GetResult(); r != nil {
			return r
		}
		if m.GetProgress() == nil {
			t.Fatalf("got frame %v, want a result", m)
		}
	}
}

// sendFrame sends m to the host.
func (s *fakeSession) sendFrame(t *testing.T, m *tooldexv1.ConnectResponse) {
	t.Helper()
	select {
	case s.send <- m:
	case <-time.After(wait):
		t.Fatal("could not send a frame: the stream ended")
	}
}

// execute sends an ExecuteCall of tool with params.
func (s *fakeSession) execute(t *testing.T, id, tool string, params map[string]any) {
	t.Helper()
	st, err := structpb.NewStruct(params)
	if err != nil {
		t.Fatal(err)
	}
	s.sendFrame(t, executeFrame(&tooldexv1.ExecuteCall{CallId: id, ToolName: tool, Params: st, Attempt: 1, Caller: "tester"}))
}

func executeFrame(ex *tooldexv1.ExecuteCall) *tooldexv1.ConnectResponse {
	return &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Execute{Execute: ex}}
}

func cancelFrame(id, reason string) *tooldexv1.ConnectResponse {
	return &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Cancel{Cancel: &tooldexv1.CancelCall{CallId: id, Reason: reason}}}
}

// env is a fake server and a host connected to it.
type env struct {
	srv    *fakeServer
	host   *toolhost.Host
	cancel context.CancelFunc // stops the host's Run
	done   chan error         // Run's result
}

// newEnv starts a fake server and returns a host configured for it;
// setup registers tools before start runs the host.
func newEnv(t *testing.T, cfg toolhost.Config) (*env, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	t.Cleanup(func() { lis.Close() })
	fs := &fakeServer{sessions: make(chan *fakeSession, 16)}
	gs := grpc.NewServer()
	tooldexv1.RegisterHostServiceServer(gs, fs)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		fs.wg.Wait()
	})

	cfg.Addr = "passthrough:///bufnet"
	if cfg.HostID == "" {
		cfg.HostID = "test-host"
	}
	if cfg.Logger == nil {
		cfg.Logger = zaptest.NewLogger(t)
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 10 * time.Millisecond
		cfg.MaxBackoff = 50 * time.Millisecond
	}
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return lis.DialContext(ctx)
	}))
	e := &env{srv: fs, host: toolhost.New(cfg), done: make(chan error, 1)}
	start := func() {
		ctx, cancel := context.WithCancel(context.Background())
		e.cancel = cancel
		go func() { e.done <- e.host.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-e.done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(3 * wait):
				t.Error("Run did not return after its context was cancelled")
			}
		})
	}
	return e, start
}

// stop cancels Run and returns its result.
func (e *env) stop(t *testing.T) error {
	t.Helper()
	e.cancel()
	select {
	case err := <-e.done:
		e.done <- nil // for the cleanup
		return err
	case <-time.After(3 * wait):
		t.Fatal("Run did not return after its context was cancelled")
		return nil
	}
}

func tool(name string) *tooldexv1.Tool {
	return &tooldexv1.Tool{Name: name, Description: "the " + name + " tool"}
}

func mustHandle(t *testing.T, h *toolhost.Host, name string, fn toolhost.Handler) {
	t.Helper()
	if err := h.Handle(tool(name), fn); err != nil {
		t.Fatalf("Handle(%s) = %v", name, err)
	}
}

func waitReady(t *testing.T, h *toolhost.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady = %v", err)
	}
}

func toolNames(tools []*tooldexv1.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.GetName())
	}
	return names
}

func text(r *tooldexv1.CallResult) string {
	var b strings.Builder
	for _, c := range r.GetContent() {
		b.WriteString(c.GetText())
	}
	return b.String()
}

func TestCallRunsAndAnswers(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{HostID: "h1", Version: "v9", Slots: 3})
	type seen struct {
		id, tool, caller string
		attempt          int
		params           map[string]any
	}
	got := make(chan seen, 1)
	mustHandle(t, e.host, "greet", func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
		got <- seen{c.ID, c.Tool, c.Caller, c.Attempt, c.Params}
		return toolhost.Text(fmt.Sprintf("hello %v", c.Params["name"])), nil
	})
	mustHandle(t, e.host, "another", func(context.Context, *toolhost.Call) (*toolhost.Result, error) { return nil, nil })
	start()
	s := e.srv.next(t)
	if got, want := s.hello.GetHostId(), "h1"; got != want {
		t.Errorf("hello host_id = %q, want %q", got, want)
	}
	if got, want := s.hello.GetVersion(), "v9"; got != want {
		t.Errorf("hello version = %q, want %q", got, want)
	}
	if got, want := s.hello.GetMaxConcurrentCalls(), int32(3); got != want {
		t.Errorf("hello max_concurrent_calls = %d, want %d", got, want)
	}
	if got, want := toolNames(s.hello.GetTools()), []string{"another", "greet"}; !slices.Equal(got, want) {
		t.Errorf("hello tools = %v, want %v", got, want)
	}
	waitReady(t, e.host)
	if !e.host.Connected() {
		t.Error("Connected() = false after WaitReady, want true")
	}

	s.execute(t, "c1", "greet", map[string]any{"name": "Ada"})
	r := s.result(t)
	if got, want := r.GetCallId(), "c1"; got != want {
		t.Errorf("result call_id = %q, want %q", got, want)
	}
	if got, want := text(r), "hello Ada"; got != want {
		t.Errorf("result text = %q, want %q", got, want)
	}
	if r.GetIsError() || r.GetRefused() != "" {
		t.Errorf("result is_error = %v, refused = %q, want false, empty", r.GetIsError(), r.GetRefused())
	}
	c := <-got
	if c.id != "c1" || c.tool != "greet" || c.caller != "tester" || c.attempt != 1 || c.params["name"] != "Ada" {
		t.Errorf("handler saw %+v, want id c1, tool greet, caller tester, attempt 1, name Ada", c)
	}
}

func TestResultKinds(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	mustHandle(t, e.host, "fail", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return nil, errors.New("disk on fire")
	})
	mustHandle(t, e.host, "panic", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		panic("kaboom")
	})
	mustHandle(t, e.host, "refuse", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return nil, fmt.Errorf("checking: %w", toolhost.Refuse("not for you"))
	})
	mustHandle(t, e.host, "errorf", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Errorf("bad input %d", 7), nil
	})
	mustHandle(t, e.host, "json", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.JSON(map[string]any{"n": 2, "tags": []string{"a"}})
	})
	mustHandle(t, e.host, "ok", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("fine"), nil
	})
	start()
	s := e.srv.next(t)
	tests := []struct {
		tool        string
		wantError   bool
		wantRefused string
		wantText    string // a substring
	}{
		{tool: "fail", wantError: true, wantText: "disk on fire"},
		{tool: "panic", wantError: true, wantText: "kaboom"},
		{tool: "ok", wantText: "fine"}, // the host survived the panic
		{tool: "refuse", wantRefused: "not for you"},
		{tool: "errorf", wantError: true, wantText: "bad input 7"},
		{tool: "json"},
		{tool: "missing", wantError: true, wantText: `"missing" is not served`},
	}
	for i, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			id := fmt.Sprintf("c%d", i)
			s.execute(t, id, tt.tool, nil)
			r := s.result(t)
			if r.GetCallId() != id {
				t.Errorf("call_id = %q, want %q", r.GetCallId(), id)
			}
			if r.GetIsError() != tt.wantError {
				t.Errorf("is_error = %v, want %v (result %v)", r.GetIsError(), tt.wantError, r)
			}
			if r.GetRefused() != tt.wantRefused {
				t.Errorf("refused = %q, want %q", r.GetRefused(), tt.wantRefused)
			}
			if !strings.Contains(text(r), tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", text(r), tt.wantText)
			}
		})
	}
	// The JSON result carries content and structured content.
	s.execute(t, "j", "json", nil)
	r := s.result(t)
	if got := r.GetStructuredContent().GetFields()["n"].GetNumberValue(); got != 2 {
		t.Errorf("structured n = %v, want 2", got)
	}
	if len(r.GetContent()) != 1 || r.GetContent()[0].GetJson().GetStructValue().GetFields()["tags"] == nil {
		t.Errorf("content = %v, want one JSON block with tags", r.GetContent())
	}
}

func TestParamsJSON(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	type seen struct {
		params map[string]any
		raw    string
	}
	got := make(chan seen, 2)
	mustHandle(t, e.host, "p", func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
		got <- seen{c.Params, c.ParamsJSON}
		return nil, nil
	})
	start()
	s := e.srv.next(t)
	st, err := structpb.NewStruct(map[string]any{"id": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, json string
		wantID     float64
		wantRaw    string
	}{
		{name: "params_json preferred", json: `{"id": 9007199254740993}`, wantID: 9007199254740992, wantRaw: `{"id": 9007199254740993}`},
		{name: "bad params_json: params", json: `{"id":`, wantID: 1, wantRaw: ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprint("c", i)
			s.sendFrame(t, executeFrame(&tooldexv1.ExecuteCall{CallId: id, ToolName: "p", Params: st, ParamsJson: tt.json}))
			s.result(t)
			c := <-got
			if c.params["id"] != tt.wantID || c.raw != tt.wantRaw {
				t.Errorf("Params[id] = %v, ParamsJSON = %q, want %v, %q", c.params["id"], c.raw, tt.wantID, tt.wantRaw)
			}
		})
	}
}

func TestCancelCall(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	started := make(chan struct{})
	mustHandle(t, e.host, "slow", func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "c1", "slow", nil)
	<-started
	s.sendFrame(t, cancelFrame("c1", "caller went away"))
	r := s.result(t)
	if got, want := r.GetCallId(), "c1"; got != want {
		t.Errorf("call_id = %q, want %q", got, want)
	}
	if !r.GetIsError() || !strings.Contains(text(r), "caller went away") {
		t.Errorf("result = %v, want is_error with the cancel reason", r)
	}
}

func TestDeadline(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	deadlines := make(chan time.Time, 1)
	mustHandle(t, e.host, "deadline", func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return toolhost.Errorf("no deadline"), nil
		}
		deadlines <- d
		return toolhost.Text("ok"), nil
	})
	mustHandle(t, e.host, "wait", func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	start()
	s := e.srv.next(t)

	want := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	s.sendFrame(t, executeFrame(&tooldexv1.ExecuteCall{CallId: "c1", ToolName: "deadline", Deadline: timestamppb.New(want)}))
	if r := s.result(t); r.GetIsError() {
		t.Fatalf("result = %v, want success", r)
	}
	if got := <-deadlines; !got.Equal(want) {
		t.Errorf("ctx deadline = %v, want %v", got, want)
	}

	s.sendFrame(t, executeFrame(&tooldexv1.ExecuteCall{CallId: "c2", ToolName: "wait", Deadline: timestamppb.New(time.Now().Add(50 * time.Millisecond))}))
	r := s.result(t)
	if !r.GetIsError() || !strings.Contains(text(r), context.DeadlineExceeded.Error()) {
		t.Errorf("result = %v, want is_error %q", r, context.DeadlineExceeded)
	}
}

func TestHeartbeatsWhenIdle(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	start()
	s := e.srv.next(t)
	timeout := time.After(wait)
	for n := 0; n < 4; {
		select {
		case m := <-s.frames:
			if m.GetHeartbeat() == nil {
				t.Fatalf("got frame %v while idle, want heartbeats only", m)
			}
			n++
		case <-timeout:
			t.Fatalf("got %d heartbeats, want 4", n)
		}
	}
}

func TestProgress(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	mustHandle(t, e.host, "work", func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
		c.Progress(1, 2, "half way")
		return toolhost.Text("done"), nil
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "c1", "work", nil)
	p := s.frame(t).GetProgress()
	if p.GetCallId() != "c1" || p.GetProgress() != 1 || p.GetTotal() != 2 || p.GetMessage() != "half way" {
		t.Errorf("progress = %v, want c1 1/2 \"half way\"", p)
	}
	if r := s.result(t); text(r) != "done" {
		t.Errorf("result text = %q, want %q", text(r), "done")
	}
	(&toolhost.Call{}).Progress(1, 1, "no host: no-op") // must not panic
}

func TestToolUpdatesAndReconnect(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	e.srv.reject = "rejected"
	ok := func(context.Context, *toolhost.Call) (*toolhost.Result, error) { return toolhost.Text("ok"), nil }
	mustHandle(t, e.host, "a", ok)
	mustHandle(t, e.host, "rejected", ok)
	start()
	s1 := e.srv.next(t)
	waitReady(t, e.host)
	if got, want := toolNames(s1.hello.GetTools()), []string{"a", "rejected"}; !slices.Equal(got, want) {
		t.Errorf("first hello tools = %v, want %v", got, want)
	}

	mustHandle(t, e.host, "b", ok)
	if got := toolNames(s1.frame(t).GetTools().GetUpsert()); !slices.Equal(got, []string{"b"}) {
		t.Errorf("ToolsUpdate upsert = %v, want [b]", got)
	}
	e.host.Remove("rejected", "never-served")
	if got := s1.frame(t).GetTools().GetRemove(); !slices.Equal(got, []string{"rejected"}) {
		t.Errorf("ToolsUpdate remove = %v, want [rejected]", got)
	}

	s1.end <- status.Error(codes.Unavailable, "server restarting")
	s2 := e.srv.next(t)
	if got, want := toolNames(s2.hello.GetTools()), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("hello after reconnect tools = %v, want %v", got, want)
	}
	waitReady(t, e.host)
	s2.execute(t, "c1", "b", nil)
	if r := s2.result(t); text(r) != "ok" {
		t.Errorf("result after reconnect = %v, want ok", r)
	}
}

func TestDrainOnCancel(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	started := make(chan struct{})
	release := make(chan struct{})
	var cancelled atomic.Bool
	mustHandle(t, e.host, "slow", func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			cancelled.Store(true)
		}
		return toolhost.Text("finished"), nil
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "c1", "slow", nil)
	<-started

	e.cancel()
	select {
	case err := <-e.done:
		e.done <- nil // for the cleanup
		t.Fatalf("Run returned %v before its in-flight call finished", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-e.done:
		e.done <- nil
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(3 * wait):
		t.Fatal("Run did not return after the in-flight call finished")
	}
	if cancelled.Load() {
		t.Error("the in-flight call was cancelled, want it to finish")
	}
	r := s.result(t)
	if r.GetCallId() != "c1" || text(r) != "finished" {
		t.Errorf("result = %v, want c1 finished", r)
	}
	select {
	case <-s.hostClosed:
	case <-time.After(wait):
		t.Error("the host did not close the stream")
	}
}

func TestDrainTimeoutCancelsCalls(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{DrainTimeout: 100 * time.Millisecond})
	started := make(chan struct{})
	mustHandle(t, e.host, "stuck", func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "c1", "stuck", nil)
	<-started
	begin := time.Now()
	if err := e.stop(t); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if took := time.Since(begin); took > wait {
		t.Errorf("Run took %v to return, want about the drain timeout", took)
	}
	r := s.result(t)
	if !r.GetIsError() || !strings.Contains(text(r), "drain timeout") {
		t.Errorf("result = %v, want is_error about the drain timeout", r)
	}
}

func TestSlots(t *testing.T) {
	const slots, calls = 2, 6
	e, start := newEnv(t, toolhost.Config{Slots: slots})
	var running, peak atomic.Int32
	entered := make(chan struct{}, calls)
	release := make(chan struct{})
	mustHandle(t, e.host, "work", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		entered <- struct{}{}
		<-release
		running.Add(-1)
		return toolhost.Text("ok"), nil
	})
	start()
	s := e.srv.next(t)
	for i := range calls {
		s.execute(t, fmt.Sprintf("c%d", i), "work", nil)
	}
	for range slots {
		select {
		case <-entered:
		case <-time.After(wait):
			t.Fatal("calls did not start")
		}
	}
	select {
	case <-entered:
		t.Fatalf("a call started while %d were running, want at most Slots = %d", slots, slots)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	ids := map[string]bool{}
	for range calls {
		r := s.result(t)
		if r.GetIsError() {
			t.Errorf("result = %v, want success (queued, not refused)", r)
		}
		ids[r.GetCallId()] = true
	}
	if len(ids) != calls {
		t.Errorf("results for %d distinct calls, want %d", len(ids), calls)
	}
	if got := peak.Load(); got > slots {
		t.Errorf("peak concurrent calls = %d, want at most %d", got, slots)
	}
}

func TestQueuedCallCancelled(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{Slots: 1})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mustHandle(t, e.host, "work", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		started <- struct{}{}
		<-release
		return toolhost.Text("ok"), nil
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "c1", "work", nil)
	<-started
	s.execute(t, "c2", "work", nil) // queued behind c1
	s.sendFrame(t, cancelFrame("c2", "too slow"))
	r := s.result(t)
	if r.GetCallId() != "c2" || !r.GetIsError() || !strings.Contains(text(r), "before it started") {
		t.Errorf("result = %v, want c2 is_error cancelled before it started", r)
	}
	close(release)
	if r := s.result(t); r.GetCallId() != "c1" || r.GetIsError() {
		t.Errorf("result = %v, want c1 success", r)
	}
}

func TestServerDrain(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mustHandle(t, e.host, "work", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		started <- struct{}{}
		<-release
		return toolhost.Text("ok"), nil
	})
	start()
	s1 := e.srv.next(t)
	s1.execute(t, "c1", "work", nil)
	<-started
	s1.sendFrame(t, &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Drain{Drain: &tooldexv1.Drain{Grace: durationpb.New(time.Second)}}})
	s1.execute(t, "c2", "work", nil) // after Drain: not taken
	close(release)
	if r := s1.result(t); r.GetCallId() != "c1" || r.GetIsError() {
		t.Errorf("result = %v, want c1 success", r)
	}
	select {
	case <-started:
		t.Error("a call sent after Drain ran")
	case <-time.After(100 * time.Millisecond):
	}
	s1.end <- nil
	s2 := e.srv.next(t) // reconnected
	waitReady(t, e.host)
	s2.execute(t, "c3", "work", nil)
	<-started
	if r := s2.result(t); r.GetCallId() != "c3" {
		t.Errorf("result = %v, want c3", r)
	}
}

func TestWaitReadyAndConnected(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	if e.host.Connected() {
		t.Error("Connected() = true before Run, want false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := e.host.WaitReady(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitReady before Run = %v, want %v", err, context.DeadlineExceeded)
	}
	start()
	s := e.srv.next(t)
	waitReady(t, e.host)
	s.end <- status.Error(codes.Unavailable, "bye")
	e.srv.next(t)
	waitReady(t, e.host)
	if !e.host.Connected() {
		t.Error("Connected() = false after reconnecting, want true")
	}
	if err := e.stop(t); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	if e.host.Connected() {
		t.Error("Connected() = true after Run returned, want false")
	}
}

func TestRunErrors(t *testing.T) {
	if err := toolhost.New(toolhost.Config{Addr: "localhost:1"}).Run(context.Background()); err == nil {
		t.Error("Run without HostID = nil, want an error")
	}
	e, start := newEnv(t, toolhost.Config{})
	start()
	e.srv.next(t)
	if err := e.host.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Run = %v, want an already-running error", err)
	}
}

func TestRunWithoutServerRetriesUntilCancelled(t *testing.T) {
	lis := bufconn.Listen(1 << 10)
	lis.Close() // every dial fails
	h := toolhost.New(toolhost.Config{
		Addr: "passthrough:///nowhere", HostID: "h", Logger: zaptest.NewLogger(t),
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return lis.DialContext(ctx)
		})},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := h.Run(ctx); err != nil {
		t.Errorf("Run = %v, want nil after its context ended", err)
	}
	if h.Connected() {
		t.Error("Connected() = true, want false")
	}
}

func TestHandleValidation(t *testing.T) {
	h := toolhost.New(toolhost.Config{HostID: "h"})
	fn := func(context.Context, *toolhost.Call) (*toolhost.Result, error) { return nil, nil }
	tests := []struct {
		name    string
		tool    *tooldexv1.Tool
		fn      toolhost.Handler
		wantErr bool
	}{
		{name: "ok", tool: tool("ok_tool-1"), fn: fn},
		{name: "mcp", tool: tool("mcp__srv__tool"), fn: fn},
		{name: "nil tool", fn: fn, wantErr: true},
		{name: "empty name", tool: &tooldexv1.Tool{}, fn: fn, wantErr: true},
		{name: "illegal name", tool: tool("has space"), fn: fn, wantErr: true},
		{name: "long name", tool: tool(strings.Repeat("x", 65)), fn: fn, wantErr: true},
		{name: "nil handler", tool: tool("x")},
	}
	tests[len(tests)-1].wantErr = true
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.Handle(tt.tool, tt.fn)
			if (err != nil) != tt.wantErr {
				t.Errorf("Handle = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestResultHelpers(t *testing.T) {
	r := toolhost.Text("hi")
	if len(r.Content) != 1 || r.Content[0].GetText() != "hi" || r.IsError {
		t.Errorf("Text = %+v, want one text block hi", r)
	}
	r = toolhost.Errorf("n=%d", 3)
	if !r.IsError || r.Content[0].GetText() != "n=3" {
		t.Errorf("Errorf = %+v, want is_error n=3", r)
	}
	r, err := toolhost.JSON([]int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Structured != nil || len(r.Content[0].GetJson().GetListValue().GetValues()) != 2 {
		t.Errorf("JSON(array) = %+v, want a JSON list and no structured content", r)
	}
	r, err = toolhost.JSON(struct {
		A string `json:"a"`
	}{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Structured["a"]; got != "x" {
		t.Errorf("JSON(struct) structured a = %v, want x", got)
	}
	if _, err := toolhost.JSON(make(chan int)); err == nil {
		t.Error("JSON(chan) = nil error, want one")
	}
	reason, ok := toolhost.IsRefusal(fmt.Errorf("wrapped: %w", toolhost.Refuse("nope")))
	if !ok || reason != "nope" {
		t.Errorf("IsRefusal = %q, %v, want nope, true", reason, ok)
	}
	if _, ok := toolhost.IsRefusal(errors.New("plain")); ok {
		t.Error("IsRefusal(plain error) = true, want false")
	}
}

// TestLargeCallReceived: a call as large as the server may send (both
// params forms at limit.MaxParamsBytes) reaches the handler; the SDK's
// old 4 MiB receive limit cut the stream, failing every call on it.
func TestLargeCallReceived(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	got := make(chan int, 1)
	mustHandle(t, e.host, "big", func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
		s, _ := c.Params["s"].(string)
		got <- len(s)
		return nil, nil
	})
	start()
	s := e.srv.next(t)
	big := strings.Repeat("x", limit.MaxParamsBytes-64)
	st, err := structpb.NewStruct(map[string]any{"s": big})
	if err != nil {
		t.Fatal(err)
	}
	js := `{"s":"` + big + `"}`
	s.sendFrame(t, executeFrame(&tooldexv1.ExecuteCall{CallId: "big-1", ToolName: "big", Params: st, ParamsJson: js}))
	if r := s.result(t); r.GetCallId() != "big-1" {
		t.Fatalf("result %+v", r)
	}
	if n := <-got; n != len(big) {
		t.Errorf("handler got %d bytes, want %d", n, len(big))
	}
}

// TestLargeResultFailsAlone: a result larger than any message the server
// takes is answered as a tool error, and the session goes on (sent, it
// would cut the stream and fail every other call on it).
func TestLargeResultFailsAlone(t *testing.T) {
	e, start := newEnv(t, toolhost.Config{})
	mustHandle(t, e.host, "huge", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text(strings.Repeat("x", limit.MaxMessageBytes+1)), nil
	})
	mustHandle(t, e.host, "small", func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("ok"), nil
	})
	start()
	s := e.srv.next(t)
	s.execute(t, "h1", "huge", nil)
	if r := s.result(t); r.GetCallId() != "h1" || !r.GetIsError() || !strings.Contains(text(r), "too large") {
		t.Fatalf("huge result: %+v, want a tool error saying it is too large", r)
	}
	s.execute(t, "s1", "small", nil)
	if r := s.result(t); r.GetCallId() != "s1" || text(r) != "ok" {
		t.Fatalf("the next call: %+v", r)
	}
}
