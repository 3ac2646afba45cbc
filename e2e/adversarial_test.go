package e2e

// The adversarial suite: issue 15's table, each row played by a hostile
// client, host or frontend against the real server binary on loopback,
// each asserting a bound or a count (never a wall-clock time; timings are
// logged, and recorded in docs/BENCHMARKS.md).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/toolhost"
)

// bigConn is a client connection that sends and receives what the server
// may (limit.MaxMessageBytes), as tooldex's own clients do.
func bigConn(t *testing.T, addr string) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(addr, append(limit.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return tooldexv1.NewDiscoveryServiceClient(cc)
}

// rssBytes is the server process's resident memory.
func rssBytes(t *testing.T, s *tserver) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Skipf("resident memory not readable: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

const maxGrowth = 50 << 20 // resident memory growth allowed per offending request

// echoHost runs a toolhost serving "echo", which answers "ok".
func echoHost(t *testing.T, addr, id string, slots int) *ghost {
	t.Helper()
	h := newHost(addr, id, slots)
	mustHandle(t, h, &tooldexv1.Tool{Name: "echo", Description: "Echo the input back."}, func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("ok"), nil
	})
	return runHost(t, h)
}

// TestAdversarialOversizedParamsIsolated: params between 4 and 16 MiB cut
// the SDK host's stream and failed 20 of 20 other users' calls. Now the
// host receives what the server sends, a frame too large for any host
// fails alone, and a victim calling all along sees no failure.
func TestAdversarialOversizedParamsIsolated(t *testing.T) {
	s := launch(t, "--demo-host=false")
	echoHost(t, s.addr, "echo-host", 32)
	victim, attacker := s.conn(t), bigConn(t, s.addr)
	waitFor(t, 10*time.Second, "the echo host", func() bool { return len(hostsServing(t, victim, "echo")) == 1 })

	// Params_json of 3 MiB of zeros: a Struct of 1.5M numbers, larger
	// than any host may receive once decoded.
	zeros := `{"a":[` + strings.TrimSuffix(strings.Repeat("0,", 3<<19), ",") + `]}`
	// A Struct of 12 MiB: more than the SDK host took before.
	big, err := structpb.NewStruct(map[string]any{"s": strings.Repeat("x", 12<<20)})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var victimOK, victimFailed atomic.Int64
	var failures sync.Map
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for ctx.Err() == nil {
				cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err := victim.Execute(cctx, &tooldexv1.ExecuteRequest{ToolName: "echo", ParamsJson: `{"n":1}`})
				ccancel()
				if err != nil {
					victimFailed.Add(1)
					failures.Store(status.Code(err).String()+": "+status.Convert(err).Message(), true)
				} else {
					victimOK.Add(1)
				}
			}
		})
	}
	codesSeen := map[codes.Code]int{}
	for i := range 6 {
		req := &tooldexv1.ExecuteRequest{ToolName: "echo", ParamsJson: zeros}
		if i%2 == 1 {
			req = &tooldexv1.ExecuteRequest{ToolName: "echo", Params: big}
		}
		_, err := attacker.Execute(execCtx(t), req)
		codesSeen[status.Code(err)]++
		if i%2 == 0 && status.Code(err) != codes.InvalidArgument {
			t.Errorf("params_json decoding past the host's limit: %v, want INVALID_ARGUMENT", err)
		}
		if i%2 == 1 && status.Code(err) != codes.OK && status.Code(err) != codes.InvalidArgument {
			t.Errorf("a 12 MiB Struct: %v, want OK (delivered) or INVALID_ARGUMENT (refused)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	t.Logf("attacker codes %v; victim %d answered, %d failed", codesSeen, victimOK.Load(), victimFailed.Load())
	if victimFailed.Load() != 0 {
		failures.Range(func(k, _ any) bool { t.Errorf("victim failure: %s", k); return true })
		t.Errorf("victim: %d of %d calls failed, want 0", victimFailed.Load(), victimOK.Load()+victimFailed.Load())
	}
	if victimOK.Load() == 0 {
		t.Error("victim made no call")
	}
	if n := len(hostsServing(t, victim, "echo")); n != 1 {
		t.Errorf("%d sessions serve echo after the attack, want the one (its stream never cut)", n)
	}
}

// TestAdversarialStalledReplicaSkipped: a replica that accepts calls and
// never answers held 19 of 20 callers until their own deadlines. After one
// call timeout it is skipped.
func TestAdversarialStalledReplicaSkipped(t *testing.T) {
	s := launch(t, "--demo-host=false")
	c := s.conn(t)
	mute := rawConnect(t, s.addr)
	if err := mute.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: "mute", Version: "e2e", MaxConcurrentCalls: 16,
		Tools: []*tooldexv1.Tool{{Name: "echo", Description: "Echo the input back."}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := recvFrame(t, mute); err != nil || m.GetHelloAck() == nil {
		t.Fatalf("hello: %v %v", m, err)
	}
	// The mute host reads its frames (so nothing backs up) and heartbeats,
	// and answers nothing.
	var muteCalls atomic.Int64
	go func() {
		for {
			m, err := mute.Recv()
			if err != nil {
				return
			}
			if m.GetExecute() != nil {
				muteCalls.Add(1)
			}
		}
	}()
	stopBeat := make(chan struct{})
	defer close(stopBeat)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopBeat:
				return
			case <-tick.C:
				_ = mute.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Heartbeat{Heartbeat: &tooldexv1.Heartbeat{}}})
			}
		}
	}()
	echoHost(t, s.addr, "good", 16)
	waitFor(t, 10*time.Second, "two replicas", func() bool { return len(hostsServing(t, c, "echo")) == 2 })

	// Calls until one lands on mute and times out (one call timeout). The
	// deadline leaves the server well past the registry's StallAfter (1 s)
	// after it sent the call, however late a loaded machine delivers it;
	// the callers after it get a deadline that only a call sent to mute
	// would reach.
	const callTimeout = 5 * time.Second
	const answerTimeout = 15 * time.Second
	for i := 0; muteCalls.Load() == 0; i++ {
		if i == 20 {
			t.Fatal("no call reached the mute replica in 20 calls")
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		_, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "echo"})
		cancel()
		if muteCalls.Load() > 0 && status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("the call on the mute replica: %v, want DEADLINE_EXCEEDED", err)
		}
	}
	before := muteCalls.Load()

	// 20 callers at once: every one answered, none sent to mute.
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 20 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
			defer cancel()
			if _, err := c.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "echo"}); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of 20 callers failed after the replica stalled, want 0", failed.Load())
	}
	if n := muteCalls.Load() - before; n != 0 {
		t.Errorf("the stalled replica got %d more calls, want 0", n)
	}
}

