package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tooldex/tooldex/internal/limit"
	"google.golang.org/grpc/metadata"
)

// ClientConfig is how a tooldex client presents itself: a token and TLS
// settings. The zero value is today's development setup: plaintext, no
// token.
type ClientConfig struct {
	// Token is sent as "authorization: Bearer <token>"; TokenFile names a
	// file holding it instead (re-read when it changes, for rotated tokens).
	Token, TokenFile string
	// CAFile verifies the server (PEM; empty: the system roots); CertFile and
	// KeyFile are a client certificate for mutual TLS; ServerName overrides
	// the name verified in the server's certificate.
	CAFile, CertFile, KeyFile, ServerName string
	// TLS turns TLS on with the system roots; it is on anyway when CAFile,
	// CertFile or ServerName is set.
	TLS bool
	// Insecure lets the token go over plaintext to a non-loopback address
	// (behind a TLS-terminating proxy or mesh). Without it, and without TLS,
	// a token is only sent to loopback addresses.
	Insecure bool
}

// UsesTLS reports whether the connection will use TLS.
func (c ClientConfig) UsesTLS() bool {
	return c.TLS || c.CAFile != "" || c.CertFile != "" || c.ServerName != ""
}

// HasToken reports whether a token is configured.
func (c ClientConfig) HasToken() bool { return c.Token != "" || c.TokenFile != "" }

// ClientConfigFromEnv reads TOOLDEX_TOKEN, TOOLDEX_TOKEN_FILE, TOOLDEX_CA,
// TOOLDEX_CERT, TOOLDEX_KEY, TOOLDEX_TLS_SERVER_NAME, TOOLDEX_TLS and
// TOOLDEX_INSECURE_TOKEN (booleans: 1, true).
func ClientConfigFromEnv(getenv func(string) string) ClientConfig {
	b := func(k string) bool { v, _ := strconv.ParseBool(getenv(k)); return v }
	return ClientConfig{
		Token:      getenv("TOOLDEX_TOKEN"),
		TokenFile:  getenv("TOOLDEX_TOKEN_FILE"),
		CAFile:     getenv("TOOLDEX_CA"),
		CertFile:   getenv("TOOLDEX_CERT"),
		KeyFile:    getenv("TOOLDEX_KEY"),
		ServerName: getenv("TOOLDEX_TLS_SERVER_NAME"),
		TLS:        b("TOOLDEX_TLS"),
		Insecure:   b("TOOLDEX_INSECURE_TOKEN"),
	}
}

// RegisterFlags adds the client credential flags to fs, their defaults
// taken from the environment (ClientConfigFromEnv): --token, --token-file,
// --tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name and
// --insecure-token. c holds the values after fs.Parse.
func (c *ClientConfig) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) {
	env := ClientConfigFromEnv(getenv)
	fs.StringVar(&c.Token, "token", env.Token, "bearer token sent to the server (env TOOLDEX_TOKEN; prefer --token-file)")
	fs.StringVar(&c.TokenFile, "token-file", env.TokenFile, "file holding the bearer token (env TOOLDEX_TOKEN_FILE)")
	fs.BoolVar(&c.TLS, "tls", env.TLS, "use TLS with the system's roots (env TOOLDEX_TLS; implied by --tls-ca, --tls-cert, --tls-server-name)")
	fs.StringVar(&c.CAFile, "tls-ca", env.CAFile, "PEM CA certificates verifying the server (env TOOLDEX_CA)")
	fs.StringVar(&c.CertFile, "tls-cert", env.CertFile, "PEM client certificate for mutual TLS (env TOOLDEX_CERT)")
	fs.StringVar(&c.KeyFile, "tls-key", env.KeyFile, "PEM key of --tls-cert (env TOOLDEX_KEY)")
	fs.StringVar(&c.ServerName, "tls-server-name", env.ServerName, "name verified in the server's certificate (env TOOLDEX_TLS_SERVER_NAME)")
	fs.BoolVar(&c.Insecure, "insecure-token", env.Insecure, "send the token over plaintext to a non-loopback address, behind a trusted TLS-terminating proxy (env TOOLDEX_INSECURE_TOKEN)")
}

