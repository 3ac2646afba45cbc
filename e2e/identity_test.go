package e2e

// Identity end to end: the attacks of the identity issue, played against the
// real server binary with a tokens file of several tenants, by Go clients
// and raw host streams presenting bearer tokens. Each attack must fail with
// the right code and change nothing.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// The principals of the identity tests: name -> token.
var identityTokens = map[string]string{
	"acme-user":   "acme-user-token-0123456789",
	"acme-front":  "acme-front-token-0123456789",
	"acme-reader": "acme-reader-token-0123456789",
	"acme-gh":     "acme-gh-host-token-0123456789",
	"acme-rogue":  "acme-rogue-host-token-0123456789",
	"globex-user": "globex-user-token-0123456789",
}

func startIdentityServer(t *testing.T) *tserver {
	t.Helper()
	tokens := `{"tokens": [
	  {"sha256": "` + sha256Hex(identityTokens["acme-user"]) + `", "principal": "acme-user", "tenant": "acme", "scopes": ["search", "execute", "register"]},
	  {"sha256": "` + sha256Hex(identityTokens["acme-front"]) + `", "principal": "acme-front", "tenant": "acme", "scopes": ["search", "execute", "act-as"]},
	  {"sha256": "` + sha256Hex(identityTokens["acme-reader"]) + `", "principal": "acme-reader", "tenant": "acme", "scopes": ["search"]},
	  {"sha256": "` + sha256Hex(identityTokens["acme-gh"]) + `", "principal": "acme-gh", "tenant": "acme", "scopes": ["host"], "host_patterns": ["mcp__github__*"]},
	  {"sha256": "` + sha256Hex(identityTokens["acme-rogue"]) + `", "principal": "acme-rogue", "tenant": "acme", "scopes": ["host"], "host_patterns": ["*"]},
	  {"sha256": "` + sha256Hex(identityTokens["globex-user"]) + `", "principal": "globex-user", "tenant": "globex", "scopes": ["search", "execute", "register"]}]}`
	file := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(file, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	return launch(t, "--auth-tokens", file, "--demo-host=false")
}

func identityConn(t *testing.T, addr, principal string) *grpc.ClientConn {
	t.Helper()
	opts, err := auth.ClientConfig{Token: identityTokens[principal]}.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// hostHello opens a host stream as principal with host id and tools, and
// returns the stream and its HelloAck's results, or the stream's error.
func hostHello(t *testing.T, addr, principal, id string, tools ...*tooldexv1.Tool) (tooldexv1.HostService_ConnectClient, []*tooldexv1.HostToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := tooldexv1.NewHostServiceClient(identityConn(t, addr, principal)).Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := stream.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{
		HostId: id, Version: "e2e", MaxConcurrentCalls: 4, Tools: tools,
	}}}); err != nil {
		return nil, nil, err
	}
	m, err := recvFrame(t, stream)
	if err != nil {
		return nil, nil, err
	}
	return stream, m.GetHelloAck().GetResults(), nil
}

func rejected(results []*tooldexv1.HostToolResult, name string) string {
	for _, r := range results {
		if r.GetName() == name {
			if r.GetRejected() == "" {
				return "<accepted>"
			}
			return r.GetRejected()
		}
	}
	return "<absent>"
}

