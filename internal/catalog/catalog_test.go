package catalog

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/index"
)

func tenantEntry(t testing.TB, tenant, name, desc string, origin tooldexv1.Origin) *Entry {
	t.Helper()
	ve := &ValidationError{}
	e := NewEntry(ve, "t", &tooldexv1.Tool{Name: name, Description: desc}, tenant, origin, "", tooldexv1.Loading_LOADING_DEFERRED)
	if e == nil {
		t.Fatal(ve)
	}
	return e
}

func mustRegister(t *testing.T, c *Catalog, tenant string, es ...*Entry) {
	t.Helper()
	if _, err := c.Register(tenant, "frontend", es, false); err != nil {
		t.Fatal(err)
	}
}

// searchNames returns the names a keyword search in tenant's index finds.
func searchNames(t *testing.T, c *Catalog, tenant, query string) []string {
	t.Helper()
	res, err := c.Index(tenant).Search(query, index.Options{Max: 50})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Name)
	}
	slices.Sort(out)
	return out
}

func listNames(c *Catalog, tenant string) []string {
	var out []string
	for _, e := range c.List(tenant, "", tooldexv1.Loading_LOADING_UNSPECIFIED) {
		out = append(out, e.Tenant()+"/"+e.Name())
	}
	return out
}

// TestTenantsSeeOwnAndShared checks that each tenant sees its own tools
// and the shared ones, its own shadowing a shared one, never another
// tenant's; and that a tenant first seen after the shared catalog changed
// sees it too.
func TestTenantsSeeOwnAndShared(t *testing.T) {
	c := New(Config{})
	mustRegister(t, c, auth.SharedTenant, tenantEntry(t, auth.SharedTenant, "weather", "shared weather forecast", tooldexv1.Origin_ORIGIN_CATALOG),
		tenantEntry(t, auth.SharedTenant, "clock", "shared clock time", tooldexv1.Origin_ORIGIN_CATALOG))
	mustRegister(t, c, "a", tenantEntry(t, "a", "secret_a", "forecast of tenant a", tooldexv1.Origin_ORIGIN_FRONTEND),
		tenantEntry(t, "a", "weather", "tenant a's own weather forecast", tooldexv1.Origin_ORIGIN_FRONTEND))
	mustRegister(t, c, "b", tenantEntry(t, "b", "secret_b", "forecast of tenant b", tooldexv1.Origin_ORIGIN_FRONTEND))

	tests := []struct {
		tenant    string
		list      []string
		search    []string // "forecast"
		weatherOf string
		secretOfA bool
	}{
		{"a", []string{"shared/clock", "a/secret_a", "a/weather"}, []string{"secret_a", "weather"}, "a", true},
		{"b", []string{"shared/clock", "b/secret_b", "shared/weather"}, []string{"secret_b", "weather"}, auth.SharedTenant, false},
		{"new", []string{"shared/clock", "shared/weather"}, []string{"weather"}, auth.SharedTenant, false},
		{auth.SharedTenant, []string{"shared/clock", "shared/weather"}, []string{"weather"}, auth.SharedTenant, false},
		{auth.DefaultTenant, []string{"shared/clock", "shared/weather"}, []string{"weather"}, auth.SharedTenant, false},
	}
	for _, tt := range tests {
		if got := listNames(c, tt.tenant); !slices.Equal(got, tt.list) {
			t.Errorf("%s: List = %v, want %v", tt.tenant, got, tt.list)
		}
		if got := searchNames(t, c, tt.tenant, "forecast"); !slices.Equal(got, tt.search) {
			t.Errorf("%s: search = %v, want %v", tt.tenant, got, tt.search)
		}
		if got := c.Get(tt.tenant, "weather").Tenant(); got != tt.weatherOf {
			t.Errorf("%s: Get(weather) from %q, want %q", tt.tenant, got, tt.weatherOf)
		}
		if got := c.Get(tt.tenant, "secret_a") != nil; got != tt.secretOfA {
			t.Errorf("%s: sees secret_a = %v", tt.tenant, got)
		}
	}

	// A's own weather leaves: the shared one shows again in a's index.
	if _, _, err := c.Unregister("a", []string{"weather"}); err != nil {
		t.Fatal(err)
	}
	if got := c.Get("a", "weather").Tenant(); got != auth.SharedTenant {
		t.Errorf("after unregister: a's weather from %q", got)
	}
	if got := searchNames(t, c, "a", "shared weather"); !slices.Contains(got, "weather") {
		t.Errorf("after unregister: a's search = %v", got)
	}
	// A shared tool leaving leaves every tenant's index.
	if _, _, err := c.Unregister(auth.SharedTenant, []string{"weather"}); err != nil {
		t.Fatal(err)
	}
	for _, tn := range []string{"a", "b", "new", auth.DefaultTenant} {
		if got := searchNames(t, c, tn, "weather"); len(got) != 0 {
			t.Errorf("%s after the shared weather left: %v", tn, got)
		}
	}
}

