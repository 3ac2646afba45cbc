package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/internal/demo"
	"github.com/tooldex/tooldex/internal/toolfile"
)

func demoServer(b testing.TB) *Server {
	s := New(Config{})
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RegisterTools(b.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSearchHandler measures what the gRPC Search handler does
// in-process on the demo catalog: ranking, attaching definitions,
// rendering the text, and marshalling the response (as the codec does).
// Sub-benchmarks per schema view.
func BenchmarkSearchHandler(b *testing.B) {
	s := demoServer(b)
	qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	for _, view := range []tooldexv1.SchemaView{viewStruct, viewJSON, viewNone} {
		b.Run(strings.ToLower(strings.TrimPrefix(view.String(), "SCHEMA_VIEW_")), func(b *testing.B) {
			i, size := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				resp, err := s.search(context.Background(), &tooldexv1.SearchRequest{Query: qs[i%len(qs)], SchemaView: view})
				if err != nil {
					b.Fatal(err)
				}
				out, err := proto.Marshal(resp)
				if err != nil {
					b.Fatal(err)
				}
				size += len(out)
				i++
			}
			b.ReportMetric(float64(size)/float64(i), "resp-bytes")
		})
	}
}

// BenchmarkSearchHandlerMetrics is BenchmarkSearchHandler's struct view
// called through the RPC metrics interceptor, as the server runs with
// --metrics-addr: "off" calls the handler directly, "on" through
// (*Metrics).UnaryInterceptor, so the two show what the metrics cost.
func BenchmarkSearchHandlerMetrics(b *testing.B) {
	s := demoServer(b)
	qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	info := &grpc.UnaryServerInfo{FullMethod: tooldexv1.DiscoveryService_Search_FullMethodName}
	handler := func(ctx context.Context, req any) (any, error) {
		return s.search(ctx, req.(*tooldexv1.SearchRequest))
	}
	direct := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	}
	for _, tt := range []struct {
		name string
		icpt grpc.UnaryServerInterceptor
	}{{"off", direct}, {"on", NewMetrics().UnaryInterceptor()}} {
		b.Run(tt.name, func(b *testing.B) {
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				resp, err := tt.icpt(context.Background(), &tooldexv1.SearchRequest{Query: qs[i%len(qs)], SchemaView: viewStruct}, info, handler)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := proto.Marshal(resp.(*tooldexv1.SearchResponse)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkSearchDecode measures what a Go client spends decoding a Search
// response (the demo catalog, the queries of BenchmarkSearchHandler) in
// each schema view.
func BenchmarkSearchDecode(b *testing.B) {
	s := demoServer(b)
	qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	for _, view := range []tooldexv1.SchemaView{viewStruct, viewJSON, viewNone} {
		var wire [][]byte
		for _, q := range qs {
			resp, err := s.search(context.Background(), &tooldexv1.SearchRequest{Query: q, SchemaView: view})
			if err != nil {
				b.Fatal(err)
			}
			out, err := proto.Marshal(resp)
			if err != nil {
				b.Fatal(err)
			}
			wire = append(wire, out)
		}
		b.Run(strings.ToLower(strings.TrimPrefix(view.String(), "SCHEMA_VIEW_")), func(b *testing.B) {
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				var resp tooldexv1.SearchResponse
				if err := proto.Unmarshal(wire[i%len(wire)], &resp); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkDiscoverHandler is BenchmarkSearchHandler for Discover, whose
// text carries every result's schema as JSON.
func BenchmarkDiscoverHandler(b *testing.B) {
	s := demoServer(b)
	qs := []string{"send a message to a slack channel", "read a file from disk", "open an issue on github", "run a job every hour"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		resp, err := s.discover(context.Background(), &tooldexv1.DiscoverRequest{Query: qs[i%len(qs)]})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRPCMetricsInterceptor is the RPC metrics interceptor alone,
// around a handler that does nothing: its own cost per RPC.
func BenchmarkRPCMetricsInterceptor(b *testing.B) {
	icpt := NewMetrics().UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: tooldexv1.DiscoveryService_Search_FullMethodName}
	handler := func(_ context.Context, req any) (any, error) { return req, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := icpt(context.Background(), 1, info, handler); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRPCMetricsStreamMessages is the stream metrics interceptor
// around a host session's stream: the cost of counting one message sent
// and one received (what an Execute adds on its host's stream).
func BenchmarkRPCMetricsStreamMessages(b *testing.B) {
	icpt := NewMetrics().StreamInterceptor()
	info := &grpc.StreamServerInfo{FullMethod: tooldexv1.HostService_Connect_FullMethodName, IsClientStream: true, IsServerStream: true}
	ss := &pipeHost{ctx: context.Background()}
	b.ReportAllocs()
	err := icpt(nil, ss, info, func(_ any, ss grpc.ServerStream) error {
		for b.Loop() {
			if err := ss.SendMsg(nil); err != nil {
				return err
			}
			if err := ss.RecvMsg(nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
