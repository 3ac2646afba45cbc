package e2e

// Authentication end to end: the real server binary with TLS certificates,
// a tokens file and a local OIDC issuer made in the test; grpcurl, the
// tooldex command, Go clients and tool hosts presenting tokens and client
// certificates.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/auth/authtest"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

const (
	aliceToken    = "alice-e2e-token-0123456789"  // search, execute (stored as sha256)
	searcherToken = "search-e2e-token-0123456789" // search only
	hostToken     = "host-e2e-token-0123456789"   // host, e2e_token_*
	bridgeToken   = "bridge-e2e-token-0123456789" // host, mcp__e2e__*
	adminToken    = "admin-e2e-token-0123456789"  // admin
	mtlsHostName  = "spiffe://e2e.example/host/mtls"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// authServer is a server started with every credential source.
type authServer struct {
	*tserver
	ca         *authtest.CA
	iss        *authtest.Issuer
	dir        string
	caFile     string
	tokensFile string
}

func startAuthServer(t *testing.T, args ...string) *authServer {
	t.Helper()
	ca := authtest.NewCA(t)
	iss := authtest.NewIssuer(t)
	dir := t.TempDir()
	srv := ca.Server(t)
	tokens := `{"tokens": [
	  {"sha256": "` + sha256Hex(aliceToken) + `", "principal": "alice", "scopes": ["search", "execute"]},
	  {"sha256": "` + sha256Hex(searcherToken) + `", "principal": "searcher", "scopes": ["search"]},
	  {"token": "` + hostToken + `", "principal": "token-host", "scopes": ["host"], "host_patterns": ["e2e_token_*"]},
	  {"sha256": "` + sha256Hex(adminToken) + `", "principal": "root", "scopes": ["admin"]},
	  {"sha256": "` + sha256Hex(bridgeToken) + `", "principal": "bridge", "scopes": ["host"], "host_patterns": ["mcp__e2e__*"]},
	  {"principal": "` + mtlsHostName + `", "scopes": ["host"], "host_patterns": ["e2e_mtls_*"]}]}`
	s := &authServer{ca: ca, iss: iss, dir: dir, caFile: authtest.Write(t, dir, "ca.pem", ca.PEM)}
	s.tokensFile = authtest.Write(t, dir, "tokens.json", []byte(tokens))
	s.tserver = launch(t, append([]string{
		"--tls-cert", authtest.Write(t, dir, "server.pem", srv.CertPEM),
		"--tls-key", authtest.Write(t, dir, "server-key.pem", srv.KeyPEM),
		"--client-ca", s.caFile,
		"--auth-tokens", s.tokensFile,
		"--oidc-issuer", iss.URL(), "--oidc-audience", "tooldex",
	}, args...)...)
	return s
}

// dial connects with TLS (the test CA) and creds.
func (s *authServer) dial(t *testing.T, creds auth.ClientConfig) tooldexv1.DiscoveryServiceClient {
	t.Helper()
	return tooldexv1.NewDiscoveryServiceClient(s.conn(t, creds))
}

func (s *authServer) conn(t *testing.T, creds auth.ClientConfig) *grpc.ClientConn {
	t.Helper()
	creds.CAFile = s.caFile
	opts, err := creds.DialOptions()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient(s.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func wantCode(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Errorf("%s: %s %q, want %s containing %q", what, st.Code(), st.Message(), code, msg)
	}
}

func TestAuthCodes(t *testing.T) {
	s := startAuthServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	calc := &tooldexv1.ExecuteRequest{ToolName: "calculate", Params: mustStruct(t, `{"expression": "6*7"}`)}

	_, err := s.dial(t, auth.ClientConfig{}).Search(ctx, &tooldexv1.SearchRequest{Query: "time"})
	wantCode(t, "search without credentials", err, codes.Unauthenticated, "no credentials")
	_, err = s.dial(t, auth.ClientConfig{Token: "wrong-token-0123456789"}).Search(ctx, &tooldexv1.SearchRequest{Query: "time"})
	wantCode(t, "search with an unknown token", err, codes.Unauthenticated, "unknown bearer token")
	_, err = s.dial(t, auth.ClientConfig{Token: searcherToken}).Execute(ctx, calc)
	wantCode(t, "execute with a search-only token", err, codes.PermissionDenied, `"execute"`)
	_, err = s.dial(t, auth.ClientConfig{Token: aliceToken}).RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{mustTool("e2e_x", "x", `{"type":"object"}`)}})
	wantCode(t, "register without the register scope", err, codes.PermissionDenied, `"register"`)

	// Health needs no credentials (probes).
	hc := healthpb.NewHealthClient(s.conn(t, auth.ClientConfig{}))
	if resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without credentials: %v, %v", resp, err)
	}

	// The in-process demo host connected with its internal token over TLS:
	// alice (tokens file, sha256 entry) runs its calculator.
	resp, err := s.dial(t, auth.ClientConfig{Token: aliceToken}).Execute(ctx, calc)
	if err != nil || !strings.Contains(resp.String(), "42") {
		t.Fatalf("alice executes calculate: %v, %v", resp, err)
	}

	// A JWT from the OIDC issuer (discovery, audience checked).
	jwt := s.iss.Mint(t, map[string]any{"sub": "jwt-user", "aud": "tooldex", "scope": "search"})
	if _, err := s.dial(t, auth.ClientConfig{Token: jwt}).Search(ctx, &tooldexv1.SearchRequest{Query: "time"}); err != nil {
		t.Errorf("search with a JWT: %v", err)
	}
	other := s.iss.Mint(t, map[string]any{"sub": "jwt-user", "aud": "someone-else", "scope": "search"})
	_, err = s.dial(t, auth.ClientConfig{Token: other}).Search(ctx, &tooldexv1.SearchRequest{Query: "time"})
	wantCode(t, "JWT for another audience", err, codes.Unauthenticated, "audience")
	expired := s.iss.Mint(t, map[string]any{"sub": "jwt-user", "aud": "tooldex", "scope": "search", "exp": time.Now().Add(-time.Minute).Unix()})
	_, err = s.dial(t, auth.ClientConfig{Token: expired}).Search(ctx, &tooldexv1.SearchRequest{Query: "time"})
	wantCode(t, "expired JWT", err, codes.Unauthenticated, "expired")
	_, err = s.dial(t, auth.ClientConfig{Token: jwt}).Execute(ctx, calc)
	wantCode(t, "execute with a search-only JWT", err, codes.PermissionDenied, `"execute"`)
}

