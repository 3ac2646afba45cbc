package e2e

// Execute end to end: the real server binary, tool hosts in this process
// (the real toolhost SDK over real TCP connections) or raw HostService
// streams, and the tooldex client.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// --- helpers ---

// tserver is a server process whose logs can be read while it runs and
// whose exit the test may cause and observe.
type tserver struct {
	*server
	mu      sync.Mutex
	lines   []string
	exited  chan struct{}
	exitErr error // of Wait, once exited is closed
}

// launch runs the server binary on a free loopback port (JSON logs) and
// waits for its "serving" line. Unless the test stopped it, it is stopped
// with SIGINT at the end of the test.
func launch(t testing.TB, args ...string) *tserver {
	t.Helper()
	bin := binaries(t)
	// Memory only unless a test names a data directory: an e2e run never
	// writes into the user's state directory.
	args = append([]string{"--addr", "127.0.0.1:0", "--log-format", "json", "--shutdown-grace", "2s", "--data-dir="}, args...)
	cmd := exec.Command(filepath.Join(bin, "tooldex-server"), args...)
	cmd.Env = os.Environ()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &tserver{exited: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			var e struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "serving" {
				select {
				case addrc <- e.Addr:
				default:
				}
			}
		}
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-s.exited:
		t.Fatalf("server exited before serving: %v\n%s", s.exitErr, s.logText())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("server did not start in 30s\n%s", s.logText())
	}
	s.server = &server{addr: addr, cmd: cmd, logs: s.logText}
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-s.exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-s.exited
				t.Errorf("server did not stop on SIGINT within 15s")
			}
		}
		if t.Failed() {
			t.Logf("server logs:\n%s", s.logText())
		}
	})
	return s
}

func (s *tserver) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// logEntry returns the first JSON log line with message msg, decoded.
func (s *tserver) logEntry(msg string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range s.lines {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			return m, true
		}
	}
	return nil, false
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: still not true after %v", what, timeout)
		}
		<-tick.C
	}
}

// searchHas reports whether Search select:name, as caller, returns name.
func searchHas(t *testing.T, c tooldexv1.DiscoveryServiceClient, name, caller string) bool {
	t.Helper()
	return slices.Contains(searchNames(t, c, "select:"+name, caller), name)
}

// searchNames runs a Search and returns the names of the results.
func searchNames(t *testing.T, c tooldexv1.DiscoveryServiceClient, query, caller string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: query, Caller: caller, MaxResults: 20})
	if err != nil {
		t.Fatalf("Search %q: %v", query, err)
	}
	var names []string
	for _, r := range resp.GetResults() {
		names = append(names, r.GetTool().GetName())
	}
	return names
}

// hostsServing returns the ids of the connected hosts that serve tool.
func hostsServing(t *testing.T, c tooldexv1.DiscoveryServiceClient, tool string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.ListHosts(ctx, &tooldexv1.ListHostsRequest{})
	if err != nil {
		t.Fatalf("ListHosts: %v", err)
	}
	var ids []string
	for _, h := range resp.GetHosts() {
		if slices.Contains(h.GetTools(), tool) {
			ids = append(ids, h.GetHostId())
		}
	}
	return ids
}

// textOf joins the text blocks of a response.
func textOf(resp *tooldexv1.ExecuteResponse) string {
	var b strings.Builder
	for _, c := range resp.GetContent() {
		b.WriteString(c.GetText())
	}
	return b.String()
}

// mustTool builds a tool with a JSON input schema.
func mustTool(name, description, schema string) *tooldexv1.Tool {
	st, err := structFromJSON(schema)
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", name, err))
	}
	return &tooldexv1.Tool{Name: name, Description: description, InputSchema: st}
}

// ghost is a toolhost running in a goroutine of the test process.
type ghost struct {
	h      *toolhost.Host
	cancel context.CancelFunc
	done   chan struct{}
}

func newHost(addr, id string, slots int) *toolhost.Host {
	return toolhost.New(toolhost.Config{
		Addr: addr, HostID: id, Version: "e2e", Slots: slots,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, DrainTimeout: 2 * time.Second,
	})
}

func mustHandle(t *testing.T, h *toolhost.Host, tool *tooldexv1.Tool, fn toolhost.Handler) {
	t.Helper()
	if err := h.Handle(tool, fn); err != nil {
		t.Fatal(err)
	}
}

