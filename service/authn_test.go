package service

import (
	"context"
	"net"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/auth/authtest"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

const (
	searcherToken = "searcher-token-0123456789"
	writerToken   = "writer-token-0123456789"
)

// authEnv serves the discovery, host, health and reflection services over
// TLS (client certificates verified by ca) on a bufconn listener, behind
// the auth interceptors; dial connects with creds.
type authEnv struct {
	ca   *authtest.CA
	dir  string
	dial func(t *testing.T, creds auth.ClientConfig) *grpc.ClientConn
}

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	ca := authtest.NewCA(t)
	dir := t.TempDir()
	srvCert := ca.Server(t)
	certFile := authtest.Write(t, dir, "server.pem", srvCert.CertPEM)
	keyFile := authtest.Write(t, dir, "server-key.pem", srvCert.KeyPEM)
	caFile := authtest.Write(t, dir, "ca.pem", ca.PEM)
	tokens := authtest.Write(t, dir, "tokens.json", []byte(`{"tokens": [
	  {"token": "`+searcherToken+`", "principal": "searcher", "tenant": "team-a", "scopes": ["search"]},
	  {"token": "`+writerToken+`", "principal": "writer", "scopes": ["register", "search", "execute"]},
	  {"principal": "spiffe://example.org/host/calc", "scopes": ["host"], "host_patterns": ["calc_*"]}]}`))
	tlsConf, err := auth.ServerTLSConfig(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Config{TokensFile: tokens, ClientCA: true})
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	t.Cleanup(func() { lis.Close() })
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(tlsConf)),
		grpc.ChainUnaryInterceptor(UnaryInterceptor(zaptest.NewLogger(t)), AuthUnary(a)),
		grpc.ChainStreamInterceptor(AuthStream(a)))
	svc := New(Config{Logger: zaptest.NewLogger(t)})
	RegisterDiscoveryService(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	healthpb.RegisterHealthServer(gs, health.NewServer())
	reflection.Register(gs)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() { gs.Stop(); <-served })
	return &authEnv{ca: ca, dir: dir, dial: func(t *testing.T, creds auth.ClientConfig) *grpc.ClientConn {
		t.Helper()
		creds.CAFile, creds.ServerName = caFile, "localhost"
		opts, err := creds.DialOptions()
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
		conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}}
}

