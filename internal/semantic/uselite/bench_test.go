package uselite

import (
	"github.com/tooldex/tooldex/internal/cputime"
	"runtime"
	"testing"
)

// query25 is a task query of 25 words.
const query25 = "Find the cheapest direct flight from Berlin to Lisbon next Friday morning, then book a hotel near the old town for three nights with free cancellation"

// BenchmarkEmbedQuery is one 25-word query through the model, on one core.
func BenchmarkEmbedQuery(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, Dim)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	cpu := cputime.Thread()
	for b.Loop() {
		m.VectorTo(dst, query25)
	}
	b.ReportMetric(float64((cputime.Thread()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(len(m.tok.Encode(nil, query25))), "tokens")
}

// BenchmarkTokenize is the tokenizer alone on the same query.
func BenchmarkTokenize(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	var s tokState
	var ids []int32
	b.ReportAllocs()
	for b.Loop() {
		ids = s.encode(m.tok, ids[:0], query25)
	}
}

// toolText is a tool text of the usual length (about 60 words, 100 tokens).
const toolText = "github create issue. Create a new issue in a GitHub repository. Use it to report bugs, request features or track tasks; the issue gets a number and a URL. Parameters: owner The account owner of the repository; repo The name of the repository; title The title of the issue; body The contents of the issue; labels Labels to associate with this issue; assignees Logins for users to assign to this issue"

// BenchmarkEmbedTool is one tool text through the model, on one core.
func BenchmarkEmbedTool(b *testing.B) {
	m, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, Dim)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := cputime.Thread()
	for b.Loop() {
		m.VectorTo(dst, toolText)
	}
	b.ReportMetric(float64((cputime.Thread()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(len(m.tok.Encode(nil, toolText))), "tokens")
}
