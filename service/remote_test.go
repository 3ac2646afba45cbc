package service

import (
	"context"
	"slices"
	"testing"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// hostsForwarder is a Forwarder whose other replicas hold hosts and run
// nothing.
type hostsForwarder struct{ hosts []RemoteHost }

func (f hostsForwarder) Serves(string, string) bool { return false }
func (f hostsForwarder) Forward(context.Context, ForwardCall) (ForwardResult, error) {
	return ForwardResult{}, nil
}
func (f hostsForwarder) Hosts() []RemoteHost { return f.hosts }

// TestListHostsRemote: ListHosts lists the other replicas' hosts with this
// replica's, marked with their replica, sorted and paged as one list, and
// scoped to the caller's tenant (and the shared catalog's hosts).
func TestListHostsRemote(t *testing.T) {
	s := New(Config{})
	if _, err := connectHost(t, s, nil, &tooldexv1.HostHello{HostId: "b"}, echo); err != nil {
		t.Fatal(err)
	}
	remote := func(replica, tenant, host string) RemoteHost {
		return RemoteHost{Replica: replica, HostAnnouncement: HostAnnouncement{
			Session: "s-" + host, HostID: host, Tenant: tenant, Principal: "p", Version: "v1", Slots: 4, InFlight: 1, Completed: 7,
			Tools: []*tooldexv1.Tool{{Name: "zeta"}, {Name: "alpha"}},
		}}
	}
	s.SetForwarder(hostsForwarder{hosts: []RemoteHost{
		remote("r2", auth.DefaultTenant, "c"), remote("r1", auth.DefaultTenant, "a"),
		remote("r1", auth.SharedTenant, "d"), remote("r2", "other", "e"), remote("r2", auth.DefaultTenant, "b"),
	}})
	list := func(tenant string) []string {
		t.Helper()
		var got []string
		req := &tooldexv1.ListHostsRequest{PageSize: 2}
		for range 10 {
			resp, err := s.ListHosts(auth.NewContext(t.Context(), principal("u", tenant, auth.ScopeSearch)), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range resp.GetHosts() {
				row := h.GetHostId() + "@" + h.GetReplica()
				if h.GetReplica() != "" && (!slices.Equal(h.GetTools(), []string{"alpha", "zeta"}) || h.GetVersion() != "v1" || h.GetSlots() != 4 || h.GetInFlight() != 1 || h.GetCompleted() != 7 || h.GetPrincipal() != "p") {
					t.Errorf("remote host %s = %v, want its announcement", row, h)
				}
				got = append(got, row)
			}
			if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
				break
			}
		}
		return got
	}
	tests := []struct {
		tenant string
		want   []string
	}{
		{auth.DefaultTenant, []string{"a@r1", "b@", "b@r2", "c@r2", "d@r1"}},
		{"other", []string{"d@r1", "e@r2"}},
	}
	for _, tc := range tests {
		if got := list(tc.tenant); !slices.Equal(got, tc.want) {
			t.Errorf("ListHosts as tenant %q: %v, want %v", tc.tenant, got, tc.want)
		}
	}
}
