package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/cputime"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

// concurrency is the number of concurrent callers of the c64 cases.
const concurrency = 64

// hostSlots is the tool host's max_concurrent_calls, the same for every
// setup, and large enough that c64 callers never queue for a slot.
const hostSlots = concurrency

// policyJSON has one rule, so the permission check walks a rule list.
const policyJSON = `{"default":"allow","rules":[{"tool":"mcp__blocked__*","action":"deny"}]}`

// BenchmarkExecute measures one Execute call of a trivial "echo" tool,
// over TCP loopback, three ways in the same run:
//
//   - direct: a plain unary call to a DiscoveryService whose Execute
//     answers at once (the floor);
//   - relay: a hand-written relay forwarding each Execute as an
//     ExecuteCall on a toolhost.Host's Connect stream (no validation, no
//     permissions, no registry);
//   - tooldex: the real service (schema validation, a permission policy
//     with a rule, registry routing) with the same kind of toolhost.Host.
//
// Each runs with one caller (c1) and 64 concurrent callers (c64); p50-µs
// and p99-µs are per-call latencies of the measured run.
func BenchmarkExecute(b *testing.B) {
	setups := []struct {
		name  string
		start func(b *testing.B) (addr string, stop func())
	}{
		{"direct", startDirect},
		{"relay", startRelay},
		{"tooldex", startTooldex},
	}
	for _, s := range setups {
		addr, stop := s.start(b)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			stop()
			b.Fatal(err)
		}
		client := tooldexv1.NewDiscoveryServiceClient(conn)
		if err := call(b.Context(), client); err != nil { // connect, and check the setup works
			conn.Close()
			stop()
			b.Fatalf("%s: %v", s.name, err)
		}
		warmUp(b.Context(), client)
		b.Run(s.name+"/c1", func(b *testing.B) { benchSequential(b, client) })
		b.Run(s.name+"/c"+strconv.Itoa(concurrency), func(b *testing.B) { benchParallel(b, client) })
		conn.Close()
		stop()
	}
}

// warmUp runs calls from concurrency callers for a moment, unmeasured, so
// that every setup is measured in the same state (connections' flow-control
// windows grown, goroutine stacks and heap at their working size) whatever
// ran before it.
func warmUp(ctx context.Context, client tooldexv1.DiscoveryServiceClient) {
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for ctx.Err() == nil {
				_ = call(ctx, client)
			}
		})
	}
	wg.Wait()
}

var request = &tooldexv1.ExecuteRequest{
	ToolName: "echo",
	Params:   &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("hello")}},
	Caller:   "bench",
}

// call runs one Execute and checks its result.
func call(ctx context.Context, client tooldexv1.DiscoveryServiceClient) error {
	resp, err := client.Execute(ctx, request)
	if err != nil {
		return err
	}
	if c := resp.GetContent(); resp.GetIsError() || len(c) != 1 || c[0].GetText() != "hello" {
		return fmt.Errorf("unexpected result %v", resp)
	}
	return nil
}

func benchSequential(b *testing.B, client tooldexv1.DiscoveryServiceClient) {
	ctx := b.Context()
	lat := make([]time.Duration, 0, 1<<14)
	cpu := cputime.Process()
	for b.Loop() {
		start := time.Now()
		if err := call(ctx, client); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	cpu = cputime.Process() - cpu
	reportLatency(b, lat, cpu)
}

func benchParallel(b *testing.B, client tooldexv1.DiscoveryServiceClient) {
	ctx := b.Context()
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	b.SetParallelism((concurrency + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var (
		mu     sync.Mutex
		all    []time.Duration
		failed atomic.Pointer[error]
	)
	cpu := cputime.Process()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		lat := make([]time.Duration, 0, 1<<10)
		for pb.Next() {
			start := time.Now()
			if err := call(ctx, client); err != nil {
				failed.CompareAndSwap(nil, &err)
				continue
			}
			lat = append(lat, time.Since(start))
		}
		mu.Lock()
		all = append(all, lat...)
		mu.Unlock()
	})
	b.StopTimer()
	cpu = cputime.Process() - cpu
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	reportLatency(b, all, cpu)
}

// reportLatency reports the median and 99th percentile of lat, and the
// process's CPU time per call (client, server and host together: on a
// shared or saturated machine a steadier measure of cost than latency).
func reportLatency(b *testing.B, lat []time.Duration, cpu time.Duration) {
	if len(lat) == 0 {
		return
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(len(lat)), "cpu-µs/op")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// listen opens a TCP loopback listener.
func listen(b *testing.B) net.Listener {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return lis
}

// serve runs gs on lis and returns a function that stops it gracefully.
func serve(gs *grpc.Server, lis net.Listener) (stop func()) {
	done := make(chan struct{})
	go func() {
		_ = gs.Serve(lis)
		close(done)
	}()
	return func() {
		gs.GracefulStop()
		<-done
	}
}

// echoTool is the tool every host serves.
func echoTool(b *testing.B) *tooldexv1.Tool {
	schema, err := structpb.NewStruct(map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return &tooldexv1.Tool{Name: "echo", Description: "Echoes its text parameter.", InputSchema: schema}
}

// echo is the tool's handler.
func echo(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
	text, _ := call.Params["text"].(string)
	return toolhost.Text(text), nil
}

// startHost runs a toolhost.Host serving echo against addr until the
// returned stop function is called.
func startHost(b *testing.B, addr string) (stop func()) {
	h := toolhost.New(toolhost.Config{Addr: addr, HostID: "bench-host", Slots: hostSlots})
	if err := h.Handle(echoTool(b), echo); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	readyCtx, cancelReady := context.WithTimeout(ctx, 10*time.Second)
	defer cancelReady()
	if err := h.WaitReady(readyCtx); err != nil {
		cancel()
		<-done
		b.Fatal(err)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("host: %v", err)
		}
	}
}

// startTooldex starts a tooldex server wired as cmd/server wires it (with
// a permission policy and the logging interceptor, logs discarded) and a
// host connected to it.
func startTooldex(b *testing.B) (string, func()) {
	perms, err := permission.Parse([]byte(policyJSON))
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(service.Config{Permissions: perms})
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(service.UnaryInterceptor(zap.NewNop())))
	tooldexv1.RegisterDiscoveryServiceServer(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	regCtx, stopReg := context.WithCancel(context.Background())
	regDone := make(chan struct{})
	go func() {
		_ = svc.Run(regCtx)
		close(regDone)
	}()
	lis := listen(b)
	stopServer := serve(gs, lis)
	stopHost := startHost(b, lis.Addr().String())
	return lis.Addr().String(), func() {
		stopHost()
		svc.CloseHosts()
		stopServer()
		stopReg()
		<-regDone
	}
}

// direct is a DiscoveryService whose Execute echoes at once.
type direct struct {
	tooldexv1.UnimplementedDiscoveryServiceServer
}

func (direct) Execute(_ context.Context, req *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	text := req.GetParams().GetFields()["text"].GetStringValue()
	return &tooldexv1.ExecuteResponse{
		ToolName: req.GetToolName(),
		Content:  []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: text}}},
	}, nil
}