func TestAuthGrpcurlAndClient(t *testing.T) {
	s := startAuthServer(t)
	grpcurl := filepath.Join(binaries(t), "grpcurl")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(grpcurl, append([]string{"-cacert", s.caFile}, args...)...).CombinedOutput()
		return string(out), err
	}
	// Reflection needs a credential.
	if out, err := run(s.addr, "list"); err == nil || !strings.Contains(out, "Unauthenticated") {
		t.Errorf("grpcurl list without a token: %v\n%s\nwant Unauthenticated", err, out)
	}
	hdr := "authorization: Bearer " + searcherToken
	if out, err := run("-H", hdr, s.addr, "list"); err != nil || !strings.Contains(out, "tooldex.v1.DiscoveryService") {
		t.Errorf("grpcurl -H list: %v\n%s", err, out)
	}
	if out, err := run("-H", hdr, "-d", `{"query": "calculator"}`, s.addr, "tooldex.v1.DiscoveryService/Search"); err != nil || !strings.Contains(out, "calculate") {
		t.Errorf("grpcurl -H Search: %v\n%s", err, out)
	}
	if out, err := run("-H", hdr, "-d", `{"tool_name": "calculate", "params": {"expression": "1+1"}}`, s.addr, "tooldex.v1.DiscoveryService/Execute"); err == nil || !strings.Contains(out, "PermissionDenied") || !strings.Contains(out, `"execute"`) {
		t.Errorf("grpcurl Execute with a search-only token: %v\n%s\nwant PermissionDenied naming execute", err, out)
	}

	// The tooldex command: --token and --tls-ca, or the environment.
	out, err := s.client(t, nil, "search", "--tls-ca", s.caFile, "--token", searcherToken, "calculator")
	if err != nil || !strings.Contains(out, "calculate") {
		t.Errorf("tooldex search --token: %v\n%s", err, out)
	}
	tokenFile := authtest.Write(t, s.dir, "alice.token", []byte(aliceToken+"\n"))
	cmd := exec.Command(filepath.Join(binaries(t), "tooldex"), "exec", "calculate", "--params", `{"expression": "2*21"}`)
	cmd.Env = append(os.Environ(), "TOOLDEX_ADDR="+s.addr, "TOOLDEX_CA="+s.caFile, "TOOLDEX_TOKEN_FILE="+tokenFile)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "42") {
		t.Errorf("tooldex exec with TOOLDEX_TOKEN_FILE: %v\n%s", err, out)
	}
	out, err = s.client(t, nil, "search", "--tls-ca", s.caFile, "calculator")
	if err == nil || !strings.Contains(out, "Unauthenticated") {
		t.Errorf("tooldex search without a token: %v\n%s\nwant Unauthenticated", err, out)
	}
}

