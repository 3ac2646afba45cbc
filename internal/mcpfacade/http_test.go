package mcpfacade_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/auth/authtest"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/mcpfacade"
	"github.com/tooldex/tooldex/internal/origin"
)

const userToken = "user-token-0123456789abcdef"

// recordingClient answers Search and records the authorization metadata
// each call carried.
type recordingClient struct {
	tooldexv1.DiscoveryServiceClient
	mu   sync.Mutex
	auth []string
}

func (c *recordingClient) Search(ctx context.Context, req *tooldexv1.SearchRequest, _ ...grpc.CallOption) (*tooldexv1.SearchResponse, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	c.mu.Lock()
	c.auth = append(c.auth, strings.Join(md.Get("authorization"), ","))
	c.mu.Unlock()
	return &tooldexv1.SearchResponse{Text: "found"}, nil
}

type bearerTransport struct {
	token, origin string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPHandlerAuth(t *testing.T) {
	tokens := authtest.Write(t, t.TempDir(), "tokens.json", []byte(`{"tokens": [{"token": "`+userToken+`", "principal": "alice", "tenant": "team-a", "scopes": ["search"]}]}`))
	a, err := auth.New(context.Background(), auth.Config{TokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingClient{}
	server := mcpfacade.New(rec, mcpfacade.Options{})
	ts := httptest.NewServer(mcpfacade.HTTPHandler(server, mcpfacade.HTTPOptions{
		Auth: a, Resource: "http://mcp.example/", AuthorizationServers: []string{"https://issuer.example"},
		AllowedOrigins: []string{"https://app.example"},
	}))
	defer ts.Close()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()

	// Protected-resource metadata.
	resp, err := http.Get(ts.URL + mcpfacade.ProtectedResourcePath)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != "http://mcp.example/" || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != "https://issuer.example" {
		t.Errorf("metadata = %+v, %v", meta, err)
	}

	post := func(tr bearerTransport) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpfacade.MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	tests := []struct {
		name       string
		tr         bearerTransport
		wantStatus int
		wantHeader string
	}{
		{"no token", bearerTransport{}, http.StatusUnauthorized, `resource_metadata="http://mcp.example/.well-known/oauth-protected-resource"`},
		{"bad token", bearerTransport{token: "nope-0123456789abcdef"}, http.StatusUnauthorized, "resource_metadata="},
		{"foreign origin", bearerTransport{token: userToken, origin: "https://evil.example"}, http.StatusForbidden, ""},
		{"null origin", bearerTransport{token: userToken, origin: "null"}, http.StatusForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(tt.tr)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tt.wantHeader) {
				t.Errorf("status %d, WWW-Authenticate %q; want %d with %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.wantStatus, tt.wantHeader)
			}
		})
	}

	// An MCP client with the user's token, from an allowed origin: the
	// token reaches tooldex with each call.
	for _, origin := range []string{"", "https://app.example", "http://localhost:3000"} {
		client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
		ctx := context.Background()
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + mcpfacade.MCPPath, HTTPClient: &http.Client{Transport: bearerTransport{token: userToken, origin: origin}}}, nil)
		if err != nil {
			t.Fatalf("origin %q: connect: %v", origin, err)
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "ToolSearch", Arguments: map[string]any{"query": "x"}})
		session.Close()
		if err != nil || res.IsError {
			t.Fatalf("origin %q: ToolSearch: %v, %+v", origin, err, res)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.auth) != 3 {
		t.Fatalf("tooldex saw %d Search calls, want 3", len(rec.auth))
	}
	for _, got := range rec.auth {
		if got != "Bearer "+userToken {
			t.Errorf("authorization forwarded to tooldex = %q, want the user's token", got)
		}
	}
}

func TestOriginAllowed(t *testing.T) {
	allowed := origin.NewSet([]string{"https://app.example"})
	tests := []struct {
		origin string
		want   bool
	}{
		{"http://localhost:8080", true},
		{"http://127.0.0.1", true},
		{"https://[::1]:443", true},
		{"https://app.example", true},
		{"https://APP.example/", true},
		{"https://app.example.evil.com", false},
		{"http://app.example", false},
		{"null", false},
		{"file://", false},
		{"http://localhost.evil.com", false},
		{"http://user@localhost", false},
	}
	for _, tt := range tests {
		if got := mcpfacade.OriginAllowed(tt.origin, allowed); got != tt.want {
			t.Errorf("OriginAllowed(%q) = %v, want %v", tt.origin, got, tt.want)
		}
	}
}
