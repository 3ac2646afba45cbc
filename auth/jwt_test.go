package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tooldex/tooldex/auth/authtest"
)

// jwtAuth returns an Authenticator for iss with audience "tooldex".
func jwtAuth(t *testing.T, iss *authtest.Issuer, cfg Config) *Authenticator {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.Audience = "tooldex"
	cfg.HTTPClient = &http.Client{Transport: tr, Timeout: 5 * time.Second}
	a, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestJWT(t *testing.T) {
	iss := authtest.NewIssuer(t)
	other := authtest.NewKey(t)
	for _, mode := range []string{"discovery", "jwks"} {
		t.Run(mode, func(t *testing.T) {
			cfg := Config{Issuer: iss.URL()}
			if mode == "jwks" {
				cfg = Config{JWKSURL: iss.JWKSURL()}
			}
			a := jwtAuth(t, iss, cfg)
			tests := []struct {
				name    string
				token   string
				want    *Principal
				wantErr string
			}{
				{name: "good", token: iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "tenant": "team-a", "scope": "openid search execute", "groups": []string{"dev", "ops"}}),
					want: &Principal{Name: "alice", Tenant: "team-a", Scopes: []Scope{ScopeSearch, ScopeExecute}, Groups: []string{"dev", "ops"}, Method: MethodJWT}},
				{name: "scopes as an array, audience among several, no tenant", token: iss.Mint(t, map[string]any{"sub": "bob", "aud": []string{"other", "tooldex"}, "scope": []string{"register"}}),
					want: &Principal{Name: "bob", Tenant: DefaultTenant, Scopes: []Scope{ScopeRegister}, Method: MethodJWT}},
				{name: "host patterns with the host scope", token: iss.Mint(t, map[string]any{"sub": "h", "aud": "tooldex", "scope": "host", "host_patterns": []string{"mcp__x__*"}}),
					want: &Principal{Name: "h", Tenant: DefaultTenant, Scopes: []Scope{ScopeHost}, HostPatterns: []string{"mcp__x__*"}, Method: MethodJWT}},
				{name: "host patterns ignored without the host scope", token: iss.Mint(t, map[string]any{"sub": "s", "aud": "tooldex", "scope": "search", "host_patterns": []string{"*"}}),
					want: &Principal{Name: "s", Tenant: DefaultTenant, Scopes: []Scope{ScopeSearch}, Method: MethodJWT}},
				{name: "expired", token: iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "exp": time.Now().Add(-time.Minute).Unix()}), wantErr: "expired"},
				{name: "no exp", token: iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "exp": nil}), wantErr: "expired"},
				{name: "not yet valid", token: iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "nbf": time.Now().Add(time.Hour).Unix()}), wantErr: "nbf"},
				{name: "wrong audience", token: iss.Mint(t, map[string]any{"sub": "alice", "aud": "another-service"}), wantErr: "audience"},
				{name: "unknown key", token: authtest.MintWith(t, other, "key-1", iss.URL(), map[string]any{"sub": "alice", "aud": "tooldex"}), wantErr: "signature"},
				{name: "no subject", token: iss.Mint(t, map[string]any{"aud": "tooldex"}), wantErr: `claim "sub"`},
				{name: "bad tenant", token: iss.Mint(t, map[string]any{"sub": "a", "aud": "tooldex", "tenant": "a/b"}), wantErr: "tenant"},
				{name: "malformed", token: "a.b.c", wantErr: "malformed"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					p, err := a.Authenticate(context.Background(), tt.token, nil)
					if tt.wantErr != "" {
						if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.wantErr) {
							t.Fatalf("Authenticate error = %v, want ErrUnauthenticated containing %q", err, tt.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if !samePrincipal(p, tt.want) {
						t.Errorf("principal = %+v, want %+v", p, tt.want)
					}
				})
			}
		})
	}
}

func TestJWTWrongIssuer(t *testing.T) {
	iss := authtest.NewIssuer(t)
	a := jwtAuth(t, iss, Config{Issuer: iss.URL()})
	tok := iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "iss": "https://evil.example"})
	if _, err := a.Authenticate(context.Background(), tok, nil); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "issued by a different provider") {
		t.Fatalf("wrong issuer: error = %v, want an issuer error", err)
	}
	// With a JWKS URL and no issuer, iss is not checked.
	b := jwtAuth(t, iss, Config{JWKSURL: iss.JWKSURL()})
	if _, err := b.Authenticate(context.Background(), tok, nil); err != nil {
		t.Fatalf("JWKS without an issuer: %v", err)
	}
}

