package service

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tooldex/tooldex/demo"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolfile"
)

func demoServer(b *testing.B) *Server {
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
func BenchmarkSearchHandler(b *testing.B) {
	s := demoServer(b)
	qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		resp, err := s.search(&tooldexv1.SearchRequest{Query: qs[i%len(qs)]})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
		i++
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
		resp, err := s.discover(&tooldexv1.DiscoverRequest{Query: qs[i%len(qs)]})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
