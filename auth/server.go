package auth

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
)

// ServerFlags are the credential flags of a tooldex listener (the gRPC
// server, the MCP façade's HTTP): TLS, mutual TLS, credential sources and
// the anonymous escape hatch.
type ServerFlags struct {
	Config
	TLSCert, TLSKey, ClientCAFile string
	InsecureAnonymous             bool
}

// RegisterFlags adds --tls-cert, --tls-key, --client-ca (each name
// prefixed by tlsPrefix, for a command that also has client TLS flags),
// --auth-tokens, --oidc-issuer, --jwks-url, --oidc-audience,
// --oidc-claim-principal, --oidc-claim-tenant, --oidc-claim-scopes,
// --oidc-claim-groups, --oidc-claim-host-patterns and --insecure-anonymous
// to fs.
func (f *ServerFlags) RegisterFlags(fs *flag.FlagSet, tlsPrefix string) {
	fs.StringVar(&f.TLSCert, tlsPrefix+"tls-cert", "", "PEM certificate served over TLS (with --"+tlsPrefix+"tls-key; re-read when it changes)")
	fs.StringVar(&f.TLSKey, tlsPrefix+"tls-key", "", "PEM key of --"+tlsPrefix+"tls-cert")
	fs.StringVar(&f.ClientCAFile, tlsPrefix+"client-ca", "", "PEM CAs verifying client certificates (mutual TLS, needs --tls-cert): the principal is the certificate's spiffe:// URI SAN, else its subject CN")
	fs.StringVar(&f.TokensFile, "auth-tokens", "", "static tokens file (JSON {\"tokens\":[{\"sha256\"|\"token\", \"principal\", \"tenant\", \"scopes\", \"groups\", \"host_patterns\"}]}); reloaded on change and on SIGHUP")
	fs.StringVar(&f.Issuer, "oidc-issuer", "", "OIDC issuer URL: JWT bearer tokens are verified with its keys (discovery) and must carry it as iss")
	fs.StringVar(&f.JWKSURL, "jwks-url", "", "JWKS URL verifying JWT bearer tokens (instead of the issuer's discovery)")
	fs.StringVar(&f.Audience, "oidc-audience", "", "audience JWTs must carry in aud (required with --oidc-issuer or --jwks-url)")
	fs.StringVar(&f.Claims.Principal, "oidc-claim-principal", "sub", "JWT claim naming the principal")
	fs.StringVar(&f.Claims.Tenant, "oidc-claim-tenant", "tenant", "JWT claim naming the tenant (absent: \"default\")")
	fs.StringVar(&f.Claims.Scopes, "oidc-claim-scopes", "scope", "JWT claim listing the scopes (a space-separated string or an array)")
	fs.StringVar(&f.Claims.Groups, "oidc-claim-groups", "groups", "JWT claim listing the groups")
	fs.StringVar(&f.Claims.HostPatterns, "oidc-claim-host-patterns", "host_patterns", "JWT claim listing the tool-name patterns a host principal may serve")
	fs.BoolVar(&f.InsecureAnonymous, "insecure-anonymous", false, "accept calls without credentials, with every right, on a non-loopback address (never in production)")
}

// TLSConfig returns the listener's TLS configuration, nil without
// --tls-cert.
func (f *ServerFlags) TLSConfig() (*tls.Config, error) {
	if f.TLSCert == "" && f.TLSKey == "" {
		if f.ClientCAFile != "" {
			return nil, errors.New("--client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if f.TLSCert == "" || f.TLSKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	return ServerTLSConfig(f.TLSCert, f.TLSKey, f.ClientCAFile)
}

// ErrNoCredentials says a listener on a non-loopback address has no
// credential source configured.
var ErrNoCredentials = errors.New("no credential source configured")

// Authenticator builds the listener's Authenticator. Without a credential
// source it lets anonymous calls in when addr is a loopback address or
// --insecure-anonymous was given, and returns a warning to log loudly;
// otherwise it refuses (ErrNoCredentials). warn is also set for bearer
// tokens over plaintext on a non-loopback address.
func (f *ServerFlags) Authenticator(ctx context.Context, addr net.Addr) (a *Authenticator, warn string, err error) {
	cfg, warn, err := f.forAddr(addr)
	if err != nil {
		return nil, "", err
	}
	a, err = New(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	return a, warn, nil
}

// CheckAddr applies Authenticator's rule for addr without building one:
// for a second listener whose calls another listener's Authenticator
// checks.
func (f *ServerFlags) CheckAddr(addr net.Addr) (warn string, err error) {
	_, warn, err = f.forAddr(addr)
	return warn, err
}

// forAddr is the configuration an Authenticator on addr gets, with the
// warning to log, or the reason not to serve there.
func (f *ServerFlags) forAddr(addr net.Addr) (cfg Config, warn string, err error) {
	cfg = f.Config
	cfg.ClientCA = f.ClientCAFile != ""
	loopback := IsLoopbackAddr(addr)
	switch {
	case cfg.Sources() && f.InsecureAnonymous:
		return Config{}, "", errors.New("--insecure-anonymous with a credential source: give one or the other")
	case !cfg.Sources() && loopback:
		cfg.Anonymous = true
		warn = fmt.Sprintf("NO AUTHENTICATION: no credential source configured, so every local process reaching %s has every right (anonymous, admin included); give --auth-tokens, --oidc-issuer/--jwks-url or --client-ca before exposing it", addr)
	case !cfg.Sources() && f.InsecureAnonymous:
		cfg.Anonymous = true
		warn = fmt.Sprintf("NO AUTHENTICATION on %s (--insecure-anonymous): anyone reaching it has every right, admin included", addr)
	case !cfg.Sources():
		return Config{}, "", fmt.Errorf("%w: refusing to serve %s, a non-loopback address, without credentials: give --auth-tokens, --oidc-issuer/--jwks-url or --client-ca (with --tls-cert), or --insecure-anonymous", ErrNoCredentials, addr)
	case f.TLSCert == "" && !loopback:
		warn = fmt.Sprintf("bearer tokens over plaintext on %s: give --tls-cert and --tls-key unless a TLS-terminating proxy is in front", addr)
	}
	return cfg, warn, nil
}

// Listener is a TCP listener with what serving on it needs: its TLS
// configuration (nil: plaintext) and its Authenticator.
type Listener struct {
	net.Listener
	TLS   *tls.Config
	Authn *Authenticator
}

// Listen loads the TLS configuration, listens on addr and builds the
// Authenticator for the address it got (see Authenticator, whose warning it
// returns). On error nothing is left open.
func (f *ServerFlags) Listen(ctx context.Context, addr string) (l Listener, warn string, err error) {
	if l.TLS, err = f.TLSConfig(); err != nil {
		return Listener{}, "", err
	}
	if l.Listener, err = net.Listen("tcp", addr); err != nil {
		return Listener{}, "", err
	}
	if l.Authn, warn, err = f.Authenticator(ctx, l.Addr()); err != nil {
		l.Close()
		return Listener{}, "", err
	}
	return l, warn, nil
}