func TestJWTKeyRotation(t *testing.T) {
	iss := authtest.NewIssuer(t)
	a := jwtAuth(t, iss, Config{JWKSURL: iss.JWKSURL(), KeyRefreshInterval: time.Second})
	first := iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "scope": "search"})
	if _, err := a.Authenticate(context.Background(), first, nil); err != nil {
		t.Fatal(err)
	}
	if got := iss.JWKSFetches.Load(); got != 1 {
		t.Fatalf("key set fetched %d times for the first token, want 1", got)
	}
	// The issuer rotates to a new key id: the set is refreshed once (the
	// refresh interval past).
	time.Sleep(1100 * time.Millisecond)
	iss.Rotate(t, true)
	second := iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "scope": "search"})
	if _, err := a.Authenticate(context.Background(), second, nil); err != nil {
		t.Fatalf("token signed by the rotated key: %v", err)
	}
	if got := iss.JWKSFetches.Load(); got != 2 {
		t.Fatalf("key set fetched %d times after rotation, want 2", got)
	}
	// Verified tokens are cached: no fetch, same principal.
	p1, _ := a.Authenticate(context.Background(), second, nil)
	p2, _ := a.Authenticate(context.Background(), second, nil)
	if p1 != p2 {
		t.Error("a verified token is not cached")
	}
	// Unknown key ids refresh at most once per interval: a flood of forged
	// kids costs no fetches.
	stranger := authtest.NewKey(t)
	for i := range 20 {
		tok := authtest.MintWith(t, stranger, "forged-"+string(rune('a'+i)), iss.URL(), map[string]any{"sub": "x", "aud": "tooldex"})
		if _, err := a.Authenticate(context.Background(), tok, nil); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("forged token: error = %v, want ErrUnauthenticated", err)
		}
	}
	if got := iss.JWKSFetches.Load(); got != 2 {
		t.Errorf("key set fetched %d times after 20 forged key ids, want still 2 (rate-limited)", got)
	}
}

func TestJWTCacheExpiry(t *testing.T) {
	iss := authtest.NewIssuer(t)
	a := jwtAuth(t, iss, Config{JWKSURL: iss.JWKSURL()})
	tok := iss.Mint(t, map[string]any{"sub": "alice", "aud": "tooldex", "exp": time.Now().Add(1500 * time.Millisecond).Unix()})
	if _, err := a.Authenticate(context.Background(), tok, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // past exp (whole seconds)
	if _, err := a.Authenticate(context.Background(), tok, nil); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("cached token past its exp: error = %v, want ErrUnauthenticated", err)
	}
}

func TestJWTConfig(t *testing.T) {
	if _, err := New(context.Background(), Config{JWKSURL: "http://127.0.0.1:1/jwks"}); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("New without an audience: %v, want an audience error", err)
	}
}

func samePrincipal(a, b *Principal) bool {
	eq := func(x, y []string) bool { return strings.Join(x, ",") == strings.Join(y, ",") }
	sc := func(s []Scope) []string {
		out := make([]string, len(s))
		for i, v := range s {
			out[i] = string(v)
		}
		return out
	}
	return a.Name == b.Name && a.Tenant == b.Tenant && a.Method == b.Method &&
		eq(sc(a.Scopes), sc(b.Scopes)) && eq(a.Groups, b.Groups) && eq(a.HostPatterns, b.HostPatterns)
}

func TestCertificatePrincipal(t *testing.T) {
	ca := authtest.NewCA(t)
	spiffe := ca.Client(t, "fs-host", "spiffe://example.org/host/fs")
	cn := ca.Client(t, "worker-7", "")
	if got := CertificatePrincipal(spiffe.Leaf); got != "spiffe://example.org/host/fs" {
		t.Errorf("SPIFFE certificate principal = %q", got)
	}
	if got := CertificatePrincipal(cn.Leaf); got != "worker-7" {
		t.Errorf("CN certificate principal = %q", got)
	}

	a, _ := newTokensAuth(t, goodTokensFile(), Config{ClientCA: true})
	state := func(c *authtest.Cert) *tls.ConnectionState {
		return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{c.Leaf}}}
	}
	p, err := a.Authenticate(context.Background(), "", state(spiffe))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "spiffe://example.org/host/fs" || p.Tenant != "team-a" || p.Method != MethodMTLS || !p.MayServe("mcp__filesystem__read") {
		t.Errorf("SPIFFE principal = %+v, want the tokens file's entry", p)
	}
	p, err = a.Authenticate(context.Background(), "", state(cn))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "worker-7" || len(p.Scopes) != 0 || p.Tenant != DefaultTenant {
		t.Errorf("certificate without an entry = %+v, want authenticated with no scope", p)
	}
	// A token wins over the certificate; a bad token is refused even with one.
	p, err = a.Authenticate(context.Background(), aliceToken, state(spiffe))
	if err != nil || p.Name != "alice" {
		t.Errorf("token and certificate: %+v, %v; want alice", p, err)
	}
	if _, err := a.Authenticate(context.Background(), "bad-token-0123456789", state(spiffe)); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("bad token with a good certificate: %v, want ErrUnauthenticated", err)
	}
	// An unverified certificate (no chains) is no credential.
	if _, err := a.Authenticate(context.Background(), "", &tls.ConnectionState{PeerCertificates: []*x509.Certificate{spiffe.Leaf}}); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("unverified certificate: %v, want ErrUnauthenticated", err)
	}
}