func startDirect(b *testing.B) (string, func()) {
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, direct{})
	lis := listen(b)
	return lis.Addr().String(), serve(gs, lis)
}

// relay forwards each Execute to the one connected host as an ExecuteCall
// and returns its CallResult: no validation, permissions or registry.
type relay struct {
	tooldexv1.UnimplementedDiscoveryServiceServer
	tooldexv1.UnimplementedHostServiceServer

	mu      sync.Mutex
	out     chan *tooldexv1.ConnectResponse // to the host's sender; nil: no host
	hostID  string
	pending map[string]chan *tooldexv1.CallResult
	seq     atomic.Uint64
}

func newRelay() *relay {
	return &relay{pending: make(map[string]chan *tooldexv1.CallResult)}
}

func (r *relay) Execute(ctx context.Context, req *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	id := strconv.FormatUint(r.seq.Add(1), 10)
	ch := make(chan *tooldexv1.CallResult, 1)
	r.mu.Lock()
	out, hostID := r.out, r.hostID
	if out == nil {
		r.mu.Unlock()
		return nil, status.Error(codes.Unavailable, "no host")
	}
	r.pending[id] = ch
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.pending, id)
		r.mu.Unlock()
	}
	frame := &tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_Execute{Execute: &tooldexv1.ExecuteCall{
		CallId: id, ToolName: req.GetToolName(), Params: req.GetParams(), Caller: req.GetCaller(), Attempt: 1,
	}}}
	select {
	case out <- frame:
	case <-ctx.Done():
		forget()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	select {
	case res := <-ch:
		return &tooldexv1.ExecuteResponse{
			ToolName: req.GetToolName(), Content: res.GetContent(), IsError: res.GetIsError(),
			StructuredContent: res.GetStructuredContent(), CallId: id, HostId: hostID,
		}, nil
	case <-ctx.Done():
		forget()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

func (r *relay) Connect(stream tooldexv1.HostService_ConnectServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "the first frame must be a hello")
	}
	// Routable before the HelloAck: the host is ready once it has it.
	out := make(chan *tooldexv1.ConnectResponse, 256)
	r.mu.Lock()
	r.out, r.hostID = out, hello.GetHostId()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.out = nil
		r.mu.Unlock()
	}()
	if err := stream.Send(&tooldexv1.ConnectResponse{Frame: &tooldexv1.ConnectResponse_HelloAck{HelloAck: &tooldexv1.HelloAck{
		SessionId: "relay", HeartbeatInterval: durationpb.New(5 * time.Second),
	}}}); err != nil {
		return err
	}

	// The one sender.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	sendErr := make(chan error, 1)
	go func() {
		for {
			select {
			case f := <-out:
				if err := stream.Send(f); err != nil {
					sendErr <- err
					return
				}
			case <-ctx.Done():
				sendErr <- nil
				return
			}
		}
	}()
	defer func() {
		cancel()
		<-sendErr
	}()
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		res := m.GetResult()
		if res == nil {
			continue // heartbeats and the rest
		}
		r.mu.Lock()
		ch := r.pending[res.GetCallId()]
		delete(r.pending, res.GetCallId())
		r.mu.Unlock()
		if ch != nil {
			ch <- res
		}
	}
}

func startRelay(b *testing.B) (string, func()) {
	r := newRelay()
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, r)
	tooldexv1.RegisterHostServiceServer(gs, r)
	lis := listen(b)
	stopServer := serve(gs, lis)
	stopHost := startHost(b, lis.Addr().String())
	return lis.Addr().String(), func() {
		stopHost()
		stopServer()
	}
}