func TestAuthInterceptors(t *testing.T) {
	env := newAuthEnv(t)
	anon := env.dial(t, auth.ClientConfig{})
	searcher := env.dial(t, auth.ClientConfig{Token: searcherToken})
	writer := env.dial(t, auth.ClientConfig{Token: writerToken})
	bad := env.dial(t, auth.ClientConfig{Token: "not-a-token-0123456789"})
	ctx := context.Background()
	search := func(c *grpc.ClientConn) error {
		_, err := tooldexv1.NewDiscoveryServiceClient(c).Search(ctx, &tooldexv1.SearchRequest{Query: "x"})
		return err
	}
	tests := []struct {
		name     string
		call     func() error
		wantCode codes.Code
		wantMsg  string
	}{
		{"health without credentials", func() error {
			_, err := healthpb.NewHealthClient(anon).Check(ctx, &healthpb.HealthCheckRequest{})
			return err
		}, codes.OK, ""},
		{"search without credentials", func() error { return search(anon) }, codes.Unauthenticated, "no credentials"},
		{"search with a bad token", func() error { return search(bad) }, codes.Unauthenticated, "unknown bearer token"},
		{"search with the search scope", func() error { return search(searcher) }, codes.OK, ""},
		{"execute without the execute scope", func() error {
			_, err := tooldexv1.NewDiscoveryServiceClient(searcher).Execute(ctx, &tooldexv1.ExecuteRequest{ToolName: "x"})
			return err
		}, codes.PermissionDenied, `"execute" scope`},
		{"register without the register scope", func() error {
			_, err := tooldexv1.NewDiscoveryServiceClient(searcher).RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{})
			return err
		}, codes.PermissionDenied, `"register" scope`},
		{"unregister with the register scope", func() error {
			_, err := tooldexv1.NewDiscoveryServiceClient(writer).UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{"nothing"}})
			return err
		}, codes.OK, ""},
		{"host stream without the host scope", func() error {
			st, err := tooldexv1.NewHostServiceClient(writer).Connect(ctx)
			if err != nil {
				return err
			}
			_, err = st.Recv()
			return err
		}, codes.PermissionDenied, `"host" scope`},
		{"reflection without credentials", func() error { return listServices(ctx, anon) }, codes.Unauthenticated, ""},
		{"reflection with any credential", func() error { return listServices(ctx, searcher) }, codes.OK, ""},
		{"two authorization values", func() error {
			md := metadata.Pairs("authorization", "Bearer "+writerToken, "authorization", "Bearer "+searcherToken)
			_, err := tooldexv1.NewDiscoveryServiceClient(anon).Search(metadata.NewOutgoingContext(ctx, md), &tooldexv1.SearchRequest{Query: "x"})
			return err
		}, codes.Unauthenticated, "more than one"},
		{"a forwarded authorization wins over the connection's token", func() error {
			md := metadata.Pairs("authorization", "Bearer "+writerToken)
			_, err := tooldexv1.NewDiscoveryServiceClient(searcher).Search(metadata.NewOutgoingContext(ctx, md), &tooldexv1.SearchRequest{Query: "x"})
			return err
		}, codes.OK, ""}, // writer's token, not searcher's, so one value
		{"malformed authorization", func() error {
			md := metadata.Pairs("authorization", "Basic dXNlcjpwYXNz")
			_, err := tooldexv1.NewDiscoveryServiceClient(anon).Search(metadata.NewOutgoingContext(ctx, md), &tooldexv1.SearchRequest{Query: "x"})
			return err
		}, codes.Unauthenticated, "Bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			st := status.Convert(err)
			if st.Code() != tt.wantCode || !strings.Contains(st.Message(), tt.wantMsg) {
				t.Errorf("code %s %q, want %s containing %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestAuthMutualTLSHost(t *testing.T) {
	env := newAuthEnv(t)
	cert := env.ca.Client(t, "calc-host", "spiffe://example.org/host/calc")
	creds := auth.ClientConfig{
		CertFile: authtest.Write(t, env.dir, "client.pem", cert.CertPEM),
		KeyFile:  authtest.Write(t, env.dir, "client-key.pem", cert.KeyPEM),
	}
	conn := env.dial(t, creds)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := tooldexv1.NewHostServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&tooldexv1.ConnectRequest{Frame: &tooldexv1.ConnectRequest_Hello{Hello: &tooldexv1.HostHello{HostId: "calc-1", MaxConcurrentCalls: 1}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil {
		t.Fatalf("mTLS host with the host scope: %v", err)
	}
	if resp.GetHelloAck() == nil {
		t.Errorf("first frame = %v, want a HelloAck", resp)
	}
	// The certificate holds only the host scope: searching is refused.
	_, err = tooldexv1.NewDiscoveryServiceClient(conn).Search(ctx, &tooldexv1.SearchRequest{Query: "x"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "spiffe://example.org/host/calc") {
		t.Errorf("search by the host certificate: %v, want PERMISSION_DENIED naming its principal", err)
	}
}

func TestAuthorizeUnknownMethod(t *testing.T) {
	a, err := auth.New(context.Background(), auth.Config{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := authorize(context.Background(), a, "/tooldex.v1.DiscoveryService/Search")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := auth.FromContext(ctx); !ok || p.Method != auth.MethodAnonymous {
		t.Errorf("principal in context = %v, %v; want anonymous", p, ok)
	}
	_, err = authorize(context.Background(), a, "/tooldex.v1.DiscoveryService/DropEverything")
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("unknown method: %v, want PERMISSION_DENIED (fail closed)", err)
	}
}

// TestMethodScopesComplete: every method of the generated services has a
// scope, so adding an RPC without deciding its scope fails here (it would
// be refused to everyone otherwise).
func TestMethodScopesComplete(t *testing.T) {
	for _, sd := range []grpc.ServiceDesc{tooldexv1.DiscoveryService_ServiceDesc, tooldexv1.HostService_ServiceDesc} {
		for _, m := range sd.Methods {
			if _, ok := methodScopes["/"+sd.ServiceName+"/"+m.MethodName]; !ok {
				t.Errorf("%s/%s has no scope in methodScopes", sd.ServiceName, m.MethodName)
			}
		}
		for _, s := range sd.Streams {
			if _, ok := methodScopes["/"+sd.ServiceName+"/"+s.StreamName]; !ok {
				t.Errorf("%s/%s has no scope in methodScopes", sd.ServiceName, s.StreamName)
			}
		}
	}
}

func listServices(ctx context.Context, conn *grpc.ClientConn) error {
	st, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return err
	}
	// A Send refused by a closed stream returns io.EOF; Recv has the status.
	_ = st.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	_, err = st.Recv()
	_ = st.CloseSend()
	return err
}
