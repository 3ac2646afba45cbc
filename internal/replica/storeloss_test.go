package replica_test

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/replica"
	"github.com/tooldex/tooldex/service"
)

// natsOn starts a NATS server with JetStream on 127.0.0.1:port (0: any
// free port), storing in dir; it returns the server and its port.
func natsOn(t *testing.T, port int, dir string) (*server.Server, int) {
	t.Helper()
	if port == 0 {
		port = -1
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		t.Fatal("NATS not ready within 10s")
	}
	return ns, ns.Addr().(*net.TCPAddr).Port
}

func stopNATS(ns *server.Server) {
	ns.Shutdown()
	ns.WaitForShutdown()
}

// externalNode connects to the NATS at port.
func externalNode(t *testing.T, port int) *replica.Node {
	t.Helper()
	n, err := replica.Start(replica.Config{URL: "nats://127.0.0.1:" + strconv.Itoa(port), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// eventually retries f until it returns nil, for at most 60s.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: not within 60s: %v", what, err)
}

// hasTools says whether svc lists exactly want.
func hasTools(t *testing.T, svc *service.Server, want ...string) func() error {
	return func() error {
		if got := names(t, svc); !slices.Equal(got, want) {
			return fmt.Errorf("tools are %v", got)
		}
		return nil
	}
}

func tryRegister(t *testing.T, svc *service.Server, tools ...*tooldexv1.Tool) func() error {
	return func() error {
		_, err := svc.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools})
		return err
	}
}

// TestNATSWithoutItsStore: the replicas' NATS is replaced by one with an
// empty store on the same port. Both replicas write again, what they held
// is back in the new bucket (a replica started afterwards sees it), and
// the bucket's own entries, written by another replica before them, win
// over what they held.
func TestNATSWithoutItsStore(t *testing.T) {
	ns, port := natsOn(t, 0, t.TempDir())
	defer func() { stopNATS(ns) }()

	nodeA, nodeB := externalNode(t, port), externalNode(t, port)
	defer nodeA.Close()
	defer nodeB.Close()
	a, b := startReplica(t, nodeA), startReplica(t, nodeB)
	defer a.stop()
	defer b.stop()
	register(t, a.svc, tool("alpha", "one"), tool("beta", "two"))
	eventually(t, "b sees a's writes", hasTools(t, b.svc, "alpha=one", "beta=two"))

	// 1. A NATS with an empty store on the same port.
	stopNATS(ns)
	ns, _ = natsOn(t, port, t.TempDir())
	eventually(t, "a writes again", tryRegister(t, a.svc, tool("gamma", "three")))
	eventually(t, "b writes again", tryRegister(t, b.svc, tool("delta", "four")))
	want := []string{"alpha=one", "beta=two", "delta=four", "gamma=three"}
	eventually(t, "a converges", hasTools(t, a.svc, want...))
	eventually(t, "b converges", hasTools(t, b.svc, want...))
	func() {
		nodeC := externalNode(t, port)
		defer nodeC.Close()
		c := startReplica(t, nodeC)
		defer c.stop()
		if err := hasTools(t, c.svc, want...)(); err != nil {
			t.Fatalf("a replica started after the store loss: %v, want %v", err, want)
		}
	}()

	// 2. A NATS whose new store holds only what another replica wrote
	// before a and b came back: beta updated, delta removed.
	stopNATS(ns)
	other, otherPort := natsOn(t, 0, t.TempDir())
	store := other.StoreDir()
	func() {
		nodeD := externalNode(t, otherPort)
		defer nodeD.Close()
		d := startReplica(t, nodeD)
		defer d.stop()
		register(t, d.svc, tool("beta", "two, newer"), tool("delta", "four"))
		unregister(t, d.svc, "delta")
	}()
	stopNATS(other)
	ns, _ = natsOn(t, port, store)
	want = []string{"alpha=one", "beta=two, newer", "gamma=three"}
	eventually(t, "a converges on the bucket's entries", hasTools(t, a.svc, want...))
	eventually(t, "b converges on the bucket's entries", hasTools(t, b.svc, want...))
	eventually(t, "b writes again", tryRegister(t, b.svc, tool("epsilon", "five")))
	want = []string{"alpha=one", "beta=two, newer", "epsilon=five", "gamma=three"}
	eventually(t, "a sees b's write", hasTools(t, a.svc, want...))
	nodeE := externalNode(t, port)
	defer nodeE.Close()
	e := startReplica(t, nodeE)
	defer e.stop()
	if err := hasTools(t, e.svc, want...)(); err != nil {
		t.Fatalf("a replica started after the second store loss: %v, want %v", err, want)
	}
}

// TestPresenceWithoutItsStore: after the NATS is replaced by one with an
// empty store, the hosts bucket is made again and the replicas announce
// their hosts anew: the other replica lists them and forwards their
// calls.
func TestPresenceWithoutItsStore(t *testing.T) {
	ns, port := natsOn(t, 0, t.TempDir())
	defer func() { stopNATS(ns) }()
	nodeA, nodeH := externalNode(t, port), externalNode(t, port)
	defer nodeA.Close()
	defer nodeH.Close()
	a, h := startBenchReplica(t, nodeA), startBenchReplica(t, nodeH)
	defer a.stop()
	defer h.stop()
	startEcho(t, h)
	waitServes(t, a.svc, "echo")

	stopNATS(ns)
	ns, _ = natsOn(t, port, t.TempDir())
	// Long enough for a to have dropped h as gone (Stale), so that what
	// follows is h's announcement to the new bucket.
	time.Sleep(replica.Stale + time.Second)
	req := &tooldexv1.ExecuteRequest{ToolName: "echo", Params: &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("back")}}}
	eventually(t, "a forwards to h's host again", func() error {
		resp, err := a.cl.Execute(t.Context(), req)
		if err != nil {
			return err
		}
		if len(resp.GetContent()) != 1 || resp.GetContent()[0].GetText() != "back" {
			return fmt.Errorf("Execute = %v", resp)
		}
		return nil
	})
	rows, _, err := hostRows(a, 0)
	if err != nil || len(rows) != 1 || rowReplica(rows[0]) == "-" {
		t.Fatalf("ListHosts on a = %v, %v; want h's bench-echo, marked with h", rows, err)
	}
}
