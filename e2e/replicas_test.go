package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// startNATS runs a NATS server with JetStream on dir, on loopback at port
// (0: a free one), in the test process.
func startNATS(t *testing.T, port int, dir string) *natsserver.Server {
	t.Helper()
	if port == 0 {
		port = -1
	}
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS not ready in 10s")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// stopServer stops s with SIGINT and waits for it.
func stopServer(t *testing.T, s *tserver) {
	t.Helper()
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("server did not stop within 15s")
	}
}

func listNames(t *testing.T, c tooldexv1.DiscoveryServiceClient) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.ListTools(ctx, &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var out []string
	for _, tl := range resp.GetTools() {
		out = append(out, tl.GetName())
	}
	return out
}

// TestEmbeddedRestartKeepsCatalog: the default mode keeps what frontends
// registered in the data directory; a new process serves it.
func TestEmbeddedRestartKeepsCatalog(t *testing.T) {
	dir := t.TempDir()
	s := launch(t, "--data-dir", dir, "--demo-host=false")
	ctx := execCtx(t)
	if _, err := s.conn(t).RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		{Name: "kept_one", Description: "survives a restart"}, {Name: "kept_two", Description: "survives too"}, {Name: "removed", Description: "does not"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.conn(t).UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{"removed"}}); err != nil {
		t.Fatal(err)
	}
	stopServer(t, s)
	s = launch(t, "--data-dir", dir, "--demo-host=false")
	if got, want := listNames(t, s.conn(t)), []string{"kept_one", "kept_two"}; !slices.Equal(got, want) {
		t.Fatalf("after a restart: tools = %v, want %v", got, want)
	}
}

// TestReplicasOnNATS runs three replicas on one NATS server: a frontend's
// registration on one is searchable on the others; a host on B serves a
// call sent to A; B killed under load: its host moves, every call is
// answered once and none runs twice; NATS restarted: the replicas recover;
// everything restarted: the catalog is back.
func TestReplicasOnNATS(t *testing.T) {
	dir := t.TempDir()
	ns := startNATS(t, 0, dir)
	port := ns.Addr().(*net.TCPAddr).Port
	args := []string{"--nats-url", ns.ClientURL(), "--demo-host=false", "--heartbeat", "500ms"}
	a, b, c := launch(t, args...), launch(t, args...), launch(t, args...)
	ca, cb, cc := a.conn(t), b.conn(t), c.conn(t)

	// 1. A frontend registers on A; B and C find it.
	if _, err := ca.RegisterTools(execCtx(t), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "replicated_note", Description: "take a replicated note"}}}); err != nil {
		t.Fatal(err)
	}
	for _, cl := range []tooldexv1.DiscoveryServiceClient{cb, cc} {
		waitFor(t, 5*time.Second, "the registration on the other replicas", func() bool { return searchHas(t, cl, "replicated_note", "") })
	}

	// 2. A host on B serves a call sent to A. It knows every replica, B first.
	var mu sync.Mutex
	runs := make(map[string]int) // request id -> times run
	host := newHost(b.addr+","+a.addr+","+c.addr, "replica-host", 8)
	mustHandle(t, host, workTool, func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		rid, _ := call.Params["rid"].(string)
		mu.Lock()
		runs[rid]++
		mu.Unlock()
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
		return toolhost.Text(rid), nil
	})
	runHost(t, host)
	for _, cl := range []tooldexv1.DiscoveryServiceClient{ca, cc} {
		waitFor(t, 5*time.Second, "the host's tool on the other replicas", func() bool { return searchHas(t, cl, "work", "") })
	}
	exec := func(cl tooldexv1.DiscoveryServiceClient, rid string) (*tooldexv1.ExecuteResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return cl.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "work", Params: &structpb.Struct{Fields: map[string]*structpb.Value{"rid": structpb.NewStringValue(rid)}}})
	}
	resp, err := exec(ca, "first")
	if err != nil || textOf(resp) != "first" || resp.GetHostId() != "replica-host" {
		t.Fatalf("Execute on A for B's host = %v, %v; want first from replica-host", resp, err)
	}

	// 3. kill -9 B under a steady load on A and C.
	var seq atomic.Int64
	var okN, unavailableN atomic.Int64
	answers := make(map[string]int)
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	for w := range 4 {
		cl := []tooldexv1.DiscoveryServiceClient{ca, cc}[w%2]
		load.Go(func() {
			for {
				select {
				case <-stopLoad:
					return
				default:
				}
				rid := "r" + strconv.FormatInt(seq.Add(1), 10)
				resp, err := exec(cl, rid)
				mu.Lock()
				answers[rid]++
				mu.Unlock()
				switch {
				case err == nil && textOf(resp) == rid:
					okN.Add(1)
				case status.Code(err) == codes.Unavailable:
					unavailableN.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					t.Errorf("Execute %s = %v, %v; want its result or UNAVAILABLE", rid, resp, err)
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	okBefore := okN.Load()
	waitFor(t, 15*time.Second, "the host on A or C", func() bool {
		return len(hostsServing(t, ca, "work"))+len(hostsServing(t, cc, "work")) > 0
	})
	waitFor(t, 15*time.Second, "calls answered after the kill", func() bool { return okN.Load() > okBefore+20 })
	close(stopLoad)
	load.Wait()
	mu.Lock()
	for rid, n := range runs {
		if n > 1 {
			t.Errorf("request %s ran %d times", rid, n)
		}
	}
	for rid, n := range answers {
		if n != 1 {
			t.Errorf("request %s answered %d times", rid, n)
		}
	}
	mu.Unlock()
	t.Logf("under the kill: %d calls answered, %d UNAVAILABLE", okN.Load(), unavailableN.Load())
	for _, cl := range []tooldexv1.DiscoveryServiceClient{ca, cc} {
		if !searchHas(t, cl, "work", "") {
			t.Errorf("the host's tool is not searchable after B's death")
		}
	}

	// 4. The NATS server stops and comes back: the replicas recover.
	ns.Shutdown()
	ns.WaitForShutdown()
	time.Sleep(300 * time.Millisecond)
	startNATS(t, port, dir)
	waitFor(t, 20*time.Second, "a registration after NATS came back", func() bool {
		_, err := ca.RegisterTools(execCtx(t), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "after_restart", Description: "registered once NATS was back"}}})
		return err == nil
	})
	waitFor(t, 10*time.Second, "the registration on C", func() bool { return searchHas(t, cc, "after_restart", "") })
	waitFor(t, 10*time.Second, "a call forwarded after NATS came back", func() bool {
		_, e1 := exec(ca, fmt.Sprintf("post-a-%d", time.Now().UnixNano()))
		_, e2 := exec(cc, fmt.Sprintf("post-c-%d", time.Now().UnixNano()))
		return e1 == nil && e2 == nil
	})

	// 5. Everything stops and starts again: every registered tool is back.
	stopServer(t, a)
	stopServer(t, c)
	a2 := launch(t, args...)
	got := listNames(t, a2.conn(t))
	for _, want := range []string{"replicated_note", "after_restart"} {
		if !slices.Contains(got, want) {
			t.Errorf("after restarting every replica: tools = %v, want %s among them", got, want)
		}
	}
}