func TestIdentityAttacks(t *testing.T) {
	s := startIdentityServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acme := tooldexv1.NewDiscoveryServiceClient(identityConn(t, s.addr, "acme-user"))
	front := tooldexv1.NewDiscoveryServiceClient(identityConn(t, s.addr, "acme-front"))
	reader := tooldexv1.NewDiscoveryServiceClient(identityConn(t, s.addr, "acme-reader"))
	globex := tooldexv1.NewDiscoveryServiceClient(identityConn(t, s.addr, "globex-user"))

	// Two tenants register the same name with different definitions.
	secret := func(desc string) *tooldexv1.RegisterToolsRequest {
		return &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{mustTool("ledger_export", desc, `{"type":"object"}`)}}
	}
	if _, err := globex.RegisterTools(ctx, secret("Exports the globex payroll ledger to a spreadsheet.")); err != nil {
		t.Fatalf("globex registers: %v", err)
	}
	if _, err := acme.RegisterTools(ctx, secret("Exports the acme sales ledger.")); err != nil {
		t.Fatalf("acme registers the same name: %v", err)
	}

	t.Run("a foreign tenant is invisible in every RPC", func(t *testing.T) {
		r, err := acme.Search(ctx, &tooldexv1.SearchRequest{Query: "payroll ledger spreadsheet"})
		if err != nil || strings.Contains(r.GetText(), "globex") {
			t.Errorf("acme Search shows globex's tool: %v, %v", r.GetText(), err)
		}
		r, err = acme.Search(ctx, &tooldexv1.SearchRequest{Query: "select:ledger_export"})
		if err != nil || len(r.GetResults()) != 1 || strings.Contains(r.GetResults()[0].GetTool().GetDescription(), "globex") {
			t.Errorf("acme select:ledger_export = %v, %v; want acme's own only", r.GetResults(), err)
		}
		d, err := acme.Discover(ctx, &tooldexv1.DiscoverRequest{Query: "export the payroll to a spreadsheet"})
		if err != nil || strings.Contains(d.GetText(), "globex") {
			t.Errorf("acme Discover shows globex's tool: %v", err)
		}
		l, err := acme.ListTools(ctx, &tooldexv1.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range l.GetTools() {
			if strings.Contains(tl.GetDescription(), "globex") {
				t.Errorf("acme ListTools lists %q", tl.GetName())
			}
		}
		p, err := acme.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "export the payroll ledger to a spreadsheet"})
		if err != nil || strings.Contains(p.GetText(), "globex") {
			t.Errorf("acme Prefetch recommends globex's tool: %v", err)
		}
		m, err := acme.GetManifest(ctx, &tooldexv1.GetManifestRequest{Provider: "anthropic"})
		if err != nil || strings.Contains(m.GetToolsJson(), "globex") || strings.Contains(m.GetDeferredToolsBlock(), "ledger_export") && strings.Count(m.GetDeferredToolsBlock(), "ledger_export") > 1 {
			t.Errorf("acme GetManifest carries globex's tool: %v", err)
		}
		h, err := acme.ListHosts(ctx, &tooldexv1.ListHostsRequest{Tenant: "globex"})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("acme ListHosts of globex = %v, %v; want PERMISSION_DENIED", h, err)
		}
	})

	t.Run("caller spoofing is refused", func(t *testing.T) {
		_, err := acme.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "ledger_export", Caller: "admin"})
		wantCode(t, "a caller from a principal without act-as", err, codes.PermissionDenied, string(auth.ScopeActAs))
		_, err = acme.Search(ctx, &tooldexv1.SearchRequest{Query: "ledger", Caller: "Guest "})
		wantCode(t, "Search with a caller without act-as", err, codes.PermissionDenied, string(auth.ScopeActAs))
		// A trusted frontend may: the call goes on (no host serves it).
		_, err = front.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "ledger_export", Caller: "end-user-7"})
		wantCode(t, "a caller from a frontend with act-as", err, codes.Unavailable, "")
	})

	t.Run("catalog writes need the register scope", func(t *testing.T) {
		_, err := reader.RegisterTools(ctx, secret("overwritten"))
		wantCode(t, "RegisterTools without register", err, codes.PermissionDenied, string(auth.ScopeRegister))
		_, err = reader.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{"ledger_export"}})
		wantCode(t, "UnregisterTools without register", err, codes.PermissionDenied, string(auth.ScopeRegister))
		_, err = acme.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tenant: "globex", Tools: secret("overwritten").GetTools()})
		wantCode(t, "RegisterTools into another tenant", err, codes.PermissionDenied, "")
		r, err := globex.Search(ctx, &tooldexv1.SearchRequest{Query: "select:ledger_export"})
		if err != nil || len(r.GetResults()) != 1 || !strings.Contains(r.GetResults()[0].GetTool().GetDescription(), "payroll") {
			t.Errorf("globex's tool changed: %v, %v", r.GetResults(), err)
		}
	})

	t.Run("hosts serve only their patterns, under ids bound to them", func(t *testing.T) {
		gh := mustTool("mcp__github__create_issue", "Creates a GitHub issue.", `{"type":"object"}`)
		slack := mustTool("mcp__slack__post", "Posts to Slack.", `{"type":"object"}`)
		real, results, err := hostHello(t, s.addr, "acme-gh", "gh-1", gh, slack)
		if err != nil {
			t.Fatalf("the real host's hello: %v", err)
		}
		if got := rejected(results, gh.GetName()); got != "<accepted>" {
			t.Errorf("real host's %s: %s, want accepted", gh.GetName(), got)
		}
		if got := rejected(results, slack.GetName()); got == "<accepted>" || got == "<absent>" {
			t.Errorf("real host's %s outside its patterns: %s, want rejected", slack.GetName(), got)
		}
		// The impostor cannot take the real host's id...
		_, _, err = hostHello(t, s.addr, "acme-rogue", "gh-1", gh)
		wantCode(t, "another principal using the host id gh-1", err, codes.PermissionDenied, "")
		// ...nor serve its name under an id of its own.
		_, results, err = hostHello(t, s.addr, "acme-rogue", "rogue-1", gh)
		if err != nil {
			t.Fatalf("the impostor's own hello: %v", err)
		}
		if got := rejected(results, gh.GetName()); got == "<accepted>" {
			t.Errorf("impostor serves %s beside the real host", gh.GetName())
		}
		// A blip: the real host's stream ends; the name stays its principal's.
		if err := real.CloseSend(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the real host gone", func() bool {
			h, err := acme.ListHosts(ctx, &tooldexv1.ListHostsRequest{})
			return err == nil && !slices.ContainsFunc(h.GetHosts(), func(h *tooldexv1.HostInfo) bool { return h.GetHostId() == "gh-1" })
		})
		_, results, err = hostHello(t, s.addr, "acme-rogue", "rogue-2", gh)
		if err != nil {
			t.Fatalf("the impostor's hello after the blip: %v", err)
		}
		if got := rejected(results, gh.GetName()); got == "<accepted>" {
			t.Errorf("after the real host's blip the impostor took %s", gh.GetName())
		}
		_, results, err = hostHello(t, s.addr, "acme-gh", "gh-1", gh)
		if err != nil || rejected(results, gh.GetName()) != "<accepted>" {
			t.Errorf("the real host back: %v, %v; want its name back", results, err)
		}
	})
}
