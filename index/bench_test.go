package index

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tooldex/tooldex/internal/benchcorpus"
)

// The benchmark corpus replicates the tools of the shared tool-retrieval
// datasets (TOOLDEX_DATASETS, default ../../shared/datasets) under distinct
// names; queries are the datasets' own. internal/benchcorpus builds both, so
// the bleve comparison (bench/bleve) measures the same corpus and queries.

var (
	benchOnce sync.Once
	benchSet  *benchcorpus.Set
	benchErr  error

	corpusMu sync.Mutex
	corpora  = map[int]*benchCorpus{}
)

type benchCorpus struct {
	once        sync.Once
	ix          *Index
	n           int
	set         *benchcorpus.Set
	heapPerTool float64
}

// doc returns the i-th tool of the corpus: a dataset tool renamed
// <name>_r<round>.
func (c *benchCorpus) doc(i int) Doc {
	t := c.set.Tool(i)
	return Doc{Name: t.Name, Description: t.Description, Params: t.Params}
}

func benchDatasets(b *testing.B) *benchcorpus.Set {
	b.Helper()
	if err := loadBench(); err != nil {
		b.Skip(err)
	}
	return benchSet
}

// loadBench loads the benchmark corpus once.
func loadBench() error {
	benchOnce.Do(func() {
		dir := benchcorpus.Dir(filepath.Join("..", "..", "shared", "datasets"))
		benchSet, benchErr = benchcorpus.Load(dir, ParamText, MaxQueryBytes)
	})
	return benchErr
}

// benchQueries returns the benchmark corpus's "keyword", "task" or
// "discover" queries.
func benchQueries(b *testing.B, kind string) []string {
	switch kind {
	case "keyword":
		return benchDatasets(b).Keywords
	case "discover":
		var qs []string
		for _, q := range benchDatasets(b).Tasks {
			qs = append(qs, "discover:"+q)
		}
		return qs
	}
	return benchDatasets(b).Tasks
}

// reportCorpus skips a test that only reports over the benchmark corpus
// unless the environment variable env is set and the corpus loads, and
// returns a B for benchIndex.
func reportCorpus(t *testing.T, env string) *testing.B {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("set %s=1 to build the 10k and 100k corpora and report", env)
	}
	if err := loadBench(); err != nil {
		t.Skip(err)
	}
	return &testing.B{}
}

