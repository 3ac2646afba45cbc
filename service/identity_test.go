package service

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/toolhost"
)

// hostedServer is a Server in process with one real toolhost connected to
// it over bufconn, serving tools that echo their caller.
func hostedServer(t *testing.T, cfg Config, tools ...*tooldexv1.Tool) *Server {
	t.Helper()
	s := New(cfg)
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	tooldexv1.RegisterHostServiceServer(gs, s.Hosts())
	go gs.Serve(lis)
	ctx, cancel := context.WithCancel(context.Background())
	h := toolhost.New(toolhost.Config{
		Addr: "passthrough:///bufnet", HostID: "echo",
		DialOptions: []grpc.DialOption{
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
		},
	})
	for _, tl := range tools {
		if err := h.Handle(tl, func(ctx context.Context, c *toolhost.Call) (*toolhost.Result, error) {
			return toolhost.Text("caller=" + c.Caller), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = h.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		s.CloseHosts()
		wg.Wait()
		gs.Stop()
		lis.Close()
	})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := h.WaitReady(rctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func as(name, tenant string, scopes ...auth.Scope) context.Context {
	return auth.NewContext(context.Background(), &auth.Principal{Name: name, Tenant: tenant, Scopes: scopes, Method: "token"})
}

func TestCallerNeedsActAs(t *testing.T) {
	s := New(Config{})
	if _, err := s.RegisterTools(context.Background(), &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tool("alpha_tool", "does alpha things")}}); err != nil {
		t.Fatal(err)
	}
	bob := as("bob", "default", auth.ScopeSearch, auth.ScopeExecute)
	front := as("frontend", "default", auth.ScopeSearch, auth.ScopeExecute, auth.ScopeActAs)
	tests := []struct {
		name string
		ctx  context.Context
		want codes.Code
	}{
		{"without act-as", bob, codes.PermissionDenied},
		{"with act-as", front, codes.OK},
		{"anonymous (development)", context.Background(), codes.OK},
	}
	for _, tt := range tests {
		_, err := s.Search(tt.ctx, &tooldexv1.SearchRequest{Query: "alpha", Caller: "admin"})
		if got := status.Code(err); got != tt.want {
			t.Errorf("%s: Search with caller: %v, want %v", tt.name, err, tt.want)
		}
		if tt.want == codes.PermissionDenied && !strings.Contains(status.Convert(err).Message(), string(auth.ScopeActAs)) {
			t.Errorf("%s: message %q does not name the act-as scope", tt.name, status.Convert(err).Message())
		}
		_, err = s.Execute(tt.ctx, &tooldexv1.ExecuteRequest{ToolName: "alpha_tool", Caller: "admin"})
		if tt.want == codes.PermissionDenied && status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s: Execute with caller: %v, want PermissionDenied", tt.name, err)
		}
	}
}

func TestPrincipalRulesAndApprovalBinding(t *testing.T) {
	perms, err := permission.Parse([]byte(`{"rules": [
		{"tool": "read_secret", "principal": "bob", "action": "deny"},
		{"tool": "read_secret", "action": "ask"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	s := hostedServer(t, Config{Permissions: perms, Logger: zap.New(core)}, tool("read_secret", "reads a secret"))
	alice := as("alice", "default", auth.ScopeSearch, auth.ScopeExecute)
	bob := as("bob", "default", auth.ScopeSearch, auth.ScopeExecute)
	carol := as("carol", "default", auth.ScopeSearch, auth.ScopeExecute)

	// bob is denied by name, and cannot claim to be anyone else.
	if _, err := s.Execute(bob, &tooldexv1.ExecuteRequest{ToolName: "read_secret"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob: %v, want PermissionDenied", err)
	}
	if r, _ := s.Search(bob, &tooldexv1.SearchRequest{Query: "select:read_secret"}); len(r.GetResults()) != 0 {
		t.Errorf("bob finds a tool he is denied: %v", r.GetResults())
	}
	if _, err := s.Execute(bob, &tooldexv1.ExecuteRequest{ToolName: "read_secret", Caller: "alice"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob as alice: %v, want PermissionDenied", err)
	}

	// alice is asked; her token is hers alone.
	resp, err := s.Execute(alice, &tooldexv1.ExecuteRequest{ToolName: "read_secret"})
	if err != nil || resp.GetApprovalRequired().GetApprovalToken() == "" {
		t.Fatalf("alice: %v, %v; want an approval request", resp, err)
	}
	token := resp.GetApprovalRequired().GetApprovalToken()
	if _, err := s.Execute(carol, &tooldexv1.ExecuteRequest{ToolName: "read_secret", ApprovalToken: token}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("carol with alice's token: %v, want PermissionDenied", err)
	}
	resp, err = s.Execute(alice, &tooldexv1.ExecuteRequest{ToolName: "read_secret", ApprovalToken: token})
	if err != nil || len(resp.GetContent()) == 0 || resp.GetContent()[0].GetText() != "caller=alice" {
		t.Fatalf("alice with her token: %v, %v; want the tool to run with caller alice", resp, err)
	}

	// Every Execute is one audit record with the principal and outcome.
	var outcomes []string
	for _, e := range logs.FilterLoggerName("audit").FilterMessage("execute").All() {
		f := e.ContextMap()
		if f["tool"] != "read_secret" || f["tenant"] != "default" {
			t.Errorf("audit record %v lacks the tool or tenant", f)
		}
		if _, ok := f["params"]; ok {
			t.Errorf("audit record %v holds params", f)
		}
		outcomes = append(outcomes, f["principal"].(string)+":"+f["outcome"].(string))
	}
	want := "bob:denied bob:denied alice:approval_required carol:denied alice:ok"
	if got := strings.Join(outcomes, " "); got != want {
		t.Errorf("audit outcomes %q, want %q", got, want)
	}
}

func TestAuditRegistration(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := New(Config{Logger: zap.New(core)})
	ctx := as("ops", "default", auth.ScopeRegister)
	if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tool("a_tool", "a"), tool("b_tool", "b")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{tool("bad name", "x")}}); err == nil {
		t.Fatal("registered a bad name")
	}
	if _, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{"a_tool"}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range logs.FilterLoggerName("audit").All() {
		f := e.ContextMap()
		got = append(got, e.Message+":"+f["principal"].(string)+":"+f["outcome"].(string))
	}
	want := "register:ops:ok register:ops:InvalidArgument unregister:ops:ok"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("audit records %q, want %q", g, want)
	}
}
