package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a tokens file.
const (
	MaxTokensFileBytes = 4 << 20
	MaxTokenEntries    = 10000
	MinTokenLen        = 16
	MaxTokenLen        = 8192
	maxNameLen         = 512
	maxTenantLen       = 128
	maxListLen         = 256
)

// TokenEntry is one entry of a tokens file.
type TokenEntry struct {
	// Token is the bearer token itself, or SHA256 the hex SHA-256 of it
	// (preferred: the file then holds no secret). An entry with neither
	// describes a certificate principal, matched by Principal.
	Token        string   `json:"token,omitempty"`
	SHA256       string   `json:"sha256,omitempty"`
	Principal    string   `json:"principal"`
	Tenant       string   `json:"tenant,omitempty"`
	Scopes       []Scope  `json:"scopes"`
	Groups       []string `json:"groups,omitempty"`
	HostPatterns []string `json:"host_patterns,omitempty"`
}

// tokensFile is the file's JSON shape.
type tokensFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// Tokens is a parsed tokens file: principals by token hash, and certificate
// principals by name.
type Tokens struct {
	byHash map[[sha256.Size]byte]*Principal
	certs  map[string]*Principal
}

// Len is the number of entries.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byHash) + len(t.certs)
}

// lookup returns the principal of a token hash.
func (t *Tokens) lookup(sum [sha256.Size]byte) (*Principal, bool) {
	if t == nil {
		return nil, false
	}
	p, ok := t.byHash[sum]
	return p, ok
}

// cert returns the certificate principal named name.
func (t *Tokens) cert(name string) (*Principal, bool) {
	if t == nil {
		return nil, false
	}
	p, ok := t.certs[name]
	return p, ok
}

