package service

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/demo"
	"github.com/tooldex/tooldex/internal/toolfile"
	"github.com/tooldex/tooldex/toolhost"
)

// BenchmarkRPCLoopback measures Search and Execute from a gRPC client over
// a real loopback connection, the server wired as cmd/server wires it
// (codec, the log and recovery interceptors) without metrics ("plain") and
// with --metrics-addr ("metrics": the RPC metrics interceptors outermost).
// Execute's host is a toolhost.Host on a real HostService stream through
// the same stream interceptors, so its messages are counted too. cpu-µs/op
// is the process's CPU time per call. Compare
// two commits by alternating their test binaries:
//
//	go test -run '^$' -bench RPCLoopback -count=6 ./service/
func BenchmarkRPCLoopback(b *testing.B) {
	for _, tt := range []struct {
		name    string
		metrics func() *Metrics
	}{{"plain", func() *Metrics { return nil }}, {"metrics", NewMetrics}} {
		b.Run(tt.name, func(b *testing.B) {
			client := startLoopback(b, tt.metrics())
			qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
			b.Run("search", func(b *testing.B) {
				i := 0
				b.ReportAllocs()
				defer reportCPU(b, processCPU())
				for b.Loop() {
					resp, err := client.Search(b.Context(), &tooldexv1.SearchRequest{Query: qs[i%len(qs)]})
					if err != nil || len(resp.GetResults()) == 0 {
						b.Fatalf("Search %q: %d results, %v", qs[i%len(qs)], len(resp.GetResults()), err)
					}
					i++
				}
			})
			params := &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("hi")}}
			b.Run("execute", func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b, processCPU())
				for b.Loop() {
					resp, err := client.Execute(b.Context(), &tooldexv1.ExecuteRequest{ToolName: "echo", Params: params})
					if err != nil || resp.GetContent()[0].GetText() != "hi" {
						b.Fatalf("Execute: %v, %v", resp, err)
					}
				}
			})
		})
	}
}

// reportCPU reports the process's CPU time (client, server and host
// together) per op since start: on a shared machine a steadier measure of
// cost than the time per op.
func reportCPU(b *testing.B, start time.Duration) {
	if cpu := processCPU() - start; start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}
}

// startLoopback serves the demo catalog and an echo host over loopback
// gRPC until the test ends, with m's interceptors outermost unless m is
// nil, and returns a connected client.
func startLoopback(b testing.TB, m *Metrics) tooldexv1.DiscoveryServiceClient {
	s := New(Config{Metrics: m})
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RegisterTools(b.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		b.Fatal(err)
	}
	log := zap.NewNop()
	unary := []grpc.UnaryServerInterceptor{UnaryInterceptor(log)}
	stream := []grpc.StreamServerInterceptor{StreamRecoverInterceptor(log)}
	if m != nil {
		unary = append([]grpc.UnaryServerInterceptor{m.UnaryInterceptor()}, unary...)
		stream = append([]grpc.StreamServerInterceptor{m.StreamInterceptor()}, stream...)
	}
	gs := grpc.NewServer(append(CodecOptions(), grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))...)
	RegisterDiscoveryService(gs, s)
	tooldexv1.RegisterHostServiceServer(gs, s.Hosts())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		_ = s.Run(runCtx)
		close(ran)
	}()
	served := make(chan struct{})
	go func() {
		_ = gs.Serve(lis)
		close(served)
	}()
	b.Cleanup(func() {
		s.CloseHosts()
		gs.GracefulStop()
		<-served
		stopRun()
		<-ran
	})

	h := toolhost.New(toolhost.Config{Addr: lis.Addr().String(), HostID: "bench"})
	schema := mustStruct(b, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	if err := h.Handle(&tooldexv1.Tool{Name: "echo", Description: "Echoes its text.", InputSchema: schema},
		func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
			text, _ := c.Params["text"].(string)
			return toolhost.Text(text), nil
		}); err != nil {
		b.Fatal(err)
	}
	hostCtx, stopHost := context.WithCancel(context.Background())
	hostDone := make(chan error, 1)
	go func() { hostDone <- h.Run(hostCtx) }()
	b.Cleanup(func() {
		stopHost()
		<-hostDone
	})
	readyCtx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	if err := h.WaitReady(readyCtx); err != nil {
		b.Fatal(err)
	}

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return tooldexv1.NewDiscoveryServiceClient(conn)
}
