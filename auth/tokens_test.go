package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	aliceToken = "alice-token-0123456789"
	hostToken  = "github-host-token-0123456789"
)

func hashOf(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func goodTokensFile() string {
	return `{"tokens": [
  {"sha256": "` + hashOf(aliceToken) + `", "principal": "alice", "tenant": "team-a", "scopes": ["search", "execute"], "groups": ["dev"]},
  {"token": "` + hostToken + `", "principal": "github-host", "scopes": ["host"], "host_patterns": ["mcp__github__*"]},
  {"principal": "spiffe://example.org/host/fs", "tenant": "team-a", "scopes": ["host"], "host_patterns": ["mcp__filesystem__*"]}
]}`
}

func TestParseTokens(t *testing.T) {
	long := strings.Repeat("x", MaxTokenLen+1)
	tests := []struct {
		name    string
		file    string
		wantErr string // "" means the file parses
		wantLen int
	}{
		{name: "good", file: goodTokensFile(), wantLen: 3},
		{name: "empty list", file: `{"tokens": []}`, wantLen: 0},
		{name: "no tokens key", file: `{}`, wantErr: `no "tokens" array`},
		{name: "unknown field", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "scopes": ["search"], "admin": true}]}`, wantErr: `unknown field "admin"`},
		{name: "unknown top field", file: `{"tokens": [], "version": 2}`, wantErr: `unknown field "version"`},
		{name: "trailing data", file: `{"tokens": []} {}`, wantErr: "data after"},
		{name: "unknown scope", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "scopes": ["root"]}]}`, wantErr: `unknown scope "root"`},
		{name: "no scopes", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "scopes": []}]}`, wantErr: "at least one"},
		{name: "repeated scope", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "scopes": ["search", "search"]}]}`, wantErr: `"search" twice`},
		{name: "host patterns without host scope", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "bob", "scopes": ["search"], "host_patterns": ["*"]}]}`, wantErr: `tokens[0] (principal "bob"): host_patterns given without the host scope`},
		{name: "bad pattern", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "h", "scopes": ["host"], "host_patterns": ["mcp__[x"]}]}`, wantErr: "syntax error in pattern"},
		{name: "token and sha256", file: `{"tokens": [{"token": "0123456789abcdefg", "sha256": "` + hashOf("x") + `", "principal": "a", "scopes": ["search"]}]}`, wantErr: "both token and sha256"},
		{name: "short token", file: `{"tokens": [{"token": "short", "principal": "a", "scopes": ["search"]}]}`, wantErr: "token must be"},
		{name: "long token", file: `{"tokens": [{"token": "` + long + `", "principal": "a", "scopes": ["search"]}]}`, wantErr: "token must be"},
		{name: "token with space", file: `{"tokens": [{"token": "0123456789 abcdefg", "principal": "a", "scopes": ["search"]}]}`, wantErr: "token must be"},
		{name: "bad sha256", file: `{"tokens": [{"sha256": "abc", "principal": "a", "scopes": ["search"]}]}`, wantErr: "64 hex digits"},
		{name: "duplicate token", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "scopes": ["search"]}, {"sha256": "` + hashOf("0123456789abcdefg") + `", "principal": "b", "scopes": ["search"]}]}`, wantErr: `tokens[1] (principal "b"): the same token`},
		{name: "duplicate certificate principal", file: `{"tokens": [{"principal": "c", "scopes": ["host"]}, {"principal": "c", "scopes": ["search"]}]}`, wantErr: "second certificate entry"},
		{name: "no principal", file: `{"tokens": [{"token": "0123456789abcdefg", "scopes": ["search"]}]}`, wantErr: "principal is required"},
		{name: "control character in principal", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a\u0007", "scopes": ["search"]}]}`, wantErr: "printable"},
		{name: "bad tenant", file: `{"tokens": [{"token": "0123456789abcdefg", "principal": "a", "tenant": "a b", "scopes": ["search"]}]}`, wantErr: "tenant"},
		{name: "not JSON", file: `tokens: []`, wantErr: "invalid character"},
		{name: "wrong type", file: `{"tokens": [{"principal": 3, "scopes": ["search"]}]}`, wantErr: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTokens([]byte(tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTokens error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTokens: %v", err)
			}
			if got.Len() != tt.wantLen {
				t.Errorf("Len() = %d, want %d", got.Len(), tt.wantLen)
			}
		})
	}
}

func TestParseTokensTooLarge(t *testing.T) {
	_, err := ParseTokens(make([]byte, MaxTokensFileBytes+1))
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("ParseTokens(oversized) error = %v, want a size error", err)
	}
}

