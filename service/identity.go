package service

import (
	"context"
	"fmt"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/permission"
)

// anonymous is the principal of requests that carry none: in-process
// callers, and every request of a server without credentials (the
// authentication interceptor puts a principal in the context otherwise).
var anonymous = auth.Anonymous()

// principalOf returns the authenticated principal of ctx, or anonymous.
func principalOf(ctx context.Context) *auth.Principal {
	if p, ok := auth.FromContext(ctx); ok {
		return p
	}
	return anonymous
}

// subject returns who a request is for: its principal and, when the
// request names a caller, the end user the principal acts for. Only a
// principal with the act-as scope may name a caller (a trusted frontend
// acting for its users); from anyone else a caller is refused, never
// silently ignored or trusted. Without a caller, permission rules match the
// principal's own name as the caller.
func subject(ctx context.Context, caller string) (*permission.Subject, error) {
	p := principalOf(ctx)
	sub := &permission.Subject{Principal: p.Name, Tenant: p.Tenant, Groups: p.Groups, Caller: p.Name}
	if caller == "" {
		return sub, nil
	}
	if !p.Has(auth.ScopeActAs) {
		return nil, fmt.Errorf("caller: only a principal with the %q scope may act on behalf of a caller: %w",
			auth.ScopeActAs, &auth.MissingScopeError{Scope: auth.ScopeActAs, Principal: p.Name})
	}
	sub.Caller = caller
	return sub, nil
}

// onBehalfOf is the end user a subject acts for, or "" when the principal
// acts for itself.
func onBehalfOf(sub *permission.Subject) string {
	if sub.Caller == sub.Principal {
		return ""
	}
	return sub.Caller
}

// approvalSubject is what an approval token is bound to: the tenant, the
// principal that asked and the caller it asked for, length-prefixed by the
// approver, so a token handed to one principal is refused from another.
func approvalSubject(sub *permission.Subject) string {
	return fmt.Sprintf("%d:%s%d:%s%s", len(sub.Tenant), sub.Tenant, len(sub.Principal), sub.Principal, sub.Caller)
}

// sessionKey is the Prefetch session key of a subject's session id: ids
// are chosen by clients, so one subject's id never names another's session.
func sessionKey(sub *permission.Subject, id string) string {
	if id == "" {
		return ""
	}
	return approvalSubject(sub) + "\x00" + id
}
