package replica_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/replica"
	"github.com/tooldex/tooldex/toolhost"
)

// blockingHost serves "wait" on r: each call signals started, then blocks
// until its ctx ends (counted in cancelled) or release is closed.
type blockingHost struct {
	started   chan struct{}
	release   chan struct{}
	cancelled atomic.Int32
	runs      atomic.Int32
}

func startBlocking(t *testing.T, addr string) *blockingHost {
	t.Helper()
	bh := &blockingHost{started: make(chan struct{}, 16), release: make(chan struct{})}
	h := toolhost.New(toolhost.Config{Addr: addr, HostID: "blocking", Slots: 8})
	if err := h.Handle(&tooldexv1.Tool{Name: "wait", Description: "waits until released"}, func(ctx context.Context, _ *toolhost.Call) (*toolhost.Result, error) {
		bh.runs.Add(1)
		bh.started <- struct{}{}
		select {
		case <-bh.release:
			return toolhost.Text("released"), nil
		case <-ctx.Done():
			bh.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := h.WaitReady(rctx); err != nil {
		t.Fatal(err)
	}
	return bh
}

func waitStarted(t *testing.T, bh *blockingHost) {
	t.Helper()
	select {
	case <-bh.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the host within 10s")
	}
}

var waitReq = &tooldexv1.ExecuteRequest{ToolName: "wait", Params: &structpb.Struct{}}

// TestForwardedCall: a call on a replica without the host runs on the
// host of another, once; the caller's cancellation reaches the host; a
// replica that stops during a call answers it UNAVAILABLE.
func TestForwardedCall(t *testing.T) {
	node, err := replica.Start(replica.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	a, h := startBenchReplica(t, node), startBenchReplica(t, node)
	defer a.stop()
	defer h.stop()
	bh := startBlocking(t, h.addr)
	waitServes(t, a.svc, "wait")

	t.Run("answered", func(t *testing.T) {
		done := make(chan error, 1)
		var resp *tooldexv1.ExecuteResponse
		go func() {
			var err error
			resp, err = a.cl.Execute(context.Background(), waitReq)
			done <- err
		}()
		waitStarted(t, bh)
		bh.release <- struct{}{} // one call released
		if err := <-done; err != nil || len(resp.GetContent()) != 1 || resp.GetContent()[0].GetText() != "released" || resp.GetHostId() != "blocking" {
			t.Fatalf("forwarded Execute = %v, %v; want released from host blocking", resp, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := a.cl.Execute(ctx, waitReq)
			done <- err
		}()
		waitStarted(t, bh)
		before := bh.cancelled.Load()
		cancel()
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("Execute after cancel = %v, want CANCELED", err)
		}
		for deadline := time.Now().Add(10 * time.Second); bh.cancelled.Load() == before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the host's call was not cancelled within 10s")
			}
		}
	})
	t.Run("replica stops mid-call", func(t *testing.T) {
		runs := bh.runs.Load()
		done := make(chan error, 1)
		go func() {
			_, err := a.cl.Execute(context.Background(), waitReq)
			done <- err
		}()
		waitStarted(t, bh)
		h.stop()
		select {
		case err := <-done:
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("Execute when the host's replica stopped = %v, want UNAVAILABLE", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no answer within 15s of the replica stopping")
		}
		if got := bh.runs.Load() - runs; got != 1 {
			t.Fatalf("the call ran %d times, want 1", got)
		}
	})
}
