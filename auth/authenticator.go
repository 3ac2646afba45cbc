package auth

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Claims names the JWT claims a principal is read from.
type Claims struct {
	Principal    string // default "sub"
	Tenant       string // default "tenant"; a token without it is in DefaultTenant
	Scopes       string // default "scope": a space-separated string or an array
	Groups       string // default "groups"
	HostPatterns string // default "host_patterns" (honoured with the host scope only)
}

func (c Claims) withDefaults() Claims {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&c.Principal, "sub")
	def(&c.Tenant, "tenant")
	def(&c.Scopes, "scope")
	def(&c.Groups, "groups")
	def(&c.HostPatterns, "host_patterns")
	return c
}

// Config configures an Authenticator.
type Config struct {
	// TokensFile is a static tokens file (see ParseTokens).
	TokensFile string
	// Issuer is an OIDC issuer URL: its discovery document gives the JWKS
	// URL (unless JWKSURL is set), and tokens must carry it as iss.
	Issuer string
	// JWKSURL is the URL of the keys JWTs are signed with. Without Issuer,
	// a token's iss is not checked.
	JWKSURL string
	// Audience must be among a JWT's aud; required with Issuer or JWKSURL.
	Audience string
	// Claims names the claims read from JWTs.
	Claims Claims
	// ClientCA says the TLS layer verifies client certificates against a CA
	// (tls.VerifyClientCertIfGiven): a verified certificate is a credential.
	ClientCA bool
	// Anonymous lets requests without credentials in as Anonymous(). It is
	// refused with any credential source.
	Anonymous bool

	// CacheSize bounds the verified-JWT cache; 0 means 10,000 entries.
	CacheSize int
	// CacheTTL is the longest a verified JWT stays cached (never beyond its
	// exp); 0 means 5 minutes.
	CacheTTL time.Duration
	// KeyRefreshInterval is the least time between two key-set fetches
	// caused by unknown key ids; 0 means 30 seconds.
	KeyRefreshInterval time.Duration
	// ReloadInterval is how often Watch checks the tokens file for a
	// change; 0 means 2 seconds.
	ReloadInterval time.Duration
	// HTTPClient fetches discovery documents and key sets; nil means a
	// client with a 10s timeout.
	HTTPClient *http.Client
}

// Sources reports whether c names any credential source.
func (c *Config) Sources() bool {
	return c.TokensFile != "" || c.Issuer != "" || c.JWKSURL != "" || c.ClientCA
}

// Authenticator turns credentials into principals. Its methods are safe for
// concurrent use.
type Authenticator struct {
	cfg      Config
	claims   Claims
	verifier *oidc.IDTokenVerifier // nil without JWT sources
	cache    *lru.Cache[[sha256.Size]byte, cached]

	tokens   atomic.Pointer[Tokens]
	internal atomic.Pointer[map[[sha256.Size]byte]*Principal]
	intMu    sync.Mutex // serialises AddInternal

	reloadMu sync.Mutex
	fileStat fileStamp
}

