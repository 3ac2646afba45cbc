package service

import (
	"context"
	"crypto/tls"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// methodScopes is the scope each tooldex method needs. A method not listed
// (and not health or reflection) is refused: fail closed.
var methodScopes = map[string]auth.Scope{
	tooldexv1.DiscoveryService_Search_FullMethodName:          auth.ScopeSearch,
	tooldexv1.DiscoveryService_Discover_FullMethodName:        auth.ScopeSearch,
	tooldexv1.DiscoveryService_Prefetch_FullMethodName:        auth.ScopeSearch,
	tooldexv1.DiscoveryService_GetManifest_FullMethodName:     auth.ScopeSearch,
	tooldexv1.DiscoveryService_ListTools_FullMethodName:       auth.ScopeSearch,
	tooldexv1.DiscoveryService_ListHosts_FullMethodName:       auth.ScopeSearch,
	tooldexv1.DiscoveryService_Execute_FullMethodName:         auth.ScopeExecute,
	tooldexv1.DiscoveryService_ExecuteStream_FullMethodName:   auth.ScopeExecute,
	tooldexv1.DiscoveryService_RegisterTools_FullMethodName:   auth.ScopeRegister,
	tooldexv1.DiscoveryService_UnregisterTools_FullMethodName: auth.ScopeRegister,
	tooldexv1.HostService_Connect_FullMethodName:              auth.ScopeHost,
}

// AuthUnary returns the interceptor that authenticates every unary call
// with a, puts the principal in its context (auth.FromContext reads it) and
// checks the scope its method needs. Health checks need no credentials;
// reflection needs valid ones (any scope); a method tooldex does not know
// is refused. Missing or bad credentials are UNAUTHENTICATED, a missing
// scope PERMISSION_DENIED naming it.
func AuthUnary(a *auth.Authenticator) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, err := authorize(ctx, a, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// AuthStream is AuthUnary for streams (HostService.Connect, reflection).
func AuthStream(a *auth.Authenticator) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, err := authorize(ss.Context(), a, info.FullMethod)
		if err != nil {
			return err
		}
		return handler(srv, &principalStream{ServerStream: ss, ctx: ctx})
	}
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *principalStream) Context() context.Context { return s.ctx }

// authorize authenticates a call of method and returns its context with
// the principal, or a status error.
func authorize(ctx context.Context, a *auth.Authenticator, method string) (context.Context, error) {
	if strings.HasPrefix(method, "/grpc.health.v1.Health/") {
		return ctx, nil
	}
	p, err := authenticate(ctx, a)
	if err != nil {
		return ctx, AuthStatus(err)
	}
	ctx = auth.NewContext(ctx, p)
	if strings.HasPrefix(method, "/grpc.reflection.") {
		return ctx, nil
	}
	scope, ok := methodScopes[method]
	if !ok {
		return ctx, AuthStatus(errUnknownMethod{method})
	}
	if err := auth.Require(p, scope); err != nil {
		return ctx, AuthStatus(err)
	}
	return ctx, nil
}

// authenticate reads a call's bearer token and TLS state.
func authenticate(ctx context.Context, a *auth.Authenticator) (*auth.Principal, error) {
	var bearer string
	// ValueFromIncomingContext, unlike FromIncomingContext, does not copy
	// the whole metadata.
	switch vs := metadata.ValueFromIncomingContext(ctx, "authorization"); len(vs) {
	case 0:
	case 1:
		tok, err := auth.ParseAuthorization(vs[0])
		if err != nil {
			return nil, err
		}
		bearer = tok
	default:
		return nil, errMultipleAuthorization
	}
	var state *tls.ConnectionState
	if pr, ok := peer.FromContext(ctx); ok {
		if ti, ok := pr.AuthInfo.(credentials.TLSInfo); ok {
			state = &ti.State
		}
	}
	return a.Authenticate(ctx, bearer, state)
}
