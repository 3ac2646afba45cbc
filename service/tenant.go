package service

import (
	"context"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/catalog"
)

// readTenant returns the tenant a read addresses: the principal's, or the
// request's tenant field, which only admin principals may set.
func (s *Server) readTenant(ctx context.Context, field string) (string, error) {
	return addressed(principalOf(ctx), field)
}

// writeTenant returns the tenant a catalog write addresses (see
// readTenant); the shared tenant only for admin principals.
func (s *Server) writeTenant(ctx context.Context, field string) (string, error) {
	p := principalOf(ctx)
	t, err := addressed(p, field)
	if err == nil && t == auth.SharedTenant && !p.Has(auth.ScopeAdmin) {
		return "", &catalog.PermissionError{Field: "tenant", Reason: "the shared catalog is written only by admin principals"}
	}
	return t, err
}

func addressed(p *auth.Principal, field string) (string, error) {
	switch {
	case field == "" || field == p.Tenant:
		return p.Tenant, nil
	case !p.Has(auth.ScopeAdmin):
		return "", &catalog.PermissionError{Field: "tenant", Reason: "only admin principals address another tenant or the shared catalog; leave it empty for your own (" + p.Tenant + ")"}
	}
	return field, nil
}
