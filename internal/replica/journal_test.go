package replica_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/replica"
	"github.com/tooldex/tooldex/service"
)

// replicaOf is one tooldex replica journaling on node: its server, and a
// stop that ends its watch.
type replicaOf struct {
	svc  *service.Server
	stop func()
}

func startReplica(t *testing.T, node *replica.Node) *replicaOf {
	t.Helper()
	svc := service.New(service.Config{Logger: zaptest.NewLogger(t)})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	j, err := node.OpenJournal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetJournal(j)
	ready := make(chan struct{})
	watchCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = j.Watch(watchCtx, svc, sync.OnceFunc(func() { close(ready) })) })
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("replay not done within 10s")
	}
	r := &replicaOf{svc: svc, stop: sync.OnceFunc(func() { stop(); wg.Wait() })}
	t.Cleanup(r.stop)
	return r
}

func startNode(t *testing.T, dir string) *replica.Node {
	t.Helper()
	n, err := replica.Start(replica.Config{DataDir: dir, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tool(name, desc string) *tooldexv1.Tool {
	return &tooldexv1.Tool{Name: name, Description: desc}
}

func names(t *testing.T, svc *service.Server) []string {
	t.Helper()
	resp, err := svc.ListTools(t.Context(), &tooldexv1.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range resp.GetTools() {
		out = append(out, tl.GetName()+"="+tl.GetDescription())
	}
	return out
}

func register(t *testing.T, svc *service.Server, tools ...*tooldexv1.Tool) {
	t.Helper()
	if _, err := svc.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		t.Fatal(err)
	}
}

func unregister(t *testing.T, svc *service.Server, names ...string) {
	t.Helper()
	if _, err := svc.UnregisterTools(t.Context(), &tooldexv1.UnregisterToolsRequest{Names: names}); err != nil {
		t.Fatal(err)
	}
}

// TestRestartKeepsRegistrations: what frontends registered, updated and
// removed on an embedded node is what a new process on the same data
// directory serves, before it serves anything.
func TestRestartKeepsRegistrations(t *testing.T) {
	dir := t.TempDir()
	node := startNode(t, dir)
	r := startReplica(t, node)
	register(t, r.svc, tool("alpha", "first"), tool("beta", "second"), tool("gamma", "third"))
	register(t, r.svc, tool("beta", "second, updated"))
	unregister(t, r.svc, "gamma")
	want := []string{"alpha=first", "beta=second, updated"}
	if got := names(t, r.svc); !slices.Equal(got, want) {
		t.Fatalf("before the restart: tools = %v, want %v (read-your-writes)", got, want)
	}
	r.stop()
	node.Close()

	node = startNode(t, dir)
	defer node.Close()
	r = startReplica(t, node)
	if got := names(t, r.svc); !slices.Equal(got, want) {
		t.Fatalf("after the restart: tools = %v, want %v", got, want)
	}
	r.stop()
}

// TestReplicasShareTheCatalog: a registration, update and removal on one
// replica reach the other through the journal.
func TestReplicasShareTheCatalog(t *testing.T) {
	node := startNode(t, t.TempDir())
	defer node.Close()
	a, b := startReplica(t, node), startReplica(t, node)
	defer a.stop()
	defer b.stop()

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"register on a", func() { register(t, a.svc, tool("alpha", "one"), tool("beta", "two")) }, []string{"alpha=one", "beta=two"}},
		{"update on b", func() { register(t, b.svc, tool("alpha", "one, again")) }, []string{"alpha=one, again", "beta=two"}},
		{"remove on a", func() { unregister(t, a.svc, "beta") }, []string{"alpha=one, again"}},
	}
	for _, st := range steps {
		st.do()
		for _, r := range []*replicaOf{a, b} {
			var got []string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if got = names(t, r.svc); slices.Equal(got, st.want) {
					break
				}
			}
			if !slices.Equal(got, st.want) {
				t.Fatalf("%s: tools = %v, want %v", st.name, got, st.want)
			}
		}
	}
}

// TestDataDirInUse: a second embedded server on a data directory in use
// is refused (JetStream would corrupt the store); the directory is free
// again once the first closes.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	first := startNode(t, dir)
	if n, err := replica.Start(replica.Config{DataDir: dir}); err == nil {
		n.Close()
		first.Close()
		t.Fatal("a second node on the same data directory started")
	}
	first.Close()
	startNode(t, dir).Close()
}
