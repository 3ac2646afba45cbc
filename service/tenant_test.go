package service

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func principal(name, tenant string, scopes ...auth.Scope) *auth.Principal {
	return &auth.Principal{Name: name, Tenant: tenant, Scopes: scopes, HostPatterns: []string{"*"}, Method: "token"}
}

var allButAdmin = []auth.Scope{auth.ScopeSearch, auth.ScopeExecute, auth.ScopeRegister, auth.ScopeHost}

// fieldOf returns the first field violation of a status error ("" if none).
func fieldOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// TestTenantsAreApart registers the same names in two tenants (by
// frontends and by hosts) and checks that every RPC of each tenant sees
// its own tools and the shared ones only: never the other's, not even by
// exact name or select:.
func TestTenantsAreApart(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	admin := auth.NewContext(t.Context(), principal("root", "ops", auth.ScopeAdmin, auth.ScopeRegister, auth.ScopeSearch))
	if _, err := s.RegisterTools(admin, &tooldexv1.RegisterToolsRequest{Tenant: auth.SharedTenant,
		Tools: []*tooldexv1.Tool{tool("shared_clock", "Shared clock tells the forecast time.")}}); err != nil {
		t.Fatal(err)
	}
	type side struct {
		tenant, word, own, other string
		ctx                      context.Context
	}
	sides := []*side{
		{tenant: "a", word: "alpha", own: "only_a", other: "only_b"},
		{tenant: "b", word: "bravo", own: "only_b", other: "only_a"},
	}
	textSchema := `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	for _, sd := range sides {
		p := principal("user-"+sd.tenant, sd.tenant, allButAdmin...)
		sd.ctx = auth.NewContext(t.Context(), p)
		sec := tool("secret", sd.word+" secret forecast tool")
		sec.InputSchema = mustStruct(t, textSchema)
		if _, err := s.RegisterTools(sd.ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
			sec, tool(sd.own, sd.word+" forecast only here"),
		}}); err != nil {
			t.Fatal(err)
		}
		word := sd.word
		ack, err := connectHost(t, s, principal("host-"+sd.tenant, sd.tenant, auth.ScopeHost), &tooldexv1.HostHello{
			HostId: "same-id", Tools: []*tooldexv1.Tool{{Name: "hosted", Description: word + " hosted forecast", InputSchema: mustStruct(t, textSchema)}},
		}, func(*tooldexv1.ExecuteCall) *tooldexv1.CallResult {
			return &tooldexv1.CallResult{Content: []*tooldexv1.Content{{Kind: &tooldexv1.Content_Text{Text: "from " + word}}}}
		})
		if err != nil || ack.GetResults()[0].GetRejected() != "" {
			t.Fatalf("%s host: %v %v", sd.tenant, ack, err)
		}
	}

	for _, sd := range sides {
		ctx := sd.ctx
		t.Run(sd.tenant, func(t *testing.T) {
			otherWord := map[string]string{"alpha": "bravo", "bravo": "alpha"}[sd.word]
			// check fails if text mentions the other tenant, but for the
			// query it echoes and the names it reports not found.
			check := func(what, text, query string) {
				t.Helper()
				if query != "" {
					text = strings.ReplaceAll(text, query, "")
				}
				text = strings.ReplaceAll(text, `not_found:"`+sd.other+`"`, "")
				text = strings.ReplaceAll(text, "Not found: "+sd.other, "")
				if strings.Contains(text, otherWord) || strings.Contains(text, sd.other) {
					t.Errorf("%s shows the other tenant's tools:\n%s", what, text)
				}
			}
			for _, q := range []string{"forecast", "secret", "hosted", otherWord, sd.other, "select:secret,hosted," + sd.other, "only"} {
				resp, err := s.Search(ctx, &tooldexv1.SearchRequest{Query: q, MaxResults: 20})
				if err != nil {
					t.Fatal(err)
				}
				check("Search "+q, resp.String(), q)
				if q == "select:secret,hosted,"+sd.other {
					if got := resultNames(resp.GetResults()); !slices.Equal(got, []string{"secret", "hosted"}) || !slices.Equal(resp.GetNotFound(), []string{sd.other}) {
						t.Errorf("select: results %v, not found %v", got, resp.GetNotFound())
					}
					if !strings.Contains(resp.GetResults()[0].GetTool().GetDescription(), sd.word) {
						t.Errorf("select:secret is %q", resp.GetResults()[0].GetTool().GetDescription())
					}
				}
				if q == "forecast" {
					got := resultNames(resp.GetResults())
					slices.Sort(got)
					if want := []string{"hosted", sd.own, "secret", "shared_clock"}; !slices.Equal(got, sortedCopy(want)) {
						t.Errorf("Search forecast = %v, want %v", got, sortedCopy(want))
					}
				}
			}
			dq := "a forecast tool " + otherWord
			d, err := s.Discover(ctx, &tooldexv1.DiscoverRequest{Query: dq, MaxResults: 20})
			if err != nil {
				t.Fatal(err)
			}
			check("Discover", d.String(), dq)
			if len(d.GetResults()) < 3 {
				t.Errorf("Discover found %v", resultNames(d.GetResults()))
			}
			pf, err := s.Prefetch(ctx, &tooldexv1.PrefetchRequest{Message: "the secret forecast hosted " + otherWord, Limit: 20, MinScore: 0.01})
			if err != nil {
				t.Fatal(err)
			}
			check("Prefetch", pf.String(), "")
			if len(pf.GetResults()) == 0 {
				t.Error("Prefetch found nothing")
			}
			m, err := s.GetManifest(ctx, &tooldexv1.GetManifestRequest{Provider: "anthropic", ToolReference: true})
			if err != nil {
				t.Fatal(err)
			}
			check("GetManifest", m.String(), "")
			if !slices.Contains(m.GetDeferredToolNames(), sd.own) || !slices.Contains(m.GetDeferredToolNames(), "shared_clock") {
				t.Errorf("GetManifest deferred names %v", m.GetDeferredToolNames())
			}
			lt, err := s.ListTools(ctx, &tooldexv1.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			check("ListTools", lt.String(), "")
			var names []string
			for _, tl := range lt.GetTools() {
				names = append(names, tl.GetName())
			}
			if want := sortedCopy([]string{"hosted", sd.own, "secret", "shared_clock"}); !slices.Equal(names, want) {
				t.Errorf("ListTools = %v, want %v", names, want)
			}
			lh, err := s.ListHosts(ctx, &tooldexv1.ListHostsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(lh.GetHosts()) != 1 || lh.GetHosts()[0].GetTenant() != sd.tenant || lh.GetHosts()[0].GetPrincipal() != "host-"+sd.tenant {
				t.Errorf("ListHosts = %v", lh.GetHosts())
			}
			params := &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("x")}}
			ex, err := s.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "hosted", Params: params})
			if err != nil || ex.GetContent()[0].GetText() != "from "+sd.word {
				t.Errorf("Execute hosted = %v, %v; want from %s", ex, err, sd.word)
			}
			_, err = s.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: sd.other, Params: params})
			if status.Code(err) != codes.NotFound {
				t.Errorf("Execute %s (the other tenant's) = %v, want NotFound", sd.other, err)
			}
			// No host serves secret: found (UNAVAILABLE), validated against
			// this tenant's schema.
			if _, err := s.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "secret", Params: params}); status.Code(err) != codes.Unavailable {
				t.Errorf("Execute secret = %v, want Unavailable", err)
			}
			// Unregistering removes this tenant's copy alone.
			if r, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{sd.other}}); err != nil || len(r.GetNotFound()) != 1 {
				t.Errorf("Unregister the other's tool: %v, %v", r, err)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// TestTenantFieldIsForAdmins checks that only admin principals address
// another tenant or the shared catalog, and that they can.
func TestTenantFieldIsForAdmins(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	user := auth.NewContext(t.Context(), principal("u", "a", allButAdmin...))
	admin := auth.NewContext(t.Context(), principal("root", "ops", auth.ScopeAdmin))
	calls := map[string]func(ctx context.Context, tenant string) error{
		"RegisterTools": func(ctx context.Context, tenant string) error {
			_, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tenant: tenant, Tools: []*tooldexv1.Tool{tool("x_"+tenant, "d")}})
			return err
		},
		"UnregisterTools": func(ctx context.Context, tenant string) error {
			_, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Tenant: tenant, Names: []string{"nope"}})
			return err
		},
		"ListTools": func(ctx context.Context, tenant string) error {
			_, err := s.ListTools(ctx, &tooldexv1.ListToolsRequest{Tenant: tenant})
			return err
		},
		"ListHosts": func(ctx context.Context, tenant string) error {
			_, err := s.ListHosts(ctx, &tooldexv1.ListHostsRequest{Tenant: tenant})
			return err
		},
	}
	for name, call := range calls {
		for _, tenant := range []string{"b", auth.SharedTenant} {
			err := call(user, tenant)
			if status.Code(err) != codes.PermissionDenied || fieldOf(err) != "tenant" {
				t.Errorf("%s(tenant %q) by a non-admin: %v (field %q), want PermissionDenied on tenant", name, tenant, err, fieldOf(err))
			}
			if err := call(admin, tenant); err != nil {
				t.Errorf("%s(tenant %q) by an admin: %v", name, tenant, err)
			}
		}
		if err := call(user, "a"); err != nil {
			t.Errorf("%s naming its own tenant: %v", name, err)
		}
	}
	// What the admin registered is where it said.
	lt, err := s.ListTools(user, &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.GetTools() {
		names = append(names, tl.GetName())
	}
	if want := []string{"x_a", "x_shared"}; !slices.Equal(names, want) {
		t.Errorf("tenant a lists %v, want %v", names, want)
	}
}
