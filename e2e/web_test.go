package e2e

// The --web-addr listener end to end: buf curl with its default protocol
// (Connect), gRPC-Web and Connect JSON from plain net/http, authentication
// (tokens and client certificates), bounds and CORS.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolhost"
)

// webAddr returns the address of s's --web-addr listener, from its log.
func webAddr(t *testing.T, s *tserver) string {
	t.Helper()
	entry, ok := s.logEntry("web")
	if !ok {
		t.Fatalf("no web log line:\n%s", s.logText())
	}
	return entry["addr"].(string)
}

// webClient is an HTTP client for the web listener: HTTP/1.1 over
// plaintext, HTTP/2 (ALPN) over TLS with pool's CAs.
func webClient(t *testing.T, pool *x509.CertPool, certs ...tls.Certificate) *http.Client {
	t.Helper()
	tr := &http.Transport{ForceAttemptHTTP2: true}
	if pool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: certs}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// connectError is a Connect unary error body.
type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// connectJSON posts a Connect unary JSON request (what connect-web and
// curl send) and returns the status and body.
func connectJSON(t *testing.T, c *http.Client, base, method, body string, hdr ...string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/tooldex.v1.DiscoveryService/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

func wantConnectError(t *testing.T, what string, status int, body []byte, wantStatus int, wantCode, wantMsg string) {
	t.Helper()
	var e connectError
	if err := json.Unmarshal(body, &e); err != nil || status != wantStatus || e.Code != wantCode || !strings.Contains(e.Message, wantMsg) {
		t.Errorf("%s: HTTP %d %s, want %d with code %q and a message containing %q", what, status, body, wantStatus, wantCode, wantMsg)
	}
}

// grpcWebResult is a gRPC-Web response: its messages and its status.
type grpcWebResult struct {
	messages [][]byte
	status   string // grpc-status
	message  string // grpc-message
}

// grpcWeb posts one framed proto message as gRPC-Web (what grpc-web and
// connect-web send) and decodes the framed response: data frames, then the
// trailer frame (or a trailers-only answer in the headers).
func grpcWeb(t *testing.T, c *http.Client, base, path string, msg proto.Message, hdr ...string) grpcWebResult {
	t.Helper()
	data, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5, 5+len(data))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(data)))
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(append(frame, data...)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	req.Header.Set("X-Grpc-Web", "1")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("gRPC-Web %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("gRPC-Web %s: HTTP %d %s", path, resp.StatusCode, body)
	}
	res := grpcWebResult{status: resp.Header.Get("Grpc-Status"), message: resp.Header.Get("Grpc-Message")}
	for len(body) >= 5 {
		flag, n := body[0], binary.BigEndian.Uint32(body[1:5])
		if uint32(len(body)-5) < n {
			t.Fatalf("gRPC-Web %s: truncated frame", path)
		}
		payload := body[5 : 5+n]
		body = body[5+n:]
		if flag&0x80 == 0 {
			res.messages = append(res.messages, payload)
			continue
		}
		tp := textproto.NewReader(bufioReader(append(payload, "\r\n"...)))
		mh, err := tp.ReadMIMEHeader()
		if err != nil && err != io.EOF {
			t.Fatalf("gRPC-Web %s: trailers %q: %v", path, payload, err)
		}
		res.status, res.message = mh.Get("Grpc-Status"), mh.Get("Grpc-Message")
	}
	if len(body) != 0 {
		t.Fatalf("gRPC-Web %s: %d bytes left after the frames", path, len(body))
	}
	return res
}