// rawCodec sends []byte as they are: a client encoding what protobuf
// would refuse to.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func wireString(m proto.Message, field, s string) []byte {
	num := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(field)).Number()
	return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
}

// TestAdversarialInvalidUTF8: invalid UTF-8 in names, queries and params
// was INTERNAL; it is INVALID_ARGUMENT naming the field.
func TestAdversarialInvalidUTF8(t *testing.T) {
	s := launch(t, "--demo-host=false")
	cc, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tests := []struct {
		method string
		body   []byte
		field  string
	}{
		{"Search", wireString(&tooldexv1.SearchRequest{}, "query", "slack \xff"), "query"},
		{"Execute", wireString(&tooldexv1.ExecuteRequest{}, "tool_name", "t\xc3"), "tool_name"},
		{"Execute", wireString(&tooldexv1.ExecuteRequest{}, "params_json", "{\"a\":\"\xfe\"}"), "params_json"},
		{"Prefetch", wireString(&tooldexv1.PrefetchRequest{}, "session_id", "\xff"), "session_id"},
		{"UnregisterTools", wireString(&tooldexv1.UnregisterToolsRequest{}, "names", "\xff"), "names"},
	}
	for _, tt := range tests {
		var out []byte
		err := cc.Invoke(execCtx(t), "/tooldex.v1.DiscoveryService/"+tt.method, &tt.body, &out)
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), tt.field) {
			t.Errorf("%s with invalid UTF-8 in %s: %v (fields %v), want INVALID_ARGUMENT naming it", tt.method, tt.field, err, violations(err))
		}
	}
}