// benchIndex returns an index of n replicated tools, built once per size.
func benchIndex(b *testing.B, n int) *benchCorpus {
	data := benchDatasets(b)
	corpusMu.Lock()
	c := corpora[n]
	if c == nil {
		c = &benchCorpus{}
		corpora[n] = c
	}
	corpusMu.Unlock()
	c.once.Do(func() {
		c.n, c.set = n, data
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c.ix = New(Config{})
		for i := range n {
			c.ix.Upsert(c.doc(i))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		c.heapPerTool = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
	})
	return c
}

// BenchmarkSearch measures Search over corpora of 1k, 10k and 100k tools
// with three workloads: "task" queries are the datasets' natural-language
// tasks (26 index terms on average), "keyword" queries are three words
// taken from each, the shape of a model's ToolSearch call, and "discover"
// queries are the tasks as discover:<task>, ranked by the text score alone:
// beside "task", what the keyword score costs a long query.
func BenchmarkSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{
		{"keyword/1k", 1_000}, {"keyword/10k", 10_000}, {"keyword/100k", 100_000},
		{"task/1k", 1_000}, {"task/10k", 10_000}, {"task/100k", 100_000},
		{"discover/10k", 10_000}, {"discover/100k", 100_000},
	} {
		b.Run(size.name, func(b *testing.B) {
			queries := benchQueries(b, strings.Split(size.name, "/")[0])
			c := benchIndex(b, size.n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := c.ix.Search(queries[i%len(queries)], Options{}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			// After the loop: b.Loop's timer reset deletes reported metrics.
			b.ReportMetric(c.heapPerTool, "heap-B/tool")
		})
	}
}

// BenchmarkSearchShards measures task and keyword queries over 10k tools
// with 1 to 8 shards: below parallelMin the shards are scored one after
// the other, so what each costs a query apart from its postings shows,
// and what the floors of the shards before it save.
func BenchmarkSearchShards(b *testing.B) {
	data := benchDatasets(b)
	for _, kind := range []string{"task", "keyword"} {
		queries := benchQueries(b, kind)
		for _, shards := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("%s/%d", kind, shards), func(b *testing.B) {
				c := &benchCorpus{set: data}
				ix := New(Config{Shards: shards})
				for i := range 10_000 {
					ix.Upsert(c.doc(i))
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := ix.Search(queries[i%len(queries)], Options{}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkUpsert(b *testing.B) {
	c := benchIndex(b, 100_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Replace a tool with a new version of itself.
		d := c.doc((i * 7919) % c.n)
		d.Description += fmt.Sprintf(" version %d", i)
		c.ix.Upsert(d)
		i++
	}
	b.StopTimer()
	for j := range i { // restore the corpus for later benchmarks
		c.ix.Upsert(c.doc((j * 7919) % c.n))
	}
}

func BenchmarkAnalyze(b *testing.B) {
	tools := benchDatasets(b).Tools
	an := New(Config{}).Analyzer()
	var dst []string
	bytes := 0
	for _, t := range tools[:min(len(tools), 1000)] {
		bytes += len(t.Description)
	}
	b.SetBytes(int64(bytes / min(len(tools), 1000)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = an.Terms(dst[:0], tools[i%len(tools)].Description)
		i++
	}
}

// BenchmarkCompile measures query analysis and compilation alone (the
// fixed cost of a search) at 10k tools.
func BenchmarkCompile(b *testing.B) {
	for _, w := range []string{"keyword", "task"} {
		b.Run(w, func(b *testing.B) {
			queries := benchQueries(b, w)
			c := benchIndex(b, 10_000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c.ix.mu.RLock()
				c.ix.putPlan(c.ix.compile(queries[i%len(queries)], ModeHybrid, DefaultMax, nil, false))
				c.ix.mu.RUnlock()
				i++
			}
		})
	}
}

// TestPruneWork reports the work of pruned searches over the benchmark
// corpus (TOOLDEX_PRUNE_WORK=1 go test -run PruneWork -v): per query, text
// postings scored, keyword postings marked, documents seen, candidates and
// candidates finished. It only reports, for comparing changes, so it is
// skipped unless asked for.
func TestPruneWork(t *testing.T) {
	b := reportCorpus(t, "TOOLDEX_PRUNE_WORK")
	for _, n := range []int{10_000, 100_000} {
		c := benchIndex(b, n)
		for _, w := range []string{"keyword", "task"} {
			queries := benchQueries(b, w)
			st := &pruneStats{}
			c.ix.pruneStats = st
			for _, q := range queries {
				if _, err := c.ix.Search(q, Options{}); err != nil {
					t.Fatal(err)
				}
			}
			c.ix.pruneStats = nil
			nq := int64(len(queries))
			t.Logf("%s/%d: %d of %d pruned; per query: text postings %d, keyword postings %d, seen %d, candidates %d, finished %d",
				w, n, st.pruned.Load(), nq, st.text.Load()/nq, st.keyword.Load()/nq, st.seen.Load()/nq, st.cand.Load()/nq, st.final.Load()/nq)
		}
	}
}

// TestKeptMemory reports what searches keep of the posting lists
// (TOOLDEX_KEPT_MEMORY=1 go test -run KeptMemory -v): the heap after a GC,
// index built, then after every task query run twice, at 10k and 100k
// tools. It only reports, so it is skipped unless asked for.
func TestKeptMemory(t *testing.T) {
	b := reportCorpus(t, "TOOLDEX_KEPT_MEMORY")
	heap := func() float64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / 1e6
	}
	for _, n := range []int{10_000, 100_000} {
		c := benchIndex(b, n)
		before := heap()
		for range 2 {
			for _, q := range benchSet.Tasks {
				if _, err := c.ix.Search(q, Options{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Logf("%d tools: heap %.1f MB built, %.1f MB after the task queries twice", n, before, heap())
	}
}
