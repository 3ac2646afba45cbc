package dialtarget

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestOfOneAddress(t *testing.T) {
	for _, addr := range []string{"localhost:50051", "dns:///tooldex:50051"} {
		if got, opts := Of(addr); got != addr || opts != nil {
			t.Errorf("Of(%q) = %q, %d options; want it unchanged", addr, got, len(opts))
		}
	}
}

// TestOfSeveralFailsOver: with the first address dead, calls reach the
// second.
func TestOfSeveralFailsOver(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	target, opts := Of(deadAddr + ", " + lis.Addr().String())
	conn, err := grpc.NewClient(target, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("Check through %q = %v, want the live server's answer", target, err)
	}
}
