package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/auth/authtest"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/cputime"
	"github.com/tooldex/tooldex/internal/demo"
	"github.com/tooldex/tooldex/internal/permission"
	"github.com/tooldex/tooldex/internal/toolfile"
	"github.com/tooldex/tooldex/service"
	"github.com/tooldex/tooldex/toolhost"
)

const (
	benchUserToken = "bench-user-token-0123456789"
	benchHostToken = "bench-host-token-0123456789"
)

// BenchmarkAuthInterleaved measures Search and Execute over gRPC (TCP
// loopback, plaintext) against four servers wired as cmd/server wires them,
// all running at once and measured in alternating short slices (see
// BenchmarkExecuteInterleaved):
//
//   - none: no authentication interceptor (the server before it existed);
//   - anonymous: the interceptor, no credentials (development mode);
//   - token: a bearer token of a tokens file (sha256 entry);
//   - jwt: a bearer JWT verified against a local JWKS (cached after the
//     first call).
//
// Search runs over the embedded demo catalog; Execute calls an echo tool on
// a connected toolhost. It reports each setup's p50 latency and process
// CPU per call (client, server and host together: on a shared machine the
// steadier figure) at 1 and 64 callers, and their ratios to none; each invocation runs once (rounds: env
// TOOLDEX_BENCH_ROUNDS, default 15).
//
//	go test -run '^$' -bench AuthInterleaved -count=3 ./bench/
func BenchmarkAuthInterleaved(b *testing.B) {
	const sliceDur = 100 * time.Millisecond
	rounds := 15
	if v, err := strconv.Atoi(os.Getenv("TOOLDEX_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	iss := authtest.NewIssuer(b)
	jwt := iss.Mint(b, map[string]any{"sub": "bench", "aud": "tooldex", "scope": "search execute", "exp": time.Now().Add(24 * time.Hour).Unix()})
	tokens := filepath.Join(b.TempDir(), "tokens.json")
	file := fmt.Sprintf(`{"tokens": [{"sha256": %q, "principal": "bench", "scopes": ["search", "execute"]},
	  {"token": %q, "principal": "bench-host", "scopes": ["host"], "host_patterns": ["*"]}]}`, sha256Hex(benchUserToken), benchHostToken)
	if err := os.WriteFile(tokens, []byte(file), 0o600); err != nil {
		b.Fatal(err)
	}
	type op struct {
		name string
		call func(ctx context.Context, c tooldexv1.DiscoveryServiceClient, i int) error
	}
	queries := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	ops := []op{
		{"search", func(ctx context.Context, c tooldexv1.DiscoveryServiceClient, i int) error {
			_, err := c.Search(ctx, &tooldexv1.SearchRequest{Query: queries[i%len(queries)]})
			return err
		}},
		{"execute", func(ctx context.Context, c tooldexv1.DiscoveryServiceClient, _ int) error { return call(ctx, c) }},
	}
	type setup struct {
		name   string
		client tooldexv1.DiscoveryServiceClient
		lat    map[string][]time.Duration // by op and callers
		cpu    map[string]time.Duration   // process CPU during its slices
	}
	configs := []struct {
		name  string
		cfg   *auth.Config // nil: no interceptor
		token string
	}{
		{"none", nil, ""},
		{"anonymous", &auth.Config{Anonymous: true}, ""},
		{"token", &auth.Config{TokensFile: tokens}, benchUserToken},
		{"jwt", &auth.Config{TokensFile: tokens, JWKSURL: iss.JWKSURL(), Audience: "tooldex"}, jwt},
	}
	var setups []*setup
	for _, c := range configs {
		addr, stop := startAuthTooldex(b, c.cfg)
		b.Cleanup(stop)
		opts, err := auth.ClientConfig{Token: c.token}.DialOptions()
		if err != nil {
			b.Fatal(err)
		}
		conn, err := grpc.NewClient(addr, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		s := &setup{name: c.name, client: tooldexv1.NewDiscoveryServiceClient(conn), lat: map[string][]time.Duration{}, cpu: map[string]time.Duration{}}
		for _, o := range ops {
			if err := o.call(b.Context(), s.client, 0); err != nil {
				b.Fatalf("%s %s: %v", c.name, o.name, err)
			}
		}
		warmUp(b.Context(), s.client)
		setups = append(setups, s)
	}
	for b.Loop() {
		for r := range rounds {
			for k := range setups {
				s := setups[(r+k)%len(setups)]
				for _, o := range ops {
					for _, callers := range []int{1, concurrency} {
						cpu := cputime.Process()
						lat, err := runOpSlice(b.Context(), s.client, o.call, callers, sliceDur)
						if err != nil {
							b.Fatalf("%s %s: %v", s.name, o.name, err)
						}
						key := o.name + "-c" + strconv.Itoa(callers)
						s.cpu[key] += cputime.Process() - cpu
						s.lat[key] = append(s.lat[key], lat...)
					}
				}
			}
		}
	}
	base := setups[0]
	for _, s := range setups {
		for _, o := range ops {
			for _, callers := range []int{1, concurrency} {
				key := o.name + "-c" + strconv.Itoa(callers)
				n := len(s.lat[key])
				cpu := float64(s.cpu[key]) / float64(time.Microsecond) / float64(n)
				baseCPU := float64(base.cpu[key]) / float64(time.Microsecond) / float64(len(base.lat[key]))
				b.ReportMetric(p50(s.lat[key]), s.name+"-"+key+"-p50-µs")
				b.ReportMetric(cpu, s.name+"-"+key+"-cpu-µs")
				if s != base {
					b.ReportMetric(p50(s.lat[key])/p50(base.lat[key]), s.name+"/none-"+key+"-p50")
					b.ReportMetric(cpu/baseCPU, s.name+"/none-"+key+"-cpu")
				}
			}
		}
	}
}

// runOpSlice runs op from callers goroutines for d and returns the
// latencies.
func runOpSlice(ctx context.Context, client tooldexv1.DiscoveryServiceClient, op func(context.Context, tooldexv1.DiscoveryServiceClient, int) error, callers int, d time.Duration) ([]time.Duration, error) {
	end := time.Now().Add(d)
	var (
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	for g := range callers {
		wg.Go(func() {
			var lat []time.Duration
			var err error
			for i, start := g, time.Now(); start.Before(end); i, start = i+1, time.Now() {
				if err = op(ctx, client, i); err != nil {
					break
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, firstErr
}

// startAuthTooldex is startTooldex with the demo catalog registered and,
// unless cfg is nil, the authentication interceptors of cfg in the chain as
// cmd/server puts them; its host presents benchHostToken.
func startAuthTooldex(b *testing.B, cfg *auth.Config) (string, func()) {
	perms, err := permission.Parse([]byte(policyJSON))
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(service.Config{Permissions: perms})
	err = toolfile.Batches(demo.Name, demo.Catalog, 1000, func(batch []*tooldexv1.Tool) error {
		_, err := svc.RegisterTools(b.Context(), &tooldexv1.RegisterToolsRequest{Tools: batch})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	unary := []grpc.UnaryServerInterceptor{service.UnaryInterceptor(zap.NewNop())}
	var stream []grpc.StreamServerInterceptor
	hostCreds := auth.ClientConfig{}
	if cfg != nil {
		a, err := auth.New(b.Context(), *cfg)
		if err != nil {
			b.Fatal(err)
		}
		unary = append(unary, service.AuthUnary(a))
		stream = append(stream, service.AuthStream(a))
		if !cfg.Anonymous {
			hostCreds.Token = benchHostToken
		}
	}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	service.RegisterDiscoveryService(gs, svc)
	tooldexv1.RegisterHostServiceServer(gs, svc.Hosts())
	regCtx, stopReg := context.WithCancel(context.Background())
	regDone := make(chan struct{})
	go func() {
		_ = svc.Run(regCtx)
		close(regDone)
	}()
	lis := listen(b)
	stopServer := serve(gs, lis)
	h := toolhost.New(toolhost.Config{Addr: lis.Addr().String(), HostID: "bench-host", Slots: hostSlots, Auth: hostCreds})
	if err := h.Handle(echoTool(b), echo); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	readyCtx, cancelReady := context.WithTimeout(ctx, 10*time.Second)
	defer cancelReady()
	if err := h.WaitReady(readyCtx); err != nil {
		b.Fatal(err)
	}
	return lis.Addr().String(), func() {
		cancel()
		<-done
		svc.CloseHosts()
		stopServer()
		stopReg()
		<-regDone
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