// calcValue is the number a calculate call returned.
func calcValue(resp *tooldexv1.ExecuteResponse) float64 {
	return resp.GetStructuredContent().GetFields()["value"].GetNumberValue()
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func TestWebBufCurlConnect(t *testing.T) {
	s := launch(t, "--demo-catalog", "--web-addr", "127.0.0.1:0")
	base := "http://" + webAddr(t, s)
	tools, err := filepath.Abs(filepath.Join("..", "tools", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bufCurl := func(args ...string) string {
		t.Helper()
		// Stdout only: on a fresh machine the go command reports the
		// modules it downloads on stderr.
		var stderr bytes.Buffer
		cmd := exec.Command("go", append([]string{"tool", "-modfile=" + tools, "buf", "curl"}, args...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("buf curl %v: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		return string(out)
	}
	// Its default protocol, Connect, over HTTP/1.1, with the schema from
	// the repository's buf workspace.
	out := bufCurl("--schema", root, "-d", `{"query": "slack send"}`, base+"/tooldex.v1.DiscoveryService/Search")
	var resp tooldexv1.SearchResponse
	if err := protojson.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("buf curl Search output: %v\n%s", err, out)
	}
	if len(resp.GetResults()) == 0 || resp.GetResults()[0].GetTool().GetName() != "mcp__slack__send_message" {
		t.Errorf("buf curl Search first result = %v, want mcp__slack__send_message", resp.GetResults())
	}
	// The schema from server reflection instead, over HTTP/1.1 and over
	// HTTP/2 (h2c).
	for _, args := range [][]string{nil, {"--http2-prior-knowledge"}} {
		out = bufCurl(append(args, "-d", `{"tool_name": "calculate", "params": {"expression": "6*7"}}`, base+"/tooldex.v1.DiscoveryService/Execute")...)
		if !strings.Contains(out, `"value": 42`) {
			t.Errorf("buf curl %v (reflection) Execute calculate = %s, want 42", args, out)
		}
	}
	// A host stream is refused, saying where it belongs.
	cmd := exec.Command("go", "tool", "-modfile="+tools, "buf", "curl", "--schema", root, "-d", `{}`, base+"/tooldex.v1.HostService/Connect")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unimplemented") || !strings.Contains(string(out), "gRPC port") {
		t.Errorf("buf curl HostService/Connect: %v\n%s\nwant unimplemented naming the gRPC port", err, out)
	}
}

func TestWebGRPCWeb(t *testing.T) {
	s := launch(t, "--demo-catalog", "--web-addr", "127.0.0.1:0")
	base := "http://" + webAddr(t, s)
	c := webClient(t, nil)

	res := grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/Search", &tooldexv1.SearchRequest{Query: "slack send", MaxResults: 3})
	if res.status != "0" || len(res.messages) != 1 {
		t.Fatalf("gRPC-Web Search: status %q %q, %d messages", res.status, res.message, len(res.messages))
	}
	var sr tooldexv1.SearchResponse
	if err := proto.Unmarshal(res.messages[0], &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.GetResults()) == 0 || sr.GetResults()[0].GetTool().GetName() != "mcp__slack__send_message" {
		t.Errorf("gRPC-Web Search first result = %v, want mcp__slack__send_message", sr.GetResults())
	}

	calc := &tooldexv1.ExecuteRequest{ToolName: "calculate", Params: mustStruct(t, `{"expression": "6*7"}`)}
	res = grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/Execute", calc)
	var er tooldexv1.ExecuteResponse
	if res.status != "0" || len(res.messages) != 1 || proto.Unmarshal(res.messages[0], &er) != nil || calcValue(&er) != 42 {
		t.Errorf("gRPC-Web Execute calculate: status %q %q, response %v; want 42", res.status, res.message, &er)
	}

	// A server stream (ExecuteStream) works over gRPC-Web: its last event
	// is the result.
	res = grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/ExecuteStream", &tooldexv1.ExecuteStreamRequest{Request: calc})
	var last tooldexv1.ExecuteStreamResponse
	if res.status != "0" || len(res.messages) == 0 || proto.Unmarshal(res.messages[len(res.messages)-1], &last) != nil || calcValue(last.GetResult()) != 42 {
		t.Errorf("gRPC-Web ExecuteStream calculate: status %q %q, %d events, last %v; want the result 42", res.status, res.message, len(res.messages), &last)
	}

	// A bad request gets its gRPC status, field named, as on the gRPC port.
	res = grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/Search", &tooldexv1.SearchRequest{Query: "x", MaxResults: -1})
	if res.status != "3" || !strings.Contains(res.message, "max_results") {
		t.Errorf("gRPC-Web Search max_results -1: status %q %q, want 3 (INVALID_ARGUMENT) naming max_results", res.status, res.message)
	}

	// Host streams stay on the gRPC port: HostService fails clearly.
	res = grpcWeb(t, c, base, "/tooldex.v1.HostService/Connect", &tooldexv1.ConnectRequest{})
	if res.status != "12" || !strings.Contains(res.message, "gRPC port") {
		t.Errorf("gRPC-Web HostService/Connect: status %q %q, want 12 (UNIMPLEMENTED) pointing to the gRPC port", res.status, res.message)
	}
}

func TestWebConnectJSON(t *testing.T) {
	s := launch(t, "--demo-catalog", "--web-addr", "127.0.0.1:0")
	base := "http://" + webAddr(t, s)
	c := webClient(t, nil)

	status, body, _ := connectJSON(t, c, base, "Search", `{"query": "slack send", "max_results": 3}`)
	var sr tooldexv1.SearchResponse
	if status != http.StatusOK || protojson.Unmarshal(body, &sr) != nil || len(sr.GetResults()) == 0 || sr.GetResults()[0].GetTool().GetName() != "mcp__slack__send_message" {
		t.Errorf("Connect JSON Search: HTTP %d %s, want mcp__slack__send_message first", status, body)
	}
	status, body, _ = connectJSON(t, c, base, "Execute", `{"tool_name": "calculate", "params": {"expression": "2*512"}}`)
	var er tooldexv1.ExecuteResponse
	if status != http.StatusOK || protojson.Unmarshal(body, &er) != nil || calcValue(&er) != 1024 {
		t.Errorf("Connect JSON Execute calculate 2*512: HTTP %d %s, want 1024", status, body)
	}
	status, body, _ = connectJSON(t, c, base, "Search", `{"query": "x", "max_results": -1}`)
	wantConnectError(t, "Search max_results -1", status, body, http.StatusBadRequest, "invalid_argument", "max_results")
	status, body, _ = connectJSON(t, c, base, "Search", `{"query": `)
	wantConnectError(t, "truncated JSON", status, body, http.StatusBadRequest, "invalid_argument", "")
	status, body, _ = connectJSON(t, c, base, "NoSuchMethod", `{}`)
	wantConnectError(t, "unknown method", status, body, http.StatusNotImplemented, "unimplemented", "NoSuchMethod")

	// Without Connect-Protocol-Version the request is not Connect: the
	// answer says what is missing.
	req, _ := http.NewRequest(http.MethodPost, base+"/tooldex.v1.DiscoveryService/Search", strings.NewReader(`{"query": "x"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	wantConnectError(t, "no Connect-Protocol-Version", resp.StatusCode, body, http.StatusBadRequest, "invalid_argument", "Connect-Protocol-Version")
}

func TestWebAuth(t *testing.T) {
	s := startAuthServer(t, "--web-addr", "127.0.0.1:0")
	base := "https://" + webAddr(t, s.tserver)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.ca.PEM)
	c := webClient(t, pool)
	calc := `{"tool_name": "calculate", "params": {"expression": "6*7"}}`
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	status, body, _ := connectJSON(t, c, base, "Search", `{"query": "calculator"}`)
	wantConnectError(t, "Search without a token", status, body, http.StatusUnauthorized, "unauthenticated", "")
	status, body, _ = connectJSON(t, c, base, "Search", `{"query": "calculator"}`, bearer("wrong-token-0123456789")...)
	wantConnectError(t, "Search with an unknown token", status, body, http.StatusUnauthorized, "unauthenticated", "")
	status, body, _ = connectJSON(t, c, base, "Execute", calc, bearer(searcherToken)...)
	wantConnectError(t, "Execute with a search-only token", status, body, http.StatusForbidden, "permission_denied", `"execute"`)
	status, body, _ = connectJSON(t, c, base, "Execute", calc, bearer(aliceToken)...)
	var er tooldexv1.ExecuteResponse
	if status != http.StatusOK || protojson.Unmarshal(body, &er) != nil || calcValue(&er) != 42 {
		t.Errorf("alice's Execute calculate over TLS: HTTP %d %s, want 42", status, body)
	}
	// A JWT from the OIDC issuer, as a browser frontend would send.
	jwt := s.iss.Mint(t, map[string]any{"sub": "web-user", "aud": "tooldex", "scope": "search"})
	status, body, _ = connectJSON(t, c, base, "Search", `{"query": "calculator"}`, bearer(jwt)...)
	if status != http.StatusOK || !strings.Contains(string(body), "calculate") {
		t.Errorf("Search with a JWT: HTTP %d %s, want calculate", status, body)
	}
	// gRPC-Web carries the same codes.
	res := grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/Search", &tooldexv1.SearchRequest{Query: "calculator"})
	if res.status != "16" {
		t.Errorf("gRPC-Web Search without a token: status %q %q, want 16 (UNAUTHENTICATED)", res.status, res.message)
	}
	// A client certificate (mutual TLS) names its principal: the host
	// principal is known, and lacks the search scope.
	cert := s.ca.Client(t, "mtls-host", mtlsHostName)
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	mc := webClient(t, pool, pair)
	status, body, _ = connectJSON(t, mc, base, "Search", `{"query": "calculator"}`)
	wantConnectError(t, "Search with the mTLS host's certificate", status, body, http.StatusForbidden, "permission_denied", `"search"`)
	status, body, _ = connectJSON(t, mc, base, "Search", `{"query": "calculator"}`, bearer(aliceToken)...)
	if status != http.StatusOK {
		t.Errorf("Search with a certificate and alice's token: HTTP %d %s, want 200", status, body)
	}
}

func TestWebBounds(t *testing.T) {
	const max = 64 << 10
	s := launch(t, "--demo-catalog", "--web-addr", "127.0.0.1:0", "--max-message-bytes", "65536")
	base := "http://" + webAddr(t, s)
	c := webClient(t, nil)
	big := `{"query": "` + strings.Repeat("a", 2*max) + `"}`

	// Refused from its Content-Length, before it is read.
	status, body, _ := connectJSON(t, c, base, "Search", big)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("Connect Search of %d bytes: HTTP %d %s, want 413", len(big), status, body)
	}
	// Chunked, with no length: refused while it is read.
	req, _ := http.NewRequest(http.MethodPost, base+"/tooldex.v1.DiscoveryService/Search", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	wantConnectError(t, "chunked Connect Search past the bound", resp.StatusCode, body, http.StatusTooManyRequests, "resource_exhausted", "65536")
	// gRPC-Web, one framed message past the bound.
	res := grpcWeb(t, c, base, "/tooldex.v1.DiscoveryService/Search", &tooldexv1.SearchRequest{Query: strings.Repeat("a", max)})
	if res.status != "8" {
		t.Errorf("gRPC-Web Search past the bound: status %q %q, want 8 (RESOURCE_EXHAUSTED)", res.status, res.message)
	}
	// A small gzip body that inflates past the bound.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"query": "`))
	zw.Write(bytes.Repeat([]byte("a"), 64*max))
	zw.Write([]byte(`"}`))
	zw.Close()
	if zb.Len() > max {
		t.Fatalf("the gzip body is %d bytes, not under the bound", zb.Len())
	}
	status, body, _ = connectJSON(t, c, base, "Search", zb.String(), "Content-Encoding", "gzip")
	wantConnectError(t, "gzip Connect Search inflating past the bound", status, body, http.StatusTooManyRequests, "resource_exhausted", "decompressed")
	// The server keeps serving, on both ports.
	status, body, _ = connectJSON(t, c, base, "Search", `{"query": "slack send"}`)
	if status != http.StatusOK || !strings.Contains(string(body), "mcp__slack__send_message") {
		t.Errorf("Search after the refusals: HTTP %d %s", status, body)
	}
	if _, err := s.conn(t).Search(t.Context(), &tooldexv1.SearchRequest{Query: "slack send"}); err != nil {
		t.Errorf("gRPC Search after the refusals: %v", err)
	}
}

func TestWebCORS(t *testing.T) {
	const app = "https://app.example"
	s := launch(t, "--demo-catalog", "--web-addr", "127.0.0.1:0", "--web-allowed-origins", app+",http://localhost:5173")
	base := "http://" + webAddr(t, s)
	c := webClient(t, nil)
	preflight := func(origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, base+"/tooldex.v1.DiscoveryService/Search", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,connect-protocol-version")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight(app)
	allowHeaders := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(allowHeaders, "connect-protocol-version") || !strings.Contains(allowHeaders, "authorization") {
		t.Errorf("preflight from %s: %d %v, want 204 allowing it", app, resp.StatusCode, resp.Header)
	}
	status, body, hdr := connectJSON(t, c, base, "Search", `{"query": "slack send"}`, "Origin", app)
	if status != http.StatusOK || hdr.Get("Access-Control-Allow-Origin") != app || !strings.Contains(hdr.Get("Vary"), "Origin") {
		t.Errorf("Search from %s: HTTP %d %v, want 200 with its Access-Control-Allow-Origin", app, status, hdr)
	}
	if !strings.Contains(string(body), "mcp__slack__send_message") {
		t.Errorf("Search from %s: %s", app, body)
	}
	for _, h := range []http.Header{resp.Header, hdr} {
		if v := h.Get("Access-Control-Allow-Credentials"); v != "" {
			t.Errorf("Access-Control-Allow-Credentials: %q, want none (bearer tokens need no credentials mode)", v)
		}
	}
	// Another origin gets no CORS header, and its calls are refused.
	for _, origin := range []string{"https://evil.example", "https://app.example.evil", "null"} {
		resp := preflight(origin)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d %v, want 403 with no CORS header", origin, resp.StatusCode, resp.Header)
		}
		status, _, hdr := connectJSON(t, c, base, "Search", `{"query": "slack send"}`, "Origin", origin)
		if status != http.StatusForbidden || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Search from %s: HTTP %d %v, want 403 with no CORS header", origin, status, hdr)
		}
	}
	// Without --web-allowed-origins no origin is allowed.
	n := launch(t, "--demo-host=false", "--web-addr", "127.0.0.1:0")
	status, _, hdr = connectJSON(t, c, "http://"+webAddr(t, n), "Search", `{"query": "x"}`, "Origin", app)
	if status != http.StatusForbidden || hdr.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("Search from %s with no allowed origin: HTTP %d %v, want 403 with no CORS header", app, status, hdr)
	}
}

// BenchmarkWebSearch measures one Search at a time on one server, over the
// native gRPC port and over the web listener as gRPC (h2c, through
// grpc.Server.ServeHTTP), Connect JSON, Connect proto and gRPC-Web
// (HTTP/1.1), each decoding its response. The protocols run in alternating
// 100 ms slices, rounds times (TOOLDEX_BENCH_ROUNDS, default 15), so all
// see the same load of a shared machine; it reports each one's median
// latency, the server process's CPU per call (from /proc) and both as
// ratios to the gRPC port's. For information (docs/BENCHMARKS.md):
//
//	go test -run '^$' -bench WebSearch -count 3 ./e2e/
func BenchmarkWebSearch(b *testing.B) {
	const slice = 100 * time.Millisecond
	rounds := 15
	if v, err := strconv.Atoi(os.Getenv("TOOLDEX_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	s := launch(b, "--demo-catalog", "--demo-host=false", "--web-addr", "127.0.0.1:0")
	entry, ok := s.logEntry("web")
	if !ok {
		b.Fatal("no web log line")
	}
	web := entry["addr"].(string)
	req := &tooldexv1.SearchRequest{Query: "slack send", MaxResults: 5}
	reqProto, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	reqJSON, err := protojson.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	framed := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(reqProto)))
	framed = append(framed, reqProto...)
	grpcCall := func(addr string) func() (*tooldexv1.SearchResponse, error) {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cc.Close() })
		c := tooldexv1.NewDiscoveryServiceClient(cc)
		return func() (*tooldexv1.SearchResponse, error) { return c.Search(b.Context(), req) }
	}
	httpCall := func(contentType string, body []byte, decode func([]byte, *tooldexv1.SearchResponse) error, hdr ...string) func() (*tooldexv1.SearchResponse, error) {
		tr := &http.Transport{}
		b.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr}
		return func() (*tooldexv1.SearchResponse, error) {
			r, err := http.NewRequest(http.MethodPost, "http://"+web+"/tooldex.v1.DiscoveryService/Search", bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			r.Header.Set("Content-Type", contentType)
			for i := 0; i+1 < len(hdr); i += 2 {
				r.Header.Set(hdr[i], hdr[i+1])
			}
			resp, err := c.Do(r)
			if err != nil {
				return nil, err
			}
			out, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("HTTP %d %s %v", resp.StatusCode, out, err)
			}
			var sr tooldexv1.SearchResponse
			return &sr, decode(out, &sr)
		}
	}
	unframe := func(out []byte, sr *tooldexv1.SearchResponse) error {
		if len(out) < 5 || uint32(len(out)-5) < binary.BigEndian.Uint32(out[1:5]) {
			return io.ErrUnexpectedEOF
		}
		return proto.Unmarshal(out[5:5+binary.BigEndian.Uint32(out[1:5])], sr)
	}
	protocols := []struct {
		name string
		call func() (*tooldexv1.SearchResponse, error)
		lat  []time.Duration
		cpu  time.Duration
	}{
		{name: "grpc-port", call: grpcCall(s.addr)},
		{name: "web-grpc-h2c", call: grpcCall(web)},
		{name: "web-connect-json", call: httpCall("application/json", reqJSON, func(out []byte, sr *tooldexv1.SearchResponse) error { return protojson.Unmarshal(out, sr) }, "Connect-Protocol-Version", "1")},
		{name: "web-connect-proto", call: httpCall("application/proto", reqProto, func(out []byte, sr *tooldexv1.SearchResponse) error { return proto.Unmarshal(out, sr) }, "Connect-Protocol-Version", "1")},
		{name: "web-grpc-web", call: httpCall("application/grpc-web+proto", framed, unframe)},
	}
	for i := range protocols { // warm up, and check each answers
		for range 50 {
			resp, err := protocols[i].call()
			if err != nil || len(resp.GetResults()) == 0 {
				b.Fatalf("%s: %v, %v", protocols[i].name, resp, err)
			}
		}
	}
	pid := s.cmd.Process.Pid
	for b.Loop() {
		for r := range rounds {
			for k := range protocols {
				p := &protocols[(r+k)%len(protocols)]
				cpu := procCPU(b, pid)
				for end, start := time.Now().Add(slice), time.Now(); start.Before(end); start = time.Now() {
					if _, err := p.call(); err != nil {
						b.Fatalf("%s: %v", p.name, err)
					}
					p.lat = append(p.lat, time.Since(start))
				}
				p.cpu += procCPU(b, pid) - cpu
			}
		}
	}
	median := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Microsecond)
	}
	base := protocols[0]
	baseCPU := float64(base.cpu) / float64(time.Microsecond) / float64(len(base.lat))
	for _, p := range protocols {
		cpu := float64(p.cpu) / float64(time.Microsecond) / float64(len(p.lat))
		b.ReportMetric(median(p.lat), p.name+"-p50-µs")
		b.ReportMetric(cpu, p.name+"-server-cpu-µs")
		if p.name != base.name {
			b.ReportMetric(median(p.lat)/median(base.lat), p.name+"/grpc-port-p50")
			b.ReportMetric(cpu/baseCPU, p.name+"/grpc-port-cpu")
		}
	}
}

