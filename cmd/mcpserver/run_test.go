package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/demohost"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startTooldex starts a tooldex server with the demo tools and returns its
// address.
func startTooldex(t *testing.T) string {
	t.Helper()
	svc := service.New(service.Config{})
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	regCtx, stopReg := context.WithCancel(context.Background())
	regDone := make(chan struct{})
	go func() { _ = svc.Run(regCtx); close(regDone) }()
	serveDone := make(chan struct{})
	go func() { _ = gs.Serve(lis); close(serveDone) }()
	h := toolhost.New(toolhost.Config{Addr: lis.Addr().String(), HostID: "demo"})
	if err := demohost.Register(h, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	hostCtx, stopHost := context.WithCancel(context.Background())
	hostDone := make(chan struct{})
	go func() { _ = h.Run(hostCtx); close(hostDone) }()
	t.Cleanup(func() {
		stopHost()
		<-hostDone
		svc.CloseHosts()
		gs.GracefulStop()
		<-serveDone
		stopReg()
		<-regDone
	})
	readyCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.WaitReady(readyCtx); err != nil {
		t.Fatal(err)
	}
	return lis.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 2 {
		t.Errorf("%d tools, want 2", len(tools.Tools))
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "ToolSearch") {
		t.Errorf("instructions %q", cs.InitializeResult().Instructions)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ToolSearch", Arguments: map[string]any{"query": "time zone"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "time_now") {
		t.Errorf("ToolSearch: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ExecuteTool",
		Arguments: map[string]any{"tool_name": "time_now", "params": map[string]any{"zone": "Asia/Tokyo"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "+09:00") {
		t.Errorf("ExecuteTool: %v %+v", err, res)
	}
}

func TestRunStdio(t *testing.T) {
	addr := startTooldex(t)
	inR, inW := io.Pipe()   // client -> server (the server's stdin)
	outR, outW := io.Pipe() // server -> client (the server's stdout)
	var stderr syncBuffer
	done := make(chan error, 1)
	getenv := func(k string) string {
		if k == "TOOLDEX_ADDR" {
			return addr
		}
		return ""
	}
	go func() {
		done <- run(t.Context(), nil, getenv, inR, outW, &stderr)
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cs)
	cs.Close() // closes the server's stdin: run returns
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after stdin closed")
	}
	inR.Close()
	if !strings.Contains(stderr.String(), "stdio") {
		t.Errorf("stderr %q lacks the start log", stderr.String())
	}
}

func TestRunHTTP(t *testing.T) {
	addr := startTooldex(t)
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", addr, "--http", "127.0.0.1:0"}, func(string) string { return "" }, strings.NewReader(""), io.Discard, &stderr)
	}()
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)\s`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no address logged: %q", stderr.String())
	}
	base := strings.TrimSuffix(url, "/mcp")
	for _, path := range []string{"/", "/other", "/mcp/x", "/MCP"} {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %s, want 404 (MCP is at /mcp only)", path, resp.Status)
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, cs)
	cs.Close()
	// A body takes what a gRPC message may (limit.MaxMessageBytes), not
	// the SDK's 4 MiB; past it, it is refused.
	for _, size := range []int{10, 5 << 20, limit.MaxMessageBytes} {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"` + strings.Repeat("x", size) + `","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ok := resp.StatusCode < 300; ok != (size < limit.MaxMessageBytes) {
			t.Errorf("initialize with a %d-byte name: %s", size, resp.Status)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			del, _ := http.NewRequest(http.MethodDelete, url, nil)
			del.Header.Set("Mcp-Session-Id", id)
			if resp, err := http.DefaultClient.Do(del); err == nil {
				resp.Body.Close()
			}
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestParseFlags(t *testing.T) {
	env := map[string]string{"TOOLDEX_ADDR": "127.0.0.1:7000", "TOOLDEX_CALLER": "alice", "TOOLDEX_PASS_THROUGH": "true"}
	c, err := parseFlags([]string{"--addr", "127.0.0.1:8000"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8000" || c.caller != "alice" || !c.passThrough || c.http != "" {
		t.Errorf("config %+v", c)
	}
	if _, err := parseFlags([]string{"serve"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("stray argument accepted")
	}
	if _, err := parseFlags(nil, func(k string) string { return map[string]string{"TOOLDEX_PASS_THROUGH": "maybe"}[k] }, io.Discard); err == nil {
		t.Error("bad TOOLDEX_PASS_THROUGH accepted")
	}
}
