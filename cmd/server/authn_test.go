package main

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/auth/authtest"
)

func TestRequireScope(t *testing.T) {
	tokens := authtest.Write(t, t.TempDir(), "tokens.json", []byte(`{"tokens": [
	  {"token": "scraper-token-0123456789", "principal": "prom", "scopes": ["metrics"]},
	  {"token": "user-token-0123456789ab", "principal": "u", "scopes": ["search"]}]}`))
	a, err := auth.New(context.Background(), auth.Config{TokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	anon, err := auth.New(context.Background(), auth.Config{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	tests := []struct {
		name  string
		a     *auth.Authenticator
		token string
		want  int
	}{
		{"anonymous server", anon, "", http.StatusOK},
		{"no token", a, "", http.StatusUnauthorized},
		{"bad token", a, "nope-0123456789abcdef", http.StatusUnauthorized},
		{"wrong scope", a, "user-token-0123456789ab", http.StatusForbidden},
		{"metrics scope", a, "scraper-token-0123456789", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			requireScope(tt.a, ok, auth.ScopeMetrics, auth.ScopeAdmin).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d", rec.Code, tt.want)
			}
		})
	}
}

func TestOwnCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t)
	own, other := ca.Server(t), ca.Server(t)
	f := auth.ServerFlags{TLSCert: authtest.Write(t, dir, "s.pem", own.CertPEM), TLSKey: authtest.Write(t, dir, "k.pem", own.KeyPEM)}
	tc, err := f.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	verify := ownCertificate(tc).VerifyPeerCertificate
	if err := verify([][]byte{own.Leaf.Raw}, nil); err != nil {
		t.Errorf("own certificate refused: %v", err)
	}
	if err := verify([][]byte{other.Leaf.Raw}, [][]*x509.Certificate{{other.Leaf}}); err == nil {
		t.Error("another certificate of the same CA accepted")
	}
}
