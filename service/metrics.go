package service

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
)

// Metrics are tooldex's Prometheus metrics, on a registry of their own (no
// global state): the standard gRPC server series of go-grpc-middleware's
// provider (grpc_server_started_total, grpc_server_handled_total,
// grpc_server_msg_received_total, grpc_server_msg_sent_total,
// grpc_server_handling_seconds), and tooldex's own. A nil *Metrics records
// nothing.
type Metrics struct {
	Registry *prometheus.Registry

	rpcs     *grpcprom.ServerMetrics
	executes *prometheus.CounterVec
	execTime *prometheus.HistogramVec
	fallback prometheus.Counter
	audits   *prometheus.CounterVec

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

// NewMetrics creates the metrics and registers the Go runtime collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		// The provider's default buckets start at 5ms: most tooldex RPCs
		// take less. These go from 10µs to 42s.
		rpcs: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets(prometheus.ExponentialBuckets(0.00001, 4, 12)))),
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
	m.Registry.MustRegister(m.rpcs, m.executes, m.execTime, m.fallback, m.audits,
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
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tooldex_semantic_file_tools_total", Help: "Tools whose vector was read from the vector file (--vector-cache) instead of embedded."},
				func() float64 { return float64(st.Stats().FromFile) }),
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

// UnaryInterceptor counts and times unary RPCs (the grpc_server_* series).
func (m *Metrics) UnaryInterceptor() grpc.UnaryServerInterceptor {
	if m == nil {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return handler(ctx, req)
		}
	}
	return m.rpcs.UnaryServerInterceptor()
}

// StreamInterceptor counts and times streams (host sessions) and their
// messages.
func (m *Metrics) StreamInterceptor() grpc.StreamServerInterceptor {
	if m == nil {
		return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			return handler(srv, ss)
		}
	}
	return m.rpcs.StreamServerInterceptor()
}

// InitializeMetrics creates the grpc_server_* series of every method gs
// serves at zero, so that dashboards' rates exist before the first call.
// Call it once every service is registered on gs.
func (m *Metrics) InitializeMetrics(gs *grpc.Server) {
	if m == nil {
		return
	}
	m.rpcs.InitializeMetrics(gs)
}