func TestTenantCap(t *testing.T) {
	c := New(Config{MaxTenantTools: 2})
	mustRegister(t, c, "a", tenantEntry(t, "a", "one", "", 0), tenantEntry(t, "a", "two", "", 0))
	_, err := c.Register("a", "frontend", []*Entry{tenantEntry(t, "a", "three", "", 0)}, false)
	var le *LimitError
	if !errors.As(err, &le) || le.Field != "tools" || le.Limit != "MaxTenantTools" {
		t.Fatalf("third tool: %v, want a LimitError on tools", err)
	}
	// Replacing is not adding; another tenant has its own room.
	mustRegister(t, c, "a", tenantEntry(t, "a", "two", "changed", 0))
	mustRegister(t, c, "b", tenantEntry(t, "b", "three", "", 0))
	p := &auth.Principal{Name: "h", Tenant: "a", Scopes: []auth.Scope{auth.ScopeHost}, HostPatterns: []string{"*"}}
	res, _ := c.Serve(p, "s1", []*Entry{tenantEntry(t, "a", "four", "", tooldexv1.Origin_ORIGIN_HOST)})
	if !strings.Contains(res[0].Rejected, "MaxTenantTools") {
		t.Errorf("host past the cap: %+v", res[0])
	}
}

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func hostPrincipal(name, tenant string, patterns ...string) *auth.Principal {
	return &auth.Principal{Name: name, Tenant: tenant, Scopes: []auth.Scope{auth.ScopeHost}, HostPatterns: patterns}
}

func hostEntry(t testing.TB, tenant, name, desc, hostID string) *Entry {
	t.Helper()
	ve := &ValidationError{}
	e := NewEntry(ve, "t", &tooldexv1.Tool{Name: name, Description: desc}, tenant, tooldexv1.Origin_ORIGIN_HOST, hostID, tooldexv1.Loading_LOADING_DEFERRED)
	if e == nil {
		t.Fatal(ve)
	}
	return e
}

