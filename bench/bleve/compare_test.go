package bleve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/char/regexp"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/benchcorpus"
)

// topK is the number of hits both engines return per query.
const topK = 10

// Field boosts for bleve, the same as tooldex's default TF-IDF field weights
// (name 3.0, description 1.0, parameters 0.5).
const (
	boostName   = 3.0
	boostDesc   = 1.0
	boostParams = 0.5
)

var sizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

var (
	setOnce sync.Once
	set     *benchcorpus.Set
	setErr  error
)

// datasets loads the shared datasets (TOOLDEX_DATASETS, default
// ../../../shared/datasets from this directory) or skips.
func datasets(tb testing.TB) *benchcorpus.Set {
	tb.Helper()
	setOnce.Do(func() {
		dir := benchcorpus.Dir(filepath.Join("..", "..", "..", "shared", "datasets"))
		set, setErr = benchcorpus.Load(dir, index.ParamText, index.MaxQueryBytes)
	})
	if setErr != nil {
		tb.Skip(setErr)
	}
	return set
}

// engines holds both indexes of one corpus size, built once.
type engines struct {
	once  sync.Once
	err   error
	tdx   *index.Index
	blv   bleve.Index
	dir   string
	tdxT  time.Duration // tooldex build time
	blvT  time.Duration // bleve build time, until merges settled
	segs  uint64        // bleve segments at root after settling
	bytes uint64        // bleve bytes on disk
}

var (
	enginesMu sync.Mutex
	built     = map[int]*engines{}
)

// build returns the two indexes of n replicated tools, building them on
// first use.
func build(tb testing.TB, n int) *engines {
	tb.Helper()
	s := datasets(tb)
	enginesMu.Lock()
	e := built[n]
	if e == nil {
		e = &engines{}
		built[n] = e
	}
	enginesMu.Unlock()
	e.once.Do(func() {
		start := time.Now()
		e.tdx = index.New(index.Config{}) // the server's defaults
		for i := range n {
			t := s.Tool(i)
			e.tdx.Upsert(index.Doc{Name: t.Name, Description: t.Description, Params: t.Params})
		}
		e.tdxT = time.Since(start)

		e.dir, e.err = os.MkdirTemp("", "tooldex-bleve-")
		if e.err != nil {
			return
		}
		start = time.Now()
		e.blv, e.err = newBleve(filepath.Join(e.dir, "index"), s, n)
		if e.err != nil {
			return
		}
		e.segs, e.bytes = settle(e.blv)
		e.blvT = time.Since(start)
		fmt.Fprintf(os.Stderr, "tools=%s: tooldex built in %v; bleve built in %v (%d segments, %.1f MB on disk)\n",
			sizeName(n), e.tdxT.Round(time.Millisecond), e.blvT.Round(time.Millisecond), e.segs, float64(e.bytes)/1e6)
	})
	if e.err != nil {
		tb.Fatal(e.err)
	}
	return e
}

func sizeName(n int) string {
	for _, s := range sizes {
		if s.n == n {
			return s.name
		}
	}
	return fmt.Sprint(n)
}

// toolDoc is what bleve indexes of a tool; the document ID is its name.
type toolDoc struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Params      string `json:"params"`
}

// newMapping returns the bleve mapping: three text fields, indexed but not
// stored (only IDs and scores are needed), no term vectors (no phrase
// queries or highlighting), no _all field. description and params use
// bleve's English analyzer ("en": unicode words, possessives, lower case,
// English stop words, Porter stemmer); name uses the same chain after
// splitting identifiers (_ - . : / become spaces, camelCase is split), as
// tool names are identifiers.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	if err := im.AddCustomCharFilter("ident_sep", map[string]any{
		"type":    regexp.Name,
		"regexp":  `[_\-.:/]+`,
		"replace": " ",
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer("ident_en", map[string]any{
		"type":          custom.Name,
		"char_filters":  []string{"ident_sep"},
		"tokenizer":     unicode.Name,
		"token_filters": []string{camelcase.Name, en.PossessiveName, lowercase.Name, en.StopName, porter.Name},
	}); err != nil {
		return nil, err
	}
	field := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store = false
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt("name", field("ident_en"))
	dm.AddFieldMappingsAt("description", field(en.AnalyzerName))
	dm.AddFieldMappingsAt("params", field(en.AnalyzerName))
	im.DefaultMapping = dm
	im.DefaultAnalyzer = en.AnalyzerName
	return im, nil
}

// newBleve builds a scorch index on disk at path (bleve.New: the default
// index type of bleve v2, as a deployment would run it) with tools 0..n-1,
// in batches of 1,000.
func newBleve(path string, s *benchcorpus.Set, n int) (bleve.Index, error) {
	im, err := newMapping()
	if err != nil {
		return nil, err
	}
	idx, err := bleve.New(path, im)
	if err != nil {
		return nil, err
	}
	b := idx.NewBatch()
	for i := range n {
		t := s.Tool(i)
		if err := b.Index(t.Name, toolDoc{Name: t.Name, Description: t.Description, Params: t.Params}); err != nil {
			return nil, err
		}
		if b.Size() == 1000 || i == n-1 {
			if err := idx.Batch(b); err != nil {
				return nil, err
			}
			b.Reset()
		}
	}
	return idx, nil
}

