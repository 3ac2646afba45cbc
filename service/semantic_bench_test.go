package service

import (
	"context"
	"fmt"
	"github.com/tooldex/tooldex/internal/cputime"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/eval"
	"github.com/tooldex/tooldex/internal/semantic"
)

// benchDatasets are the development datasets (shared/datasets), read when
// present: their tools make a realistic catalog and their queries are task
// queries.
var benchDatasets = []string{"livemcpbench", "metatool", "toolbench_stb", "bfcl", "toolret_apigen", "gorilla_apibench"}

// benchCatalog loads up to n tools and every query of the datasets, or
// skips.
func benchCatalog(b *testing.B, n int) ([]eval.Tool, []string) {
	b.Helper()
	dir := filepath.Join("..", "..", "shared", "datasets")
	if d := os.Getenv("TOOLDEX_DATASETS"); d != "" {
		dir = d
	}
	var tools []eval.Tool
	var queries []string
	seen := map[string]bool{}
	for _, name := range benchDatasets {
		ds, err := eval.Load(filepath.Join(dir, name, "tools.jsonl"), filepath.Join(dir, name, "queries.jsonl"))
		if err != nil {
			b.Skipf("datasets not found (%v); set TOOLDEX_DATASETS", err)
		}
		for _, t := range ds.Tools {
			for seen[t.Name] {
				t.Name += "_"
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
		for _, q := range ds.Queries {
			queries = append(queries, q.Text)
		}
	}
	// Repeat the tools under new names up to n.
	for i := 0; len(tools) < n; i++ {
		t := tools[i]
		t.Name = fmt.Sprintf("%s_%d", t.Name, i)
		tools = append(tools, t)
	}
	return tools[:n], queries
}

// BenchmarkSearchFused compares the ranking of a Search with and without
// dense retrieval, side by side on the same index and queries: lexical
// (index.Run, 10 hits) and fused (embed the query with the static model —
// every query is new: there are more queries than the query cache holds —,
// index.Run with FuseCandidates hits, FuseDense). It reports the p50 per
// query and the p90 (wall time) and the mean CPU time of the thread (the
// machine may be shared).
func BenchmarkSearchFused(b *testing.B) {
	for _, n := range []int{10000} {
		tools, queries := benchCatalog(b, n)
		ix := index.New(index.DefaultConfig())
		for _, t := range tools {
			ix.Upsert(index.Doc{Name: t.Name, Description: t.Description, Params: index.ParamText(t.InputSchema)})
		}
		emb, err := semantic.Local(semantic.ModeStatic)
		if err != nil {
			b.Fatal(err)
		}
		st := semantic.NewStore(semantic.StoreConfig{Embedder: emb, Batch: 256, QueryCache: 64})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- st.Run(ctx) }()
		for _, t := range tools {
			st.Put(t.Name, semantic.ToolText(t.Name, "", t.Description, index.ParamText(t.InputSchema)))
		}
		for st.Stats().Pending > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		run := func(b *testing.B, fused bool) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			lat := make([]time.Duration, 0, b.N)
			i := 0
			cpu := cputime.Thread()
			for b.Loop() {
				q := queries[i%len(queries)]
				if len(q) > index.MaxQueryBytes {
					q = q[:index.MaxQueryBytes]
				}
				i++
				t0 := time.Now()
				if fused {
					qv, err := st.Embed(ctx, q)
					if err != nil && ctx.Err() == nil {
						b.Fatal(err)
					}
					res := ix.Run(index.Query{Kind: index.KindKeyword, Text: q}, index.Options{Max: FuseCandidates, BlendWords: true}) // as Server.rank
					FuseDense(st, qv, res, DefaultSemanticRatio, 10, nil)
				} else {
					ix.Run(index.Query{Kind: index.KindKeyword, Text: q}, index.Options{Max: 10})
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(float64((cputime.Thread()-cpu).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*9/10].Nanoseconds())/1e3, "p90-µs")
		}
		b.Run(fmt.Sprintf("tools=%d/lexical", n), func(b *testing.B) { run(b, false) })
		b.Run(fmt.Sprintf("tools=%d/fused-static", n), func(b *testing.B) { run(b, true) })
	}
}
