package service

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tooldex/tooldex/auth"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func TestListToolsPages(t *testing.T) {
	c := newTestEnv(t)
	var all []*tooldexv1.Tool
	var want []string
	for i := range 25 {
		name := fmt.Sprintf("tool_%02d", i)
		all = append(all, tool(name, "d"))
		want = append(want, name)
	}
	register(t, c, all...)
	tests := []struct {
		size  int32
		pages int
	}{
		{0, 1}, {10, 3}, {25, 1}, {24, 2}, {1, 25}, {100000, 1},
	}
	for _, tt := range tests {
		var got []string
		pages := 0
		req := &tooldexv1.ListToolsRequest{PageSize: tt.size}
		for {
			resp, err := c.ListTools(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, tl := range resp.GetTools() {
				got = append(got, tl.GetName())
			}
			if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" || pages > 30 {
				break
			}
		}
		if !slices.Equal(got, want) || pages != tt.pages {
			t.Errorf("page size %d: %d pages of %v, want %d of %v", tt.size, pages, got, tt.pages, want)
		}
	}
	for _, bad := range []*tooldexv1.ListToolsRequest{{PageSize: -1}, {PageToken: "not base64!"}, {PageToken: string(make([]byte, 2000))}} {
		_, err := c.ListTools(t.Context(), bad)
		want := "page_token"
		if bad.PageSize < 0 {
			want = "page_size"
		}
		if status.Code(err) != codes.InvalidArgument || fieldOf(err) != want {
			t.Errorf("ListTools(%.40v): %v, want InvalidArgument on %s", bad, err, want)
		}
	}
}

func TestListHostsPages(t *testing.T) {
	s := New(Config{})
	for _, id := range []string{"c", "a", "b"} {
		if _, err := connectHost(t, s, nil, &tooldexv1.HostHello{HostId: id}, echo); err != nil {
			t.Fatal(err)
		}
	}
	// A host of another tenant is not listed.
	if _, err := connectHost(t, s, hostP("other", "b", "*"), &tooldexv1.HostHello{HostId: "z"}, echo); err != nil {
		t.Fatal(err)
	}
	var got []string
	req := &tooldexv1.ListHostsRequest{PageSize: 2}
	for range 5 {
		resp, err := s.ListHosts(auth.NewContext(t.Context(), principal("u", auth.DefaultTenant, auth.ScopeSearch)), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range resp.GetHosts() {
			got = append(got, h.GetHostId())
		}
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			break
		}
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("ListHosts pages: %v, want %v", got, want)
	}
}