type cached struct {
	p       *Principal
	expires time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// New returns an Authenticator for cfg: it loads the tokens file and, with
// an Issuer, fetches the issuer's discovery document (ctx bounds it).
func New(ctx context.Context, cfg Config) (*Authenticator, error) {
	if cfg.Anonymous && cfg.Sources() {
		return nil, errors.New("anonymous access with a credential source configured would bypass it")
	}
	if (cfg.Issuer != "" || cfg.JWKSURL != "") && cfg.Audience == "" {
		return nil, errors.New("an audience is required with an OIDC issuer or a JWKS URL (tokens minted for another service must not be accepted)")
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 10000
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 5 * time.Minute
	}
	if cfg.KeyRefreshInterval <= 0 {
		cfg.KeyRefreshInterval = 30 * time.Second
	}
	if cfg.ReloadInterval <= 0 {
		cfg.ReloadInterval = 2 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	a := &Authenticator{cfg: cfg, claims: cfg.Claims.withDefaults()}
	empty := map[[sha256.Size]byte]*Principal{}
	a.internal.Store(&empty)
	if cfg.TokensFile != "" {
		if err := a.Reload(); err != nil {
			return nil, err
		}
	}
	if cfg.Issuer != "" || cfg.JWKSURL != "" {
		jwksURL := cfg.JWKSURL
		if jwksURL == "" {
			pctx := oidc.ClientContext(ctx, cfg.HTTPClient)
			provider, err := oidc.NewProvider(pctx, cfg.Issuer)
			if err != nil {
				return nil, fmt.Errorf("OIDC issuer %s: %w", cfg.Issuer, err)
			}
			var meta struct {
				JWKSURL string `json:"jwks_uri"`
			}
			if err := provider.Claims(&meta); err != nil || meta.JWKSURL == "" {
				return nil, fmt.Errorf("OIDC issuer %s: its discovery document has no jwks_uri", cfg.Issuer)
			}
			jwksURL = meta.JWKSURL
		}
		algs := make([]string, len(signingAlgs))
		for i, alg := range signingAlgs {
			algs[i] = string(alg)
		}
		keys := &keySet{url: jwksURL, client: cfg.HTTPClient, minInterval: cfg.KeyRefreshInterval}
		a.verifier = oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{
			ClientID:             cfg.Audience,
			SupportedSigningAlgs: algs,
			SkipIssuerCheck:      cfg.Issuer == "",
		})
		c, err := lru.New[[sha256.Size]byte, cached](cfg.CacheSize)
		if err != nil {
			return nil, err
		}
		a.cache = c
	}
	return a, nil
}

// Anonymous reports whether requests without credentials are let in.
func (a *Authenticator) Anonymous() bool { return a.cfg.Anonymous }

// AddInternal makes token authenticate as p (Method MethodInternal), e.g.
// for a host the server runs itself. The token is kept only as its hash.
func (a *Authenticator) AddInternal(token string, p Principal) error {
	if len(token) < MinTokenLen || len(token) > MaxTokenLen || !validToken(token) {
		return fmt.Errorf("internal token must be %d to %d printable ASCII characters", MinTokenLen, MaxTokenLen)
	}
	if p.Tenant == "" {
		p.Tenant = DefaultTenant
	}
	p.Method = MethodInternal
	a.intMu.Lock()
	defer a.intMu.Unlock()
	old := *a.internal.Load()
	m := make(map[[sha256.Size]byte]*Principal, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[sha256.Sum256([]byte(token))] = &p
	a.internal.Store(&m)
	return nil
}

// Authenticate returns the principal of a request: bearer is the token of
// its Authorization header ("" when none), tlsState its connection's TLS
// state (nil on plaintext). See the package doc for the precedence.
// Errors wrap ErrUnauthenticated.
func (a *Authenticator) Authenticate(ctx context.Context, bearer string, tlsState *tls.ConnectionState) (*Principal, error) {
	if bearer != "" {
		return a.token(ctx, bearer)
	}
	if a.cfg.ClientCA && tlsState != nil && len(tlsState.VerifiedChains) > 0 && len(tlsState.VerifiedChains[0]) > 0 {
		return a.certificate(tlsState.VerifiedChains[0][0])
	}
	if a.cfg.Anonymous {
		return anonymous, nil
	}
	return nil, unauthenticated("no credentials: send \"authorization: Bearer <token>\" or a client certificate")
}

// AuthenticateRequest authenticates an HTTP request: its Authorization
// header and its TLS state.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*Principal, error) {
	var bearer string
	if vs := r.Header.Values("Authorization"); len(vs) > 1 {
		return nil, unauthenticated("more than one authorization header")
	} else if len(vs) == 1 {
		tok, err := ParseAuthorization(vs[0])
		if err != nil {
			return nil, err
		}
		bearer = tok
	}
	return a.Authenticate(r.Context(), bearer, r.TLS)
}

func (a *Authenticator) token(ctx context.Context, tok string) (*Principal, error) {
	sum := sha256.Sum256([]byte(tok))
	if p, ok := (*a.internal.Load())[sum]; ok {
		return p, nil
	}
	if p, ok := a.tokens.Load().lookup(sum); ok {
		return p, nil
	}
	if a.verifier == nil || strings.Count(tok, ".") != 2 {
		return nil, unauthenticated("unknown bearer token")
	}
	now := time.Now()
	if c, ok := a.cache.Get(sum); ok {
		if now.Before(c.expires) {
			return c.p, nil
		}
		a.cache.Remove(sum)
	}
	idt, err := a.verifier.Verify(ctx, tok)
	if err != nil {
		return nil, unauthenticated("bearer JWT: %v", err)
	}
	p, err := a.fromClaims(idt)
	if err != nil {
		return nil, unauthenticated("bearer JWT: %v", err)
	}
	expires := now.Add(a.cfg.CacheTTL)
	if idt.Expiry.Before(expires) {
		expires = idt.Expiry
	}
	a.cache.Add(sum, cached{p: p, expires: expires})
	return p, nil
}

// fromClaims reads a principal from a verified token's claims.
func (a *Authenticator) fromClaims(idt *oidc.IDToken) (*Principal, error) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, err
	}
	p := &Principal{Method: MethodJWT, Tenant: DefaultTenant}
	name, _ := claims[a.claims.Principal].(string)
	if name == "" || !validText(name, maxNameLen) {
		return nil, fmt.Errorf("claim %q: want a non-empty string of at most %d printable characters", a.claims.Principal, maxNameLen)
	}
	p.Name = name
	if v, ok := claims[a.claims.Tenant]; ok {
		t, _ := v.(string)
		if err := ValidTenant(t); err != nil {
			return nil, fmt.Errorf("claim %q: %w", a.claims.Tenant, err)
		}
		p.Tenant = t
	}
	scopes, err := stringsClaim(claims, a.claims.Scopes, true)
	if err != nil {
		return nil, err
	}
	for _, s := range scopes {
		if sc := Scope(s); validScope(sc) && !p.Has(sc) {
			p.Scopes = append(p.Scopes, sc)
		}
	}
	if p.Groups, err = stringsClaim(claims, a.claims.Groups, false); err != nil {
		return nil, err
	}
	if p.Has(ScopeHost) {
		if p.HostPatterns, err = stringsClaim(claims, a.claims.HostPatterns, false); err != nil {
			return nil, err
		}
		for _, pat := range p.HostPatterns {
			if _, err := path.Match(pat, ""); err != nil {
				return nil, fmt.Errorf("claim %q: %q: %w", a.claims.HostPatterns, pat, err)
			}
		}
	}
	return p, nil
}