func TestAuthHosts(t *testing.T) {
	s := startAuthServer(t)
	alice := s.dial(t, auth.ClientConfig{Token: aliceToken})
	echo := func(prefix string) toolhost.Handler {
		return func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
			return toolhost.Text(prefix + " ok"), nil
		}
	}
	// A host with a token (host scope).
	th := toolhost.New(toolhost.Config{Addr: s.addr, HostID: "token-host-1", Auth: auth.ClientConfig{Token: hostToken, CAFile: s.caFile},
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
	mustHandle(t, th, mustTool("e2e_token_echo", "echo for the token host", `{"type":"object"}`), echo("token"))
	runHost(t, th)
	// A host with a client certificate (mTLS, SPIFFE principal from the tokens file).
	cert := s.ca.Client(t, "mtls-host", mtlsHostName)
	mh := toolhost.New(toolhost.Config{Addr: s.addr, HostID: "mtls-host-1", Auth: auth.ClientConfig{
		CAFile: s.caFile, CertFile: authtest.Write(t, s.dir, "host.pem", cert.CertPEM), KeyFile: authtest.Write(t, s.dir, "host-key.pem", cert.KeyPEM),
	}, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
	mustHandle(t, mh, mustTool("e2e_mtls_echo", "echo for the mtls host", `{"type":"object"}`), echo("mtls"))
	runHost(t, mh)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for tool, want := range map[string]string{"e2e_token_echo": "token ok", "e2e_mtls_echo": "mtls ok"} {
		resp, err := alice.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: tool, Params: mustStruct(t, `{}`)})
		if err != nil || textOf(resp) != want {
			t.Errorf("Execute %s: %q, %v; want %q", tool, textOf(resp), err, want)
		}
	}
	// Without credentials a host is refused.
	st, err := tooldexv1.NewHostServiceClient(s.conn(t, auth.ClientConfig{})).Connect(ctx)
	if err == nil {
		_, err = st.Recv()
	}
	wantCode(t, "host without credentials", err, codes.Unauthenticated, "")
	// A search-only principal cannot be a host.
	st, err = tooldexv1.NewHostServiceClient(s.conn(t, auth.ClientConfig{Token: searcherToken})).Connect(ctx)
	if err == nil {
		_, err = st.Recv()
	}
	wantCode(t, "host without the host scope", err, codes.PermissionDenied, `"host"`)
}

func TestAuthMetrics(t *testing.T) {
	s := startAuthServer(t, "--metrics-addr", "127.0.0.1:0")
	entry, ok := s.logEntry("metrics")
	if !ok {
		t.Fatal("no metrics log line")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.ca.PEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(token string) int {
		req, err := http.NewRequest(http.MethodGet, "https://"+entry["addr"].(string)+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {searcherToken, http.StatusForbidden}, {adminToken, http.StatusOK}} {
		if got := get(tt.token); got != tt.want {
			t.Errorf("GET /metrics with token %q: %d, want %d", tt.token, got, tt.want)
		}
	}
}

func TestAuthListenRules(t *testing.T) {
	bin := filepath.Join(binaries(t), "tooldex-server")
	out, err := exec.Command(bin, "--addr", "0.0.0.0:0", "--demo-host=false", "--data-dir", "").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to serve") {
		t.Errorf("server on 0.0.0.0 without credentials: %v\n%s\nwant a refusal to start", err, out)
	}
	s := launch(t, "--addr", "0.0.0.0:0", "--insecure-anonymous", "--demo-host=false")
	if !strings.Contains(s.logText(), "NO AUTHENTICATION") {
		t.Errorf("--insecure-anonymous start logs no loud warning:\n%s", s.logText())
	}
	// Loopback without credentials: today's development mode, with a warning.
	l := launch(t, "--demo-host=false")
	if !strings.Contains(l.logText(), "NO AUTHENTICATION") {
		t.Errorf("loopback start without credentials logs no warning:\n%s", l.logText())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.conn(t).Search(ctx, &tooldexv1.SearchRequest{Query: "x"}); err != nil {
		t.Errorf("anonymous search on loopback: %v", err)
	}
}

func mustStruct(t *testing.T, js string) *structpb.Struct {
	t.Helper()
	s, err := structFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNodeFrontendAuth runs the Node.js example frontend against a server
// with TLS and tokens: TOOLDEX_TOKEN and TOOLDEX_CA (skipped like
// TestNodeFrontend without node or its node_modules).
func TestNodeFrontendAuth(t *testing.T) {
	const dir = "../examples/node-frontend"
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not on PATH: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js")); err != nil {
		skip("%s/node_modules is not installed (run: cd examples/node-frontend && npm ci): %v", dir, err)
	}
	s := startAuthServer(t)
	c := s.dial(t, auth.ClientConfig{Token: aliceToken})
	waitFor(t, 15*time.Second, "the demo host's time_now", func() bool { return searchHas(t, c, "time_now", "") })
	run := func(env ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "examples/node-frontend/frontend.js", s.addr)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("TOOLDEX_TOKEN="+aliceToken, "TOOLDEX_CA="+s.caFile)
	if err != nil || !strings.Contains(out, "execute: time_now") {
		t.Errorf("node frontend with a token: %v\n%s", err, out)
	}
	out, err = run("TOOLDEX_TOKEN=", "TOOLDEX_CA="+s.caFile)
	if err == nil || !strings.Contains(out, "UNAUTHENTICATED") {
		t.Errorf("node frontend without a token: %v\n%s\nwant an UNAUTHENTICATED error", err, out)
	}
}

var (
	mcpBinOnce sync.Once
	mcpBinErr  error
)

// mcpBinaries builds cmd/mcpserver and cmd/mcpbridge into binaries(t)'s
// directory once.
func mcpBinaries(t *testing.T) string {
	t.Helper()
	dir := binaries(t)
	mcpBinOnce.Do(func() {
		for name, pkg := range map[string]string{"mcpserver": "./cmd/mcpserver", "mcpbridge": "./cmd/mcpbridge"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				mcpBinErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if mcpBinErr != nil {
		t.Fatal(mcpBinErr)
	}
	return dir
}

// startProc runs a command until the test ends and returns the first
// submatch of re in its stderr.
func startProc(t *testing.T, re *regexp.Regexp, name string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs strings.Builder
	found := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[len(m)-1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("%s logs:\n%s", filepath.Base(name), logs.String())
			mu.Unlock()
		}
	})
	select {
	case v := <-found:
		return v
	case <-done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%s exited:\n%s", filepath.Base(name), logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no %q in 30s", filepath.Base(name), re)
	}
	return ""
}

// TestAuthMCPFacade runs cmd/mcpserver --http against an authenticated
// server: MCP clients need a bearer token, which reaches tooldex as the
// user's own credential.
func TestAuthMCPFacade(t *testing.T) {
	s := startAuthServer(t)
	bin := mcpBinaries(t)
	url := startProc(t, regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(\S+)`), filepath.Join(bin, "mcpserver"), nil,
		"--addr", s.addr, "--tls-ca", s.caFile, "--http", "127.0.0.1:0", "--auth-tokens", s.tokensFile)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()

	connect := func(token string) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	}
	if sess, err := connect(""); err == nil {
		sess.Close()
		t.Error("MCP connect without a token succeeded, want 401")
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/.well-known/oauth-protected-resource")
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("protected-resource metadata: %v, %v", resp, err)
	}
	tool := func(sess *mcp.ClientSession, name string, args map[string]any) string {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	alice, err := connect(aliceToken)
	if err != nil {
		t.Fatalf("MCP connect with alice's token: %v", err)
	}
	defer alice.Close()
	if out := tool(alice, "ToolSearch", map[string]any{"query": "calculator"}); !strings.Contains(out, "calculate") {
		t.Errorf("ToolSearch as alice: %s", out)
	}
	if out := tool(alice, "ExecuteTool", map[string]any{"tool_name": "calculate", "params": map[string]any{"expression": "6*7"}}); !strings.Contains(out, "42") {
		t.Errorf("ExecuteTool as alice: %s", out)
	}
	// The searcher's own rights apply: no execute scope.
	searcher, err := connect(searcherToken)
	if err != nil {
		t.Fatal(err)
	}
	defer searcher.Close()
	if out := tool(searcher, "ExecuteTool", map[string]any{"tool_name": "calculate", "params": map[string]any{"expression": "1"}}); !strings.Contains(out, "execute") {
		t.Errorf("ExecuteTool as searcher: %s, want a refusal naming the execute scope", out)
	}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestAuthBridge runs cmd/mcpbridge with a host token (TOOLDEX_TOKEN_FILE,
// TOOLDEX_CA) against an authenticated server, bridging an MCP server
// served over streamable HTTP by the test.
func TestAuthBridge(t *testing.T) {
	s := startAuthServer(t)
	bin := mcpBinaries(t)
	ms := mcp.NewServer(&mcp.Implementation{Name: "e2e-mcp"}, nil)
	mcp.AddTool(ms, &mcp.Tool{Name: "echo", Description: "Echo a text."}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil))
	t.Cleanup(hs.Close) // after the bridge stops (cleanups run last first)
	config := authtest.Write(t, s.dir, "mcp.json", []byte(`{"mcpServers": {"e2e": {"type": "http", "url": "`+hs.URL+`"}}}`))
	tokenFile := authtest.Write(t, s.dir, "bridge.token", []byte(bridgeToken))
	startProc(t, regexp.MustCompile(`"msg":"MCP tools synced"`+"()"), filepath.Join(bin, "mcpbridge"),
		[]string{"TOOLDEX_ADDR=" + s.addr, "TOOLDEX_CA=" + s.caFile, "TOOLDEX_TOKEN_FILE=" + tokenFile}, "--config", config)
	alice := s.dial(t, auth.ClientConfig{Token: aliceToken})
	waitFor(t, 15*time.Second, "mcp__e2e__echo", func() bool { return searchHas(t, alice, "mcp__e2e__echo", "") })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := alice.Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "mcp__e2e__echo", Params: mustStruct(t, `{"text": "hi"}`)})
	if err != nil || !strings.Contains(resp.String(), "echo: hi") {
		t.Errorf("Execute through the bridge: %v, %v", resp, err)
	}
}
