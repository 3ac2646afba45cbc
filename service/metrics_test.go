package service

import (
	"fmt"
	"testing"
	"time"
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