// stringsClaim reads claim name as an array of strings or, with spaced, a
// space-separated string too. A missing claim is nil.
func stringsClaim(claims map[string]any, name string, spaced bool) ([]string, error) {
	v, ok := claims[name]
	if !ok || v == nil {
		return nil, nil
	}
	var out []string
	switch v := v.(type) {
	case string:
		if !spaced {
			out = []string{v}
		} else {
			out = strings.Fields(v)
		}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("claim %q: want strings, got a %T", name, e)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("claim %q: want a string or an array of strings, got a %T", name, v)
	}
	if err := checkList("claim "+name, out); err != nil {
		return nil, err
	}
	return out, nil
}

// certificate returns the principal of a verified client certificate.
func (a *Authenticator) certificate(leaf *x509.Certificate) (*Principal, error) {
	name := CertificatePrincipal(leaf)
	if name == "" {
		return nil, unauthenticated("client certificate has neither a spiffe:// URI SAN nor a subject CN")
	}
	if p, ok := a.tokens.Load().cert(name); ok {
		return p, nil
	}
	return &Principal{Name: name, Tenant: DefaultTenant, Method: MethodMTLS}, nil
}

// CertificatePrincipal is the principal name of a client certificate: its
// first spiffe:// URI SAN, else its subject CN ("" when neither).
func CertificatePrincipal(leaf *x509.Certificate) string {
	for _, u := range leaf.URIs {
		if strings.EqualFold(u.Scheme, "spiffe") {
			if s := u.String(); validText(s, maxNameLen) {
				return s
			}
		}
	}
	if cn := leaf.Subject.CommonName; validText(cn, maxNameLen) {
		return cn
	}
	return ""
}

// Reload reads the tokens file again. On error the tokens in force stay.
func (a *Authenticator) Reload() error {
	if a.cfg.TokensFile == "" {
		return nil
	}
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	return a.reloadLocked()
}

func (a *Authenticator) reloadLocked() error {
	f, err := os.Open(a.cfg.TokensFile)
	if err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("tokens file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxTokensFileBytes+1))
	if err != nil {
		return fmt.Errorf("tokens file %s: %w", a.cfg.TokensFile, err)
	}
	t, err := ParseTokens(data)
	a.fileStat = fileStamp{mod: st.ModTime(), size: st.Size()}
	if err != nil {
		return fmt.Errorf("%s: %w", a.cfg.TokensFile, err)
	}
	a.tokens.Store(t)
	return nil
}

// Tokens returns the tokens file in force (nil without one).
func (a *Authenticator) Tokens() *Tokens { return a.tokens.Load() }

// Watch reloads the tokens file when its modification time or size changes
// (checked every Config.ReloadInterval) and on SIGHUP, until ctx is done.
// After each reload attempt it calls report with the outcome (nil: the new
// file is in force; an error: the old one still is). Without a tokens file
// it returns at once.
func (a *Authenticator) Watch(ctx context.Context, report func(error)) {
	if a.cfg.TokensFile == "" {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(a.cfg.ReloadInterval)
	defer tick.Stop()
	for {
		force := false
		select {
		case <-ctx.Done():
			return
		case <-hup:
			force = true
		case <-tick.C:
		}
		a.reloadMu.Lock()
		changed := force
		if !changed {
			st, err := os.Stat(a.cfg.TokensFile)
			changed = err != nil || !st.ModTime().Equal(a.fileStat.mod) || st.Size() != a.fileStat.size
			if err != nil && a.fileStat == (fileStamp{}) {
				changed = false // still missing: reported once already
			}
		}
		var err error
		if changed {
			err = a.reloadLocked()
			if err != nil && errors.Is(err, os.ErrNotExist) {
				a.fileStat = fileStamp{}
			}
		}
		a.reloadMu.Unlock()
		if changed && report != nil {
			report(err)
		}
	}
}
