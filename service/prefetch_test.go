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

func prefetchServer(t *testing.T) *Server {
	t.Helper()
	s := New(Config{})
	tools := []*tooldexv1.Tool{
		{Name: "time_now", Description: "Returns the current time in a time zone.", SearchHint: "clock time zone now"},
		{Name: "time_convert", Description: "Converts a time to another time zone.", SearchHint: "time zone convert"},
		{Name: "calculate", Description: "Evaluates an arithmetic expression.", SearchHint: "math calculator"},
		{Name: "mcp__slack__send_message", Description: "Send a message to a Slack channel."},
	}
	if _, err := s.RegisterTools(t.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		t.Fatal(err)
	}
	return s
}

func names(rs []*tooldexv1.SearchResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.GetTool().GetName()
	}
	return out
}

func TestPrefetchDoesNotRepeatWithinASession(t *testing.T) {
	s := prefetchServer(t)
	ctx := t.Context()
	msg := "what time is it in the Tokyo time zone"
	first, err := s.Prefetch(ctx, &tooldexv1.PrefetchRequest{SessionId: "a", Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(first.GetResults()); len(got) == 0 || !strings.HasPrefix(got[0], "time_") {
		t.Fatalf("Prefetch(%q) = %v, want a time tool first", msg, got)
	}
	if !strings.Contains(first.GetText(), "ExecuteTool") {
		t.Errorf("Prefetch text = %q, want the ExecuteTool reminder", first.GetText())
	}
	again, err := s.Prefetch(ctx, &tooldexv1.PrefetchRequest{SessionId: "a", Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names(again.GetResults()) {
		for _, m := range names(first.GetResults()) {
			if n == m {
				t.Errorf("second Prefetch in session a repeated %q", n)
			}
		}
	}
	other, _ := s.Prefetch(ctx, &tooldexv1.PrefetchRequest{SessionId: "b", Message: msg})
	if len(other.GetResults()) == 0 {
		t.Error("Prefetch in another session recommended nothing, want the time tools again")
	}
	loaded, _ := s.Prefetch(ctx, &tooldexv1.PrefetchRequest{SessionId: "c", Message: msg, Loaded: []string{"time_now", "time_convert"}})
	for _, n := range names(loaded.GetResults()) {
		if strings.HasPrefix(n, "time_") {
			t.Errorf("Prefetch recommended loaded tool %q", n)
		}
	}
}

func TestPrefetchDefaultsAndErrors(t *testing.T) {
	s := prefetchServer(t)
	tests := []struct {
		name     string
		req      *tooldexv1.PrefetchRequest
		wantCode codes.Code
		wantMax  int
	}{
		{name: "default limit", req: &tooldexv1.PrefetchRequest{Message: "time zone clock convert now"}, wantMax: 3},
		{name: "limit 1", req: &tooldexv1.PrefetchRequest{Message: "time zone clock convert now", Limit: 1}, wantMax: 1},
		{name: "empty message", req: &tooldexv1.PrefetchRequest{}, wantMax: 0},
		{name: "negative limit", req: &tooldexv1.PrefetchRequest{Message: "x", Limit: -1}, wantCode: codes.InvalidArgument},
		{name: "min score above 1", req: &tooldexv1.PrefetchRequest{Message: "x", MinScore: 2}, wantCode: codes.InvalidArgument},
		{name: "megabyte message is cut, not refused", req: &tooldexv1.PrefetchRequest{Message: strings.Repeat("time zone ", 100000)}, wantMax: 3},
		{name: "short message borrows context", req: &tooldexv1.PrefetchRequest{Message: "yes", Context: []string{"convert this time to another time zone"}}, wantMax: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := s.Prefetch(t.Context(), tt.req)
			if status.Code(err) != tt.wantCode {
				t.Fatalf("Prefetch() code = %v (%v), want %v", status.Code(err), err, tt.wantCode)
			}
			if err == nil && len(resp.GetResults()) > tt.wantMax {
				t.Errorf("Prefetch() = %d results, want at most %d", len(resp.GetResults()), tt.wantMax)
			}
			for _, r := range resp.GetResults() {
				if r.GetScore() < prefetchMinScore {
					t.Errorf("result %s score %.3f under the default minimum", r.GetTool().GetName(), r.GetScore())
				}
			}
		})
	}
	if resp, _ := s.Prefetch(t.Context(), &tooldexv1.PrefetchRequest{Message: "yes", Context: []string{"convert this time to another time zone"}}); len(resp.GetResults()) == 0 {
		t.Error("short message with context recommended nothing")
	}
}

func TestSessionsAreBounded(t *testing.T) {
	now := time.Unix(0, 0)
	ss := newSessions(func() time.Time { return now })
	for i := range maxSessions + 50 {
		ss.record(fmt.Sprint("s", i), []string{"t"})
	}
	if got := ss.len(); got != maxSessions {
		t.Errorf("sessions after %d = %d, want %d (LRU cap)", maxSessions+50, got, maxSessions)
	}
	keptBytes(t, ss) // the sessions the cap forgot are out of the account
	// Names per session are capped.
	many := make([]string, sessionNames+1)
	for i := range many {
		many[i] = fmt.Sprint("tool", i)
	}
	ss.record("big", many)
	big := ss.get("big", nil)
	if got := len(big.seen); got != sessionKeep {
		t.Errorf("names kept after %d = %d, want %d", len(many), got, sessionKeep)
	}
	if big.has("tool0") || !big.has(many[len(many)-1]) {
		t.Error("eviction dropped the newest names instead of the oldest")
	}
	// Idle sessions expire.
	now = now.Add(sessionTTL + time.Second)
	ss.record("fresh", []string{"t"})
	if got := ss.len(); got != 1 {
		t.Errorf("sessions after the TTL = %d, want 1", got)
	}
	keptBytes(t, ss)
}

func BenchmarkPrefetch(b *testing.B) {
	s := New(Config{})
	var tools []*tooldexv1.Tool
	for i := range 1000 {
		tools = append(tools, &tooldexv1.Tool{
			Name:        fmt.Sprintf("tool_%d_%s", i, []string{"time", "file", "slack", "github", "math"}[i%5]),
			Description: fmt.Sprintf("Tool %d does %s things with %s.", i, []string{"time", "file", "chat", "code", "number"}[i%5], []string{"zones", "paths", "channels", "issues", "sums"}[i%5]),
		})
	}
	if _, err := s.RegisterTools(b.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		b.Fatal(err)
	}
	req := &tooldexv1.PrefetchRequest{Message: "can you post the build status to the team slack channel and open a github issue"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req.SessionId = fmt.Sprint("s", i%100)
		if _, err := s.Prefetch(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