// newTokensAuth writes file and returns an Authenticator reading it.
func newTokensAuth(t *testing.T, file string, cfg Config) (*Authenticator, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.TokensFile = path
	a, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, path
}

func TestAuthenticateTokens(t *testing.T) {
	a, _ := newTokensAuth(t, goodTokensFile(), Config{})
	tests := []struct {
		name       string
		bearer     string
		wantName   string
		wantTenant string
		wantErr    string
	}{
		{name: "sha256 entry", bearer: aliceToken, wantName: "alice", wantTenant: "team-a"},
		{name: "token entry", bearer: hostToken, wantName: "github-host", wantTenant: DefaultTenant},
		{name: "unknown token", bearer: "not-a-known-token-at-all", wantErr: "unknown bearer token"},
		{name: "hash given as token", bearer: hashOf(aliceToken), wantErr: "unknown bearer token"},
		{name: "no credentials", wantErr: "no credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), tt.bearer, nil)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Authenticate error = %v, want ErrUnauthenticated containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != tt.wantName || p.Tenant != tt.wantTenant || p.Method != MethodToken {
				t.Errorf("principal = %+v, want %s@%s by token", p, tt.wantName, tt.wantTenant)
			}
		})
	}
	p, _ := a.Authenticate(context.Background(), hostToken, nil)
	if !p.MayServe("mcp__github__create_issue") || p.MayServe("mcp__slack__send") || p.Has(ScopeSearch) {
		t.Errorf("host principal %+v: want it to serve mcp__github__* only, without search", p)
	}
	alice, _ := a.Authenticate(context.Background(), aliceToken, nil)
	if alice.MayServe("mcp__github__x") || !alice.Has(ScopeExecute) || alice.Has(ScopeAdmin) || len(alice.Groups) != 1 {
		t.Errorf("alice = %+v, want search and execute, group dev, no hosting", alice)
	}
}

