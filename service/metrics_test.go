package service

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// seriesOf counts the series of a metric family.
func seriesOf(t *testing.T, m *Metrics, name string) int {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

// TestMetricsLabelsBounded reproduces the row: each unknown tool
// name became a label, and /metrics reached 369 MB.
func TestMetricsLabelsBounded(t *testing.T) {
	m := NewMetrics()
	for i := range 100000 {
		m.execute(fmt.Sprint("bogus-", i), "", "not_found", time.Millisecond)
	}
	if n := seriesOf(t, m, "tooldex_execute_total"); n != 1 {
		t.Errorf("100,000 unknown names: %d series, want 1 (other)", n)
	}
	// Found tools and hosts: capped, the rest in "other".
	for i := range MaxToolLabels + 500 {
		m.execute(fmt.Sprint("tool-", i), fmt.Sprint("host-", i), "ok", time.Millisecond)
	}
	if n, max := seriesOf(t, m, "tooldex_execute_duration_seconds"), MaxToolLabels+1; n > max {
		t.Errorf("%d tools: %d latency series, want at most %d", MaxToolLabels+500, n, max)
	}
	if n, max := seriesOf(t, m, "tooldex_execute_total"), 1+MaxToolLabels+1; n > max {
		t.Errorf("%d tools and hosts: %d series, want at most %d", MaxToolLabels+500, n, max)
	}
	m.execute("bad-\xff", "", "ok", time.Millisecond) // would panic as a label
}

// sample returns the value of name's series whose labels include labels
// (a counter's value, a histogram's count), and whether there is one.
func sample(t *testing.T, m *Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := make(map[string]string)
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case s.GetCounter() != nil:
				return s.GetCounter().GetValue(), true
			case s.GetHistogram() != nil:
				return float64(s.GetHistogram().GetSampleCount()), true
			case s.GetGauge() != nil:
				return s.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestRPCMetricsStandardNames checks that RPCs, unary and streaming, are
// counted in the standard grpc_server_* series dashboards expect, beside
// tooldex's own, over a real gRPC connection.
func TestRPCMetricsStandardNames(t *testing.T) {
	m := NewMetrics()
	c := startLoopback(t, m)
	if _, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: "slack send message"}); err != nil {
		t.Fatalf("Search: %v", err)
	}
	if _, err := c.Search(t.Context(), &tooldexv1.SearchRequest{Query: "x", MaxResults: -1}); err == nil {
		t.Fatal("Search with max_results -1: no error")
	}
	params := &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewStringValue("hi")}}
	if _, err := c.Execute(t.Context(), &tooldexv1.ExecuteRequest{ToolName: "echo", Params: params}); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	search := map[string]string{"grpc_type": "unary", "grpc_service": "tooldex.v1.DiscoveryService", "grpc_method": "Search"}
	with := func(l map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	connect := map[string]string{"grpc_type": "bidi_stream", "grpc_service": "tooldex.v1.HostService", "grpc_method": "Connect"}
	for _, tt := range []struct {
		name     string
		labels   map[string]string
		min, max float64
	}{
		{"grpc_server_started_total", search, 2, 2},
		{"grpc_server_handled_total", with(search, "grpc_code", "OK"), 1, 1},
		{"grpc_server_handled_total", with(search, "grpc_code", "InvalidArgument"), 1, 1},
		{"grpc_server_handling_seconds", search, 2, 2},
		{"grpc_server_handled_total", map[string]string{"grpc_method": "Execute", "grpc_code": "OK"}, 1, 1},
		// The host's session: its hello and the call's result in, the
		// ack and the call out.
		{"grpc_server_started_total", connect, 1, 1},
		{"grpc_server_msg_received_total", connect, 2, 1e9},
		{"grpc_server_msg_sent_total", connect, 2, 1e9},
		{"tooldex_execute_total", map[string]string{"tool": "echo", "host": "bench", "outcome": "ok"}, 1, 1},
	} {
		got, ok := sample(t, m, tt.name, tt.labels)
		if !ok || got < tt.min || got > tt.max {
			t.Errorf("%s%v = %v (found: %v), want in [%v, %v]", tt.name, tt.labels, got, ok, tt.min, tt.max)
		}
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "tooldex_rpc_") {
			t.Errorf("%s: the per-RPC series are grpc_server_* now", f.GetName())
		}
	}
}

// TestRPCMetricsInitialized checks that InitializeMetrics creates every
// method's series at zero, and that a nil *Metrics' interceptors call
// through.
func TestRPCMetricsInitialized(t *testing.T) {
	m := NewMetrics()
	gs := grpc.NewServer()
	RegisterDiscoveryService(gs, New(Config{}))
	m.InitializeMetrics(gs)
	labels := map[string]string{"grpc_service": "tooldex.v1.DiscoveryService", "grpc_method": "ListHosts", "grpc_code": "Unavailable"}
	if got, ok := sample(t, m, "grpc_server_handled_total", labels); !ok || got != 0 {
		t.Errorf("grpc_server_handled_total%v = %v (found: %v), want 0", labels, got, ok)
	}

	var none *Metrics
	none.InitializeMetrics(gs)
	resp, err := none.UnaryInterceptor()(t.Context(), 1, &grpc.UnaryServerInfo{FullMethod: "/a/b"}, func(_ context.Context, req any) (any, error) { return req, nil })
	if resp != 1 || err != nil {
		t.Errorf("nil Metrics' unary interceptor: %v, %v, want the handler's 1, nil", resp, err)
	}
	called := false
	err = none.StreamInterceptor()(nil, nil, &grpc.StreamServerInfo{FullMethod: "/a/b"}, func(any, grpc.ServerStream) error { called = true; return nil })
	if !called || err != nil {
		t.Errorf("nil Metrics' stream interceptor: called %v, %v", called, err)
	}
}
