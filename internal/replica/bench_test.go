package replica_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/replica"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

// benchReplica is a replica journaling and announcing on node, serving
// HostService on loopback.
type benchReplica struct {
	svc  *service.Server
	addr string
	cl   tooldexv1.DiscoveryServiceClient
	// stop ends the replica: its host streams, watch and presence.
	stop func()
}

func startBenchReplica(tb testing.TB, node *replica.Node) *benchReplica {
	tb.Helper()
	svc := service.New(service.Config{Logger: zap.NewNop()})
	ctx := context.Background()
	j, err := node.OpenJournal(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	svc.SetJournal(j)
	pres, err := node.OpenPresence(ctx, replica.NewID(), svc)
	if err != nil {
		tb.Fatal(err)
	}
	svc.SetForwarder(pres)
	runCtx, stop := context.WithCancel(ctx)
	ready := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { _ = j.Watch(runCtx, svc, sync.OnceFunc(func() { close(ready) })) })
	wg.Go(func() { _ = pres.Run(runCtx) })
	wg.Go(func() { _ = svc.Run(runCtx) })
	<-ready
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	service.RegisterDiscoveryService(gs, svc)
	wg.Go(func() { _ = gs.Serve(lis) })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	r := &benchReplica{svc: svc, addr: lis.Addr().String(), cl: tooldexv1.NewDiscoveryServiceClient(conn)}
	r.stop = sync.OnceFunc(func() {
		conn.Close()
		svc.CloseHosts()
		gs.Stop()
		stop()
		wg.Wait()
	})
	tb.Cleanup(r.stop)
	return r
}

// startEcho runs a host serving echo on r until the benchmark ends.
func startEcho(tb testing.TB, r *benchReplica) {
	tb.Helper()
	h := toolhost.New(toolhost.Config{Addr: r.addr, HostID: "bench-echo", Slots: 64})
	if err := h.Handle(&tooldexv1.Tool{Name: "echo", Description: "echoes its text"}, func(_ context.Context, c *toolhost.Call) (*toolhost.Result, error) {
		s, _ := c.Params["text"].(string)
		return toolhost.Text(s), nil
	}); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := h.WaitReady(rctx); err != nil {
		tb.Fatal(err)
	}
}

func waitServes(tb testing.TB, svc *service.Server, name string) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := svc.Search(context.Background(), &tooldexv1.SearchRequest{Query: "select:" + name})
		if err == nil && len(resp.GetResults()) == 1 {
			return
		}
	}
	tb.Fatalf("%s not searchable within 10s", name)
}

// BenchmarkReplicaExecute: Execute over gRPC, as a client sees it, on the
// replica holding the host (local) and on another replica (forwarded over
// NATS), side by side.
func BenchmarkReplicaExecute(b *testing.B) {
	node, err := replica.Start(replica.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(node.Close)
	a, h := startBenchReplica(b, node), startBenchReplica(b, node)
	startEcho(b, h)
	waitServes(b, a.svc, "echo")
	req := &tooldexv1.ExecuteRequest{ToolName: "echo", Params: &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("hi")}}}
	call := func(r *benchReplica) time.Duration {
		start := time.Now()
		resp, err := r.cl.Execute(context.Background(), req)
		if err != nil || len(resp.GetContent()) != 1 {
			b.Fatalf("Execute = %v, %v", resp, err)
		}
		return time.Since(start)
	}
	// Alternated call by call, so that a noisy machine weighs on both
	// alike; ns/op is the pair's.
	var local, forwarded time.Duration
	n := 0
	for b.Loop() {
		local += call(h)
		forwarded += call(a)
		n++
	}
	b.ReportMetric(float64(local.Microseconds())/float64(n), "local-µs")
	b.ReportMetric(float64(forwarded.Microseconds())/float64(n), "forwarded-µs")
	b.ReportMetric(float64(forwarded)/float64(local), "ratio")
}

// BenchmarkReplicaRegisterToSearchable: the time from a RegisterTools call
// on one replica to the tool being searchable on another (p50 and p99 of
// b.N registrations).
func BenchmarkReplicaRegisterToSearchable(b *testing.B) {
	node, err := replica.Start(replica.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(node.Close)
	a, o := startBenchReplica(b, node), startBenchReplica(b, node)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("tool_%d", i)
		i++
		start := time.Now()
		if _, err := a.svc.RegisterTools(context.Background(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: name, Description: "a tool registered on one replica"}}}); err != nil {
			b.Fatal(err)
		}
		for {
			resp, err := o.svc.Search(context.Background(), &tooldexv1.SearchRequest{Query: "select:" + name})
			if err == nil && len(resp.GetResults()) == 1 {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkReplicaSearch: Search on a replica (journal and presence
// running) against a single process without NATS, the same 2,000 tools.
func BenchmarkReplicaSearch(b *testing.B) {
	tools := make([]*tooldexv1.Tool, 2000)
	verbs := []string{"send", "read", "write", "list", "delete", "create", "search", "update"}
	nouns := []string{"message", "file", "issue", "event", "user", "record", "channel", "report"}
	for i := range tools {
		tools[i] = &tooldexv1.Tool{Name: fmt.Sprintf("mcp__svc%d__%s_%s", i/64, verbs[i%8], nouns[(i/8)%8]),
			Description: fmt.Sprintf("%s a %s in service %d", verbs[i%8], nouns[(i/8)%8], i/64)}
	}
	single := service.New(service.Config{Logger: zap.NewNop()})
	node, err := replica.Start(replica.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(node.Close)
	repl := startBenchReplica(b, node)
	// The replica is loaded first: in an A/A run (two single processes)
	// the one loaded second searched up to 1.2x slower.
	for _, svc := range []*service.Server{repl.svc, single} {
		if _, err := svc.RegisterTools(context.Background(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
			b.Fatal(err)
		}
	}
	req := &tooldexv1.SearchRequest{Query: "send a message to a channel"}
	search := func(svc *service.Server) time.Duration {
		start := time.Now()
		if _, err := svc.Search(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// Alternated call by call, which goes first alternating too; ns/op
	// is the pair's.
	var one, rep time.Duration
	n := 0
	for b.Loop() {
		if n%2 == 0 {
			one += search(single)
			rep += search(repl.svc)
		} else {
			rep += search(repl.svc)
			one += search(single)
		}
		n++
	}
	b.ReportMetric(float64(one.Microseconds())/float64(n), "single-µs")
	b.ReportMetric(float64(rep.Microseconds())/float64(n), "replica-µs")
	b.ReportMetric(float64(rep)/float64(one), "ratio")
}