// procCPU is the CPU time process pid has used (user and system), from
// /proc/PID/stat; the benchmark is skipped where there is no /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): utime and stime are the 12th and 13th of them, in ticks.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// TestWebShutdownLetsCallsFinish: an Execute in flight on the web listener
// when the server is told to stop finishes with its result (hosts drain
// first, then the listener stops, then the gRPC server), and the server
// exits.
func TestWebShutdownLetsCallsFinish(t *testing.T) {
	s := launch(t, "--demo-host=false", "--web-addr", "127.0.0.1:0")
	base := "http://" + webAddr(t, s)
	started := make(chan struct{})
	h := toolhost.New(toolhost.Config{Addr: s.addr, HostID: "slow-host", MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
	mustHandle(t, h, mustTool("e2e_slow", "answers after a while", `{"type":"object"}`), func(ctx context.Context, call *toolhost.Call) (*toolhost.Result, error) {
		close(started)
		select {
		case <-time.After(500 * time.Millisecond):
			return toolhost.Text("slow ok"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	runHost(t, h)
	waitFor(t, 10*time.Second, "e2e_slow searchable", func() bool {
		status, body, _ := connectJSON(t, webClient(t, nil), base, "Search", `{"query": "e2e_slow"}`)
		return status == http.StatusOK && strings.Contains(string(body), "e2e_slow")
	})
	type result struct {
		status int
		body   []byte
	}
	done := make(chan result, 1)
	go func() {
		status, body, _ := connectJSON(t, webClient(t, nil), base, "Execute", `{"tool_name": "e2e_slow", "params": {}}`)
		done <- result{status, body}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool was not called in 10s")
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	r := <-done
	var er tooldexv1.ExecuteResponse
	if r.status != http.StatusOK || protojson.Unmarshal(r.body, &er) != nil || textOf(&er) != "slow ok" {
		t.Errorf("Execute in flight at shutdown: HTTP %d %s, want its result", r.status, r.body)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit 15s after SIGINT")
	}
}