// runHost runs h until the test ends (or stop), once it is connected.
func runHost(t *testing.T, h *toolhost.Host) *ghost {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &ghost{h: h, cancel: cancel, done: make(chan struct{})}
	runErr := make(chan error, 1)
	go func() {
		defer close(g.done)
		runErr <- h.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-g.done:
		case <-time.After(20 * time.Second):
			t.Errorf("host Run did not return 20s after cancel")
		}
	})
	readyCtx, cancelReady := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelReady()
	if err := h.WaitReady(readyCtx); err != nil {
		select {
		case err := <-runErr:
			t.Fatalf("host Run = %v", err)
		default:
		}
		t.Fatal(err)
	}
	return g
}

// stop cancels the host's Run and waits for it to return.
func (g *ghost) stop(t *testing.T) {
	t.Helper()
	g.cancel()
	select {
	case <-g.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("host Run did not return 20s after cancel")
	}
}

// violations returns the field names of the BadRequest detail of err.
func violations(err error) []string {
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	return fields
}

func execCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// --- 1. the demo host through the client ---

func TestExecDemoHostWithClient(t *testing.T) {
	s := launch(t)
	c := s.conn(t)
	waitFor(t, 10*time.Second, "the demo host's calculate", func() bool { return searchHas(t, c, "calculate", "") })
	paramsFile := filepath.Join(t.TempDir(), "params.json")
	if err := os.WriteFile(paramsFile, []byte(`{"expression": "10 / 4"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"calculate", []string{"exec", "calculate", "--params", `{"expression":"2*(3+4)"}`}, "", []string{`"value": 14`, `"text": "14"`}},
		{"params from a file", []string{"exec", "calculate", "--params", "@" + paramsFile}, "", []string{`"value": 2.5`}},
		{"params from stdin", []string{"exec", "calculate", "--params", "@-"}, `{"expression":"2^10"}`, []string{`"value": 1024`}},
		{"hosts", []string{"hosts"}, "", []string{"demo", "calculate", "time_now", "text_stats", "1 host(s)"}},
		// The README's first query finds the tool its next command runs.
		{"readme's first query", []string{"search", "what", "time", "is", "it", "in", "tokyo"}, "", []string{"\n1  time_now "}},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.client(t, strings.NewReader(tt.stdin), tt.args...)
			if err != nil {
				t.Fatalf("tooldex %v: %v\n%s", tt.args, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("tooldex %v output lacks %q:\n%s", tt.args, w, out)
				}
			}
		})
	}
	bad := []struct {
		name string
		args []string
		want []string
	}{
		{"bad params", []string{"exec", "calculate", "--params", `{"expression": 5}`}, []string{"InvalidArgument", "params"}},
		{"missing param", []string{"exec", "calculate", "--params", `{}`}, []string{"InvalidArgument", "params"}},
		{"unknown tool", []string{"exec", "no_such_tool", "--params", `{}`}, []string{"NotFound", "Search"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.client(t, nil, tt.args...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("tooldex %v: err = %v, want exit status 1\n%s", tt.args, err, out)
			}
			if n := strings.Count(strings.TrimRight(out, "\n"), "\n"); n != 0 {
				t.Errorf("tooldex %v error has %d lines, want 1:\n%s", tt.args, n+1, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("tooldex %v error lacks %q: %s", tt.args, w, out)
				}
			}
		})
	}
}

// --- 2. params validation and exact numbers over gRPC ---

func TestExecuteParamsOverGRPC(t *testing.T) {
	s := launch(t, "--demo-host=false")
	c := s.conn(t)
	h := newHost(s.addr, "schema-host", 4)
	var nestedCalls atomic.Int32
	mustHandle(t, h, mustTool("nested_tool", "A tool with a nested input schema.",
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"object","properties":{"c":{"type":"string"}}}},"required":["a"]}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			nestedCalls.Add(1)
			return toolhost.Text(fmt.Sprint(call.Params["a"])), nil
		})
	seen := make(chan string, 1)
	mustHandle(t, h, mustTool("bigint_tool", "Takes a 64-bit integer.",
		`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			select {
			case seen <- call.ParamsJSON:
			default:
			}
			return toolhost.Text(call.ParamsJSON), nil
		})
	runHost(t, h)
	ctx := execCtx(t)

	badStruct, err := structFromJSON(`{"a":"x","b":{"c":1}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []*tooldexv1.ExecuteRequest{
		{ToolName: "nested_tool", Params: badStruct},
		{ToolName: "nested_tool", ParamsJson: `{"a":"x","b":{"c":1}}`},
	} {
		_, err := c.Execute(ctx, req)
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("Execute %v: code = %v (%v), want InvalidArgument", req, status.Code(err), err)
		}
		fields := violations(err)
		for _, want := range []string{"params.a", "params.b.c"} {
			if !slices.Contains(fields, want) {
				t.Errorf("Execute %v: violations %v, want %q among them", req, fields, want)
			}
		}
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "params.a") || !strings.Contains(msg, "params.b.c") {
			t.Errorf("Execute error message %q, want both paths", msg)
		}
	}
	_, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "nested_tool", ParamsJson: `{"b":{}}`})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "a") || len(violations(err)) == 0 {
		t.Errorf("Execute without required a: %v, want InvalidArgument with a violation", err)
	}
	if n := nestedCalls.Load(); n != 0 {
		t.Errorf("the host ran %d invalid calls, want 0", n)
	}
	resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "nested_tool", ParamsJson: `{"a":7,"b":{"c":"ok"}}`})
	if err != nil || textOf(resp) != "7" {
		t.Fatalf("Execute with valid params = %q, %v; want \"7\"", textOf(resp), err)
	}

	const big = "9007199254740993" // 2^53 + 1: not a float64
	resp, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "bigint_tool", ParamsJson: `{"n": ` + big + `}`})
	if err != nil {
		t.Fatalf("Execute bigint_tool: %v", err)
	}
	select {
	case got := <-seen:
		if !strings.Contains(got, big) {
			t.Errorf("host saw ParamsJSON %q, want it to hold %s exactly", got, big)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bigint_tool handler never ran")
	}
	if !strings.Contains(textOf(resp), big) {
		t.Errorf("bigint_tool answered %q, want %s in it", textOf(resp), big)
	}
}

// --- 4. a host that disconnects and reconnects ---

func TestHostDisconnectReconnect(t *testing.T) {
	s := launch(t, "--demo-host=false", "--heartbeat", "200ms")
	c := s.conn(t)
	h := newHost(s.addr, "flaky-host", 2)
	mustHandle(t, h, mustTool("ephemeral_tool", "Exists while its host is connected.", `{"type":"object"}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			return toolhost.Text("here"), nil
		})
	g := runHost(t, h)
	waitFor(t, 10*time.Second, "ephemeral_tool in search", func() bool { return searchHas(t, c, "ephemeral_tool", "") })

	g.stop(t)
	waitFor(t, 10*time.Second, "ephemeral_tool to leave search", func() bool { return !searchHas(t, c, "ephemeral_tool", "") })
	if ids := hostsServing(t, c, "ephemeral_tool"); len(ids) != 0 {
		t.Errorf("hosts serving ephemeral_tool after disconnect = %v, want none", ids)
	}

	runHost(t, h)
	waitFor(t, 10*time.Second, "ephemeral_tool back in search", func() bool { return searchHas(t, c, "ephemeral_tool", "") })
	resp, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: "ephemeral_tool"})
	if err != nil || textOf(resp) != "here" || resp.GetHostId() != "flaky-host" {
		t.Fatalf("Execute after reconnect = %q on %q, %v; want \"here\" on flaky-host", textOf(resp), resp.GetHostId(), err)
	}
}

