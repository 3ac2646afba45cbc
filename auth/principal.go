package auth

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
)

// Scope is a right a principal may hold.
type Scope string

// The scopes. A principal holds only the scopes listed for it: admin does
// not imply the others.
const (
	// ScopeSearch: Search, Discover, Prefetch, GetManifest, ListTools, ListHosts.
	ScopeSearch Scope = "search"
	// ScopeExecute: Execute.
	ScopeExecute Scope = "execute"
	// ScopeRegister: RegisterTools, UnregisterTools (catalog writes).
	ScopeRegister Scope = "register"
	// ScopeHost: HostService.Connect, serving the tools of HostPatterns.
	ScopeHost Scope = "host"
	// ScopeAdmin: policy, other tenants, the shared catalog, the hosts list;
	// also the metrics and pprof listeners.
	ScopeAdmin Scope = "admin"
	// ScopeActAs: a trusted frontend may name the end user it acts for
	// (a request's caller field).
	ScopeActAs Scope = "act-as"
	// ScopeMetrics: the metrics listener only (a Prometheus scraper).
	ScopeMetrics Scope = "metrics"
)

// Scopes lists every scope, in a fixed order.
var Scopes = []Scope{ScopeSearch, ScopeExecute, ScopeRegister, ScopeHost, ScopeAdmin, ScopeActAs, ScopeMetrics}

// validScope reports whether s is one of Scopes.
func validScope(s Scope) bool { return slices.Contains(Scopes, s) }

// DefaultTenant is the tenant of anonymous principals and of principals
// whose credential names none.
const DefaultTenant = "default"

// SharedTenant is the shared catalog's tenant: readable by every tenant,
// writable by admin.
const SharedTenant = "shared"

// The values of Principal.Method.
const (
	MethodAnonymous = "anonymous"
	MethodToken     = "token"
	MethodJWT       = "jwt"
	MethodMTLS      = "mtls"
	MethodInternal  = "internal"
)

// Principal is who calls: the authenticated identity of a request. A
// Principal returned by an Authenticator is shared between requests: never
// modify it.
type Principal struct {
	Name   string // e.g. "alice", "spiffe://example.org/host/github", a JWT's sub
	Tenant string // never empty (DefaultTenant when the credential names none)
	Scopes []Scope
	// HostPatterns are path.Match globs of the tool names the principal may
	// serve (host scope only).
	HostPatterns []string
	// Groups come from JWT claims or the tokens file, for permission rules.
	Groups []string
	// Method is how the principal was authenticated: MethodAnonymous,
	// MethodToken, MethodJWT, MethodMTLS or MethodInternal.
	Method string
}

// Has reports whether p holds scope s. A nil principal holds nothing.
func (p *Principal) Has(s Scope) bool {
	return p != nil && slices.Contains(p.Scopes, s)
}

// MayServe reports whether p may serve the tool named tool: it holds the
// host scope and one of its HostPatterns matches the name.
func (p *Principal) MayServe(tool string) bool {
	if !p.Has(ScopeHost) {
		return false
	}
	for _, pat := range p.HostPatterns {
		if pat == "*" || pat == tool {
			return true
		}
		if ok, err := path.Match(pat, tool); err == nil && ok {
			return true
		}
	}
	return false
}

// String is the principal's name and tenant, for logs.
func (p *Principal) String() string {
	if p == nil {
		return "<none>"
	}
	return p.Name + "@" + p.Tenant
}

// anonymous is the principal of requests without credentials on a server
// configured without credential sources.
var anonymous = &Principal{
	Name:         "anonymous",
	Tenant:       DefaultTenant,
	Scopes:       slices.Clone(Scopes),
	HostPatterns: []string{"*"},
	Method:       MethodAnonymous,
}

// Anonymous returns the anonymous principal: tenant DefaultTenant, every
// scope (act-as and admin included), every host pattern. Do not modify it.
func Anonymous() *Principal { return anonymous }

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal NewContext put in ctx.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

// ErrUnauthenticated is wrapped by every error that says a request's
// credentials are missing or bad.
var ErrUnauthenticated = errors.New("unauthenticated")

// unauthenticated returns an ErrUnauthenticated with the reason.
func unauthenticated(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnauthenticated, fmt.Sprintf(format, args...))
}

// MissingScopeError says a principal lacks the scope an operation needs.
type MissingScopeError struct {
	Scope     Scope
	Principal string
}

func (e *MissingScopeError) Error() string {
	return fmt.Sprintf("principal %q lacks the %q scope", e.Principal, e.Scope)
}

// Require returns a *MissingScopeError unless p holds s.
func Require(p *Principal, s Scope) error {
	if p.Has(s) {
		return nil
	}
	name := "<none>"
	if p != nil {
		name = p.Name
	}
	return &MissingScopeError{Scope: s, Principal: name}
}
