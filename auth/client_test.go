package auth

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/tooldex/tooldex/auth/authtest"
	"github.com/tooldex/tooldex/internal/limit"
)

func TestBearerCredsPlaintext(t *testing.T) {
	src := &tokenSource{token: "tok-0123456789abcdef"}
	tests := []struct {
		name     string
		creds    *bearerCreds
		uri      string
		wantSent bool
	}{
		{"loopback IP", &bearerCreds{src: src}, "https://127.0.0.1:50051/tooldex.v1.DiscoveryService", true},
		{"localhost", &bearerCreds{src: src}, "https://localhost:50051/x", true},
		{"IPv6 loopback", &bearerCreds{src: src}, "https://[::1]:50051/x", true},
		{"remote over plaintext", &bearerCreds{src: src}, "https://tooldex.example.com:50051/x", false},
		{"remote over plaintext, insecure allowed", &bearerCreds{src: src, insecure: true}, "https://tooldex.example.com:50051/x", true},
		{"remote over TLS", &bearerCreds{src: src, secure: true}, "https://tooldex.example.com:50051/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, err := tt.creds.GetRequestMetadata(context.Background(), tt.uri)
			if !tt.wantSent {
				if err == nil || !strings.Contains(err.Error(), "plaintext") {
					t.Fatalf("GetRequestMetadata = %v, %v; want a plaintext refusal", md, err)
				}
				return
			}
			if err != nil || md["authorization"] != "Bearer tok-0123456789abcdef" {
				t.Fatalf("GetRequestMetadata = %v, %v; want the bearer token", md, err)
			}
		})
	}
	// A call that carries its own authorization (a forwarded user token) is
	// left alone.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer user")
	if md, err := (&bearerCreds{src: src}).GetRequestMetadata(ctx, "https://127.0.0.1:1/x"); err != nil || len(md) != 0 {
		t.Errorf("with outgoing authorization: %v, %v; want nothing added", md, err)
	}
}

func TestTokenFileRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("first-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := ClientConfig{TokenFile: path}.DialOptions()
	if want := len(limit.DialOptions()) + 2; err != nil || len(opts) != want {
		t.Fatalf("DialOptions = %d options, %v; want the message sizes, transport and token (%d)", len(opts), err, want)
	}
	src := &tokenSource{file: path}
	if tok, err := src.get(); err != nil || tok != "first-token-0123456789" {
		t.Fatalf("token = %q, %v", tok, err)
	}
	if err := os.WriteFile(path, []byte("second-token-0123456789-longer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := src.get(); err != nil || tok != "second-token-0123456789-longer" {
		t.Fatalf("rotated token = %q, %v", tok, err)
	}
	if _, err := (ClientConfig{TokenFile: filepath.Join(t.TempDir(), "missing")}).DialOptions(); err == nil {
		t.Error("DialOptions with a missing token file succeeded")
	}
}

func TestClientConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t)
	c := ca.Client(t, "x", "")
	certFile := authtest.Write(t, dir, "c.pem", c.CertPEM)
	notPEM := authtest.Write(t, dir, "bad.pem", []byte("nothing"))
	tests := []struct {
		name    string
		cfg     ClientConfig
		wantErr string
	}{
		{"certificate without key", ClientConfig{CertFile: certFile}, "both"},
		{"bad CA", ClientConfig{CAFile: notPEM}, "no PEM"},
		{"token with a space", ClientConfig{Token: "a b"}, "printable"},
	}
	for _, tt := range tests {
		if _, err := tt.cfg.DialOptions(); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: DialOptions error = %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
	env := map[string]string{"TOOLDEX_TOKEN": "t", "TOOLDEX_CA": "ca.pem", "TOOLDEX_TLS": "true"}
	got := ClientConfigFromEnv(func(k string) string { return env[k] })
	if got.Token != "t" || got.CAFile != "ca.pem" || !got.TLS || !got.UsesTLS() {
		t.Errorf("ClientConfigFromEnv = %+v", got)
	}
}