func TestAnonymous(t *testing.T) {
	a, err := New(context.Background(), Config{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Authenticate(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Scopes {
		if !p.Has(s) {
			t.Errorf("anonymous lacks %q", s)
		}
	}
	if p.Tenant != DefaultTenant || p.Method != MethodAnonymous || !p.MayServe("anything") {
		t.Errorf("anonymous = %+v", p)
	}
	// A bad token is never downgraded to anonymous.
	if _, err := a.Authenticate(context.Background(), "some-unknown-token-123", nil); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("unknown token on an anonymous server: error = %v, want ErrUnauthenticated", err)
	}
	if err := a.AddInternal("internal-token-0123456789", Principal{Name: "demo-host", Tenant: SharedTenant, Scopes: []Scope{ScopeHost}, HostPatterns: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	p, err = a.Authenticate(context.Background(), "internal-token-0123456789", nil)
	if err != nil || p.Name != "demo-host" || p.Method != MethodInternal || p.Tenant != SharedTenant {
		t.Errorf("internal token: %+v, %v", p, err)
	}
	if _, err := New(context.Background(), Config{Anonymous: true, TokensFile: "x"}); err == nil {
		t.Error("New(Anonymous with a tokens file) succeeded, want an error")
	}
}

// waitReport waits for the next reload report.
func waitReport(t *testing.T, reports <-chan error) error {
	t.Helper()
	select {
	case err := <-reports:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no reload within 10s")
		return nil
	}
}

func TestReloadOnChange(t *testing.T) {
	a, path := newTokensAuth(t, goodTokensFile(), Config{ReloadInterval: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan error, 16)
	done := make(chan struct{})
	go func() { defer close(done); a.Watch(ctx, func(err error) { reports <- err }) }()
	defer func() { cancel(); <-done }()

	const bobToken = "bob-token-0123456789abcdef"
	next := `{"tokens": [{"sha256": "` + hashOf(bobToken) + `", "principal": "bob", "scopes": ["search"]}]}`
	if err := os.WriteFile(path, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := waitReport(t, reports); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if p, err := a.Authenticate(ctx, bobToken, nil); err != nil || p.Name != "bob" {
		t.Errorf("after reload, bob's token: %v, %v", p, err)
	}
	if _, err := a.Authenticate(ctx, aliceToken, nil); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("after reload, alice's removed token: error = %v, want ErrUnauthenticated", err)
	}

	// A bad file is reported and the previous one stays in force.
	if err := os.WriteFile(path, []byte(`{"tokens": [{"token": "x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := waitReport(t, reports); err == nil || !strings.Contains(err.Error(), "tokens file") {
		t.Fatalf("bad reload reported %v, want a tokens file error", err)
	}
	if p, err := a.Authenticate(ctx, bobToken, nil); err != nil || p.Name != "bob" {
		t.Errorf("after a bad reload, bob's token: %v, %v; want the old file in force", p, err)
	}
}

func TestReloadOnSIGHUP(t *testing.T) {
	// Keep SIGHUP from killing the test process before Watch listens.
	guard := make(chan os.Signal, 16)
	signal.Notify(guard, syscall.SIGHUP)
	defer signal.Stop(guard)

	a, path := newTokensAuth(t, goodTokensFile(), Config{ReloadInterval: time.Hour})
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Same size and modification time: only SIGHUP can reveal the change.
	next := strings.Replace(goodTokensFile(), `"alice"`, `"carol"`, 1)
	if err := os.WriteFile(path, []byte(next), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan error, 16)
	done := make(chan struct{})
	go func() { defer close(done); a.Watch(ctx, func(err error) { reports <- err }) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-reports:
			if err != nil {
				t.Fatalf("reload on SIGHUP: %v", err)
			}
			if p, err := a.Authenticate(ctx, aliceToken, nil); err != nil || p.Name != "carol" {
				t.Errorf("after SIGHUP the token's principal = %v (%v), want carol", p, err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no reload on SIGHUP within 10s")
		}
	}
}

func TestRequire(t *testing.T) {
	p := &Principal{Name: "alice", Scopes: []Scope{ScopeSearch}}
	if err := Require(p, ScopeSearch); err != nil {
		t.Errorf("Require(search) = %v", err)
	}
	err := Require(p, ScopeRegister)
	var mse *MissingScopeError
	if !errors.As(err, &mse) || mse.Scope != ScopeRegister || !strings.Contains(err.Error(), `"register"`) {
		t.Errorf("Require(register) = %v, want a MissingScopeError naming register", err)
	}
	if err := Require(nil, ScopeSearch); err == nil {
		t.Error("Require(nil) = nil")
	}
	admin := &Principal{Name: "root", Scopes: []Scope{ScopeAdmin}}
	if admin.Has(ScopeExecute) {
		t.Error("admin implies execute; want scopes held only as listed")
	}
}

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext(empty) ok")
	}
	p := &Principal{Name: "x", Tenant: "t"}
	got, ok := FromContext(NewContext(context.Background(), p))
	if !ok || got != p {
		t.Errorf("FromContext = %v, %v", got, ok)
	}
}

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "Bearer abc.def-ghi", want: "abc.def-ghi"},
		{in: "bearer  tok ", want: "tok"},
		{in: "BEARER tok", want: "tok"},
		{in: "Basic dXNlcjpwYXNz", wantErr: "Bearer"},
		{in: "Bearer", wantErr: "Bearer"},
		{in: "Bearer ", wantErr: "empty"},
		{in: "Bearer a b", wantErr: "printable"},
		{in: "Bearer tök", wantErr: "printable"},
		{in: "Bearer " + strings.Repeat("a", MaxTokenLen+1), wantErr: "longer"},
	}
	for _, tt := range tests {
		got, err := ParseAuthorization(tt.in)
		if tt.wantErr != "" {
			if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseAuthorization(%.40q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseAuthorization(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(goodTokensFile()))
	f.Add([]byte(`{"tokens": []}`))
	f.Add([]byte(`{"tokens": [{"principal": "c", "scopes": ["host"], "host_patterns": ["[]"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := ParseTokens(data)
		if err != nil {
			return
		}
		for _, p := range toks.byHash {
			checkParsed(t, p)
		}
		for _, p := range toks.certs {
			checkParsed(t, p)
		}
	})
}

// checkParsed asserts what ParseTokens guarantees of every principal.
func checkParsed(t *testing.T, p *Principal) {
	t.Helper()
	if p.Name == "" || ValidTenant(p.Tenant) != nil || len(p.Scopes) == 0 {
		t.Fatalf("accepted principal %+v: want a name, a valid tenant and scopes", p)
	}
	for _, s := range p.Scopes {
		if !validScope(s) {
			t.Fatalf("accepted unknown scope %q", s)
		}
	}
	if len(p.HostPatterns) > 0 && !p.Has(ScopeHost) {
		t.Fatalf("accepted host_patterns without the host scope: %+v", p)
	}
}

func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x ", "Basic x", "", "Bearer \x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tok, err := ParseAuthorization(v)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("error %v does not wrap ErrUnauthenticated", err)
			}
			return
		}
		if tok == "" || len(tok) > MaxTokenLen || !validToken(tok) || !strings.Contains(v, tok) {
			t.Fatalf("ParseAuthorization(%q) = %q: not a valid token of the value", v, tok)
		}
	})
}