// --- 5. caller deadlines and cancellation reach the host ---

func TestCallerDeadlineAndCancelReachHost(t *testing.T) {
	s := launch(t, "--demo-host=false", "--heartbeat", "200ms")
	c := s.conn(t)
	h := newHost(s.addr, "slow-host", 4)
	started := make(chan string, 4)
	ended := make(chan error, 4) // the cause of each handler's ctx end
	mustHandle(t, h, mustTool("slow_tool", "Sleeps until cancelled.",
		`{"type":"object","properties":{"tag":{"type":"string"}}}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			started <- call.Params["tag"].(string)
			select {
			case <-ctx.Done():
				ended <- context.Cause(ctx)
				return nil, ctx.Err()
			case <-time.After(2 * time.Minute):
				ended <- nil
				return toolhost.Text("woke up"), nil
			}
		})
	runHost(t, h)
	// Warm the client connection up, so that the 300ms below are the call's.
	waitFor(t, 10*time.Second, "slow-host serving", func() bool { return len(hostsServing(t, c, "slow_tool")) == 1 })

	waitStarted := func(tag string) {
		t.Helper()
		select {
		case got := <-started:
			if got != tag {
				t.Fatalf("handler started for %q, want %q", got, tag)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("handler for %q never started", tag)
		}
	}
	waitEnded := func(tag string) error {
		t.Helper()
		select {
		case cause := <-ended:
			if cause == nil {
				t.Fatalf("handler for %q slept on: its ctx was never cancelled", tag)
			}
			return cause
		case <-time.After(10 * time.Second):
			t.Fatalf("handler for %q: ctx not cancelled 10s after the caller gave up", tag)
		}
		return nil
	}

	// A 300ms deadline: DEADLINE_EXCEEDED, and the handler's ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "slow_tool", ParamsJson: `{"tag":"deadline"}`})
	took := time.Since(start)
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Execute with a 300ms deadline: code = %v (%v), want DeadlineExceeded", status.Code(err), err)
	}
	if took > 10*time.Second {
		t.Errorf("Execute with a 300ms deadline took %v", took)
	}
	waitStarted("deadline")
	waitEnded("deadline")

	// A caller that cancels (no deadline of its own; the server's cap is
	// 60s): the server's CancelCall is what ends the handler's ctx.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "slow_tool", ParamsJson: `{"tag":"cancel"}`})
		errc <- err
	}()
	waitStarted("cancel")
	cancel()
	select {
	case err := <-errc:
		if status.Code(err) != codes.Canceled {
			t.Errorf("cancelled Execute: code = %v (%v), want Canceled", status.Code(err), err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Execute did not return 10s after its caller cancelled")
	}
	if cause := waitEnded("cancel"); !strings.Contains(cause.Error(), "cancelled by the server") {
		t.Errorf("handler ctx cause = %v, want the server's CancelCall", cause)
	}
}

// --- 6. replicas share load and fail over ---

func TestReplicaHostsShareLoadAndFailOver(t *testing.T) {
	s := launch(t, "--demo-host=false", "--heartbeat", "200ms")
	c := s.conn(t)
	tool := mustTool("replicated_op", "An idempotent operation two hosts serve.", `{"type":"object"}`)
	tool.Annotations = &tooldexv1.ToolAnnotations{Idempotent: true}
	hosts := map[string]*ghost{}
	ran := map[string]*atomic.Int32{}
	for _, id := range []string{"replica-a", "replica-b"} {
		h := newHost(s.addr, id, 2)
		n := &atomic.Int32{}
		ran[id] = n
		mustHandle(t, h, tool, func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			n.Add(1)
			select {
			case <-time.After(50 * time.Millisecond):
				return toolhost.Text(id), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		hosts[id] = runHost(t, h)
	}
	waitFor(t, 10*time.Second, "both replicas serving", func() bool { return len(hostsServing(t, c, "replicated_op")) == 2 })

	// batch runs n concurrent calls; during it, after the first answer,
	// during() runs. It returns the answering host of each call.
	batch := func(n int, during func()) []string {
		t.Helper()
		ctx := execCtx(t)
		got := make([]string, n)
		errs := make([]error, n)
		first := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "replicated_op"})
				got[i], errs[i] = resp.GetHostId(), err
				if err == nil && textOf(resp) != resp.GetHostId() {
					errs[i] = fmt.Errorf("answer %q from host %q", textOf(resp), resp.GetHostId())
				}
				once.Do(func() { close(first) })
			})
		}
		if during != nil {
			<-first
			during()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("call %d of %d: %v", i, n, err)
			}
		}
		return got
	}

	got := batch(40, nil)
	for _, id := range []string{"replica-a", "replica-b"} {
		if n := count(got, id); n == 0 {
			t.Errorf("replica %s answered none of 40 calls (answers %v)", id, got)
		}
		if ran[id].Load() == 0 {
			t.Errorf("replica %s ran no call", id)
		}
	}

	// Fail over: replica-a stops during a batch; every call still succeeds
	// (calls caught on it are idempotent and retried on replica-b).
	batch(20, func() { hosts["replica-a"].stop(t) })
	waitFor(t, 10*time.Second, "only replica-b serving", func() bool {
		return slices.Equal(hostsServing(t, c, "replicated_op"), []string{"replica-b"})
	})
	before := ran["replica-a"].Load()
	got = batch(10, nil)
	if n := count(got, "replica-b"); n != 10 {
		t.Errorf("after replica-a stopped, replica-b answered %d of 10 calls (answers %v)", n, got)
	}
	if after := ran["replica-a"].Load(); after != before {
		t.Errorf("replica-a ran %d calls after it stopped", after-before)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// --- 7. who owns a tool name ---

func TestToolOwnership(t *testing.T) {
	s := launch(t, "--demo-host=false")
	c := s.conn(t)
	ctx := execCtx(t)

	// A frontend registers a tool; a host offering the name with another
	// definition is rejected, and the frontend's definition stays.
	front := mustTool("contested", "The frontend's definition.", `{"type":"object"}`)
	if _, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{front}}); err != nil {
		t.Fatalf("RegisterTools contested: %v", err)
	}
	stream := rawConnect(t, s.addr)
	rogue := mustTool("contested", "The host's definition.", `{"type":"object"}`)
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: "rogue", Tools: []*tooldexv1.Tool{rogue},
	}}}); err != nil {
		t.Fatal(err)
	}
	msg, err := recvFrame(t, stream)
	if err != nil {
		t.Fatalf("HelloAck: %v", err)
	}
	results := msg.GetHelloAck().GetResults()
	if len(results) != 1 || results[0].GetName() != "contested" || !strings.Contains(results[0].GetRejected(), "name taken") {
		t.Fatalf("HelloAck results = %v, want contested rejected (name taken)", results)
	}
	if results[0].GetOutcome() != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNSPECIFIED {
		t.Errorf("rejected tool outcome = %v, want unspecified", results[0].GetOutcome())
	}
	resp, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "select:contested"})
	if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetTool().GetDescription() != front.GetDescription() {
		t.Errorf("Search select:contested = %v, %v; want the frontend's definition", resp.GetResults(), err)
	}
	if ids := hostsServing(t, c, "contested"); len(ids) != 0 {
		t.Errorf("hosts serving contested = %v, want none", ids)
	}
	// Nobody runs it: the rogue host's version is not used.
	if _, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "contested"}); status.Code(err) != codes.Unavailable {
		t.Errorf("Execute contested: code = %v (%v), want Unavailable (no host serves it)", status.Code(err), err)
	}

	// A host's tool: a frontend may not change its definition, but may
	// register the very same one.
	owned := mustTool("host_owned", "The host's own tool.", `{"type":"object","properties":{"x":{"type":"string"}}}`)
	h := newHost(s.addr, "owner", 2)
	mustHandle(t, h, owned, func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("from owner"), nil
	})
	runHost(t, h)
	waitFor(t, 10*time.Second, "host_owned in search", func() bool { return searchHas(t, c, "host_owned", "") })
	changed := mustTool("host_owned", "A frontend's different definition.", `{"type":"object"}`)
	_, err = c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{changed}})
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("RegisterTools of a host's tool with another definition: code = %v (%v), want AlreadyExists", status.Code(err), err)
	}
	if _, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{owned}}); err != nil {
		t.Errorf("RegisterTools of a host's tool with its very definition: %v, want accepted", err)
	}
	r, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "host_owned"})
	if err != nil || textOf(r) != "from owner" {
		t.Errorf("Execute host_owned = %q, %v; want \"from owner\"", textOf(r), err)
	}
	resp, err = c.Search(ctx, &tooldexv1.SearchRequest{Query: "select:host_owned"})
	if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetTool().GetDescription() != owned.GetDescription() {
		t.Errorf("Search select:host_owned = %v, %v; want the host's definition", resp.GetResults(), err)
	}
}

// rawConnect opens a HostService.Connect stream, ended with the test.
func rawConnect(t *testing.T, addr string) tooldexv1.HostService_ConnectClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := tooldexv1.NewHostServiceClient(mustConn(t, addr)).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// recvFrame receives one frame, failing the test after 20s.
func recvFrame(t *testing.T, stream tooldexv1.HostService_ConnectClient) (*tooldexv1.ConnectResponse, error) {
	t.Helper()
	type recv struct {
		m   *tooldexv1.ConnectResponse
		err error
	}
	ch := make(chan recv, 1)
	go func() {
		m, err := stream.Recv()
		ch <- recv{m, err}
	}()
	select {
	case r := <-ch:
		return r.m, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("no frame from the server in 20s")
	}
	return nil, nil
}

// recvExecute receives frames until an ExecuteCall.
func recvExecute(t *testing.T, stream tooldexv1.HostService_ConnectClient) *tooldexv1.ExecuteCall {
	t.Helper()
	for {
		m, err := recvFrame(t, stream)
		if err != nil {
			t.Fatalf("waiting for an ExecuteCall: %v", err)
		}
		if ex := m.GetExecute(); ex != nil {
			return ex
		}
	}
}

// --- 8. permissions ---

func TestPermissions(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "permissions.json")
	if err := os.WriteFile(policy, []byte(`{"default": "allow", "rules": [
		{"tool": "text_stats", "caller": "guest", "action": "deny", "reason": "guests may not count words"},
		{"tool": "calculate", "action": "ask", "reason": "calculations need approval"},
		{"tool": "vault_*", "action": "ask", "reason": "the vault needs approval"}
	]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := launch(t, "--permissions", policy)
	c := s.conn(t)
	ctx := execCtx(t)
	waitFor(t, 10*time.Second, "the demo host's tools", func() bool { return searchHas(t, c, "text_stats", "admin") })

	// deny
	textParams := `{"text": "One two three."}`
	_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "text_stats", ParamsJson: textParams, Caller: "guest"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "guests may not count words") {
		t.Errorf("Execute text_stats as guest: %v, want PermissionDenied with the rule's reason", err)
	}
	if _, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "text_stats", ParamsJson: textParams, Caller: "admin"}); err != nil {
		t.Errorf("Execute text_stats as admin: %v", err)
	}
	for _, q := range []string{"select:text_stats", "text statistics count words sentences", "text_stats"} {
		if got := searchNames(t, c, q, "guest"); slices.Contains(got, "text_stats") {
			t.Errorf("Search %q as guest = %v, want no text_stats", q, got)
		}
		if got := searchNames(t, c, q, "admin"); !slices.Contains(got, "text_stats") {
			t.Errorf("Search %q as admin = %v, want text_stats", q, got)
		}
	}

	// ask, approve, and a token for other parameters
	resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "calculate", ParamsJson: `{"expression":"6*7"}`, Caller: "admin"})
	if err != nil {
		t.Fatalf("Execute calculate under an ask rule: %v", err)
	}
	a := resp.GetApprovalRequired()
	if a == nil || a.GetToolName() != "calculate" || !strings.Contains(a.GetParamsSummary(), `expression="6*7"`) || a.GetApprovalToken() == "" {
		t.Fatalf("Execute calculate under an ask rule = %v, want approval_required for calculate with the params summary and a token", resp)
	}
	if len(resp.GetContent()) != 0 || resp.GetHostId() != "" {
		t.Errorf("approval_required response ran the tool: %v", resp)
	}
	resp, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "calculate", ParamsJson: `{"expression":"6*7"}`, Caller: "admin", ApprovalToken: a.GetApprovalToken()})
	if err != nil || resp.GetApprovalRequired() != nil || len(resp.GetContent()) == 0 || resp.GetContent()[0].GetJson().GetStructValue().GetFields()["value"].GetNumberValue() != 42 {
		t.Errorf("Execute calculate with the token = %v, %v; want value 42", resp, err)
	}
	_, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "calculate", ParamsJson: `{"expression":"6*8"}`, Caller: "admin", ApprovalToken: a.GetApprovalToken()})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("Execute calculate with a token for other params: code = %v (%v), want PermissionDenied", status.Code(err), err)
	}
	_, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "calculate", ParamsJson: `{"expression":"6*7"}`, Caller: "guest", ApprovalToken: a.GetApprovalToken()})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("Execute calculate with another caller's token: code = %v (%v), want PermissionDenied", status.Code(err), err)
	}

	// A host tool called by an alias: the approval names the real tool,
	// and host refusals are PERMISSION_DENIED.
	h := newHost(s.addr, "guarded-host", 2)
	vault := mustTool("vault_read", "Reads a secret from the vault.", `{"type":"object","properties":{"key":{"type":"string"}}}`)
	vault.Aliases = []string{"read_vault"}
	mustHandle(t, h, vault, func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("secret for " + call.Params["key"].(string)), nil
	})
	mustHandle(t, h, mustTool("refusing_tool", "Always refused by its host.", `{"type":"object"}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			return nil, fmt.Errorf("checked: %w", toolhost.Refuse("not on weekends"))
		})
	runHost(t, h)
	resp, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "read_vault", ParamsJson: `{"key":"k1"}`, Caller: "admin"})
	if err != nil || resp.GetApprovalRequired().GetToolName() != "vault_read" {
		t.Fatalf("Execute read_vault (alias) = %v, %v; want approval_required naming vault_read", resp, err)
	}
	resp, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "read_vault", ParamsJson: `{"key":"k1"}`, Caller: "admin", ApprovalToken: resp.GetApprovalRequired().GetApprovalToken()})
	if err != nil || textOf(resp) != "secret for k1" || resp.GetToolName() != "vault_read" {
		t.Errorf("Execute read_vault with the token = %v, %v; want the secret from vault_read", resp, err)
	}
	_, err = c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "refusing_tool", Caller: "admin"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "not on weekends") {
		t.Errorf("Execute refusing_tool: %v, want PermissionDenied with the host's reason", err)
	}
}

// --- 9. malformed host frames ---

func TestMalformedHostFrames(t *testing.T) {
	s := launch(t, "--demo-host=false", "--max-message-bytes", "1048576")
	c := s.conn(t)
	ctx := execCtx(t)

	t.Run("first frame not hello", func(t *testing.T) {
		stream := rawConnect(t, s.addr)
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Heartbeat{Heartbeat: &tooldexv1.Heartbeat{}}}); err != nil {
			t.Fatal(err)
		}
		_, err := recvFrame(t, stream)
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), "hello") {
			t.Errorf("stream after a heartbeat first: %v, want InvalidArgument naming hello", err)
		}
	})
	t.Run("empty host id", func(t *testing.T) {
		stream := rawConnect(t, s.addr)
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
			Tools: []*tooldexv1.Tool{mustTool("nameless_tool", "x", `{"type":"object"}`)},
		}}}); err != nil {
			t.Fatal(err)
		}
		_, err := recvFrame(t, stream)
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), "hello.host_id") {
			t.Errorf("stream after a hello without host_id: %v, want InvalidArgument naming hello.host_id", err)
		}
		if searchHas(t, c, "nameless_tool", "") {
			t.Errorf("the rejected hello's tool is in search")
		}
	})
	t.Run("result for an unknown call", func(t *testing.T) {
		stream := rawConnect(t, s.addr)
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
			HostId: "raw-host", Tools: []*tooldexv1.Tool{mustTool("raw_tool", "Served over a raw stream.", `{"type":"object"}`)},
		}}}); err != nil {
			t.Fatal(err)
		}
		if m, err := recvFrame(t, stream); err != nil || m.GetHelloAck() == nil {
			t.Fatalf("after hello: %v, %v; want a HelloAck", m, err)
		}
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: &tooldexv1.CallResult{
			CallId: "no-such-call", Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "stray"}}},
		}}}); err != nil {
			t.Fatal(err)
		}
		type res struct {
			resp *tooldexv1.ExecuteResponse
			err  error
		}
		done := make(chan res, 1)
		go func() {
			resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "raw_tool"})
			done <- res{resp, err}
		}()
		ex := recvExecute(t, stream)
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: &tooldexv1.CallResult{
			CallId: ex.GetCallId(), Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "raw ok"}}},
		}}}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || textOf(r.resp) != "raw ok" || r.resp.GetHostId() != "raw-host" {
			t.Errorf("Execute raw_tool after a stray result = %v, %v; want \"raw ok\" from raw-host", r.resp, r.err)
		}
	})
	t.Run("oversized frame", func(t *testing.T) {
		h := newHost(s.addr, "good-host", 2)
		mustHandle(t, h, mustTool("good_tool", "Works.", `{"type":"object"}`),
			func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
				return toolhost.Text("good"), nil
			})
		runHost(t, h)
		stream := rawConnect(t, s.addr)
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
			HostId: "big-host", Tools: []*tooldexv1.Tool{mustTool("big_tool", "Answers too much.", `{"type":"object"}`)},
		}}}); err != nil {
			t.Fatal(err)
		}
		if m, err := recvFrame(t, stream); err != nil || m.GetHelloAck() == nil {
			t.Fatalf("after hello: %v, %v; want a HelloAck", m, err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "big_tool"})
			errc <- err
		}()
		ex := recvExecute(t, stream)
		huge := strings.Repeat("x", 2<<20)
		_ = stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: &tooldexv1.CallResult{
			CallId: ex.GetCallId(), Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: huge}}},
		}}})
		// The stream fails; its call's outcome is unknown.
		for {
			m, err := recvFrame(t, stream)
			if err != nil {
				if status.Code(err) != codes.ResourceExhausted {
					t.Errorf("big-host stream ended with %v, want ResourceExhausted", err)
				}
				break
			}
			if m.GetExecute() != nil {
				t.Fatalf("big-host got another call: %v", m)
			}
		}
		select {
		case err := <-errc:
			if status.Code(err) != codes.Unavailable {
				t.Errorf("Execute big_tool: code = %v (%v), want Unavailable", status.Code(err), err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Execute big_tool did not return 20s after its host's stream failed")
		}
		waitFor(t, 10*time.Second, "big_tool to leave search", func() bool { return !searchHas(t, c, "big_tool", "") })
		if !searchHas(t, c, "good_tool", "") {
			t.Errorf("good_tool left search with big-host")
		}
		resp, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "good_tool"})
		if err != nil || textOf(resp) != "good" {
			t.Errorf("Execute good_tool after big-host failed = %v, %v; want \"good\"", resp, err)
		}
	})
}

// --- 11. graceful shutdown with a call in flight ---

// TestGracefulShutdownWithHostCall sends SIGTERM while a host runs a 500ms
// call. cmd/server/run.go tells hosts to drain (no new calls), waits up to
// half of --shutdown-grace for the calls in flight on hosts (WaitCalls),
// and only then cancels the host streams and runs GracefulStop: the call
// completes (it would fail UNAVAILABLE, outcome unknown, were the streams
// cancelled first), and the server exits 0 within the grace.
func TestGracefulShutdownWithHostCall(t *testing.T) {
	const grace = 10 * time.Second
	s := launch(t, "--demo-host=false", "--shutdown-grace", grace.String())
	c := s.conn(t)
	h := newHost(s.addr, "finisher", 2)
	started := make(chan struct{}, 1)
	mustHandle(t, h, mustTool("half_second", "Takes half a second.", `{"type":"object"}`),
		func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			started <- struct{}{}
			select {
			case <-time.After(500 * time.Millisecond):
				return toolhost.Text("finished"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	runHost(t, h)
	type res struct {
		resp *tooldexv1.ExecuteResponse
		err  error
	}
	done := make(chan res, 1)
	go func() {
		resp, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: "half_second"})
		done <- res{resp, err}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("half_second never started")
	}
	sigAt := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || textOf(r.resp) != "finished" {
			t.Errorf("in-flight Execute across SIGTERM = %v, %v; want \"finished\"", r.resp, r.err)
		}
	case <-time.After(grace + 10*time.Second):
		t.Fatal("in-flight Execute did not return after SIGTERM")
	}
	select {
	case <-s.exited:
		if s.exitErr != nil {
			t.Errorf("server exit after SIGTERM: %v, want status 0", s.exitErr)
		}
		if took := time.Since(sigAt); took > grace {
			t.Errorf("server took %v to exit, more than its %v grace", took, grace)
		}
	case <-time.After(grace + 10*time.Second):
		t.Fatalf("server still running %v after SIGTERM", grace+10*time.Second)
	}
	if _, ok := s.logEntry("stopped"); !ok {
		t.Errorf("server logs lack \"stopped\"")
	}
}

// --- 12. metrics ---

func TestMetrics(t *testing.T) {
	s := launch(t, "--metrics-addr", "127.0.0.1:0")
	entry, ok := s.logEntry("metrics")
	addr, _ := entry["addr"].(string)
	if !ok || addr == "" || strings.HasSuffix(addr, ":0") {
		t.Fatalf("metrics log line = %v, want one with the listener's addr", entry)
	}
	c := s.conn(t)
	waitFor(t, 10*time.Second, "the demo host", func() bool { return len(hostsServing(t, c, "calculate")) == 1 })
	if _, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: "calculate", ParamsJson: `{"expression":"1+1"}`}); err != nil {
		t.Fatalf("Execute calculate: %v", err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s, %v", resp.Status, err)
	}
	metrics := string(body)
	checks := []struct {
		name   string
		labels []string
		min    float64
		max    float64
	}{
		{"tooldex_execute_total", []string{`tool="calculate"`, `outcome="ok"`, `host="demo"`}, 1, 1},
		{"tooldex_hosts_connected", nil, 1, 1},
		{"grpc_server_handled_total", []string{`grpc_service="tooldex.v1.DiscoveryService"`, `grpc_method="Execute"`, `grpc_code="OK"`, `grpc_type="unary"`}, 1, 1},
		{"grpc_server_handled_total", []string{`grpc_service="tooldex.v1.DiscoveryService"`, `grpc_method="ListHosts"`, `grpc_code="OK"`}, 1, 1e9},
		// Every method's series exists from the start, at zero.
		{"grpc_server_handled_total", []string{`grpc_method="Prefetch"`, `grpc_code="Unavailable"`}, 0, 0},
		{"grpc_server_handling_seconds_count", []string{`grpc_method="Execute"`}, 1, 1},
		// The demo host's session: at least its hello in, the ack and the
		// call out.
		{"grpc_server_started_total", []string{`grpc_service="tooldex.v1.HostService"`, `grpc_method="Connect"`, `grpc_type="bidi_stream"`}, 1, 1e9},
		{"grpc_server_msg_received_total", []string{`grpc_method="Connect"`}, 1, 1e9},
		{"grpc_server_msg_sent_total", []string{`grpc_method="Connect"`}, 2, 1e9},
	}
	for _, ck := range checks {
		v, found := metricValue(metrics, ck.name, ck.labels)
		if !found {
			t.Errorf("/metrics has no %s with %v", ck.name, ck.labels)
			continue
		}
		if v < ck.min || v > ck.max {
			t.Errorf("%s%v = %v, want in [%v, %v]", ck.name, ck.labels, v, ck.min, ck.max)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", metrics)
	}
}

// metricValue finds the sample of name whose labels include all of labels
// (Prometheus text format).
func metricValue(text, name string, labels []string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		metric, lbls, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		all := true
		for _, l := range labels {
			if !strings.Contains(lbls, l) {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		return v, true
	}
	return 0, false
}
