// Package auth says who a caller is: principals from mutual TLS, bearer
// tokens and JWTs, each with a tenant and the scopes that grant its rights.
package auth

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
)

// Scope is a right a principal holds.
type Scope string

// The scopes.
const (
	ScopeSearch   Scope = "search"   // Search, Discover, Prefetch, GetManifest, ListTools, ListHosts
	ScopeExecute  Scope = "execute"  // Execute
	ScopeRegister Scope = "register" // catalog writes: RegisterTools, UnregisterTools
	ScopeHost     Scope = "host"     // serve tools over HostService.Connect
	ScopeAdmin    Scope = "admin"    // the shared catalog, other tenants, policy
	ScopeActAs    Scope = "act-as"   // set a request's caller: a frontend acting for its end users
)

// DefaultTenant is the tenant of anonymous principals and of principals
// whose credential names none.
const DefaultTenant = "default"

// SharedTenant is the shared catalog's tenant: readable by every tenant,
// writable by admin principals.
const SharedTenant = "shared"

// Principal is an authenticated caller.
type Principal struct {
	// Name identifies the principal: a token's principal, a JWT's subject,
	// a certificate's SPIFFE ID or common name.
	Name string
	// Tenant is never empty (DefaultTenant when the credential names none).
	Tenant string
	// Scopes are the rights the principal holds.
	Scopes []Scope
	// HostPatterns are path.Match globs of the tool names the principal may
	// serve (with the host scope).
	HostPatterns []string
	// Groups are the principal's groups, for permission rules.
	Groups []string
	// Method is how the principal was authenticated: "anonymous", "token",
	// "jwt", "mtls" or "internal".
	Method string
}

// Has reports whether p holds scope s.
func (p *Principal) Has(s Scope) bool {
	return p != nil && slices.Contains(p.Scopes, s)
}

// MayServe reports whether p may serve the tool named tool: it holds the
// host scope and a host pattern matches the name.
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

type ctxKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal ctx carries.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(*Principal)
	return p, ok && p != nil
}

// ErrUnauthenticated is wrapped by every error that says a request's
// credentials are missing or invalid.
var ErrUnauthenticated = errors.New("unauthenticated")

// MissingScopeError says a principal lacks a scope a request needs.
type MissingScopeError struct {
	Scope     Scope
	Principal string
}

func (e *MissingScopeError) Error() string {
	return fmt.Sprintf("principal %q lacks the %q scope", e.Principal, e.Scope)
}

// Anonymous returns the principal of a request without credentials on a
// server that has no credential source configured (development on
// loopback): tenant DefaultTenant, every scope.
func Anonymous() *Principal {
	return &Principal{
		Name: "anonymous", Tenant: DefaultTenant, Method: "anonymous",
		Scopes:       []Scope{ScopeSearch, ScopeExecute, ScopeRegister, ScopeHost, ScopeAdmin, ScopeActAs},
		HostPatterns: []string{"*"},
	}
}
