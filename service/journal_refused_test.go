package service

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/catalog"
)

// refusedTenant is the tenant of the journal-refusal tests; their host
// serves mcp__github__* there.
const refusedTenant = "a"

// journalReplica is a replica with a journal and the tiny hold of these
// tests.
func journalReplica(t *testing.T, cfg catalog.Config) *Server {
	t.Helper()
	s := New(Config{Logger: zaptest.NewLogger(t), Catalog: cfg})
	s.SetJournal(&memJournal{})
	return s
}

// toolAt returns refusedTenant's own tool name on s, nil when it holds
// none.
func toolAt(s *Server, name string) *tooldexv1.Tool {
	e := s.cat.Get(refusedTenant, name)
	if e == nil || e.Tenant() != refusedTenant {
		return nil
	}
	return e.Tool()
}

// waitTool waits until s holds name with description want.
func waitTool(t *testing.T, s *Server, name, want string) *tooldexv1.Tool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := toolAt(s, name)
		if got.GetDescription() == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v, never %q", name, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// refusedCount is how many refused writes s keeps.
func refusedCount(s *Server) (all, tenant int) {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return len(s.journal.refused), s.journal.perTenant[refusedTenant]
}

// TestJournalRefusedWhileHostServes checks a journaled registration this
// replica refuses, because its host serves the name, against a replica
// that never had the host: once the host left and its hold passed, both
// hold the same tool; a journaled removal or a later write of the name
// meanwhile wins over the refused write.
func TestJournalRefusedWhileHostServes(t *testing.T) {
	const name = "mcp__github__issue"
	hostTool := &tooldexv1.Tool{Name: name, Description: "served by the host here"}
	write := func(desc string) *tooldexv1.Tool {
		return &tooldexv1.Tool{Name: name, Description: desc,
			Source: &tooldexv1.ToolSource{Origin: tooldexv1.Origin_ORIGIN_FRONTEND}}
	}
	type op struct {
		tool *tooldexv1.Tool // nil: a removal
		rev  uint64
	}
	tests := []struct {
		name string
		ops  []op   // journaled while the host serves the name
		want string // the description held at the end, "" for none
	}{
		{"refused write applied", []op{{write("journaled"), 1}}, "journaled"},
		{"later write replaces it", []op{{write("first"), 1}, {write("second"), 2}}, "second"},
		{"older write skipped", []op{{write("second"), 2}, {write("first"), 1}}, "second"},
		{"removal drops it", []op{{write("journaled"), 1}, {nil, 2}}, ""},
		{"write after removal", []op{{write("first"), 1}, {nil, 2}, {write("third"), 3}}, "third"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := catalog.Config{Hold: 20 * time.Millisecond}
			s := journalReplica(t, cfg)
			never := journalReplica(t, cfg) // never had the host
			ack, stop := connectStoppable(t, s, hostP("github-host", refusedTenant, "mcp__github__*"),
				&tooldexv1.HostHello{HostId: "gh", Tools: []*tooldexv1.Tool{hostTool}})
			if r := ack.GetResults()[0].GetRejected(); r != "" {
				t.Fatalf("host refused: %s", r)
			}
			for _, o := range tc.ops {
				s.ApplyJournal(refusedTenant, name, o.tool, o.rev)
				never.ApplyJournal(refusedTenant, name, o.tool, o.rev)
			}
			if got := toolAt(s, name).GetDescription(); got != hostTool.GetDescription() {
				t.Fatalf("while the host serves: %q, want the host's", got)
			}
			wantKept := 1
			if tc.want == "" {
				wantKept = 0
			}
			if all, tenant := refusedCount(s); all != wantKept || tenant != wantKept {
				t.Errorf("refused writes kept = %d (tenant %d), want %d", all, tenant, wantKept)
			}

			stop()
			waitGone(t, s, "gh")
			if tc.want == "" {
				// Past the hold and a retry: the name stays empty.
				time.Sleep(5 * cfg.Hold)
				if got := toolAt(s, name); got != nil {
					t.Fatalf("after the host left: %v, want none", got)
				}
				if got := toolAt(never, name); got != nil {
					t.Fatalf("the replica without the host holds %v, want none", got)
				}
				return
			}
			got := waitTool(t, s, name, tc.want)
			if want := toolAt(never, name); !proto.Equal(got, want) {
				t.Errorf("after the host left: %v, want as the replica without the host: %v", got, want)
			}
			if all, _ := refusedCount(s); all != 0 {
				t.Errorf("refused writes kept after applying = %d, want 0", all)
			}
		})
	}
}