// TLSConfig returns the client TLS configuration (nil without TLS).
func (c ClientConfig) TLSConfig() (*tls.Config, error) {
	if !c.UsesTLS() {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pool, err := loadPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		tc.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("a client certificate needs both a certificate file and a key file")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// DialOptions returns the grpc dial options presenting c: transport
// credentials (TLS or plaintext) and, with a token, per-RPC credentials.
// Options given after them override them.
func (c ClientConfig) DialOptions() ([]grpc.DialOption, error) {
	tc, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	// Messages of up to limit.MaxMessageBytes, as the server sends and
	// takes: every part of tooldex agrees on one size.
	opts := limit.DialOptions()
	if tc != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.HasToken() {
		src := &tokenSource{token: strings.TrimSpace(c.Token), file: c.TokenFile}
		if c.TokenFile != "" {
			if _, err := src.get(); err != nil {
				return nil, err
			}
		} else if err := checkToken(src.token); err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(&bearerCreds{src: src, secure: tc != nil, insecure: c.Insecure}))
	}
	return opts, nil
}

func checkToken(tok string) error {
	if tok == "" || len(tok) > MaxTokenLen || !validToken(tok) {
		return fmt.Errorf("token must be 1 to %d printable ASCII characters without spaces", MaxTokenLen)
	}
	return nil
}

// tokenSource is a token, or a file holding one, re-read when its
// modification time or size changes.
type tokenSource struct {
	token string
	file  string

	mu    sync.Mutex
	stamp fileStamp
}

func (s *tokenSource) get() (string, error) {
	if s.file == "" {
		return s.token, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(s.file)
	if err != nil {
		if s.token != "" {
			return s.token, nil // keep the last good token while the file is being replaced
		}
		return "", fmt.Errorf("token file: %w", err)
	}
	if s.token != "" && st.ModTime().Equal(s.stamp.mod) && st.Size() == s.stamp.size {
		return s.token, nil
	}
	if st.Size() > MaxTokenLen+64 {
		return "", fmt.Errorf("token file %s: larger than a token", s.file)
	}
	data, err := os.ReadFile(s.file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if err := checkToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", s.file, err)
	}
	s.token, s.stamp = tok, fileStamp{mod: st.ModTime(), size: st.Size()}
	return tok, nil
}

// bearerCreds sends the token as authorization metadata. Over plaintext it
// sends it only to loopback authorities (unless insecure); a call that
// already carries authorization metadata (a frontend forwarding its user's
// token) is left as it is.
type bearerCreds struct {
	src      *tokenSource
	secure   bool
	insecure bool

	// The last answer, reused while the token is the same (grpc only reads
	// the map), and the last URI found to be loopback.
	last     atomic.Pointer[bearerMD]
	loopback atomic.Pointer[string]
}

type bearerMD struct {
	token string
	md    map[string]string
}

func (b *bearerCreds) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md.Get("authorization")) > 0 {
		return nil, nil
	}
	if !b.secure && !b.insecure {
		for _, u := range uri {
			if last := b.loopback.Load(); last != nil && *last == u {
				continue
			}
			if !loopbackURI(u) {
				return nil, fmt.Errorf("refusing to send a bearer token over plaintext to %s: use TLS (--tls-ca, --tls), or --insecure-token behind a trusted TLS-terminating proxy", u)
			}
			b.loopback.Store(&u)
		}
	}
	tok, err := b.src.get()
	if err != nil {
		return nil, err
	}
	if last := b.last.Load(); last != nil && last.token == tok {
		return last.md, nil
	}
	md := map[string]string{"authorization": "Bearer " + tok}
	b.last.Store(&bearerMD{token: tok, md: md})
	return md, nil
}

// RequireTransportSecurity is false so that a token can reach a loopback
// server over plaintext; GetRequestMetadata refuses other plaintext peers.
func (b *bearerCreds) RequireTransportSecurity() bool { return false }

// loopbackURI reports whether the host of a request URI
// ("https://host:port/service") is a loopback address or "localhost".
func loopbackURI(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	return IsLoopbackHost(pu.Hostname())
}

// IsLoopbackHost reports whether host (a name or an IP) is "localhost" or a
// loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listener's address is a loopback one.
func IsLoopbackAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	host, _, err := net.SplitHostPort(a.String())
	return err == nil && IsLoopbackHost(host)
}

func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}

// ServerTLSConfig returns a server TLS configuration: the certificate and
// key, and with clientCAFile the CAs verifying client certificates
// (tls.VerifyClientCertIfGiven, so that clients with bearer tokens and no
// certificate connect too). The certificate is re-read when its files
// change, at most every 10 seconds, so a renewed one is served without a
// restart.
func ServerTLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS needs both a certificate and a key")
	}
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.load(); err != nil {
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}
	if clientCAFile != "" {
		pool, err := loadPool(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("client CA: %w", err)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return tc, nil
}

type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	checked time.Time
	stamp   [2]fileStamp
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < 10*time.Second {
		return r.cert, nil
	}
	r.checked = time.Now()
	if _, err := r.loadLocked(); err != nil {
		return r.cert, nil // keep serving the last good certificate
	}
	return r.cert, nil
}

func (r *certReloader) load() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked = time.Now()
	return r.loadLocked()
}

func (r *certReloader) loadLocked() (*tls.Certificate, error) {
	var stamp [2]fileStamp
	for i, f := range []string{r.certFile, r.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		stamp[i] = fileStamp{mod: st.ModTime(), size: st.Size()}
	}
	if r.cert != nil && stamp == r.stamp {
		return r.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	r.cert, r.stamp = &cert, stamp
	return r.cert, nil
}