// TestAdversarialSchemasRefused: $ref cycles were accepted and then
// failed every call; enums, patterns and schemas past their bounds cost
// every call that validated against them.
func TestAdversarialSchemasRefused(t *testing.T) {
	s := launch(t, "--demo-host=false")
	c := s.conn(t)
	enum := make([]string, 2049)
	for i := range enum {
		enum[i] = strconv.Quote(fmt.Sprint("v", i))
	}
	tests := []struct{ name, schema, want string }{
		{"self $ref", `{"$ref":"#"}`, "$ref cycle"},
		{"$ref pair", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "$ref cycle"},
		{"long enum", `{"type":"object","properties":{"e":{"enum":[` + strings.Join(enum, ",") + `]}}}`, "enum has 2049 values"},
		{"long pattern", `{"type":"object","properties":{"p":{"type":"string","pattern":"` + strings.Repeat("(a|b)", 205) + `"}}}`, "pattern is 1025 bytes"},
		{"complex pattern", `{"type":"object","properties":{"p":{"type":"string","pattern":"` + strings.Repeat("[a-z]{999}", 5) + `"}}}`, "instructions"},
	}
	for i, tt := range tests {
		_, err := c.RegisterTools(execCtx(t), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{mustTool(fmt.Sprint("t", i), "A tool.", tt.schema)}})
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), "tools[0].input_schema") || !strings.Contains(status.Convert(err).Message(), tt.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT on tools[0].input_schema saying %q", tt.name, err, tt.want)
		}
	}
	// A recursive tree schema is no cycle.
	tree := `{"type":"object","$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`
	if _, err := c.RegisterTools(execCtx(t), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{mustTool("tree", "A tree.", tree)}}); err != nil {
		t.Errorf("a tree schema: %v", err)
	}
}

// TestAdversarialEnumViolationsBounded: one Execute with 8,000 invalid
// items against a 2,000-value enum grew the server by 713 MB (every
// violation rendered the enum). The answer now lists a bounded number of
// violations and the server stays within 50 MB.
func TestAdversarialEnumViolationsBounded(t *testing.T) {
	// The demo catalog first: on an empty server a tool this large hits the
	// arena bug TestAdversarialHostPanicContained plays.
	s := launch(t, "--demo-host=false", "--demo-catalog")
	c := bigConn(t, s.addr)
	enum := make([]string, 2000)
	for i := range enum {
		enum[i] = strconv.Quote(fmt.Sprint("value-", i))
	}
	schema := `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}}}}`
	h := newHost(s.addr, "enum-host", 4)
	mustHandle(t, h, mustTool("pick", "Pick values.", schema), func(context.Context, *toolhost.Call) (*toolhost.Result, error) {
		return toolhost.Text("ok"), nil
	})
	runHost(t, h)
	waitFor(t, 10*time.Second, "the enum host", func() bool { return len(hostsServing(t, c, "pick")) == 1 })
	bad := make([]string, 8000)
	for i := range bad {
		bad[i] = strconv.Quote(fmt.Sprint("bogus-", i))
	}
	params := `{"items":[` + strings.Join(bad, ",") + `]}`
	rss0 := rssBytes(t, s)
	for range 3 {
		_, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: "pick", ParamsJson: params})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("8,000 invalid items: %v, want INVALID_ARGUMENT", err)
		}
		if n := len(violations(err)); n > 101 {
			t.Errorf("%d violations sent, want at most 101", n)
		}
		if n := len(status.Convert(err).Message()); n > 2048 {
			t.Errorf("message of %d bytes", n)
		}
	}
	if growth := rssBytes(t, s) - rss0; growth > maxGrowth {
		t.Errorf("resident memory grew %d MB over 3 offending requests, want under %d MB each", growth>>20, maxGrowth>>20)
	} else {
		t.Logf("resident memory growth over 3 requests: %.1f MB", float64(growth)/(1<<20))
	}
}

