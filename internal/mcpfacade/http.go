package mcpfacade

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"google.golang.org/grpc/metadata"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/origin"
)

// ProtectedResourcePath is where the protected-resource metadata (RFC 9728)
// is served.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// MCPPath is the streamable HTTP endpoint's path, the one MCP clients are
// configured with (http://host:port/mcp).
const MCPPath = "/mcp"

// HTTPOptions configures HTTPHandler.
type HTTPOptions struct {
	// Auth validates bearer tokens; nil or anonymous serves without
	// authentication (a loopback listener without credential sources).
	Auth *auth.Authenticator
	// Resource is the façade's public URL, its resource identifier in the
	// protected-resource metadata (e.g. https://mcp.example.com/).
	Resource string
	// AuthorizationServers are listed in the metadata (the OIDC issuer).
	AuthorizationServers []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) let in
	// besides loopback ones; a request without Origin is always let in.
	AllowedOrigins []string
	// Options are the streamable HTTP transport's options (nil: defaults).
	Options *mcp.StreamableHTTPOptions
}

// HTTPHandler serves server over streamable HTTP as an MCP resource server:
//
//   - a request whose Origin header is neither absent, a loopback origin nor
//     one of opts.AllowedOrigins is refused with 403 (DNS rebinding);
//   - with opts.Auth, a request needs a bearer token the Authenticator
//     accepts (tokens file or JWT, the same configuration as the tooldex
//     server's), else 401 with WWW-Authenticate: Bearer resource_metadata=...;
//   - the protected-resource metadata is served at ProtectedResourcePath.
//
// The façade calls tooldex with the user's own bearer token (see
// forwardToken), so it acts in the user's tenant with the user's rights.
func HTTPHandler(server *mcp.Server, opts HTTPOptions) http.Handler {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts.Options)
	metaURL := strings.TrimSuffix(opts.Resource, "/") + ProtectedResourcePath
	if u, err := url.Parse(opts.Resource); err == nil && u.Host != "" {
		metaURL = u.Scheme + "://" + u.Host + ProtectedResourcePath + strings.TrimSuffix(u.Path, "/")
	}
	if opts.Auth != nil && !opts.Auth.Anonymous() {
		verify := func(ctx context.Context, token string, r *http.Request) (*mcpauth.TokenInfo, error) {
			p, err := opts.Auth.AuthenticateRequest(r)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", mcpauth.ErrInvalidToken, err)
			}
			scopes := make([]string, len(p.Scopes))
			for i, s := range p.Scopes {
				scopes[i] = string(s)
			}
			return &mcpauth.TokenInfo{
				Scopes: scopes,
				UserID: p.Tenant + "/" + p.Name, // binds the MCP session to its user
				Extra:  map[string]any{tokenKey: token},
			}, nil
		}
		h = mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{
			ResourceMetadataURL:    metaURL,
			AllowMissingExpiration: true, // the Authenticator checks expiry itself
		})(h)
	}
	meta := mcpauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               opts.Resource,
		AuthorizationServers:   opts.AuthorizationServers,
		ScopesSupported:        []string{string(auth.ScopeSearch), string(auth.ScopeExecute)},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "tooldex",
	})
	mux := http.NewServeMux()
	mux.Handle(ProtectedResourcePath, meta)
	mux.Handle(ProtectedResourcePath+"/", meta)
	mux.Handle(MCPPath, checkOrigin(h, opts.AllowedOrigins)) // any other path: 404
	return mux
}

// tokenKey is the TokenInfo.Extra key of the raw bearer token.
const tokenKey = "tooldex_bearer"

// checkOrigin refuses requests from an origin that is not allowed.
func checkOrigin(h http.Handler, allowed []string) http.Handler {
	set := origin.NewSet(allowed)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !OriginAllowed(o, set) {
			http.Error(w, "origin "+o+" is not allowed", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// OriginAllowed reports whether an Origin header value is a loopback
// origin (http or https, localhost or a loopback IP) or in allowed.
func OriginAllowed(o string, allowed origin.Set) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	if auth.IsLoopbackHost(u.Hostname()) {
		return true
	}
	return allowed.Has(o)
}

// forwardToken returns ctx carrying, as outgoing gRPC metadata, the bearer
// token the MCP request was authenticated with, if any.
func forwardToken(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ctx
	}
	tok, _ := req.Extra.TokenInfo.Extra[tokenKey].(string)
	if tok == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}
