package index

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tooldex/tooldex/index/analysis"
)

// The benchmark corpus replicates the tools of the shared tool-retrieval
// datasets (TOOLDEX_DATASETS, default ../../shared/datasets) under distinct
// names; queries are the datasets' own.

type benchData struct {
	tools   []Doc
	queries []string
	err     error
}

var (
	benchOnce sync.Once
	benchSet  benchData

	corpusMu sync.Mutex
	corpora  = map[int]*benchCorpus{}
)

type benchCorpus struct {
	once        sync.Once
	ix          *Index
	n           int
	tools       []Doc
	heapPerTool float64
}

// doc returns the i-th tool of the corpus: a dataset tool renamed
// <name>_r<round>.
func (c *benchCorpus) doc(i int) Doc {
	d := c.tools[i%len(c.tools)]
	d.Name = fmt.Sprintf("%s_r%d", d.Name, i/len(c.tools))
	return d
}

func benchDatasets(b *testing.B) benchData {
	b.Helper()
	benchOnce.Do(func() {
		dir := os.Getenv("TOOLDEX_DATASETS")
		if dir == "" {
			dir = filepath.Join("..", "..", "shared", "datasets")
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "*", "tools.jsonl"))
		if len(paths) == 0 {
			benchSet.err = fmt.Errorf("no %s/*/tools.jsonl (set TOOLDEX_DATASETS)", dir)
			return
		}
		var perSet [][]string
		for _, p := range paths {
			err := readJSONL(p, func(line []byte) error {
				var t struct {
					Name        string         `json:"name"`
					Description string         `json:"description"`
					InputSchema map[string]any `json:"input_schema"`
				}
				if err := json.Unmarshal(line, &t); err != nil {
					return err
				}
				benchSet.tools = append(benchSet.tools, Doc{Name: t.Name, Description: t.Description, Params: ParamText(t.InputSchema)})
				return nil
			})
			if err != nil {
				benchSet.err = err
				return
			}
			var qs []string
			_ = readJSONL(filepath.Join(filepath.Dir(p), "queries.jsonl"), func(line []byte) error {
				var q struct {
					Query string `json:"query"`
				}
				if json.Unmarshal(line, &q) == nil && q.Query != "" && len(q.Query) <= MaxQueryBytes {
					qs = append(qs, q.Query)
				}
				return nil
			})
			perSet = append(perSet, qs)
		}
		// About 200 queries, taken round-robin from the datasets.
		for i := 0; len(benchSet.queries) < 200; i++ {
			added := false
			for _, qs := range perSet {
				if i < len(qs) && len(benchSet.queries) < 200 {
					benchSet.queries = append(benchSet.queries, qs[i])
					added = true
				}
			}
			if !added {
				break
			}
		}
		if len(benchSet.tools) == 0 || len(benchSet.queries) == 0 {
			benchSet.err = fmt.Errorf("%s: no tools or no queries", dir)
		}
	})
	if benchSet.err != nil {
		b.Skip(benchSet.err)
	}
	return benchSet
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return sc.Err()
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
		c.n, c.tools = n, data.tools
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

// keywordQueries turns task queries into what a model types into
// ToolSearch: the three longest words of each that are not stop words.
func keywordQueries(tasks []string) []string {
	an := analysis.New()
	out := make([]string, 0, len(tasks))
	for _, q := range tasks {
		words := strings.Fields(q)
		words = slices.DeleteFunc(words, func(w string) bool {
			return an.IsStopWord(strings.ToLower(w)) || len(w) < 3
		})
		slices.SortStableFunc(words, func(a, b string) int { return len(b) - len(a) })
		out = append(out, strings.Join(words[:min(3, len(words))], " "))
	}
	return out
}

// BenchmarkSearch measures Search over corpora of 1k, 10k and 100k tools
// with two workloads: "task" queries are the datasets' natural-language
// tasks (26 index terms on average), "keyword" queries are three words
// taken from each, the shape of a model's ToolSearch call.
func BenchmarkSearch(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"keyword/1k", 1_000}, {"keyword/10k", 10_000}, {"keyword/100k", 100_000}, {"task/1k", 1_000}, {"task/10k", 10_000}, {"task/100k", 100_000}} {
		b.Run(size.name, func(b *testing.B) {
			queries := benchDatasets(b).queries
			if strings.HasPrefix(size.name, "keyword/") {
				queries = keywordQueries(queries)
			}
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
	tools := benchDatasets(b).tools
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