// TestAdversarialPrefetchMemoryBounded: Prefetch loaded names and session
// ids had no byte cap: +406 MB kept per 100 requests.
func TestAdversarialPrefetchMemoryBounded(t *testing.T) {
	s := launch(t, "--demo-host=false", "--demo-catalog")
	c := bigConn(t, s.addr)
	loaded := make([]string, 1000)
	for i := range loaded {
		loaded[i] = fmt.Sprintf("%0256d", i)
	}
	rss0 := rssBytes(t, s)
	for i := range 100 {
		_, err := c.Prefetch(execCtx(t), &tooldexv1.PrefetchRequest{Message: "schedule a cron job", SessionId: fmt.Sprintf("%0256d", i), Loaded: loaded})
		if err != nil {
			t.Fatalf("Prefetch at the bounds: %v", err)
		}
	}
	// Past the bounds: refused, naming the field.
	_, err := c.Prefetch(execCtx(t), &tooldexv1.PrefetchRequest{Message: "x", Loaded: []string{strings.Repeat("n", 1<<20)}})
	if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), "loaded[0]") {
		t.Errorf("a 1 MiB loaded name: %v, want INVALID_ARGUMENT on loaded[0]", err)
	}
	if growth := rssBytes(t, s) - rss0; growth > maxGrowth {
		t.Errorf("resident memory grew %d MB over 100 requests, want under %d MB", growth>>20, maxGrowth>>20)
	} else {
		t.Logf("resident memory growth over 100 Prefetch requests: %.1f MB", float64(growth)/(1<<20))
	}
}

// TestAdversarialMetricsLabelsBounded: each unknown tool name became a
// label; /metrics reached 369 MB.
func TestAdversarialMetricsLabelsBounded(t *testing.T) {
	s := launch(t, "--demo-host=false", "--metrics-addr", "127.0.0.1:0")
	entry, _ := s.logEntry("metrics")
	addr, _ := entry["addr"].(string)
	c := s.conn(t)
	for i := range 3000 {
		_, err := c.Execute(execCtx(t), &tooldexv1.ExecuteRequest{ToolName: fmt.Sprint("bogus_", i)})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("unknown tool: %v", err)
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	series := 0
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "tooldex_execute_total{") {
			series++
		}
	}
	if series != 1 {
		t.Errorf("3,000 unknown names: %d tooldex_execute_total series, want 1", series)
	}
	if len(body) > 1<<20 {
		t.Errorf("/metrics is %d bytes", len(body))
	}
}

// TestAdversarialLogFlood: 100,000 bogus results on a host stream made
// 21.6 MB of WARN log in 0.7 s. The lines are rate-limited per session
// and the session goes on.
func TestAdversarialLogFlood(t *testing.T) {
	s := launch(t, "--demo-host=false")
	stream := rawConnect(t, s.addr)
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: "flood", Tools: []*tooldexv1.Tool{{Name: "flood_tool", Description: "Floods."}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := recvFrame(t, stream); err != nil || m.GetHelloAck() == nil {
		t.Fatalf("hello: %v %v", m, err)
	}
	logged0 := len(s.logText())
	const bogus = 100000
	for i := range bogus {
		if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Result{Result: &tooldexv1.CallResult{CallId: fmt.Sprint("nope-", i)}}}); err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
	}
	c := s.conn(t)
	// The session is alive and served: its frames were all read.
	waitFor(t, 20*time.Second, "the flood session still serving", func() bool { return len(hostsServing(t, c, "flood_tool")) == 1 })
	time.Sleep(500 * time.Millisecond)
	dropped := strings.Count(s.logText(), `"msg":"result dropped"`)
	if dropped > 2*10 {
		t.Errorf("%d 'result dropped' lines for %d bogus results, want at most 20", dropped, bogus)
	}
	t.Logf("%d bogus results: %d log lines, %d bytes of log", bogus, dropped, len(s.logText())-logged0)
}

// TestAdversarialHelloCapped: a hello with 100,000 tools was taken whole.
func TestAdversarialHelloCapped(t *testing.T) {
	s := launch(t, "--demo-host=false")
	tools := make([]*tooldexv1.Tool, 10001)
	for i := range tools {
		tools[i] = &tooldexv1.Tool{Name: fmt.Sprint("t", i), Description: "x"}
	}
	stream := rawConnect(t, s.addr)
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{HostId: "big", Tools: tools}}}); err != nil {
		t.Fatal(err)
	}
	_, err := recvFrame(t, stream)
	if status.Code(err) != codes.InvalidArgument || !slices.Contains(violations(err), "hello.tools") {
		t.Errorf("a hello of 10,001 tools: %v, want INVALID_ARGUMENT on hello.tools", err)
	}
}

