package service

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Metrics are tooldex's Prometheus metrics, on a registry of their own (no
// global state). A nil *Metrics records nothing.
type Metrics struct {
	Registry *prometheus.Registry

	rpcs     *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	executes *prometheus.CounterVec
	execTime *prometheus.HistogramVec
	fallback prometheus.Counter
	audits   *prometheus.CounterVec

	// rpcSeries caches each method's and code's series (rpcKey ->
	// *rpcSeries): WithLabelValues hashes the labels and takes a lock on
	// every call.
	rpcSeries sync.Map

	// tools and hosts bound the tool and host label values: a name
	// becomes a label only if the call found the tool, and only the first
	// MaxToolLabels (MaxHostLabels) do; the rest are counted as "other".
	tools, hosts labelSet
}

// Bounds on label values: every value is a time series kept for ever.
const (
	MaxToolLabels = 2000
	MaxHostLabels = 500
	otherLabel    = "other"
)

// labelSet admits at most max distinct label values.
type labelSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
	max  int
}

// get returns v, or "other" once max other values were admitted (or for
// a value Prometheus could not take).
func (l *labelSet) get(v string) string {
	if !utf8.ValidString(v) {
		return otherLabel
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= l.max {
		return otherLabel
	}
	if l.seen == nil {
		l.seen = make(map[string]struct{})
	}
	l.seen[v] = struct{}{}
	return v
}

type rpcKey struct {
	method string
	code   codes.Code
}

type rpcSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// NewMetrics creates the metrics and registers the Go runtime collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tooldex_rpc_requests_total", Help: "RPCs handled, by method and status code.",
		}, []string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tooldex_rpc_duration_seconds", Help: "RPC latency, by method.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 12),
		}, []string{"method"}),
		executes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tooldex_execute_total", Help: "Execute outcomes, by tool and host.",
		}, []string{"tool", "host", "outcome"}),
		execTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tooldex_execute_duration_seconds", Help: "Execute latency, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"tool"}),
		audits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tooldex_audit_records_total", Help: "Audited actions (executions, registrations, unregistrations), by kind and outcome.",
		}, []string{"kind", "outcome"}),
		fallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tooldex_semantic_fallbacks_total", Help: "Ranked searches answered without dense retrieval because embedding the query failed or timed out.",
		}),
	}
	m.tools.max, m.hosts.max = MaxToolLabels, MaxHostLabels
	m.Registry.MustRegister(m.rpcs, m.latency, m.executes, m.execTime, m.fallback, m.audits,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watch registers gauges that read the server's state when scraped.
func (m *Metrics) watch(s *Server) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_hosts_connected", Help: "Connected tool-host sessions."},
			func() float64 { return float64(len(s.reg.Hosts())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_calls_in_flight", Help: "Execute calls running on hosts."},
			func() float64 {
				n := 0
				for _, h := range s.reg.Hosts() {
					n += h.InFlight
				}
				return float64(n)
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_index_tools", Help: "Registered tools (core and deferred)."},
			func() float64 { return float64(s.Index().Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_index_deferred_tools", Help: "Searchable (deferred) tools."},
			func() float64 { return float64(s.Index().Deferred()) }),
	)
	if s.dense != nil {
		st := s.dense.store
		m.Registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_semantic_embedded_tools", Help: "Tools with a vector."},
				func() float64 { return float64(st.Stats().Embedded) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tooldex_semantic_pending_tools", Help: "Tools waiting to be embedded."},
				func() float64 { return float64(st.Stats().Pending) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tooldex_semantic_embed_failures_total", Help: "Failed batches of tool embeddings (retried)."},
				func() float64 { return float64(st.Stats().Failures) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tooldex_semantic_skipped_tools_total", Help: "Tools whose text the embedder refused (ranked without dense retrieval)."},
				func() float64 { return float64(st.Stats().Skipped) }),
		)
	}
}

func (m *Metrics) semanticFallback() {
	if m == nil {
		return
	}
	m.fallback.Inc()
}

// audited counts an audit record; kind and outcome are from fixed sets.
func (m *Metrics) audited(kind, outcome string) {
	if m == nil {
		return
	}
	m.audits.WithLabelValues(kind, outcome).Inc()
}

func (m *Metrics) execute(tool, host, outcome string, took time.Duration) {
	if m == nil {
		return
	}
	// A name the catalog does not have is no label: anyone can send one.
	if outcome == "not_found" {
		tool = otherLabel
	} else {
		tool = m.tools.get(tool)
	}
	if host != "" {
		host = m.hosts.get(host)
	}
	m.executes.WithLabelValues(tool, host, outcome).Inc()
	m.execTime.WithLabelValues(tool).Observe(took.Seconds())
}

// UnaryInterceptor counts and times unary RPCs.
func (m *Metrics) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		m.observe(info.FullMethod, err, time.Since(start))
		return resp, err
	}
}

// StreamInterceptor counts and times streams (host sessions).
func (m *Metrics) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		m.observe(info.FullMethod, err, time.Since(start))
		return err
	}
}

func (m *Metrics) observe(method string, err error, took time.Duration) {
	if m == nil {
		return
	}
	k := rpcKey{method, status.Code(err)}
	v, ok := m.rpcSeries.Load(k)
	if !ok {
		v, _ = m.rpcSeries.LoadOrStore(k, &rpcSeries{
			count:   m.rpcs.WithLabelValues(method, k.code.String()),
			latency: m.latency.WithLabelValues(method),
		})
	}
	series := v.(*rpcSeries)
	series.count.Inc()
	series.latency.Observe(took.Seconds())
}
