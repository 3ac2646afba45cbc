// Package e2e runs the real tooldex server binary on a loopback port and
// drives it with the real clients: the tooldex command, grpcurl (through
// server reflection, with no .proto files) and a Go gRPC client.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds the server, the client, the MCP bridge and façade and
// grpcurl once per test run.
func binaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "tooldex-e2e-")
		if buildErr != nil {
			return
		}
		// grpcurl is a developer tool: it lives in tools/go.mod, out of the
		// server's module graph.
		tools, err := filepath.Abs(filepath.Join("..", "tools", "go.mod"))
		if err != nil {
			buildErr = err
			return
		}
		for name, b := range map[string]struct{ pkg, modfile string }{
			"tooldex-server":    {pkg: "github.com/tooldex/tooldex/cmd/server"},
			"tooldex":           {pkg: "github.com/tooldex/tooldex/cmd/tooldex"},
			"tooldex-mcpbridge": {pkg: "github.com/tooldex/tooldex/cmd/mcpbridge"},
			"tooldex-mcpserver": {pkg: "github.com/tooldex/tooldex/cmd/mcpserver"},
			"grpcurl":           {pkg: "github.com/fullstorydev/grpcurl/cmd/grpcurl", modfile: tools},
		} {
			args := []string{"build", "-o", filepath.Join(binDir, name)}
			if b.modfile != "" {
				args = append(args, "-modfile="+b.modfile)
			}
			pkg := b.pkg
			out, err := exec.Command("go", append(args, pkg)...).CombinedOutput()
			if err != nil {
				buildErr = errors.New("go build " + pkg + ": " + err.Error() + "\n" + string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// server is a running tooldex-server process.
type server struct {
	addr string
	cmd  *exec.Cmd
	// logs returns what the server has logged so far.
	logs func() string
}

// startServer runs the server binary on a free loopback port and waits for
// its "serving" log line; see launch.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return launch(t, args...).server
}

// client runs the tooldex command against s.
func (s *server) client(t *testing.T, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binaries(t), "tooldex"), args...)
	cmd.Env = append(os.Environ(), "TOOLDEX_ADDR="+s.addr)
	cmd.Stdin = stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (s *server) conn(t *testing.T) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return tooldexv1.NewDiscoveryServiceClient(cc)
}

func TestDemoCatalogSearchWithClient(t *testing.T) {
	s := startServer(t, "--demo-catalog")
	tests := []struct {
		name string
		args []string
		want []string // substrings of the output
	}{
		{"keywords", []string{"search", "cron", "schedule"}, []string{"CronCreate"}},
		{"select", []string{"search", "select:CronList,NoSuchTool"}, []string{"CronList", "not found: NoSuchTool"}},
		{"core named", []string{"search", "read"}, []string{"already loaded (core): Read"}},
		{"exact name spelled as words", []string{"search", "find", "symbol"}, []string{"mcp__serena__find_symbol", "exact"}},
		{"text for a model", []string{"search", "--text", "slack", "send"}, []string{"mcp__slack__send_message", "ExecuteTool"}},
		{"discover with schemas", []string{"discover", "read a text file from disk"}, []string{"Schema: {"}},
		{"list deferred", []string{"list", "--loading", "deferred", "--prefix", "mcp__github__"}, []string{"mcp__github__create_issue", "deferred"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.client(t, nil, tt.args...)
			if err != nil {
				t.Fatalf("tooldex %s: %v\n%s", strings.Join(tt.args, " "), err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("tooldex %s output lacks %q:\n%s", strings.Join(tt.args, " "), w, out)
				}
			}
		})
	}
}

func TestRegisterSearchUnregisterWithClient(t *testing.T) {
	s := startServer(t, "--demo-host=false")
	dir := t.TempDir()
	mcpList := `{"tools":[{"name":"mcp__weather__get_forecast","description":"Get the weather forecast for a city for the next days.","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}}]}`
	file := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(file, []byte(mcpList), 0o600); err != nil {
		t.Fatal(err)
	}
	openai := `[{"type":"function","function":{"name":"convert_currency","description":"Convert an amount between currencies.","parameters":{"type":"object","properties":{"amount":{"type":"number"}}}}}]`
	steps := []struct {
		args    []string
		stdin   string
		want    string
		wantErr bool
	}{
		{args: []string{"register", file}, want: "created"},
		{args: []string{"register", file}, want: "unchanged"},
		{args: []string{"register", "-"}, stdin: openai, want: "convert_currency"},
		{args: []string{"search", "weather", "forecast"}, want: "mcp__weather__get_forecast"},
		{args: []string{"search", "--json", "currency"}, want: `"convert_currency"`},
		{args: []string{"unregister", "mcp__weather__get_forecast", "nope"}, want: "not found: nope"},
		{args: []string{"search", "weather", "forecast"}, want: "0 result(s)"},
		{args: []string{"search", ""}, wantErr: true, want: "InvalidArgument"},
		{args: []string{"register", filepath.Join(dir, "missing.json")}, wantErr: true, want: "missing.json"},
	}
	for _, st := range steps {
		out, err := s.client(t, strings.NewReader(st.stdin), st.args...)
		if (err != nil) != st.wantErr {
			t.Fatalf("tooldex %v: err = %v, want error %v\n%s", st.args, err, st.wantErr, out)
		}
		if !strings.Contains(out, st.want) {
			t.Fatalf("tooldex %v output lacks %q:\n%s", st.args, st.want, out)
		}
		if st.wantErr && strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("tooldex %v error is not one line:\n%s", st.args, out)
		}
	}
}

