package e2e

import (
	"strings"
	"testing"
)

func TestClientBenchSearch(t *testing.T) {
	s := startServer(t, "--demo-catalog", "--demo-host=false")
	out, err := s.client(t, nil, "bench", "search", "--duration", "300ms", "--concurrency", "4", "slack", "send")
	if err != nil {
		t.Fatalf("tooldex bench search: %v\n%s", err, out)
	}
	for _, want := range []string{"4 caller(s)", "search ", "health (floor)", "p50", "QPS"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench output lacks %q:\n%s", want, out)
		}
	}
	for _, view := range []string{"json", "none"} {
		out, err := s.client(t, nil, "bench", "search", "--duration", "200ms", "--concurrency", "2", "--floor=false", "--schema", view)
		if err != nil {
			t.Fatalf("tooldex bench search --schema %s: %v\n%s", view, err, out)
		}
		if !strings.Contains(out, "schema view "+view) || !strings.Contains(out, "search ") {
			t.Errorf("bench --schema %s output:\n%s", view, out)
		}
	}
	out, err = s.client(t, nil, "bench", "search", "--duration", "300ms", "--concurrency", "3", "--interleave", "50ms", "--schema", "json")
	if err != nil {
		t.Fatalf("tooldex bench search --interleave: %v\n%s", err, out)
	}
	for _, want := range []string{"interleaved in 50ms slices", "search ", "health (floor)"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench --interleave output lacks %q:\n%s", want, out)
		}
	}
	if out, err := s.client(t, nil, "bench", "execute"); err == nil {
		t.Errorf("tooldex bench execute succeeded, want a usage error:\n%s", out)
	}
}
