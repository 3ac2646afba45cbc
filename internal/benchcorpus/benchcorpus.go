// Package benchcorpus builds the search benchmarks' corpus and queries from
// the shared tool-retrieval datasets (../shared/datasets/*/tools.jsonl and
// queries.jsonl, or the directory in TOOLDEX_DATASETS). The index
// benchmarks and the bleve comparison (bench/bleve, a separate module) use
// it, so both measure the same tools and the same queries.
//
// It is pure Go and does not import the index package (the index's own
// benchmarks import it); callers pass the index's ParamText.
package benchcorpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tooldex/tooldex/index/analysis"
	"github.com/tooldex/tooldex/internal/jsonl"
)

// EnvDir names the environment variable that overrides the datasets
// directory.
const EnvDir = "TOOLDEX_DATASETS"

// NumQueries is the number of task queries taken from the datasets.
const NumQueries = 200

// Tool is one tool of the corpus: its name, description and the searchable
// text of its input schema's parameters.
type Tool struct {
	Name        string
	Description string
	Params      string
}

// Set is the loaded datasets.
type Set struct {
	// Tools are the datasets' tools, in file order (datasets in
	// lexical order).
	Tools []Tool
	// Tasks are about NumQueries whole dataset queries, taken round-robin
	// from the datasets: the shape of Discover input.
	Tasks []string
	// Keywords are the three longest non-stop words of each task (see
	// KeywordQueries): the shape of a model's ToolSearch call.
	Keywords []string
}

// Dir returns the datasets directory: $TOOLDEX_DATASETS, or def when it is
// unset (callers pass the path of ../shared/datasets relative to their
// package directory).
func Dir(def string) string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	return def
}

// Load reads every dir/*/tools.jsonl and the queries.jsonl beside it.
// paramText turns a tool's input schema into its parameter text (pass
// index.ParamText); queries longer than maxQueryBytes are skipped.
func Load(dir string, paramText func(map[string]any) string, maxQueryBytes int) (*Set, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "tools.jsonl"))
	if len(paths) == 0 {
		return nil, fmt.Errorf("no %s/*/tools.jsonl (set %s)", dir, EnvDir)
	}
	s := &Set{}
	var perSet [][]string
	for _, p := range paths {
		err := jsonl.ReadFile(p, func(_ int, line []byte) error {
			var t struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				InputSchema map[string]any `json:"input_schema"`
			}
			if err := json.Unmarshal(line, &t); err != nil {
				return err
			}
			s.Tools = append(s.Tools, Tool{Name: t.Name, Description: t.Description, Params: paramText(t.InputSchema)})
			return nil
		})
		if err != nil {
			return nil, err
		}
		var qs []string
		_ = jsonl.ReadFile(filepath.Join(filepath.Dir(p), "queries.jsonl"), func(_ int, line []byte) error {
			var q struct {
				Query string `json:"query"`
			}
			if json.Unmarshal(line, &q) == nil && q.Query != "" && len(q.Query) <= maxQueryBytes {
				qs = append(qs, q.Query)
			}
			return nil
		})
		perSet = append(perSet, qs)
	}
	// About NumQueries queries, taken round-robin from the datasets.
	for i := 0; len(s.Tasks) < NumQueries; i++ {
		added := false
		for _, qs := range perSet {
			if i < len(qs) && len(s.Tasks) < NumQueries {
				s.Tasks = append(s.Tasks, qs[i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	if len(s.Tools) == 0 || len(s.Tasks) == 0 {
		return nil, fmt.Errorf("%s: no tools or no queries", dir)
	}
	s.Keywords = KeywordQueries(s.Tasks)
	return s, nil
}

// Tool returns the i-th tool of a corpus that replicates the dataset tools
// under distinct names: tool i is Tools[i mod len(Tools)] renamed
// <name>_r<round>. A corpus of n tools is Tool(0) … Tool(n-1).
func (s *Set) Tool(i int) Tool {
	t := s.Tools[i%len(s.Tools)]
	t.Name = fmt.Sprintf("%s_r%d", t.Name, i/len(s.Tools))
	return t
}

// KeywordQueries turns task queries into what a model types into
// ToolSearch: the three longest words of each that are not stop words
// (nor shorter than three bytes), longest first.
func KeywordQueries(tasks []string) []string {
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