func TestServerFlagsAuthenticator(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	any := &net.TCPAddr{IP: net.IPv6unspecified, Port: 1}
	tokens := authtest.Write(t, t.TempDir(), "tokens.json", []byte(`{"tokens": []}`))
	tests := []struct {
		name      string
		flags     ServerFlags
		addr      net.Addr
		wantAnon  bool
		wantWarn  string
		wantErrIs error
		wantErr   string
	}{
		{name: "loopback, no sources", addr: loop, wantAnon: true, wantWarn: "NO AUTHENTICATION"},
		{name: "all interfaces, no sources", addr: any, wantErrIs: ErrNoCredentials},
		{name: "all interfaces, insecure anonymous", flags: ServerFlags{InsecureAnonymous: true}, addr: any, wantAnon: true, wantWarn: "--insecure-anonymous"},
		{name: "tokens on all interfaces without TLS", flags: ServerFlags{Config: Config{TokensFile: tokens}}, addr: any, wantWarn: "plaintext"},
		{name: "tokens on loopback", flags: ServerFlags{Config: Config{TokensFile: tokens}}, addr: loop},
		{name: "tokens and insecure anonymous", flags: ServerFlags{Config: Config{TokensFile: tokens}, InsecureAnonymous: true}, addr: loop, wantErr: "one or the other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, warn, err := tt.flags.Authenticator(context.Background(), tt.addr)
			switch {
			case tt.wantErrIs != nil || tt.wantErr != "":
				if err == nil || (tt.wantErrIs != nil && !errors.Is(err, tt.wantErrIs)) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %v %q", err, tt.wantErrIs, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if a.Anonymous() != tt.wantAnon || !strings.Contains(warn, tt.wantWarn) || (tt.wantWarn == "" && warn != "") {
				t.Errorf("anonymous %v, warning %q; want %v, %q", a.Anonymous(), warn, tt.wantAnon, tt.wantWarn)
			}
		})
	}
}

func TestServerTLSConfig(t *testing.T) {
	dir := t.TempDir()
	ca := authtest.NewCA(t)
	s := ca.Server(t)
	cert := authtest.Write(t, dir, "s.pem", s.CertPEM)
	key := authtest.Write(t, dir, "s-key.pem", s.KeyPEM)
	caFile := authtest.Write(t, dir, "ca.pem", ca.PEM)
	f := ServerFlags{TLSCert: cert, TLSKey: key, ClientCAFile: caFile}
	tc, err := f.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if tc.ClientCAs == nil || tc.ClientAuth.String() != "VerifyClientCertIfGiven" {
		t.Errorf("client auth = %v, want VerifyClientCertIfGiven with the CA", tc.ClientAuth)
	}
	// A renewed certificate is served once the files change.
	r := &certReloader{certFile: cert, keyFile: key}
	if _, err := r.load(); err != nil {
		t.Fatal(err)
	}
	s2 := ca.Server(t)
	authtest.Write(t, dir, "s.pem", s2.CertPEM)
	authtest.Write(t, dir, "s-key.pem", s2.KeyPEM)
	future := time.Now().Add(time.Minute)
	for _, p := range []string{cert, key} {
		if err := os.Chtimes(p, future, future); err != nil {
			t.Fatal(err)
		}
	}
	r.checked = time.Time{} // as if the re-check interval had passed
	got, err := r.get(nil)
	if err != nil || string(got.Certificate[0]) != string(s2.Leaf.Raw) {
		t.Errorf("reloaded certificate is not the renewed one (%v)", err)
	}
	for _, bad := range []ServerFlags{{TLSCert: cert}, {ClientCAFile: caFile}} {
		if _, err := bad.TLSConfig(); err == nil {
			t.Errorf("TLSConfig(%+v) succeeded, want an error", bad)
		}
	}
}
