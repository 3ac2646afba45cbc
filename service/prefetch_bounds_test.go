package service

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func TestPrefetchRequestBounds(t *testing.T) {
	c := newTestEnv(t)
	names := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", size, i)
		}
		return out
	}
	tests := []struct {
		name  string
		req   *tooldexv1.PrefetchRequest
		field string // "" means accepted
	}{
		{"at the bounds", &tooldexv1.PrefetchRequest{Message: "time zone", SessionId: strings.Repeat("s", MaxPrefetchSessionID), Loaded: names(MaxPrefetchLoaded, MaxPrefetchName), Context: make([]string, MaxPrefetchContext)}, ""},
		{"session id", &tooldexv1.PrefetchRequest{Message: "time zone", SessionId: strings.Repeat("s", MaxPrefetchSessionID+1)}, "session_id"},
		{"loaded count", &tooldexv1.PrefetchRequest{Message: "time zone", Loaded: names(MaxPrefetchLoaded+1, 4)}, "loaded"},
		{"loaded name", &tooldexv1.PrefetchRequest{Message: "time zone", Loaded: []string{"a", strings.Repeat("n", MaxPrefetchName+1)}}, "loaded[1]"},
		{"context count", &tooldexv1.PrefetchRequest{Message: "time zone", Context: make([]string, MaxPrefetchContext+1)}, "context"},
	}
	for _, tt := range tests {
		_, err := c.Prefetch(t.Context(), tt.req)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(fmt.Sprint(violationFields(status.Convert(err))), tt.field) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT on %s", tt.name, err, tt.field)
		}
	}
}

// TestPrefetchSessionMemoryBounded reproduces the row: loaded
// names and session ids had no byte cap, and 100 requests kept 406 MB.
func TestPrefetchSessionMemoryBounded(t *testing.T) {
	ss := newSessions(time.Now)
	ss.limit = 1 << 20
	loaded := make([]string, MaxPrefetchLoaded)
	for i := range loaded {
		loaded[i] = fmt.Sprintf("%0*d", MaxPrefetchName, i)
	}
	for i := range 100 {
		ss.get(fmt.Sprintf("%0*d", MaxPrefetchSessionID, i), loaded)
		if ss.bytes > ss.limit+MaxPrefetchLoaded*(MaxPrefetchName+nameCost) {
			t.Fatalf("after %d requests: %d bytes kept, limit %d", i+1, ss.bytes, ss.limit)
		}
	}
	kept := keptBytes(t, ss)
	if kept > ss.limit {
		t.Errorf("sessions keep %d bytes, limit %d", kept, ss.limit)
	}
}

// keptBytes returns what the sessions keep, checking that it is what they
// account for and that no session keeps more than sessionNames names.
func keptBytes(t *testing.T, ss *sessions) int {
	t.Helper()
	kept := 0
	for _, s := range ss.lru.Values() {
		kept += len(s.id) + nameCost
		if len(s.order) > sessionNames {
			t.Errorf("session keeps %d names, at most %d", len(s.order), sessionNames)
		}
		for _, n := range s.order {
			kept += len(n) + nameCost
		}
	}
	if kept != ss.bytes {
		t.Errorf("accounted %d bytes, sessions keep %d", ss.bytes, kept)
	}
	return kept
}
