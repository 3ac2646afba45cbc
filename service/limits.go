package service

import (
	"context"
	"net"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/limit"
)

// LimitsConfig configures the per-client limits (Limits).
type LimitsConfig struct {
	// Calls limits each client's unary RPCs: requests per second, burst,
	// requests in flight and the clients remembered.
	Calls limit.KeyedConfig
	// Streams limits each client's streams (host sessions): opened per
	// second, burst, and open at once. Zero fields take
	// DefaultStreamLimits'.
	Streams limit.KeyedConfig
	// Loopback limits unauthenticated clients on this machine too; by
	// default they are not limited (every one of them would share one key,
	// its address, and a local benchmark or test is not an attack).
	Loopback bool
}

// DefaultStreamLimits are the stream limits' defaults: hosts reconnect in
// bursts when a server restarts, and one machine may run many.
var DefaultStreamLimits = limit.KeyedConfig{Rate: 2000, Burst: 4000, MaxInFlight: 4096}

// Limits enforces per-client rate and concurrency limits: a client is its
// authenticated principal (auth.FromContext), or its peer's IP address
// when it has none (unauthenticated loopback clients are not limited
// unless LimitsConfig.Loopback). A client past a limit gets RESOURCE_EXHAUSTED with a
// google.rpc.RetryInfo; health checks are never limited.
type Limits struct {
	calls, streams *limit.Keyed
	loopback       bool
	log            *zap.Logger
	now            func() time.Time
}

// NewLimits returns the limits of cfg, zero fields replaced by defaults.
func NewLimits(cfg LimitsConfig, log *zap.Logger) *Limits {
	if log == nil {
		log = zap.NewNop()
	}
	st := cfg.Streams
	d := DefaultStreamLimits
	if st.Rate == 0 {
		st.Rate = d.Rate
	}
	if st.Burst == 0 && st.Rate == d.Rate {
		st.Burst = d.Burst
	}
	if st.MaxInFlight == 0 {
		st.MaxInFlight = d.MaxInFlight
	}
	if st.MaxKeys == 0 {
		st.MaxKeys = cfg.Calls.MaxKeys
	}
	return &Limits{calls: limit.NewKeyed(cfg.Calls), streams: limit.NewKeyed(st), loopback: cfg.Loopback, log: log.Named("limits"), now: time.Now}
}

// clientKey names the client of ctx for its limits: "principal:<name>"
// when it is authenticated, else "peer:<ip>" (the port is left out: a
// client opening new connections stays one client). ok is false for an
// unauthenticated client on a loopback address unless loopback is set.
func clientKey(ctx context.Context, loopback bool) (key string, ok bool) {
	if p, ok := auth.FromContext(ctx); ok && p.Name != "" && p.Method != "anonymous" {
		return "principal:" + p.Name, true
	}
	pr, found := peer.FromContext(ctx)
	if !found || pr.Addr == nil {
		return "peer:unknown", true
	}
	addr := pr.Addr.String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if ip := net.ParseIP(addr); ip != nil && ip.IsLoopback() && !loopback {
		return "", false
	}
	return "peer:" + addr, true
}

func exempt(method string) bool { return strings.HasPrefix(method, "/grpc.health.") }

// UnaryInterceptor enforces the call limits. Put it after authentication
// (it reads the principal) and before any other work.
func (l *Limits) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if exempt(info.FullMethod) {
			return handler(ctx, req)
		}
		key, ok := clientKey(ctx, l.loopback)
		if !ok {
			return handler(ctx, req)
		}
		release, err := l.calls.Acquire(key, l.now())
		if err != nil {
			return nil, statusOf(l.log, err)
		}
		defer release()
		return handler(ctx, req)
	}
}

// StreamInterceptor enforces the stream limits: a stream holds its place
// until it ends.
func (l *Limits) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if exempt(info.FullMethod) {
			return handler(srv, ss)
		}
		key, ok := clientKey(ss.Context(), l.loopback)
		if !ok {
			return handler(srv, ss)
		}
		release, err := l.streams.Acquire(key, l.now())
		if err != nil {
			return statusOf(l.log, err)
		}
		defer release()
		return handler(srv, ss)
	}
}