// settle waits until scorch has persisted every in-memory segment and its
// merger has stopped changing the segment count for two seconds, so that
// queries see the index as it stays, and returns the segment count and the
// bytes on disk.
func settle(idx bleve.Index) (segments, bytes uint64) {
	stat := func() (mem, file, disk uint64) {
		m, _ := idx.StatsMap()["index"].(map[string]any)
		get := func(k string) uint64 { v, _ := m[k].(uint64); return v }
		return get("num_root_memorysegments"), get("num_root_filesegments"), get("num_bytes_used_disk")
	}
	last, stable := uint64(1<<63), time.Now()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		mem, file, disk := stat()
		if mem > 0 || file != last {
			last, stable = file, time.Now()
			continue
		}
		if time.Since(stable) >= 2*time.Second {
			return file, disk
		}
	}
	_, file, disk := stat()
	return file, disk
}

// bleveQuery is the query bleve runs for a ToolSearch query: a disjunction
// (OR) of three match queries, one per field, each analysed with its
// field's analyzer and itself an OR of the query's terms, boosted like
// tooldex's field weights. Scores are bleve's default TF-IDF.
func bleveQuery(text string) query.Query {
	match := func(field string, boost float64) query.Query {
		q := bleve.NewMatchQuery(text)
		q.SetField(field)
		q.SetOperator(query.MatchQueryOperatorOr)
		q.SetBoost(boost)
		return q
	}
	return bleve.NewDisjunctionQuery(
		match("name", boostName),
		match("description", boostDesc),
		match("params", boostParams),
	)
}

// bleveSearch runs bleveQuery for the top topK hits: IDs and scores only,
// no stored fields, no highlighting, no facets.
func bleveSearch(idx bleve.Index, text string) (*bleve.SearchResult, error) {
	req := bleve.NewSearchRequestOptions(bleveQuery(text), topK, 0, false)
	return idx.SearchInContext(context.Background(), req)
}

func tooldexSearch(ix *index.Index, text string) (index.Result, error) {
	return ix.Search(text, index.Options{Max: topK})
}

// BenchmarkCompare measures one query per op for tooldex (index.Search,
// hybrid ranking, top 10) and bleve (bleveSearch, top 10) over the same
// corpora of 1k, 10k and 100k tools, with the same two workloads as the
// index benchmarks: "keyword" (three words of each dataset query) and
// "task" (the whole query).
func BenchmarkCompare(b *testing.B) {
	s := datasets(b)
	workloads := []struct {
		name    string
		queries []string
	}{{"keyword", s.Keywords}, {"task", s.Tasks}}
	for _, size := range sizes {
		b.Run("tools="+size.name, func(b *testing.B) {
			e := build(b, size.n)
			for _, engine := range []string{"tooldex", "bleve"} {
				b.Run("engine="+engine, func(b *testing.B) {
					for _, w := range workloads {
						b.Run("queries="+w.name, func(b *testing.B) {
							b.ReportAllocs()
							i := 0
							for b.Loop() {
								q := w.queries[i%len(w.queries)]
								i++
								if engine == "tooldex" {
									if _, err := tooldexSearch(e.tdx, q); err != nil {
										b.Fatal(err)
									}
								} else if _, err := bleveSearch(e.blv, q); err != nil {
									b.Fatal(err)
								}
							}
							build := e.tdxT
							if engine == "bleve" {
								build = e.blvT
							}
							b.ReportMetric(build.Seconds(), "build-s")
						})
					}
				})
			}
		})
	}
}

// TestMain closes and removes the bleve indexes after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, e := range built {
		if e.blv != nil {
			e.blv.Close()
		}
		if e.dir != "" {
			os.RemoveAll(e.dir)
		}
	}
	os.Exit(code)
}

// TestBothEnginesSearch checks, on the 10k corpus (every dataset tool, so
// every query has its tools), that both engines answer
// dataset queries with tools of the corpus, and that bleve's top hit shares
// an analysed term with the query, so the benchmark measures real searches,
// not empty ones.
func TestBothEnginesSearch(t *testing.T) {
	s := datasets(t)
	const n = 10_000
	e := build(t, n)
	tools := make(map[string]benchcorpus.Tool, n)
	for i := range n {
		tools[s.Tool(i).Name] = s.Tool(i)
	}
	im, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	terms := func(analyzer, text string) map[string]bool {
		out := map[string]bool{}
		for _, tok := range im.AnalyzerNamed(analyzer).Analyze([]byte(text)) {
			out[string(tok.Term)] = true
		}
		return out
	}
	shares := func(a, b map[string]bool) bool {
		for w := range a {
			if b[w] {
				return true
			}
		}
		return false
	}
	queries := append(s.Keywords[:10:10], s.Tasks[:10]...)
	for _, q := range queries {
		tr, err := tooldexSearch(e.tdx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Hits) == 0 {
			t.Errorf("tooldex: %q: no hits", q)
			continue
		}
		if _, ok := tools[tr.Hits[0].Name]; !ok {
			t.Errorf("tooldex: %q: top hit %q is not in the corpus", q, tr.Hits[0].Name)
		}
		br, err := bleveSearch(e.blv, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(br.Hits) == 0 {
			t.Errorf("bleve: %q: no hits", q)
			continue
		}
		top, ok := tools[br.Hits[0].ID]
		if !ok {
			t.Errorf("bleve: %q: top hit %q is not in the corpus", q, br.Hits[0].ID)
			continue
		}
		if !shares(terms("ident_en", q), terms("ident_en", top.Name)) &&
			!shares(terms(en.AnalyzerName, q), terms(en.AnalyzerName, top.Description+" "+top.Params)) {
			t.Errorf("bleve: %q: top hit %q shares no term with the query", q, top.Name)
		}
		if len(br.Hits) > topK {
			t.Errorf("bleve: %q: %d hits, want at most %d", q, len(br.Hits), topK)
		}
		t.Logf("%.60q: tooldex top %s, bleve top %s (%d matching docs)", q, tr.Hits[0].Name, br.Hits[0].ID, br.Total)
	}
}