// ParseTokens parses a tokens file strictly:
//
//	{"tokens": [{"sha256": "<hex>", "principal": "alice", "tenant": "team-a",
//	             "scopes": ["search", "execute"], "groups": ["dev"]},
//	            {"token": "<secret>", "principal": "github-host",
//	             "scopes": ["host"], "host_patterns": ["mcp__github__*"]},
//	            {"principal": "spiffe://example.org/host/fs", "scopes": ["host"],
//	             "host_patterns": ["mcp__filesystem__*"]}]}
//
// Unknown fields, unknown scopes, duplicate tokens or certificate
// principals, host_patterns without the host scope, bad patterns and
// oversized values are refused, the entry named in the error.
func ParseTokens(data []byte) (*Tokens, error) {
	if len(data) > MaxTokensFileBytes {
		return nil, fmt.Errorf("tokens file: %d bytes, more than the %d allowed", len(data), MaxTokensFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f tokensFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("tokens file: data after the JSON object")
	}
	if f.Tokens == nil {
		return nil, errors.New(`tokens file: no "tokens" array`)
	}
	if len(f.Tokens) > MaxTokenEntries {
		return nil, fmt.Errorf("tokens file: %d entries, more than the %d allowed", len(f.Tokens), MaxTokenEntries)
	}
	t := &Tokens{byHash: make(map[[sha256.Size]byte]*Principal), certs: make(map[string]*Principal)}
	for i, e := range f.Tokens {
		where := fmt.Sprintf("tokens[%d]", i)
		if e.Principal != "" && validText(e.Principal, maxNameLen) {
			where += fmt.Sprintf(" (principal %q)", e.Principal)
		}
		p, err := e.principal()
		if err != nil {
			return nil, fmt.Errorf("tokens file: %s: %w", where, err)
		}
		switch {
		case e.Token != "" && e.SHA256 != "":
			return nil, fmt.Errorf("tokens file: %s: both token and sha256; give one", where)
		case e.Token != "":
			if len(e.Token) < MinTokenLen || len(e.Token) > MaxTokenLen || !validToken(e.Token) {
				return nil, fmt.Errorf("tokens file: %s: token must be %d to %d printable ASCII characters without spaces", where, MinTokenLen, MaxTokenLen)
			}
			p.Method = MethodToken
			if err := t.addHash(sha256.Sum256([]byte(e.Token)), p); err != nil {
				return nil, fmt.Errorf("tokens file: %s: %w", where, err)
			}
		case e.SHA256 != "":
			b, err := hex.DecodeString(e.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("tokens file: %s: sha256 must be 64 hex digits (the SHA-256 of the token)", where)
			}
			p.Method = MethodToken
			if err := t.addHash([sha256.Size]byte(b), p); err != nil {
				return nil, fmt.Errorf("tokens file: %s: %w", where, err)
			}
		default:
			p.Method = MethodMTLS
			if _, dup := t.certs[p.Name]; dup {
				return nil, fmt.Errorf("tokens file: %s: a second certificate entry for this principal", where)
			}
			t.certs[p.Name] = p
		}
	}
	return t, nil
}

func (t *Tokens) addHash(sum [sha256.Size]byte, p *Principal) error {
	if _, dup := t.byHash[sum]; dup {
		return errors.New("the same token as an earlier entry")
	}
	t.byHash[sum] = p
	return nil
}

// principal checks e's fields other than the token and returns its
// principal.
func (e *TokenEntry) principal() (*Principal, error) {
	if e.Principal == "" {
		return nil, errors.New("principal is required")
	}
	if !validText(e.Principal, maxNameLen) {
		return nil, fmt.Errorf("principal must be at most %d printable characters", maxNameLen)
	}
	tenant := e.Tenant
	if tenant == "" {
		tenant = DefaultTenant
	}
	if err := ValidTenant(tenant); err != nil {
		return nil, err
	}
	if len(e.Scopes) == 0 {
		return nil, fmt.Errorf("scopes: at least one of %s", scopeList())
	}
	if len(e.Scopes) > len(Scopes) {
		return nil, errors.New("scopes: repeated scopes")
	}
	seen := map[Scope]bool{}
	for _, s := range e.Scopes {
		if !validScope(s) {
			return nil, fmt.Errorf("scopes: unknown scope %q (known: %s)", s, scopeList())
		}
		if seen[s] {
			return nil, fmt.Errorf("scopes: %q twice", s)
		}
		seen[s] = true
	}
	if len(e.HostPatterns) > 0 && !seen[ScopeHost] {
		return nil, errors.New("host_patterns given without the host scope")
	}
	if err := checkList("host_patterns", e.HostPatterns); err != nil {
		return nil, err
	}
	for _, pat := range e.HostPatterns {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("host_patterns: %q: %w", pat, err)
		}
	}
	if err := checkList("groups", e.Groups); err != nil {
		return nil, err
	}
	return &Principal{
		Name:         e.Principal,
		Tenant:       tenant,
		Scopes:       e.Scopes,
		Groups:       e.Groups,
		HostPatterns: e.HostPatterns,
	}, nil
}

func checkList(field string, vs []string) error {
	if len(vs) > maxListLen {
		return fmt.Errorf("%s: %d values, more than the %d allowed", field, len(vs), maxListLen)
	}
	for _, v := range vs {
		if v == "" || !validText(v, maxNameLen) {
			return fmt.Errorf("%s: %q: want 1 to %d printable characters", field, v, maxNameLen)
		}
	}
	return nil
}

// ValidTenant checks a tenant name: 1 to 128 characters of letters, digits,
// '.', '_' and '-'.
func ValidTenant(t string) error {
	if t == "" || len(t) > maxTenantLen {
		return fmt.Errorf("tenant %q: want 1 to %d characters", t, maxTenantLen)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("tenant %q: only letters, digits, '.', '_' and '-'", t)
		}
	}
	return nil
}

// validText reports whether s is valid UTF-8 of at most max bytes, without
// control characters.
func validText(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// validToken reports whether tok is made of printable ASCII without spaces
// (what an Authorization header can carry).
func validToken(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] >= 0x7f {
			return false
		}
	}
	return true
}

func scopeList() string {
	s := make([]string, len(Scopes))
	for i, sc := range Scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}
