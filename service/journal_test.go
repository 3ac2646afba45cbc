package service

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// memJournal is a journal in memory: each write gets the next revision.
type memJournal struct {
	mu  sync.Mutex
	rev uint64
}

func (m *memJournal) next(n int) []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	revs := make([]uint64, n)
	for i := range revs {
		m.rev++
		revs[i] = m.rev
	}
	return revs
}

func (m *memJournal) Put(_ context.Context, _ string, tools []*tooldexv1.Tool) ([]uint64, error) {
	return m.next(len(tools)), nil
}

func (m *memJournal) Remove(_ context.Context, _ string, names []string) ([]uint64, error) {
	return m.next(len(names)), nil
}

// TestJournaledTools: what a replica writes back to a journal that lost
// its store is the frontend registrations it holds, by tenant, as the
// catalog stores them: not the removed ones, not the ones never journaled.
func TestJournaledTools(t *testing.T) {
	s := New(Config{Logger: zaptest.NewLogger(t)})
	ctx := context.Background()
	if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{{Name: "before", Description: "registered before the journal"}}}); err != nil {
		t.Fatal(err)
	}
	s.SetJournal(&memJournal{})
	if _, err := s.RegisterTools(ctx, &tooldexv1.RegisterToolsRequest{Tools: []*tooldexv1.Tool{
		{Name: "alpha", Description: "kept"}, {Name: "beta", Description: "removed"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UnregisterTools(ctx, &tooldexv1.UnregisterToolsRequest{Names: []string{"beta"}}); err != nil {
		t.Fatal(err)
	}
	s.ApplyJournal("acme", "gamma", &tooldexv1.Tool{Name: "gamma", Description: "from another replica"}, 100)

	var got []string
	for _, jt := range s.JournaledTools() {
		if jt.Tool.GetSource().GetOrigin() != tooldexv1.Origin_ORIGIN_FRONTEND {
			t.Errorf("%s/%s: origin %v, want the catalog's FRONTEND", jt.Tenant, jt.Tool.GetName(), jt.Tool.GetSource().GetOrigin())
		}
		got = append(got, jt.Tenant+"/"+jt.Tool.GetName()+"="+jt.Tool.GetDescription())
	}
	slices.Sort(got)
	want := []string{"acme/gamma=from another replica", auth.DefaultTenant + "/alpha=kept"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("JournaledTools = %v, want %v", got, want)
	}
}
