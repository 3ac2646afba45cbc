package service

import (
	"testing"

	"github.com/tooldex/tooldex/demo"
	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
	"github.com/tooldex/tooldex/toolfile"
)

// BenchmarkSearchHandler measures the Search handler in-process on the demo
// catalog: ranking, attaching definitions and rendering the text.
func BenchmarkSearchHandler(b *testing.B) {
	s := New(Config{})
	tools, err := toolfile.Parse(demo.Name, demo.Catalog)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.RegisterTools(b.Context(), &tooldexv1.RegisterToolsRequest{Tools: tools}); err != nil {
		b.Fatal(err)
	}
	qs := []string{"slack send message", "read a file", "create github issue", "schedule cron job"}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		resp, err := s.Search(b.Context(), &tooldexv1.SearchRequest{Query: qs[i%len(qs)]})
		if err != nil {
			b.Fatal(err)
		}
		_ = resp
		i++
	}
}