// TestOwnership walks names and host ids through their owners: patterns,
// replicas of one principal only, the hold after a blip, a catalog file's
// definition yielding and coming back.
func TestOwnership(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := New(Config{Hold: time.Minute, Now: clk.now})
	gh := hostPrincipal("github-host", "a", "mcp__github__*")
	evil := hostPrincipal("evil", "a", "*")
	other := hostPrincipal("github-host", "b", "mcp__github__*") // same name, another tenant

	serve := func(p *auth.Principal, session, name, desc string) Served {
		t.Helper()
		res, _ := c.Serve(p, session, []*Entry{hostEntry(t, p.Tenant, name, desc, "h")})
		return res[0]
	}
	if r := serve(gh, "s1", "read_file", "d"); !strings.Contains(r.Rejected, "not allowed") {
		t.Errorf("outside its patterns: %+v", r)
	}
	if r := serve(gh, "s1", "mcp__github__issue", "d"); r.Rejected != "" || r.Outcome != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_CREATED {
		t.Fatalf("first host: %+v", r)
	}
	if r := serve(gh, "s2", "mcp__github__issue", "d"); r.Rejected != "" || r.Outcome != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UNCHANGED {
		t.Errorf("replica of the same principal: %+v", r)
	}
	if r := serve(evil, "s3", "mcp__github__issue", "d"); !strings.Contains(r.Rejected, "another principal") {
		t.Errorf("identical copy by another principal: %+v", r)
	}
	if r := serve(other, "s4", "mcp__github__issue", "d"); r.Rejected != "" {
		t.Errorf("same name in another tenant: %+v", r)
	}
	// Both sessions leave (a blip): the tool leaves, the name is held.
	if n := c.Release("a", "s1", []string{"mcp__github__issue"}); n != 0 {
		t.Errorf("first replica left: %d tools removed", n)
	}
	if n := c.Leave("a", "h", "s2"); n != 1 {
		t.Errorf("last replica left: %d tools removed, want 1", n)
	}
	if c.Get("a", "mcp__github__issue") != nil {
		t.Error("host tool stayed after its last host")
	}
	clk.t = clk.t.Add(30 * time.Second)
	if r := serve(evil, "s5", "mcp__github__issue", "evil"); !strings.Contains(r.Rejected, "held") {
		t.Errorf("during the hold, another principal: %+v", r)
	}
	if _, err := c.Register("a", "someone", []*Entry{tenantEntry(t, "a", "mcp__github__issue", "frontend", 0)}, true); err == nil {
		t.Error("during the hold, another principal's frontend took the name")
	}
	if _, err := c.Register("a", "github-host", []*Entry{tenantEntry(t, "a", "mcp__github__issue", "frontend", 0)}, true); err != nil {
		t.Errorf("during the hold, the owner's own frontend: %v", err)
	}
	if r := serve(gh, "s6", "mcp__github__issue", "d2"); r.Rejected != "" {
		t.Errorf("during the hold, the owner comes back: %+v", r)
	}
	c.Leave("a", "h", "s6")
	clk.t = clk.t.Add(2 * time.Minute)
	if r := serve(evil, "s7", "mcp__github__issue", "evil"); r.Rejected != "" {
		t.Errorf("after the hold: %+v", r)
	}

	// Host ids.
	if err := c.BindHost(gh, "gh", "s8"); err != nil {
		t.Fatal(err)
	}
	var pe *PermissionError
	if err := c.BindHost(evil, "gh", "s9"); !errors.As(err, &pe) || pe.Field != "hello.host_id" {
		t.Errorf("another principal's host id: %v", err)
	}
	if err := c.BindHost(other, "gh", "s10"); err != nil {
		t.Errorf("same host id in another tenant: %v", err)
	}
	c.Leave("a", "gh", "s8")
	if err := c.BindHost(evil, "gh", "s11"); err == nil {
		t.Error("host id taken during its hold")
	}
	clk.t = clk.t.Add(2 * time.Minute)
	if err := c.BindHost(evil, "gh", "s12"); err != nil {
		t.Errorf("host id after its hold: %v", err)
	}
}

// TestPreloadedYields checks that a catalog file's definition yields to a
// live host allowed to serve the name, in its tenant, and comes back when
// the host leaves; and that a frontend's does not.
func TestPreloadedYields(t *testing.T) {
	c := New(Config{})
	mustRegister(t, c, auth.SharedTenant,
		tenantEntry(t, auth.SharedTenant, "mcp__memory__read", "file definition", tooldexv1.Origin_ORIGIN_CATALOG),
		tenantEntry(t, auth.SharedTenant, "frontend_tool", "frontend definition", tooldexv1.Origin_ORIGIN_FRONTEND))
	p := hostPrincipal("memory", auth.SharedTenant, "*")
	res, _ := c.Serve(p, "s1", []*Entry{
		hostEntry(t, auth.SharedTenant, "mcp__memory__read", "live definition", "m"),
		hostEntry(t, auth.SharedTenant, "frontend_tool", "host definition", "m"),
	})
	if res[0].Rejected != "" || res[0].Outcome != tooldexv1.RegisterOutcome_REGISTER_OUTCOME_UPDATED {
		t.Errorf("host over a file's tool: %+v", res[0])
	}
	if !strings.Contains(res[1].Rejected, "name taken") {
		t.Errorf("host over a frontend's tool: %+v", res[1])
	}
	for _, tn := range []string{"default", "x"} {
		if got := c.Get(tn, "mcp__memory__read").Tool().GetDescription(); got != "live definition" {
			t.Errorf("%s sees %q", tn, got)
		}
		if got := searchNames(t, c, tn, "file"); slices.Contains(got, "mcp__memory__read") {
			t.Errorf("%s still finds the file's definition", tn)
		}
	}
	c.Leave(auth.SharedTenant, "m", "s1")
	if got := c.Get("default", "mcp__memory__read").Tool().GetDescription(); got != "file definition" {
		t.Errorf("after the host left: %q", got)
	}
}
