package main

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tooldex/tooldex/auth"
)

// requireScope wraps an HTTP handler (metrics, pprof) so that, unless the
// server runs without credentials, a request needs credentials holding one
// of scopes: 401 without valid ones, 403 without the scope.
func requireScope(a *auth.Authenticator, h http.Handler, scopes ...auth.Scope) http.Handler {
	if a.Anonymous() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.AuthenticateRequest(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		for _, s := range scopes {
			if p.Has(s) {
				h.ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, auth.Require(p, scopes[0]).Error(), http.StatusForbidden)
	})
}

// serveHTTP serves srv on lis, over TLS when srv has a TLS configuration.
func serveHTTP(srv *http.Server, lis net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(lis, "", "")
	}
	return srv.Serve(lis)
}

// demoHostCredentials mints the in-process demo host's credentials: a
// random internal token for principal "demo-host" (tenant auth.SharedTenant,
// host scope, every tool name), and with TLS a client configuration that
// accepts exactly the certificate this server serves. The connection never
// leaves the machine, so the token may go over plaintext.
func demoHostCredentials(a *auth.Authenticator, tlsConf *tls.Config) ([]grpc.DialOption, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(buf)
	if err := a.AddInternal(token, auth.Principal{
		Name: "demo-host", Tenant: auth.SharedTenant, Scopes: []auth.Scope{auth.ScopeHost}, HostPatterns: []string{"*"},
	}); err != nil {
		return nil, err
	}
	opts, err := auth.ClientConfig{Token: token, Insecure: true}.DialOptions()
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(ownCertificate(tlsConf))))
	}
	return opts, nil
}

// ownCertificate is a client TLS configuration that accepts only the leaf
// certificate the server's tlsConf serves now (it follows renewals).
func ownCertificate(tlsConf *tls.Config) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is not verified against roots: the peer must present
		// this server's own certificate, compared byte for byte below.
		InsecureSkipVerify: true, //nolint:gosec // pinned in VerifyPeerCertificate
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			own, err := tlsConf.GetCertificate(nil)
			if err != nil {
				return err
			}
			if len(raw) == 0 || len(own.Certificate) == 0 || !bytes.Equal(raw[0], own.Certificate[0]) {
				return errors.New("the server did not present its own certificate")
			}
			return nil
		},
	}
}
