package mcpbridge

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/service"
)

// TestMain fails the package's tests if a goroutine (a session, a host, a
// gRPC server or client) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startTooldex runs a real tooldex server on 127.0.0.1:0 in-process and
// returns its address and a client; both stop at the test's cleanup.
func startTooldex(t *testing.T) (string, tooldexv1.DiscoveryServiceClient) {
	t.Helper()
	return startTooldexConfig(t, service.Config{})
}

// startTooldexConfig is startTooldex with a server configuration.
func startTooldexConfig(t *testing.T, cfg service.Config) (string, tooldexv1.DiscoveryServiceClient) {
	t.Helper()
	cfg.Logger = zaptest.NewLogger(t)
	svc := service.New(cfg)
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() {
		_ = svc.Run(ctx)
		close(runDone)
	}()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveDone := make(chan struct{})
	go func() {
		_ = gs.Serve(lis)
		close(serveDone)
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		svc.CloseHosts()
		gs.Stop()
		<-serveDone
		cancel()
		<-runDone
	})
	return lis.Addr().String(), tooldexv1.NewDiscoveryServiceClient(conn)
}

// runBridge runs b until the test's cleanup, which waits for Run to return.
// startBridge runs a bridge for an mcpServers config against the tooldex
// at addr, restarting crashed servers quickly, until the test ends.
func startBridge(t *testing.T, addr, config string) *Bridge {
	t.Helper()
	cfg, err := ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, Options{Addr: addr, Logger: zaptest.NewLogger(t),
		MinRestart: 50 * time.Millisecond, MaxRestart: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	return b
}

func runBridge(t *testing.T, b *Bridge) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Bridge.Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Bridge.Run did not return after cancel")
		}
	})
}

// listNames returns the names of the registered tools starting with prefix.
func listNames(t *testing.T, c tooldexv1.DiscoveryServiceClient, prefix string) []string {
	t.Helper()
	resp, err := c.ListTools(t.Context(), &tooldexv1.ListToolsRequest{NamePrefix: prefix})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range resp.GetTools() {
		names = append(names, tool.GetName())
	}
	slices.Sort(names)
	return names
}

// waitNames waits until the tools starting with prefix are exactly want.
func waitNames(t *testing.T, c tooldexv1.DiscoveryServiceClient, prefix string, want []string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := listNames(t, c, prefix)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %s*: got %v, want %v (all: %v)", prefix, got, want, listNames(t, c, ""))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// searchNames returns the names Search finds for query.
func searchNames(t *testing.T, c tooldexv1.DiscoveryServiceClient, query string) []string {
	t.Helper()
	resp, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: query, MaxResults: 100})
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	var names []string
	for _, r := range resp.GetResults() {
		names = append(names, r.GetTool().GetName())
	}
	return names
}

// texts joins the text blocks of a result.
func texts(content []*tooldexv1.Content) string {
	var parts []string
	for _, c := range content {
		if s := c.GetText(); s != "" {
			parts = append(parts, s)
		}
		if r := c.GetResource(); r != nil && r.GetText() != "" {
			parts = append(parts, r.GetText())
		}
	}
	return strings.Join(parts, "\n")
}
