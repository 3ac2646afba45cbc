package service

import (
	"context"
	"net"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/internal/limit"
)

func peerCtx(addr string) context.Context {
	tcp, _ := net.ResolveTCPAddr("tcp", addr)
	return peer.NewContext(context.Background(), &peer.Peer{Addr: tcp})
}

func TestLimitsRate(t *testing.T) {
	l := NewLimits(LimitsConfig{Calls: limit.KeyedConfig{Rate: 1, Burst: 3, MaxInFlight: -1}}, nil)
	icpt := l.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: "/tooldex.v1.DiscoveryService/Search"}
	ok := func(context.Context, any) (any, error) { return "ok", nil }
	count := func(ctx context.Context, n int, method string) (answered, limited int, last error) {
		for range n {
			_, err := icpt(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, ok)
			switch status.Code(err) {
			case codes.OK:
				answered++
			case codes.ResourceExhausted:
				limited++
				last = err
			}
		}
		return
	}
	// One client on two connections (ports) is one client.
	a1, l1, _ := count(peerCtx("10.0.0.1:1111"), 2, info.FullMethod)
	a2, l2, last := count(peerCtx("10.0.0.1:2222"), 5, info.FullMethod)
	if a1+a2 != 3 || l1+l2 != 4 {
		t.Errorf("answered %d, limited %d; want the burst 3 answered, 4 limited", a1+a2, l1+l2)
	}
	st := status.Convert(last)
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("RESOURCE_EXHAUSTED without a RetryInfo: %v", st.Details())
	}
	// Another address, a principal and health checks have their own
	// budgets or none.
	if a, _, _ := count(peerCtx("10.0.0.2:1"), 3, info.FullMethod); a != 3 {
		t.Errorf("another peer: %d of 3 answered", a)
	}
	pctx := auth.NewContext(peerCtx("10.0.0.1:3"), &auth.Principal{Name: "alice", Method: "token"})
	if a, _, _ := count(pctx, 3, info.FullMethod); a != 3 {
		t.Errorf("principal alice on the limited address: %d of 3 answered", a)
	}
	if a, _, _ := count(peerCtx("10.0.0.1:4"), 10, "/grpc.health.v1.Health/Check"); a != 10 {
		t.Errorf("health checks: %d of 10 answered", a)
	}
}

func TestLimitsLoopback(t *testing.T) {
	info := &grpc.UnaryServerInfo{FullMethod: "/tooldex.v1.DiscoveryService/Search"}
	ok := func(context.Context, any) (any, error) { return nil, nil }
	for _, loopback := range []bool{false, true} {
		icpt := NewLimits(LimitsConfig{Calls: limit.KeyedConfig{Rate: 1, Burst: 1}, Loopback: loopback}, nil).UnaryInterceptor()
		limited := 0
		for range 5 {
			if _, err := icpt(peerCtx("127.0.0.1:5"), nil, info, ok); status.Code(err) == codes.ResourceExhausted {
				limited++
			}
		}
		if want := map[bool]int{false: 0, true: 4}[loopback]; limited != want {
			t.Errorf("Loopback %v: %d of 5 local calls limited, want %d", loopback, limited, want)
		}
	}
}

func TestLimitsInFlight(t *testing.T) {
	l := NewLimits(LimitsConfig{Calls: limit.KeyedConfig{Rate: -1, MaxInFlight: 2}}, nil)
	icpt := l.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: "/tooldex.v1.DiscoveryService/Execute"}
	block := make(chan struct{})
	started := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			_, _ = icpt(peerCtx("10.0.0.1:1"), nil, info, func(context.Context, any) (any, error) {
				started <- struct{}{}
				<-block
				return nil, nil
			})
		})
	}
	<-started
	<-started
	_, err := icpt(peerCtx("10.0.0.1:2"), nil, info, func(context.Context, any) (any, error) { return nil, nil })
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("third call in flight: %v, want RESOURCE_EXHAUSTED", err)
	}
	close(block)
	wg.Wait()
	if _, err := icpt(peerCtx("10.0.0.1:2"), nil, info, func(context.Context, any) (any, error) { return nil, nil }); err != nil {
		t.Errorf("after the two ended: %v", err)
	}
}