// TestJournalRefusedBounded checks a tenant keeps at most MaxTenantTools
// refused writes: one more is logged and skipped.
func TestJournalRefusedBounded(t *testing.T) {
	s := journalReplica(t, catalog.Config{Hold: time.Hour, MaxTenantTools: 1})
	p := hostP("github-host", refusedTenant, "mcp__github__*")
	// The first session serves one, ends: its name stays held for the hour.
	ack, stop := connectStoppable(t, s, p, &tooldexv1.HostHello{HostId: "gh",
		Tools: []*tooldexv1.Tool{{Name: "mcp__github__one", Description: "d"}}})
	if r := ack.GetResults()[0].GetRejected(); r != "" {
		t.Fatal(r)
	}
	stop()
	waitGone(t, s, "gh")
	// The second serves another (the tenant's one tool).
	ack, _ = connectStoppable(t, s, p, &tooldexv1.HostHello{HostId: "gh",
		Tools: []*tooldexv1.Tool{{Name: "mcp__github__two", Description: "d"}}})
	if r := ack.GetResults()[0].GetRejected(); r != "" {
		t.Fatal(r)
	}
	for i, n := range []string{"mcp__github__one", "mcp__github__two"} {
		s.ApplyJournal(refusedTenant, n, &tooldexv1.Tool{Name: n, Description: "journaled"}, uint64(i+1))
	}
	if all, tenant := refusedCount(s); all != 1 || tenant != 1 {
		t.Errorf("refused writes kept = %d (tenant %d), want 1 (MaxTenantTools)", all, tenant)
	}
}

// racingJournal is a memJournal that runs beforePut as a write reaches
// it: what happens on the replica between a registration's check and its
// write.
type racingJournal struct {
	memJournal
	beforePut func()
}

func (r *racingJournal) Put(ctx context.Context, tenant string, tools []*tooldexv1.Tool) ([]uint64, error) {
	if f := r.beforePut; f != nil {
		r.beforePut = nil
		f()
	}
	return r.memJournal.Put(ctx, tenant, tools)
}

// TestJournalRegisterRaceWithHost checks a frontend registration whose
// check passed, but whose name a host claimed before its write: the
// caller is told, yet the replica ends as the others, which apply the
// journaled batch name by name (the other tool at once, the host's name
// once it is free).
func TestJournalRegisterRaceWithHost(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t), Catalog: catalog.Config{Hold: 20 * time.Millisecond}})
	var stop func()
	j := &racingJournal{}
	j.beforePut = func() {
		var ack *tooldexv1.HelloAck
		ack, stop = connectStoppable(t, s, hostP("github-host", refusedTenant, "mcp__github__*"), &tooldexv1.HostHello{HostId: "gh",
			Tools: []*tooldexv1.Tool{{Name: "mcp__github__issue", Description: "served by the host here"}}})
		if r := ack.GetResults()[0].GetRejected(); r != "" {
			t.Fatal(r)
		}
	}
	s.SetJournal(j)
	ctx := auth.NewContext(t.Context(), principal("u", refusedTenant, allButAdmin...))
	_, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		{Name: "mcp__github__issue", Description: "the frontend's"}, {Name: "other", Description: "the frontend's"},
	}})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("RegisterTools = %v, want AlreadyExists (the host claimed the name)", err)
	}
	if got := toolAt(s, "other").GetDescription(); got != "the frontend's" {
		t.Errorf("other = %q, want the journaled write", got)
	}
	if got := toolAt(s, "mcp__github__issue").GetDescription(); got != "served by the host here" {
		t.Errorf("while the host serves: %q, want the host's", got)
	}
	stop()
	waitGone(t, s, "gh")
	waitTool(t, s, "mcp__github__issue", "the frontend's")
}