// TestAdversarialSearchDuringAbusiveHello: a hello carrying 80 KB of
// regex-heavy schemas blocked every Search for 22 s. Searches keep being
// answered while such a hello (patterns now bounded) is processed; their
// latency is logged for docs/BENCHMARKS.md.
func TestAdversarialSearchDuringAbusiveHello(t *testing.T) {
	s := launch(t, "--demo-host=false", "--demo-catalog")
	c := s.conn(t)
	pattern := strings.Repeat(`[a-z0-9]{1,40}(-[a-z]{1,9})?`, 20)
	tools := make([]*tooldexv1.Tool, 80)
	for i := range tools {
		tools[i] = mustTool(fmt.Sprint("regex_", i), "Regex-heavy.", `{"type":"object","properties":{"a":{"type":"string","pattern":"`+pattern+`"}}}`)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var lat []time.Duration
	var failed int
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			start := time.Now()
			_, err := c.Search(context.Background(), &tooldexv1.SearchRequest{Query: "cron schedule"})
			mu.Lock()
			lat = append(lat, time.Since(start))
			if err != nil {
				failed++
			}
			mu.Unlock()
		}
	})
	stream := rawConnect(t, s.addr)
	start := time.Now()
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{HostId: "regex", Tools: tools}}}); err != nil {
		t.Fatal(err)
	}
	m, err := recvFrame(t, stream)
	helloTook := time.Since(start)
	time.Sleep(100 * time.Millisecond)
	cancel()
	wg.Wait()
	if err != nil || m.GetHelloAck() == nil {
		t.Fatalf("hello: %v %v", m, err)
	}
	rejected := 0
	for _, r := range m.GetHelloAck().GetResults() {
		if r.GetRejected() != "" {
			rejected++
		}
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("hello of %d regex-heavy tools (%d rejected) took %v; %d Searches meanwhile, p99 %v, max %v", len(tools), rejected, helloTook, len(lat), p99, lat[len(lat)-1])
	if failed != 0 {
		t.Errorf("%d Searches failed during the hello", failed)
	}
}

// TestAdversarialRateLimited: a client past its rate gets
// RESOURCE_EXHAUSTED with a RetryInfo; health checks are never limited.
func TestAdversarialRateLimited(t *testing.T) {
	s := launch(t, "--demo-host=false", "--limit-rate", "5", "--limit-burst", "5", "--limit-loopback")
	c := s.conn(t)
	answered, limited := 0, 0
	var retry time.Duration
	for range 30 {
		_, err := c.Search(execCtx(t), &tooldexv1.SearchRequest{Query: "x"})
		switch status.Code(err) {
		case codes.OK:
			answered++
		case codes.ResourceExhausted:
			limited++
			for _, d := range status.Convert(err).Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok {
					retry = ri.GetRetryDelay().AsDuration()
				}
			}
		default:
			t.Fatalf("Search: %v", err)
		}
	}
	if answered < 5 || limited == 0 || answered+limited != 30 {
		t.Errorf("30 Searches at 5/s: %d answered, %d limited; want the burst answered and the rest limited", answered, limited)
	}
	if retry <= 0 {
		t.Error("no RetryInfo with RESOURCE_EXHAUSTED")
	}
}

// TestAdversarialHostPanicContained: the first tool of a fresh server,
// if its stored block was between 16 and 32 KiB (a 2,000-value enum),
// panicked the catalog's arena (service/arena.go: the first chunk is
// smaller than the largest block it packs) in a host's hello, and a panic
// in a stream handler ended the process. The panic is now contained: the
// host's stream fails, the server keeps serving.
func TestAdversarialHostPanicContained(t *testing.T) {
	s := launch(t, "--demo-host=false")
	enum := make([]string, 2000)
	for i := range enum {
		enum[i] = strconv.Quote(fmt.Sprint("value-", i))
	}
	schema := `{"type":"object","properties":{"e":{"type":"string","enum":[` + strings.Join(enum, ",") + `]}}}`
	stream := rawConnect(t, s.addr)
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: "big-block", Tools: []*tooldexv1.Tool{mustTool("pick", "Pick a value.", schema)},
	}}}); err != nil {
		t.Fatal(err)
	}
	m, err := recvFrame(t, stream)
	t.Logf("hello: ack %v, err %v", m.GetHelloAck() != nil, err)
	select {
	case <-s.exited:
		t.Fatalf("the server exited: %v", s.exitErr)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := s.conn(t).Search(execCtx(t), &tooldexv1.SearchRequest{Query: "x"}); err != nil {
		t.Errorf("Search after the hello: %v", err)
	}
}