func TestBadInputOverGRPC(t *testing.T) {
	s := startServer(t, "--demo-host=false")
	c := s.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	schema := func(js string) *tooldexv1.Tool {
		t.Helper()
		tool := tooldexv1.Tool{Name: "ok_tool"}
		st, err := structFromJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		tool.InputSchema = st
		return &tool
	}
	tests := []struct {
		name      string
		call      func() error
		wantField string
	}{
		{"empty name", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "good"}, {Name: ""}}})
			return err
		}, "tools[1].name"},
		{"illegal name", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "has space"}}})
			return err
		}, "tools[0].name"},
		{"long name", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: strings.Repeat("x", 65)}}})
			return err
		}, "tools[0].name"},
		{"huge description", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "x", Description: strings.Repeat("d", 20000)}}})
			return err
		}, "tools[0].description"},
		{"invalid schema", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{schema(`{"type":"object","properties":{"a":{"type":"strin"}}}`)}})
			return err
		}, "tools[0].input_schema"},
		{"remote ref", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{schema(`{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`)}})
			return err
		}, "tools[0].input_schema"},
		{"duplicate in batch", func() error {
			_, err := c.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "a"}, {Name: "a"}}})
			return err
		}, "tools[1].name"},
		{"megabyte query", func() error {
			_, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: strings.Repeat("q ", 1<<19)})
			return err
		}, "query"},
		{"select of 10,000 names", func() error {
			names := make([]string, 10000)
			for i := range names {
				names[i] = "t" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
			}
			_, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "select:" + strings.Join(names, ",")})
			return err
		}, "query"},
		{"negative max_results", func() error {
			_, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: "x", MaxResults: -1})
			return err
		}, "max_results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("code = %v (%v), want InvalidArgument", st.Code(), err)
			}
			var fields []string
			for _, d := range st.Details() {
				if br, ok := d.(*errdetails.BadRequest); ok {
					for _, v := range br.GetFieldViolations() {
						fields = append(fields, v.GetField())
					}
				}
			}
			if !contains(fields, tt.wantField) {
				t.Errorf("field violations = %v, want %q among them", fields, tt.wantField)
			}
		})
	}
	// Nothing of the rejected batches was registered, and the server serves on.
	list, err := c.ListTools(ctx, &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools after bad input: %v", err)
	}
	if n := len(list.GetTools()); n != 0 {
		t.Errorf("ListTools after rejected batches = %d tools, want 0", n)
	}
	hc := healthpb.NewHealthClient(mustConn(t, s.addr))
	resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v, %v; want SERVING", resp.GetStatus(), err)
	}
}

func TestGrpcurlThroughReflection(t *testing.T) {
	s := startServer(t, "--demo-catalog")
	grpcurl := filepath.Join(binaries(t), "grpcurl")
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(grpcurl, append([]string{"-plaintext"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("grpcurl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run(s.addr, "list"); !strings.Contains(out, "tooldex.v1.DiscoveryService") {
		t.Errorf("grpcurl list = %q, want tooldex.v1.DiscoveryService", out)
	}
	if out := run(s.addr, "describe", "tooldex.v1.SearchRequest"); !strings.Contains(out, "max_results") {
		t.Errorf("grpcurl describe SearchRequest = %q, want max_results", out)
	}
	out := run("-d", `{"query": "slack send", "max_results": 3}`, s.addr, "tooldex.v1.DiscoveryService/Search")
	var resp struct {
		Results []struct {
			Tool struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"results"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("grpcurl Search output is not JSON: %v\n%s", err, out)
	}
	if len(resp.Results) == 0 || resp.Results[0].Tool.Name != "mcp__slack__send_message" {
		t.Errorf("grpcurl Search first result = %+v, want mcp__slack__send_message", resp.Results)
	}
	reg := run("-d", `{"tools": [{"name": "mcp__jira__create_ticket", "description": "Create a Jira ticket in a project.", "input_schema": {"type": "object", "properties": {"summary": {"type": "string"}}}}]}`, s.addr, "tooldex.v1.DiscoveryService/RegisterTools")
	if !strings.Contains(reg, "REGISTER_OUTCOME_CREATED") {
		t.Errorf("grpcurl RegisterTools = %s, want CREATED", reg)
	}
	if out := run("-d", `{"query": "jira ticket"}`, s.addr, "tooldex.v1.DiscoveryService/Search"); !strings.Contains(out, "mcp__jira__create_ticket") {
		t.Errorf("grpcurl Search after register = %s, want the new tool", out)
	}
}

func mustConn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
