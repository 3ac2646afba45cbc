package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// TestMain checks that the commands leave no goroutine behind. teatest's
// SIGINT watcher (one per test model) never ends by design: it is the
// library's, not ours.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"))
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantPos []string
		wantMax int
	}{
		{[]string{"slack", "send", "--max", "3"}, []string{"slack", "send"}, 3},
		{[]string{"--max", "3", "slack", "send"}, []string{"slack", "send"}, 3},
		{[]string{"slack", "--max=2", "send"}, []string{"slack", "send"}, 2},
		{[]string{"slack", "--", "--max", "3"}, []string{"slack", "--max", "3"}, 0},
		{[]string{"-", "+slack"}, []string{"-", "+slack"}, 0},
		{nil, nil, 0},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		max := fs.Int("max", 0, "")
		got, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if !slices.Equal(got, tt.wantPos) || *max != tt.wantMax {
			t.Errorf("parseArgs(%q) = %q, --max %d; want %q, --max %d", tt.args, got, *max, tt.wantPos, tt.wantMax)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseArgs(fs, []string{"slack", "--nope"}); err == nil {
		t.Error("parseArgs with an unknown flag after an argument: nil error")
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"calculate", "calendar_add", "time_now", "calculate", "Calculator"}
	tests := []struct {
		name string
		want []string
	}{
		{"calculte", []string{"calculate"}},
		{"calculat", []string{"calculate", "Calculator"}},
		{"CALCULATE", []string{"calculate", "Calculator"}},
		{"time_nwo", []string{"time_now"}},
		{"weather", nil},
	}
	for _, tt := range tests {
		if got := closest(tt.name, cands, 3); !slices.Equal(got, tt.want) {
			t.Errorf("closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"kitten", "sitting", 3}, {"héllo", "hello", 1}, {"same", "same", 0}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// fakeServer records the requests it gets and knows one tool, calculate.
type fakeServer struct {
	tooldexv1.UnimplementedDiscoveryServiceServer
	mu       sync.Mutex
	searches []*tooldexv1.SearchRequest
}

func (f *fakeServer) Search(_ context.Context, req *tooldexv1.SearchRequest) (*tooldexv1.SearchResponse, error) {
	f.mu.Lock()
	f.searches = append(f.searches, req)
	f.mu.Unlock()
	var results []*tooldexv1.SearchResult
	if strings.Contains(req.GetQuery(), "calc") {
		results = append(results, &tooldexv1.SearchResult{Tool: &tooldexv1.Tool{Name: "calculate"}})
	}
	return &tooldexv1.SearchResponse{Results: results}, nil
}

func (f *fakeServer) ListTools(_ context.Context, req *tooldexv1.ListToolsRequest) (*tooldexv1.ListToolsResponse, error) {
	var tools []*tooldexv1.Tool
	for _, n := range []string{"calculate", "time_now", "time_convert"} {
		if strings.HasPrefix(n, req.GetNamePrefix()) {
			tools = append(tools, &tooldexv1.Tool{Name: n})
		}
	}
	return &tooldexv1.ListToolsResponse{Tools: tools}, nil
}

func (f *fakeServer) Execute(_ context.Context, req *tooldexv1.ExecuteRequest) (*tooldexv1.ExecuteResponse, error) {
	if req.GetToolName() != "calculate" {
		return nil, status.Errorf(codes.NotFound, "tool %q not found", req.GetToolName())
	}
	return &tooldexv1.ExecuteResponse{ToolName: "calculate", Content: []*tooldexv1.Content{
		{Kind: &tooldexv1.Content_Text{Text: "98"}},
		{Kind: &tooldexv1.Content_JsonText{JsonText: `{"value":98}`}},
	}}, nil
}

// serve runs f on a loopback port until the test ends.
func serve(t *testing.T, f *fakeServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, f)
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	t.Cleanup(func() { gs.Stop(); <-done })
	return lis.Addr().String()
}

// runCLI runs the command line as main does, with TOOLDEX_ADDR set to env.
func runCLI(env string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		if k == "TOOLDEX_ADDR" {
			return env
		}
		return ""
	}
	code = Main(context.Background(), args, getenv, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCommandLine(t *testing.T) {
	f := &fakeServer{}
	addr := serve(t, f)
	// A port nothing listens on.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()

	// Flags after the query are flags, not query words.
	if code, _, stderr := runCLI(addr, "search", "slack", "send", "--max", "3"); code != 0 {
		t.Fatalf("search slack send --max 3: exit %d: %s", code, stderr)
	}
	// --addr before the command wins over TOOLDEX_ADDR.
	if code, _, stderr := runCLI(closed, "--addr", addr, "search", "--", "-x", "calc"); code != 0 {
		t.Fatalf("--addr ADDR search: exit %d: %s", code, stderr)
	}
	f.mu.Lock()
	got := f.searches
	f.mu.Unlock()
	if len(got) != 2 || got[0].GetQuery() != "slack send" || got[0].GetMaxResults() != 3 || got[1].GetQuery() != "-x calc" {
		t.Errorf("searches = %v; want \"slack send\" max 3, then \"-x calc\"", got)
	}

	tests := []struct {
		name       string
		env        string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"help", addr, []string{"-h"}, 0, "usage: tooldex", ""},
		{"command help", addr, []string{"search", "-h"}, 0, "-max", ""},
		{"help after --addr", addr, []string{"--addr", addr, "--help"}, 0, "-addr", ""},
		{"no command", addr, nil, 1, "", "usage: tooldex"},
		{"unknown flag", addr, []string{"search", "x", "--nope"}, 1, "", "-nope"},
		{"exec", addr, []string{"exec", "calculate", "--params", `{"expression": "2*(3+4)^2"}`}, 0, "\"value\": 98", ""},
		{"exec typo", addr, []string{"exec", "calculte"}, 1, "", "did you mean calculate?"},
		{"exec unknown", addr, []string{"exec", "weather"}, 1, "", "NotFound"},
		{"eval moved", addr, []string{"eval", "--tools", "t.jsonl"}, 1, "", "go run ./cmd/tooldex-dev eval"},
		{"server not running", closed, []string{"search", "slack"}, 1, "", "is the server running at " + closed + "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(tt.env, tt.args...)
			if code != tt.wantCode || !strings.Contains(stdout, tt.wantStdout) || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("tooldex %q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					tt.args, code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if tt.name == "exec unknown" && strings.Contains(stderr, "did you mean") {
				t.Errorf("exec weather suggests: %s", stderr)
			}
		})
	}
}
